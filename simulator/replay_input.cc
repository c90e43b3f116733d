#include "simulator/replay_input.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "analysis/communication_plan.h"
#include "analysis/run_settings.h"
#include "common/errors.h"
#include "traces/scheme_description.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion::sim {

namespace {

// Per-worker batch of an epoch: what its sampled compute was measured at.
double PerWorkerBatch(const TraceView& view, int epoch) {
  return static_cast<double>(view.epochs.at(epoch).batch_size) / view.run.world_size;
}

// The first step of an epoch pays for warm-up (data loading, allocations,
// ranks arriving at different times). It is left out wherever the epoch has
// later sampled steps, so that the profile describes the steps that make up
// the epoch; an epoch sampled only at its first step keeps it.
class SteadySteps {
 public:
  explicit SteadySteps(const std::vector<IterationRecord>& rows) {
    for (const IterationRecord& r : rows) {
      if (r.iteration > 0) later_.insert(r.epoch);
    }
  }
  bool operator()(int epoch, int64_t iteration) const { return iteration > 0 || !later_.count(epoch); }

 private:
  std::set<int> later_;
};

IterationProfile MeasureProfile(const std::string& path, const std::vector<IterationRecord>& rows,
                                const std::vector<GradReadyRecord>& ready, const TraceView& view,
                                std::map<int, double>& measured_iteration_s) {
  IterationProfile p;
  p.per_worker_batch = static_cast<double>(view.run.batch_size) / view.run.world_size;
  if (rows.empty()) {
    throw InputError(path +
                     " has no per-iteration timings (the iterations table is empty); "
                     "record the trace with sampled iterations to replay it");
  }
  const SteadySteps steady(rows);
  std::map<int, std::pair<double, int64_t>> per_epoch;
  for (const IterationRecord& r : rows) {
    if (!steady(r.epoch, r.iteration)) continue;
    // Times at another batch are brought to the reference batch first.
    const double to_reference = p.per_worker_batch / PerWorkerBatch(view, r.epoch);
    p.forward_s += r.forward_s * to_reference;
    p.backward_s += r.backward_s * to_reference;
    p.compress_s += r.compress_s;
    // Below SimGrid's 1 ns timing precision the remainder is rounding, not time.
    const double other = r.total_s - r.forward_s - r.backward_s - r.compress_s - r.comm_s;
    p.other_s += other > 1e-9 ? other : 0.0;
    ++p.iteration_samples;
    auto& [sum, n] = per_epoch[r.epoch];
    sum += r.total_s;
    ++n;
  }
  const auto n = static_cast<double>(p.iteration_samples);
  p.forward_s /= n;
  p.backward_s /= n;
  p.compress_s /= n;
  p.other_s /= n;
  for (const auto& [epoch, sum_n] : per_epoch) {
    measured_iteration_s[epoch] = sum_n.first / static_cast<double>(sum_n.second);
  }

  const int L = view.num_layers();
  p.grad_ready_s.assign(L, 0.0);
  std::vector<int64_t> counts(L, 0);
  for (const GradReadyRecord& r : ready) {
    if (!steady(r.epoch, r.iteration)) continue;
    p.grad_ready_s[r.layer_id] += r.offset_s * p.per_worker_batch / PerWorkerBatch(view, r.epoch);
    ++counts[r.layer_id];
    ++p.grad_ready_samples;
  }
  for (int l = 0; l < L; ++l) {
    if (counts[l] == 0) {
      throw InputError(path + " has no gradient-ready offsets for layer " + std::to_string(l) + " (" +
                       view.layers[l].name +
                       "); the grad_ready table is needed to overlap communication with backward");
    }
    p.grad_ready_s[l] /= static_cast<double>(counts[l]);
  }
  return p;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// One sampled step, every rank's rows.
struct SampledStep {
  std::map<int, IterationRecord> iteration;               // by rank
  std::map<int, std::vector<double>> ready;               // by rank, [layer]
  std::map<int, std::map<int, CollectiveRecord>> issued;  // by rank, by seq
};

// The view of one step a synchronous replay needs, from every rank's rows.
// Ranks' clocks start at their own step start; ranks leave the previous
// step together (its last collective ends on all of them), so the clocks
// are taken as aligned: a collective starts once the last rank issued it
// and ends when the last rank has its result.
StepSample SampleStep(const SampledStep& step, const std::vector<PlannedCollective>& plan, int layers,
                      std::map<RecordedCollectiveKey, std::vector<double>>& durations, double& compress) {
  std::vector<int> ranks;
  for (const auto& [rank, it] : step.iteration) {
    auto r = step.ready.find(rank);
    if (r != step.ready.end() && static_cast<int>(r->second.size()) == layers) ranks.push_back(rank);
  }
  StepSample sample;
  if (ranks.empty()) return sample;
  double forward = 0, backward_end = 0;
  std::vector<double> ready(layers, 0.0);
  compress = 0;
  for (int rank : ranks) {
    const IterationRecord& it = step.iteration.at(rank);
    forward = std::max(forward, it.forward_s);
    backward_end = std::max(backward_end, it.forward_s + it.backward_s);
    const std::vector<double>& offsets = step.ready.at(rank);
    for (int l = 0; l < layers; ++l) ready[l] = std::max(ready[l], it.forward_s + offsets[l]);
    compress += it.compress_s;
  }
  compress /= static_cast<double>(ranks.size());
  sample.forward_s = forward;
  sample.backward_s = backward_end - forward;
  sample.grad_ready_s.resize(layers);
  for (int l = 0; l < layers; ++l) sample.grad_ready_s[l] = ready[l] - forward;

  // Per collective: the host time before its issue (from what it waited
  // for on that rank), the last rank's start (after any queueing behind
  // the collective issued before it) and the last rank's end.
  std::map<std::string, size_t> planned;
  for (size_t i = 0; i < plan.size(); ++i) planned[CallName(plan[i].tag, plan[i].bucket)] = i;
  std::map<std::string, double> gap_sum, last_start, last_end;
  double step_end = backward_end;
  for (int rank : ranks) {
    const IterationRecord& it = step.iteration.at(rank);
    const std::vector<double>& offsets = step.ready.at(rank);
    StepSample own;
    own.forward_s = it.forward_s;
    own.backward_s = it.backward_s;
    own.grad_ready_s = offsets;
    own.valid = true;
    double previous_end = 0, host = 0, rank_end = it.forward_s + it.backward_s;
    std::map<std::string, double> end;
    auto issued = step.issued.find(rank);
    if (issued != step.issued.end()) {
      for (const auto& [seq, c] : issued->second) {
        const std::string name = CallName(c.tag, c.bucket);
        const double finish = c.start_s + c.duration_s;
        auto pl = planned.find(name);
        if (pl != planned.end()) {
          const PlannedCollective& pc = plan[pl->second];
          double waited = 0;
          for (int l : pc.layers) waited = std::max(waited, it.forward_s + offsets[l]);
          if (pc.after >= 0) {
            const PlannedCollective& needed = plan[static_cast<size_t>(pc.after)];
            auto e = end.find(CallName(needed.tag, needed.bucket));
            if (e != end.end()) waited = std::max(waited, e->second);
          }
          if (pc.after_backward) waited = std::max({waited, it.forward_s + it.backward_s, host});
          const double gap = std::max(0.0, c.start_s - waited);
          gap_sum[name] += gap;
          own.gap_s[name] = gap;
          if (!pc.after_backward) own.in_backward_host_s += gap;
          if (pc.after_backward) host = c.start_s;
          const double started = std::max(c.start_s, previous_end);
          own.network_s[name] = std::max(0.0, finish - started);
          last_start[name] = std::max(last_start[name], started);
          last_end[name] = std::max(last_end[name], finish);
        }
        end[name] = finish;
        previous_end = std::max(previous_end, finish);
        step_end = std::max(step_end, finish);
        rank_end = std::max(rank_end, finish);
      }
    }
    own.tail_s = std::max(0.0, it.total_s - rank_end);
    own.after_backward_s = std::max(0.0, rank_end - (it.forward_s + it.backward_s));
    double gaps = 0;
    for (const auto& [name, gap] : own.gap_s) gaps += gap;
    own.decompress_s = std::min(own.tail_s, std::max(0.0, it.compress_s - gaps));
    sample.decompress_s += own.decompress_s / static_cast<double>(ranks.size());
    sample.in_backward_host_s += own.in_backward_host_s / static_cast<double>(ranks.size());
    sample.per_rank.push_back(std::move(own));
  }
  for (const auto& [name, sum] : gap_sum) sample.gap_s[name] = sum / static_cast<double>(ranks.size());
  for (const auto& [name, started] : last_start) {
    const PlannedCollective& pc = plan[planned.at(name)];
    const double network = std::max(0.0, last_end.at(name) - started);
    sample.network_s[name] = network;
    durations[{pc.op, pc.tag, pc.bucket, pc.bytes}].push_back(network);
  }
  for (int rank : ranks) sample.tail_s += std::max(0.0, step.iteration.at(rank).total_s - step_end);
  sample.tail_s /= static_cast<double>(ranks.size());
  sample.valid = true;
  return sample;
}

// Step profiles per distinct set of levels, and the recorded collectives'
// network times, from every steady sampled step.
void MeasureSteps(TraceReader& reader, const std::vector<IterationRecord>& rows,
                  const std::vector<GradReadyRecord>& ready_rows, const TraceView& view, int64_t bucket_bytes,
                  ReplayInput& in) {
  const SteadySteps steady(rows);
  std::map<std::pair<int, int64_t>, SampledStep> steps;
  for (const IterationRecord& r : rows) {
    if (steady(r.epoch, r.iteration)) steps[{r.epoch, r.iteration}].iteration[r.rank] = r;
  }
  const int L = view.num_layers();
  for (const GradReadyRecord& g : ready_rows) {
    auto it = steps.find({g.epoch, g.iteration});
    if (it == steps.end() || g.layer_id < 0 || g.layer_id >= L) continue;
    std::vector<double>& ready = it->second.ready[g.rank];
    ready.resize(L, 0.0);
    ready[g.layer_id] = g.offset_s;
  }
  reader.ForEachCollective([&](const CollectiveRecord& c) {
    auto it = steps.find({c.epoch, c.iteration});
    if (it != steps.end()) it->second.issued[c.rank][c.seq] = c;
  });

  const std::vector<GradientBucket> buckets = AssignBuckets(view.layers, bucket_bytes);
  const CommunicationScheme scheme = RecordedScheme(view.run, view.run.scheme);
  std::map<std::vector<double>, StepProfile> by_levels;
  std::map<std::vector<double>, std::vector<PlannedCollective>> plans;
  std::map<RecordedCollectiveKey, std::vector<double>> durations;
  for (const auto& [key, step] : steps) {
    const int epoch = key.first;
    if (epoch < 0 || epoch >= view.num_epochs()) continue;
    const std::vector<double>& levels = view.levels[epoch];
    auto plan = plans.find(levels);
    if (plan == plans.end()) plan = plans.emplace(levels, PlanStep(scheme, view.layers, buckets, levels)).first;
    double compress = 0;
    StepSample sample = SampleStep(step, plan->second, L, durations, compress);
    if (!sample.valid) continue;
    StepProfile& p = by_levels[levels];
    if (p.samples.empty()) {
      p.levels = levels;
      p.per_worker_batch = PerWorkerBatch(view, epoch);
    }
    p.compress_s += compress;
    p.samples.push_back(std::move(sample));
  }
  for (auto& [levels, p] : by_levels) {
    const auto n = static_cast<double>(p.samples.size());
    p.steps = static_cast<int64_t>(p.samples.size());
    p.compress_s /= n;
    std::map<std::string, int> gap_n;
    p.grad_ready_s.assign(L, 0.0);
    for (const StepSample& x : p.samples) {
      p.forward_s += x.forward_s / n;
      p.backward_s += x.backward_s / n;
      p.tail_s += x.tail_s / n;
      for (int l = 0; l < L; ++l) p.grad_ready_s[l] += x.grad_ready_s[l] / n;
      for (const auto& [name, gap] : x.gap_s) {
        p.gap_s[name] += gap;
        ++gap_n[name];
      }
    }
    for (auto& [name, gap] : p.gap_s) gap /= gap_n[name];
    in.steps.push_back(std::move(p));
  }
  if (in.steps.empty()) {
    throw InputError(reader.path() +
                     " has no sampled step with every layer's gradient-ready offset on some rank; "
                     "the grad_ready table is needed to replay it");
  }
  // Without a compressor, what a step spends between a bucket's readiness
  // and its issue is no compression (a micro-batched step's accumulation):
  // it stays compute.
  if (DescriptionOf(view.run.scheme).compressor == Compressor::kNone) {
    for (StepProfile& p : in.steps) {
      for (StepSample& s : p.samples) {
        s.in_backward_host_s = 0;
        for (StepSample& rank : s.per_rank) rank.in_backward_host_s = 0;
      }
    }
  }
  in.compute = EstimateCompute(in.steps);
  in.shared_steps = ShareCompute(in.steps, in.compute);
  for (auto& [key, seconds] : durations) in.collective_s[key] = Mean(seconds);
  std::map<CollectiveOp, std::vector<std::pair<double, double>>> points;
  for (const auto& [key, seconds] : in.collective_s)
    points[key.op].emplace_back(static_cast<double>(key.bytes), seconds);
  for (const auto& [op, xy] : points) {
    const auto n = static_cast<double>(xy.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0, shortest = xy.front().second;
    for (const auto& [x, y] : xy) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
      shortest = std::min(shortest, y);
    }
    const double denominator = n * sxx - sx * sx;
    ReplayInput::CollectiveLine line;
    line.per_byte_s = denominator > 0 ? (n * sxy - sx * sy) / denominator : -1;
    line.fixed_s = (sy - line.per_byte_s * sx) / n;
    if (line.per_byte_s < 0 || line.fixed_s < 0) line = {shortest, 0.0};
    in.collective_line[op] = line;
  }
}

// The trainer's bucket size, if its configuration says; a configuration that
// does not parse or does not say leaves the choice to the replay.
std::optional<int64_t> RecordedBucketBytes(const RunInfo& run) {
  // Through the run settings' table: the same conversion the writers made.
  RunSettings unknown;
  unknown.bucket_mb = 0;  // a configuration that does not say keeps this
  const RunSettings recorded = SettingsFromConfig(run.config_json, unknown);
  if (!FieldWithKey("bucket_mb")->InBounds(recorded.bucket_mb)) return std::nullopt;
  return BucketBytesOf(recorded);
}

}  // namespace

ReplayInput LoadReplayInput(const std::string& path) {
  // The checks of accordion-analyze validate first: a trace whose rows go
  // past its epochs is one line and exit 2 here too, not an index out of range.
  ValidateTrace(path);
  auto reader = TraceReader::Open(path);
  TraceView view = LoadTraceView(*reader);
  return LoadReplayInput(*reader, std::move(view));
}

ReplayInput LoadReplayInput(TraceReader& reader, TraceView view) {
  ReplayInput in;
  in.path = reader.path();
  in.view = std::move(view);
  in.bucket_bytes = RecordedBucketBytes(in.view.run);
  // Both views of the steps come from one read of their rows.
  std::vector<IterationRecord> rows;
  reader.ForEachIteration([&rows](const IterationRecord& r) { rows.push_back(r); });
  std::vector<GradReadyRecord> ready;
  reader.ForEachGradReady([&ready](const GradReadyRecord& g) { ready.push_back(g); });
  in.profile = MeasureProfile(in.path, rows, ready, in.view, in.measured_iteration_s);
  const SteadySteps steady(rows);
  for (const IterationRecord& r : rows) {
    if (steady(r.epoch, r.iteration)) in.measured_step_s[r.epoch].push_back(r.total_s);
  }
  MeasureSteps(reader, rows, ready, in.view, in.bucket_bytes.value_or(kDefaultBucketBytes), in);
  in.network_probe = reader.NetworkProbe();
  return in;
}

std::string CallName(const std::string& tag, int bucket) { return tag + "/" + std::to_string(bucket); }

bool RecordedCollectiveKey::operator<(const RecordedCollectiveKey& o) const {
  return std::tie(op, tag, bucket, bytes) < std::tie(o.op, o.tag, o.bucket, o.bytes);
}

const StepProfile& NearestStepProfile(const ReplayInput& input, const std::vector<double>& levels) {
  return NearestStepProfile(input.steps, levels);
}

const StepProfile& NearestStepProfile(const std::vector<StepProfile>& profiles, const std::vector<double>& levels) {
  if (profiles.empty()) throw std::logic_error("a replay input without step profiles");
  const StepProfile* best = nullptr;
  std::pair<int, double> best_distance;
  for (const StepProfile& p : profiles) {
    if (p.levels == levels) return p;
    std::pair<int, double> d{0, 0.0};
    for (size_t l = 0; l < levels.size() && l < p.levels.size(); ++l) {
      if (p.levels[l] == levels[l]) continue;
      ++d.first;
      const double a = std::max(std::abs(p.levels[l]), 1e-12), b = std::max(std::abs(levels[l]), 1e-12);
      d.second += std::abs(std::log(a / b));
    }
    if (!best || d < best_distance) {
      best = &p;
      best_distance = d;
    }
  }
  return *best;
}

MeasuredIteration LoadMeasuredIteration(const std::string& path, int epoch) {
  auto reader = TraceReader::Open(path);
  return LoadMeasuredIteration(*reader, epoch);
}

MeasuredIteration LoadMeasuredIteration(TraceReader& reader, int epoch) {
  const std::string& path = reader.path();
  // The sampled (epoch, iteration) of rank 0 closest to the epoch asked for.
  std::optional<IterationRecord> best;
  reader.ForEachIteration([&](const IterationRecord& r) {
    if (r.rank != 0) return;
    if (!best || std::abs(r.epoch - epoch) < std::abs(best->epoch - epoch)) best = r;
  });
  if (!best) throw InputError(path + " has no per-iteration timings of rank 0 to draw");
  MeasuredIteration m;
  m.record = *best;
  const StepKey step{best->epoch, best->iteration, 0};
  reader.ForEachCollective(step, [&](const CollectiveRecord& c) { m.collectives.push_back(c); });
  reader.ForEachGradReady(step, [&](const GradReadyRecord& g) { m.grad_ready.push_back(g); });
  return m;
}

}  // namespace accordion::sim
