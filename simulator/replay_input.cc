#include "simulator/replay_input.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "traces/trace_reader.h"

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

IterationProfile MeasureProfile(TraceReader& reader, const TraceView& view,
                                std::map<int, double>& measured_iteration_s) {
  IterationProfile p;
  p.per_worker_batch = static_cast<double>(view.run.batch_size) / view.run.world_size;
  std::vector<IterationRecord> rows;
  reader.ForEachIteration([&rows](const IterationRecord& r) { rows.push_back(r); });
  if (rows.empty()) {
    throw InputError(reader.path() +
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
  reader.ForEachGradReady([&](const GradReadyRecord& r) {
    if (!steady(r.epoch, r.iteration)) return;
    p.grad_ready_s[r.layer_id] += r.offset_s * p.per_worker_batch / PerWorkerBatch(view, r.epoch);
    ++counts[r.layer_id];
    ++p.grad_ready_samples;
  });
  for (int l = 0; l < L; ++l) {
    if (counts[l] == 0) {
      throw InputError(reader.path() + " has no gradient-ready offsets for layer " + std::to_string(l) +
                       " (" + view.layers[l].name +
                       "); the grad_ready table is needed to overlap communication with backward");
    }
    p.grad_ready_s[l] /= static_cast<double>(counts[l]);
  }
  return p;
}

// The trainer's bucket size, if its configuration says; a configuration that
// does not parse or does not say leaves the choice to the replay.
std::optional<int64_t> RecordedBucketBytes(const RunInfo& run) {
  const nlohmann::json config = nlohmann::json::parse(run.config_json, nullptr, false);
  if (!config.is_object() || !config.contains("bucket_mb") || !config["bucket_mb"].is_number()) {
    return std::nullopt;
  }
  const double mb = config["bucket_mb"].get<double>();
  if (!(mb > 0) || mb > 1e6) return std::nullopt;
  return static_cast<int64_t>(std::llround(mb * 1024 * 1024));
}

}  // namespace

ReplayInput LoadReplayInput(const std::string& path) {
  auto reader = TraceReader::Open(path);
  TraceView view = LoadTraceView(*reader);
  return LoadReplayInput(*reader, std::move(view));
}

ReplayInput LoadReplayInput(TraceReader& reader, TraceView view) {
  ReplayInput in;
  in.path = reader.path();
  in.view = std::move(view);
  in.bucket_bytes = RecordedBucketBytes(in.view.run);
  in.profile = MeasureProfile(reader, in.view, in.measured_iteration_s);
  return in;
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
