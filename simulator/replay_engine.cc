#include "simulator/replay_engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/communication_accounting.h"
#include "analysis/policy_comparison.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/statistics.h"
#include "simulator/recorded_network.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion::sim {

namespace {

// Distinct patterns, or one per request when memoisation is off.
class PatternBook {
 public:
  explicit PatternBook(bool memoise) : memoise_(memoise) {}
  int Add(IterationPattern pattern) {
    const std::string key = pattern.Key();
    distinct_.emplace(key, 0);
    if (memoise_) {
      auto it = index_.find(key);
      if (it != index_.end()) return it->second;
      index_.emplace(key, static_cast<int>(patterns_.size()));
    }
    patterns_.push_back(std::move(pattern));
    return static_cast<int>(patterns_.size()) - 1;
  }
  const std::vector<IterationPattern>& patterns() const { return patterns_; }
  int distinct() const { return static_cast<int>(distinct_.size()); }

 private:
  bool memoise_;
  std::vector<IterationPattern> patterns_;
  std::map<std::string, int> index_;
  std::map<std::string, int> distinct_;
};

// What one collective took beyond its time on the recorded network, and
// how sure that split is (CollectiveCall's fields of the same names).
struct HostCost {
  double host_s = 0;
  double network_scale = 1;
  double recorded_network_s = 0;
  double attribution = 0;
};

// What each collective cost the hosts beyond the network, from the trace.
struct HostCosts {
  std::map<RecordedCollectiveKey, HostCost> recorded;  // the trace's collectives
  std::map<std::string, HostCost> by_call;             // "tag/bucket": mean over their sizes
  HostCost other;                                      // any other collective
  bool anchored = false;                               // from the trace's network probe
  TokenBucket shaper;  // the recorded network's token-bucket shaper, where its probe saw one
  void ApplyTo(CollectiveCall& c) const {
    auto it = recorded.find({c.op, c.tag, c.bucket, c.bytes});
    auto call = by_call.find(CallName(c.tag, c.bucket));
    const HostCost& cost = it != recorded.end() ? it->second : call != by_call.end() ? call->second : other;
    c.host_s = cost.host_s;
    c.network_scale = cost.network_scale;
    c.recorded_network_s = cost.recorded_network_s;
    c.attribution = cost.attribution;
  }
};

// What one epoch of one schedule does, before its pattern is timed.
struct EpochStep {
  int pattern = 0;
  int low_layers = 0;
  int64_t global_batch = 0;
  int64_t steps = 0;
  double batch_scale = 1;  // per-worker batch over the profile's
  const StepProfile* profile = nullptr;
  bool exact_levels = false;  // the profile ran exactly this epoch's levels
};

struct Setting {
  const ReplayInput* input = nullptr;
  CommunicationScheme scheme;  // with the trace's TopK choices when it is its scheme
  int workers = 0;
  std::vector<GradientBucket> buckets;
  double straggler = 1;  // expected slowest-rank slowdown of compute
  // The profiles schedules are priced from: input.steps, or
  // input.shared_steps (ReplayOptions::share_compute).
  const std::vector<StepProfile>* profiles = nullptr;
  // The steps of another scheme than the trace's: those at the run's own
  // batch (else its most sampled), with none of its compression gaps.
  std::optional<StepProfile> foreign;
  int inexact_epochs = 0;         // epochs whose levels the trace did not sample
  bool recorded_buckets = false;  // the buckets are the trainer's
  const HostCosts* host_costs = nullptr;
  double decompress_scale = 1;  // decompression at these workers over the trace's
  TokenBucket shaper;           // the what-if's links' token-bucket shaper
  TokenBucket recorded_shaper;  // the recorded network's, its collectives' host costs are over
};

int64_t GlobalBatch(const Setting& s, const Schedule& schedule, int epoch) {
  const TraceView& view = s.input->view;
  const double trace_workers = view.run.world_size;
  const double global_at_trace = DescriptionOf(schedule.scheme.scheme()).level_kind == LevelKind::kGlobalBatch
                                     ? schedule.levels[epoch][0]
                                     : static_cast<double>(view.run.batch_size);
  return std::max<int64_t>(1, std::llround(global_at_trace / trace_workers * s.workers));
}

const StepProfile& ProfileOf(Setting& s, const std::vector<double>& levels) {
  if (s.foreign) return *s.foreign;
  const StepProfile& p = NearestStepProfile(*s.profiles, levels);
  if (p.levels != levels) ++s.inexact_epochs;
  return p;
}

IterationPattern PatternOf(const Setting& s, const std::vector<double>& levels, const StepProfile& profile,
                           double scale) {
  const TraceView& view = s.input->view;
  IterationPattern pattern;
  pattern.backward_s = profile.backward_s * scale;
  for (const PlannedCollective& c : PlanStep(s.scheme, view.layers, s.buckets, levels)) {
    double ready = 0;
    for (int l : s.buckets[c.bucket].layers) ready = std::max(ready, profile.grad_ready_s[l]);
    CollectiveCall call{c.op, c.bytes, ready * scale, c.tag, c.bucket};
    call.after = c.after;
    call.after_backward = c.after_backward;
    auto gap = profile.gap_s.find(CallName(c.tag, c.bucket));
    if (gap != profile.gap_s.end()) call.gap_s = gap->second;
    if (s.host_costs != nullptr) s.host_costs->ApplyTo(call);
    pattern.calls.push_back(std::move(call));
  }
  return pattern;
}

EpochStep StepOf(Setting& s, const Schedule& schedule, int epoch, PatternBook& book) {
  EpochStep step;
  step.global_batch = GlobalBatch(s, schedule, epoch);
  step.steps = StepsPerEpoch(s.input->view.run.train_samples, step.global_batch, s.workers);
  step.profile = &ProfileOf(s, schedule.levels[epoch]);
  step.exact_levels = step.profile->levels == schedule.levels[epoch];
  step.batch_scale = static_cast<double>(step.global_batch) / s.workers / step.profile->per_worker_batch;
  if (schedule.level_low != schedule.level_high) {
    for (double level : schedule.levels[epoch]) step.low_layers += level == schedule.level_low ? 1 : 0;
  }
  step.pattern = book.Add(PatternOf(s, schedule.levels[epoch], *step.profile, step.batch_scale * s.straggler));
  return step;
}

void AddTo(EpochProjection& total, const EpochProjection& e) {
  total.steps += e.steps;
  total.compute_s += e.compute_s;
  total.compress_s += e.compress_s;
  total.exposed_comm_s += e.exposed_comm_s;
  total.other_s += e.other_s;
  total.time_s += e.time_s;
  total.time_low_s += e.time_low_s;
  total.time_high_s += e.time_high_s;
  total.payload_bytes += e.payload_bytes;
  total.wire_bytes += e.wire_bytes;
}

struct Schedules {
  Schedule accordion, static_low, static_high;
};

// Levels: the options, else the trace's own pair when it switched between
// two, else the paper's defaults for the scheme (as accordion-analyze).
Schedules ChooseSchedules(const TraceView& view, const ReplayOptions& options, ReplayResult& r) {
  std::tie(r.level_low, r.level_high) = ResolveLevels(view.run, r.scheme, options.level_low(), options.level_high());
  if (!DescriptionOf(r.scheme).has_levels()) {
    const std::string name = ToString(r.scheme);
    r.notes.push_back(name + " communication: there are no levels to schedule, all three schedules are " + name);
    const Schedule only = StaticSchedule(view, r.scheme, 0);
    return {only, only, only};
  }
  // Before anything turns a level into an integer (a rank, a batch size):
  // --low 1e308 must be refused, not printed as rank -9223372036854775808.
  for (const auto& [level, flag] : {std::pair{r.level_low, "--low"}, std::pair{r.level_high, "--high"}}) {
    const std::string problem = LevelProblem(r.scheme, level);
    if (!problem.empty()) throw InputError(std::string(flag) + " " + problem);
  }
  const AccordionOptions accordion =
      AccordionOptions().eta(r.eta).interval(r.interval).level_low(r.level_low).level_high(r.level_high);
  accordion.Validate();
  return {DeriveAccordionSchedule(view, r.scheme, accordion), StaticSchedule(view, r.scheme, r.level_low),
          StaticSchedule(view, r.scheme, r.level_high)};
}

// One step's parts, averaged over the profile's sampled steps.
struct StepParts {
  double forward = 0, backward = 0, after_backward = 0, compress = 0, tail = 0;
  double iteration() const { return forward + backward + after_backward + tail; }
  std::vector<double> views_s;  // each composed view's step (a rank's, or a sample's)
  // The band (kBandLow to kBandHigh of the views, each at the end of its
  // collectives' attribution that gives it least / most).
  double low = 0, high = 0;
};

// The prediction band's quantiles of the composed steps: the range that
// held 90 % of the recorded steps, carried through the model.
constexpr double kBandLow = 0.05;
constexpr double kBandHigh = 0.95;
// The most of the recorded collectives' network time the band takes their
// net host cost to be (a fitted rate that far off), where the probe's own
// uncertainty is smaller.
constexpr double kRateDoubt = 0.1;

// The shapers a step's collectives cross: the what-if's links' and the
// recorded network's, and what each call puts through one link.
struct Shapers {
  TokenBucket what_if;
  TokenBucket recorded;
  std::vector<double> link_bytes;  // one per call of the pattern
  bool any() const { return what_if.Shapes() || recorded.Shapes(); }
};

// Rounds of walking a step and shortening its collectives by what the
// what-if's bucket saves them: each walk sees the last one's durations.
constexpr int kShaperRounds = 4;

// How far the band moves each call, nothing where the what-if is the
// recorded network and more the further it moves from it: its network
// time's change by the rate's uncertainty, and its share (by network
// time) of the step's net host cost as if that were network time - a rate
// a few per cent off, which a faster network shortens and a host cost
// would not. The net: one collective's wait behind another leaves one
// residual above and one below, which cancel (the composition settles
// them). At most kRateDoubt of the network time (or the rate's
// uncertainty, if larger): a net residual beyond that is no rate's error
// the probe could have missed, and stays the hosts'.
std::vector<double> BandShifts(const IterationPattern& pattern, const std::vector<double>& modelled) {
  std::vector<double> band_shift(modelled.size(), 0.0);
  double recorded_sum = 0, network_sum = 0, host_sum = 0, uncertainty = 0;
  for (size_t i = 0; i < modelled.size(); ++i) {
    const CollectiveCall& c = pattern.calls[i];
    if (c.recorded_network_s <= 0) continue;
    recorded_sum += c.recorded_network_s;
    network_sum += modelled[i] - c.host_s;
    host_sum += c.host_s;
    uncertainty = std::max(uncertainty, c.attribution);
  }
  if (recorded_sum > 0) {
    const double network_like =
        uncertainty * recorded_sum + std::min(std::fabs(host_sum), std::max(kRateDoubt, uncertainty) * recorded_sum);
    const double change = std::fabs(1 - network_sum / recorded_sum);
    for (size_t i = 0; i < modelled.size(); ++i) {
      const CollectiveCall& c = pattern.calls[i];
      if (c.recorded_network_s > 0) band_shift[i] = network_like * change * c.recorded_network_s / recorded_sum;
    }
  }
  return band_shift;
}

// Every sampled step of `profile` composed with the collectives' times the
// network model found for `pattern` (`timing`), then averaged: a step's time
// is a maximum of readiness and communication, so it is composed per step.
// `scale` multiplies compute (batch and stragglers). With `rank_shift` (the
// trace's own workers, levels and buckets), each rank's step is the one it
// measured, moved by what composing it with every collective shifted (what
// the network model adds over the recorded network) changes against
// composing it with its own times: the measured graph, altered only by the
// what-if; zeros give back every rank's step exactly.
StepParts ExpectedStep(const IterationPattern& pattern, const IterationTiming& timing, const StepProfile& profile,
                       const std::vector<GradientBucket>& buckets, double scale, bool own_gaps,
                       const std::optional<std::vector<double>>& rank_shift, double decompress_scale,
                       const Shapers& shapers) {
  std::vector<double> modelled;
  for (size_t i = 0; i < timing.spans.size(); ++i) {
    const CollectiveSpan& span = timing.spans[i];
    modelled.push_back(pattern.calls[i].Modelled(span.end_s - span.start_s));
  }
  const bool recorded_network = rank_shift.has_value();
  const std::vector<double> band_shift = BandShifts(pattern, modelled);
  auto moved = [&band_shift](std::vector<double> durations, double sign) {
    for (size_t i = 0; i < durations.size(); ++i) durations[i] += sign * band_shift[i];
    return durations;
  };
  std::vector<double> views_low, views_high;
  StepParts mean;
  // The step of `sample`: its readiness and gaps scaled by `by`; `gaps`
  // gets the host's gaps after backward.
  auto step_of = [&](const StepSample& sample, double by, double& gaps) {
    IterationPattern step = pattern;
    step.backward_s = sample.backward_s * by;
    gaps = 0;
    for (size_t i = 0; i < step.calls.size(); ++i) {
      CollectiveCall& c = step.calls[i];
      double ready = 0;
      for (int l : buckets[c.bucket].layers) ready = std::max(ready, sample.grad_ready_s[l]);
      c.ready_s = ready * by;
      auto gap = sample.gap_s.find(CallName(c.tag, c.bucket));
      c.gap_s = own_gaps && gap != sample.gap_s.end() ? gap->second : 0.0;
      gaps += c.after_backward ? c.gap_s : 0.0;
    }
    return step;
  };
  // When communication ends after backward, with `durations`.
  auto compose = [&](const IterationPattern& step, std::vector<double> durations) {
    SettleNegativeDurations(durations);
    return std::max(0.0, ComposeIteration(step, durations).comm_end_s - step.backward_s);
  };
  // The time from one step's start to the next's, from backward's start.
  auto period = [&](const StepSample& sample, const IterationPattern& step, const std::vector<double>& durations,
                    double by) {
    return sample.forward_s * by + step.backward_s + compose(step, durations) + sample.tail_s;
  };
  auto savings = [&](const StepSample& sample, const IterationPattern& step, std::vector<double> durations,
                     const TokenBucket& bucket, double by) {
    const double p = period(sample, step, durations, by);
    SettleNegativeDurations(durations);
    return ShaperSavings(step, durations, shapers.link_bytes, bucket, p);
  };
  // `durations` carry the recorded network's shaper as it was (`recorded`:
  // what it saved each call on a timeline of the trace's kind): they are
  // moved to the what-if's, walked to a steady state over the step. The
  // same bucket on the same timeline gives back `durations` exactly.
  auto reshape = [&](const StepSample& sample, const IterationPattern& step, const std::vector<double>& durations,
                     const std::vector<double>& recorded, double by) {
    std::vector<double> shaped = durations;
    for (int round = 0; round < kShaperRounds; ++round) {
      const std::vector<double> saved = savings(sample, step, shaped, shapers.what_if, by);
      for (size_t i = 0; i < shaped.size(); ++i) {
        shaped[i] = durations[i] - pattern.calls[i].network_scale * (saved[i] - recorded[i]);
      }
    }
    return shaped;
  };
  // One view of a step: its readiness, host gaps and (for the trace's own
  // network) its collectives' times, composed; `weight` of the mean.
  auto add = [&](const StepSample& sample, bool own_network, double weight) {
    double gaps = 0;
    // The durations composed and what the composition gives after backward.
    std::vector<double> durations;
    std::function<double(const std::vector<double>&)> after_of;
    const IterationPattern step = step_of(sample, scale, gaps);
    if (own_network) {
      // A rank's step as it measured it, moved by what the what-if changes:
      // the composition with the shifted times less the one with its own.
      std::vector<double> own = modelled, shifted = modelled;
      for (size_t i = 0; i < pattern.calls.size(); ++i) {
        auto network = sample.network_s.find(CallName(pattern.calls[i].tag, pattern.calls[i].bucket));
        if (network == sample.network_s.end()) continue;
        own[i] = network->second;
        shifted[i] = network->second + (*rank_shift)[i];
      }
      double own_gaps_s = 0;
      const IterationPattern as_run = step_of(sample, 1.0, own_gaps_s);
      if (shapers.any()) {
        shifted = reshape(sample, step, shifted, savings(sample, as_run, own, shapers.recorded, 1.0), scale);
      }
      const double as_measured = compose(as_run, own);
      durations = std::move(shifted);
      after_of = [&, as_measured](const std::vector<double>& d) {
        return std::max(0.0, sample.after_backward_s + compose(step, d) - as_measured);
      };
    } else {
      durations = shapers.any()
                      ? reshape(sample, step, modelled, savings(sample, step, modelled, shapers.recorded, scale), scale)
                      : modelled;
      after_of = [&](const std::vector<double>& d) { return compose(step, d); };
    }
    const double after_backward = after_of(durations);
    const double below = after_of(moved(durations, -1)), above = after_of(moved(durations, 1));
    const double backward = sample.backward_s * scale;
    mean.forward += weight * sample.forward_s * scale;
    mean.backward += weight * backward;
    mean.after_backward += weight * after_backward;
    mean.compress += weight * std::min(after_backward, gaps);
    const double tail = sample.tail_s + (decompress_scale - 1) * sample.decompress_s;
    mean.tail += weight * tail;
    const double rest = sample.forward_s * scale + backward + tail;
    mean.views_s.push_back(rest + after_backward);
    views_low.push_back(rest + std::min({after_backward, below, above}));
    views_high.push_back(rest + std::max({after_backward, below, above}));
  };
  const auto n = static_cast<double>(profile.samples.size());
  for (const StepSample& sample : profile.samples) {
    // On the trace's own network each rank's step as it measured it; on
    // another, every rank waits for the slowest.
    if (recorded_network && !sample.per_rank.empty()) {
      for (const StepSample& rank : sample.per_rank)
        add(rank, true, 1 / n / static_cast<double>(sample.per_rank.size()));
    } else {
      add(sample, false, 1 / n);
    }
  }
  mean.low = std::min(Quantile(views_low, kBandLow), mean.iteration());
  mean.high = std::max(Quantile(views_high, kBandHigh), mean.iteration());
  return mean;
}

// What `model`'s kind of communication model gives each of the trace's
// recorded collectives on `network` at the trace's own worker count, in the
// order of input.collective_s: each alone, one after another.
std::vector<double> RecordedCollectivesOnNetwork(const ReplayInput& input, const ReplayOptions& options,
                                                 const PlatformSpec& network) {
  const int world = input.view.run.world_size;
  IterationPattern pattern;
  for (const auto& [key, seconds] : input.collective_s) {
    CollectiveCall call;
    call.op = key.op;
    call.bytes = key.bytes;
    call.tag = key.tag;
    call.bucket = key.bucket;
    pattern.calls.push_back(call);
  }
  std::vector<double> out;
  if (options.timing() == TimingSource::kSimulate) {
    SimulatedCommunication sim(network, world, options.allreduce(), options.fidelity(), 1, options.cancel(),
                               options.timeout_s(), options.collective());
    const IterationTiming timing = sim.Time({pattern}, {}).front();
    for (const CollectiveSpan& span : timing.spans) out.push_back(span.end_s - span.start_s);
  } else {
    const AlphaBetaModel model =
        AlphaBetaModelFor(network, ProbePlatform(network, world, options.cancel(), options.timeout_s()));
    for (const CollectiveCall& c : pattern.calls) {
      out.push_back(model.Time(c.op, options.allreduce(), static_cast<double>(c.bytes), world, options.collective()));
    }
  }
  return out;
}

// What one rank puts through its link for a collective.
double LinkBytes(CollectiveOp op, int64_t bytes, int world, const ReplayOptions& options) {
  return WireBytesPerRank(CollectiveRounds(op, options.allreduce(), bytes, world, options.collective()), world);
}

// The shaper `n`'s probe saw, at its sustained rate; none where it saw no burst.
TokenBucket RecordedShaper(const RecordedNetwork& n) {
  return {n.burst_bytes, n.platform.bandwidth_Bps, n.burst_line_Bps};
}

}  // namespace

std::optional<RecordedNetwork> RecordedNetworkOf(const ReplayInput& input, const ReplayOptions& options) {
  if (!options.anchor()) return std::nullopt;
  std::optional<double> link;
  if (options.recorded_bandwidth_gbps()) link = BytesPerSecondFromGbps(*options.recorded_bandwidth_gbps());
  std::optional<RecordedNetwork> n = FitRecordedNetwork(input.network_probe, input.view.run.world_size, link);
  if (n && options.recorded_latency_us()) {
    n->platform.latency_s = *options.recorded_latency_us() * 1e-6;
    n->platform.Validate();
  }
  return n;
}

PlatformSpec WhatIfBasePlatform(const ReplayInput& input, const ReplayOptions& options) {
  const std::optional<RecordedNetwork> recorded = RecordedNetworkOf(input, options);
  return recorded ? recorded->platform : PlatformSpec();
}

// A burst larger than this per link (1 TiB) is no shaper anyone runs.
constexpr double kMaxBurstBytes = 1099511627776.0;

TokenBucket WhatIfShaper(const ReplayInput& input, const ReplayOptions& options, const PlatformSpec& platform) {
  const std::optional<double> burst = options.burst_bytes();
  if (burst && !(std::isfinite(*burst) && *burst >= 0 && *burst <= kMaxBurstBytes)) {
    throw InputError("--burst-kib must be between 0 and " + FormatNumber(kMaxBurstBytes / 1024) + ", not " +
                     FormatNumber(*burst / 1024));
  }
  const std::optional<double> line = options.line_gbps();
  if (line && !(std::isfinite(*line) && *line > 0 && *line <= 1e6)) {
    throw InputError("--line-gbps must be above 0 and at most 1e6, not " + FormatNumber(*line));
  }
  TokenBucket bucket;
  bucket.sustained_Bps = platform.bandwidth_Bps;
  // Only the probe's own network has its shaper: a rate given for the
  // recorded network replaces the probe's.
  const std::optional<RecordedNetwork> recorded =
      options.recorded_bandwidth_gbps() || (burst && line) ? std::nullopt : RecordedNetworkOf(input, options);
  if (recorded) {
    bucket.burst_bytes = recorded->burst_bytes;
    bucket.line_Bps = recorded->burst_line_Bps;
  }
  if (burst) bucket.burst_bytes = *burst;
  if (line) bucket.line_Bps = BytesPerSecondFromGbps(*line);
  return bucket;
}

namespace {

// Each recorded collective against `modelled` (its time on the recorded
// network, in the order of input.collective_s). Where the model overprices
// the trace's communication as a whole, the shortfall is the model's (a
// rate the probe found too low): every network time is scaled by measured
// over modelled, so it shrinks with the network instead of staying a fixed
// amount a faster network would turn negative. What each collective took
// beyond that is its host cost, which stays at any setting - below zero
// for one that queueing behind the one before handed time to (Gloo runs a
// rank's collectives one at a time, and bytes still on the wire delay the
// next): the step's composition settles those, keeping the sum. Either
// way each collective takes what it measured on the recorded network, and
// the two readings agree where the sums are equal. Each keeps its network
// time there and the rate's uncertainty for the prediction band. Per call
// and overall, means.
HostCosts ResidualCosts(const ReplayInput& input, const std::vector<double>& modelled,
                        const std::vector<double>& shaper_saving = {}, double rate_uncertainty = 0) {
  HostCosts costs;
  double measured_sum = 0, modelled_sum = 0;
  size_t i = 0;
  for (const auto& [key, seconds] : input.collective_s) {
    measured_sum += seconds;
    modelled_sum += modelled[i] - (shaper_saving.empty() ? 0.0 : shaper_saving[i]);
    ++i;
  }
  const double scale = modelled_sum > measured_sum && measured_sum > 0 ? measured_sum / modelled_sum : 1.0;
  std::map<std::string, std::vector<HostCost>> calls;
  std::vector<HostCost> all;
  i = 0;
  for (const auto& [key, seconds] : input.collective_s) {
    const double network = scale * modelled[i++];
    const HostCost cost{seconds - network, scale, network, rate_uncertainty};
    costs.recorded[key] = cost;
    calls[CallName(key.tag, key.bucket)].push_back(cost);
    all.push_back(cost);
  }
  auto mean = [](const std::vector<HostCost>& v) {
    // One network scale for all (the trace's as a whole): kept exactly, not
    // averaged into 0.9999... that the notes would call a scaling.
    HostCost m{0, v.front().network_scale, 0, 0};
    for (const HostCost& c : v) {
      m.host_s += c.host_s / static_cast<double>(v.size());
      m.recorded_network_s += c.recorded_network_s / static_cast<double>(v.size());
      m.attribution += c.attribution / static_cast<double>(v.size());
    }
    return m;
  };
  for (const auto& [call, v] : calls) costs.by_call[call] = mean(v);
  costs.other = mean(all);
  return costs;
}

// The note's account of anchored host costs.
std::string DescribeResiduals(const HostCosts& costs) {
  std::ostringstream out;
  out.precision(3);
  out << "host cost per collective " << costs.other.host_s * 1e6 << " us on average";
  if (costs.other.network_scale < 1) {
    out << ", network times scaled by " << costs.other.network_scale
        << " (the collectives took that fraction of their time on it)";
  }
  return out.str();
}

// How many times its price on the recorded network the trace's largest
// collectives may take before the network is in doubt: a fit that read a
// burst's rate leaves most of a large transfer as "host cost", which a
// faster network would then not shorten.
constexpr double kLargestOverpaid = 3;
constexpr double kLargestPricedAtLeast_s = 1e-3;

// A warning where the recorded network is in doubt, empty where it is not:
// its fit misses the probe, the probe stopped inside a burst, or the trace's
// own largest collectives took far longer than it prices them (`modelled`,
// in the order of input.collective_s).
std::string DoubtAbout(const RecordedNetwork& n, const ReplayInput& input, const std::vector<double>& modelled) {
  std::ostringstream why;
  why.precision(3);
  if (n.rms_transfer_error > RecordedNetwork::kHighRms) {
    why << "its fit misses the probe's largest sizes by " << n.rms_transfer_error * 100
        << " % rms: a busy host, or a network the alpha-beta line does not describe";
  } else if (!n.sustained_seen) {
    why << "the probe's largest sizes did not cross at one rate: a burst not used up";
  } else {
    int64_t largest = 0;
    for (const auto& [key, seconds] : input.collective_s) largest = std::max(largest, key.bytes);
    double measured = 0, priced = 0;
    size_t i = 0;
    for (const auto& [key, seconds] : input.collective_s) {
      if (key.bytes == largest) {
        measured += seconds;
        priced += modelled[i];
      }
      ++i;
    }
    // Only where the network's share is large enough to be told from the
    // hosts' (a millisecond of transfer on the recorded network).
    if (priced >= kLargestPricedAtLeast_s && measured > kLargestOverpaid * priced) {
      why << "the trace's largest collectives, " << static_cast<double>(largest) / 1024 << " KiB, took "
          << measured / priced << "x what it prices them at: its rate may be a burst's, not the sustained one";
    }
  }
  if (why.tellp() == 0) return {};
  return "warning: the recorded network is uncertain (" + why.str() +
         "); what-ifs at other rates may be off: give the rate the run saw with --recorded-bandwidth-gbps (the "
         "explorer's Recorded at)";
}

// With the recorded network known, each collective's host cost is what it
// took less what the replay's own model (SimGrid or alpha-beta) gives it
// there, each alone - negative where the model overprices it: the replay
// corrects it by as much. The network is --recorded-bandwidth-gbps on the
// replay's platform where given, else the one fitted from the trace's probe
// (anchored, the default); either way a replay on that network gives back
// every collective's measured time. Without either, one cost for all: the
// fixed part of the trace's collectives (their line's intercept) less the
// replayed network's latency for a tiny one. Synthetic traces measured
// nothing. The platform's own overhead then stays out (it would count twice).
HostCosts MeasureHostCosts(const ReplayInput& input, const ReplayOptions& options, const PlatformProbe& probe,
                           PlatformSpec& platform, std::vector<std::string>& notes) {
  HostCosts costs;
  if (options.overhead() != OverheadSource::kTrace || input.view.run.synthetic || input.collective_s.empty()) {
    return costs;
  }
  const int trace_world = input.view.run.world_size;
  std::ostringstream note;
  note.precision(3);
  // --recorded-bandwidth-gbps names the recorded network on the replay's
  // own platform (a calibrated one, say); it wins over the probe's, which
  // the command line then uses only to place that platform's links.
  const std::optional<RecordedNetwork> recorded_network =
      options.recorded_bandwidth_gbps() ? std::nullopt : RecordedNetworkOf(input, options);
  std::string uncertain;  // a warning after the note, where the recorded network is in doubt
  if (options.recorded_bandwidth_gbps()) {
    PlatformSpec recorded = platform;
    recorded.bandwidth_Bps = BytesPerSecondFromGbps(*options.recorded_bandwidth_gbps());
    if (options.recorded_latency_us()) recorded.latency_s = *options.recorded_latency_us() * 1e-6;
    recorded.Validate();
    costs = ResidualCosts(input, RecordedCollectivesOnNetwork(input, options, recorded));
    costs.anchored = true;
    note << DescribeResiduals(costs) << ": what the trace's " << input.collective_s.size()
         << " collectives took against their time on this platform at " << *options.recorded_bandwidth_gbps()
         << " Gb/s";
  } else if (recorded_network) {
    const std::vector<double> modelled = RecordedCollectivesOnNetwork(input, options, recorded_network->platform);
    const TokenBucket shaper = RecordedShaper(*recorded_network);
    // Whether the model overprices the trace's collectives as a whole is
    // judged with the shaper's savings (each collective alone, a full
    // bucket): a burst's fast small collectives are the shaper's, not a
    // rate the probe found too low.
    std::vector<double> saving;
    for (const auto& [key, seconds] : input.collective_s) {
      saving.push_back(shaper.Saving(LinkBytes(key.op, key.bytes, trace_world, options), shaper.burst_bytes));
    }
    costs = ResidualCosts(input, modelled, saving, recorded_network->RateUncertainty());
    costs.anchored = true;
    costs.shaper = shaper;
    note << "anchored on the recorded network (" << recorded_network->Describe() << "): " << DescribeResiduals(costs)
         << ", what the trace's " << input.collective_s.size() << " collectives took against it";
    uncertain = DoubtAbout(*recorded_network, input, modelled);
  } else {
    // The op the trace ran most of, and whether its sizes tell fixed cost from transfer.
    std::map<CollectiveOp, std::set<int64_t>> sizes;
    for (const auto& [key, seconds] : input.collective_s) sizes[key.op].insert(key.bytes);
    CollectiveOp op = sizes.begin()->first;
    for (const auto& [o, s] : sizes) op = s.size() > sizes[op].size() ? o : op;
    if (sizes[op].size() < 2) {
      notes.push_back("no host cost per collective from the trace: its " + std::string(ToString(op)) +
                      "s have one size, so their fixed cost cannot be told from their transfer "
                      "(--recorded-bandwidth-gbps says what network they crossed)");
      return costs;
    }
    const double fixed = input.collective_line.at(op).fixed_s;
    const double latency = AlphaBetaModelFor(platform, probe).Time(op, AllReduceAlgorithm::kRing, 1.0, trace_world);
    costs.other.host_s = std::max(0.0, fixed - latency);
    note << "host cost per collective " << costs.other.host_s * 1e6 << " us: the fixed part of the trace's "
         << ToString(op) << "s, " << fixed * 1e6 << " us, less the network's latency, " << latency * 1e6 << " us";
  }
  if (platform.collective_overhead_s > 0) note << ", in place of the platform's overhead";
  notes.push_back(note.str() + " (--collective-overhead platform: the platform's instead)");
  if (!uncertain.empty()) notes.push_back(uncertain);
  platform.collective_overhead_s = 0;
  return costs;
}

// The expected slowdown of the slowest of `ranks` ranks when each rank's
// compute is independently slowed by a log-normal factor of mean 1 and
// coefficient of variation `cv`: the mean over a fixed set of draws.
double ExpectedSlowestRank(double cv, int ranks) {
  if (cv <= 0 || ranks <= 1) return 1;
  const double sigma = std::sqrt(std::log1p(cv * cv));
  std::mt19937_64 rng(20211);
  std::normal_distribution<double> normal(-0.5 * sigma * sigma, sigma);
  // About four million draws in all, at least 200 maxima.
  const int draws = std::max(200, 4000000 / ranks);
  double sum = 0;
  for (int d = 0; d < draws; ++d) {
    double slowest = 0;
    for (int r = 0; r < ranks; ++r) slowest = std::max(slowest, std::exp(normal(rng)));
    sum += slowest;
  }
  return sum / draws;
}

// Epoch by epoch, what `schedule` runs: its patterns go into `book`.
std::vector<EpochStep> PlanSchedule(Setting& s, const Schedule& schedule, PatternBook& book) {
  std::vector<EpochStep> steps;
  for (int e = 0; e < s.input->view.num_epochs(); ++e) steps.push_back(StepOf(s, schedule, e, book));
  return steps;
}

// The trace's own levels at its own workers and scheme, for the epochs it
// measured, so a replay can be compared with what the run took; empty when
// the replay changes either.
std::vector<std::pair<int, EpochStep>> PlanRecorded(Setting& s, const ReplayResult& r, PatternBook& book) {
  const TraceView& view = s.input->view;
  std::vector<std::pair<int, EpochStep>> plan;
  if (r.workers != view.run.world_size || r.scheme != view.run.scheme) return plan;
  Schedule recorded = StaticSchedule(view, view.run.scheme, view.run.level_low);
  recorded.levels = view.levels;
  // The measured epochs against their own steps, shared estimate or not.
  const std::vector<StepProfile>* priced = s.profiles;
  s.profiles = &s.input->steps;
  for (const auto& [epoch, measured] : s.input->measured_iteration_s) {
    plan.emplace_back(epoch, StepOf(s, recorded, epoch, book));
  }
  s.profiles = priced;
  return plan;
}

// What the options and the trace say before anything is timed.
ReplayResult StartResult(const ReplayInput& input, const ReplayOptions& options) {
  const TraceView& view = input.view;
  if (options.workers() < 0) throw InputError("workers must be positive");
  if (options.jobs() < 1) throw InputError("--jobs must be at least 1");
  ReplayResult r;
  r.trace = input.path;
  r.synthetic = view.run.synthetic;
  r.trained_model = view.run.model;
  r.trace_workers = view.run.world_size;
  r.workers = options.workers() > 0 ? options.workers() : view.run.world_size;
  r.scheme = options.scheme().value_or(view.run.scheme);
  r.eta = options.eta().value_or(view.run.eta);
  r.interval = options.interval().value_or(view.run.interval);
  r.timing = options.timing();
  r.profile = input.profile;
  return r;
}

std::unique_ptr<CommunicationModel> MakeCommunicationModel(const ReplayInput& input, const ReplayOptions& options,
                                                           const PlatformSpec& platform, const PlatformProbe& probe,
                                                           int workers) {
  switch (options.timing()) {
    case TimingSource::kRecorded:
      if (workers != input.view.run.world_size) {
        throw InputError("--timing recorded times collectives as the trace measured them: it replays the trace's own " +
                         std::to_string(input.view.run.world_size) + " workers, not " + std::to_string(workers));
      }
      return std::make_unique<RecordedCommunication>(input);
    case TimingSource::kAnalytic:
      return std::make_unique<AnalyticCommunication>(AlphaBetaModelFor(platform, probe), options.allreduce(), workers,
                                                     platform.collective_overhead_s, options.collective());
    case TimingSource::kSimulate:
      break;
  }
  return std::make_unique<SimulatedCommunication>(platform, workers, options.allreduce(), options.fidelity(),
                                                  options.jobs(), options.cancel(), options.timeout_s(),
                                                  options.collective());
}

// The shapers' account, in the result and its notes.
void DescribeShapers(const Setting& s, ReplayResult& r) {
  if (s.shaper.Shapes()) {
    r.shaper = s.shaper.Describe();
    r.notes.push_back(
        "token-bucket shaper on every link: " + r.shaper +
        ", the bucket refilled at the sustained rate between collectives and steps" +
        (s.recorded_shaper.Shapes() ? " (the trace's network probe saw it; --burst-kib 0 leaves it out)" : ""));
  } else if (s.recorded_shaper.Shapes()) {
    r.notes.push_back("the recorded network's token-bucket shaper (" + s.recorded_shaper.Describe() +
                      ") is not on the replayed links: " +
                      (s.shaper.burst_bytes > 0 ? "their rate is not below its line rate" : "--burst-kib 0"));
  }
}

// How the replay's steps differ from the trace's: workers, buckets, scheme,
// stragglers, and the host costs the trace measured.
Setting MakeSetting(const ReplayInput& input, const ReplayOptions& options, const HostCosts& host_costs,
                    ReplayResult& r) {
  const TraceView& view = input.view;
  Setting setting;
  setting.input = &input;
  setting.scheme = RecordedScheme(view.run, r.scheme);
  setting.workers = r.workers;
  setting.buckets = AssignBuckets(view.layers, r.bucket_bytes);
  setting.recorded_buckets = r.bucket_bytes == input.bucket_bytes.value_or(kDefaultBucketBytes);
  setting.host_costs = &host_costs;
  if (options.straggler_cv() < 0 || !std::isfinite(options.straggler_cv()) || options.straggler_cv() > 10) {
    throw InputError("--straggler-cv must be between 0 and 10");
  }
  setting.straggler = ExpectedSlowestRank(options.straggler_cv(), r.workers);
  // Sparse decompression adds every worker's k entries: it grows with them.
  if (r.scheme == view.run.scheme && DescriptionOf(r.scheme).compressor == Compressor::kSparse) {
    setting.decompress_scale = static_cast<double>(r.workers) / view.run.world_size;
  }
  setting.profiles = options.share_compute() ? &input.shared_steps : &input.steps;
  r.compute = input.compute;
  if (!options.share_compute()) {
    for (BatchCompute& b : r.compute) {
      b.compute.shared = b.levels.size() < 2;
      b.compression.shared = b.levels.size() < 2;
    }
  }
  if (r.scheme != view.run.scheme) {
    // The run's own batch: a batch-size trace's dense projection computes
    // what its static run at that batch did, not a larger batch scaled down.
    const double own_batch = static_cast<double>(view.run.batch_size) / view.run.world_size;
    const StepProfile* most = nullptr;
    for (const StepProfile& p : *setting.profiles) {
      const bool own = p.per_worker_batch == own_batch;
      const bool most_own = most != nullptr && most->per_worker_batch == own_batch;
      if (most == nullptr || (own && !most_own) || (own == most_own && p.steps > most->steps)) most = &p;
    }
    setting.foreign = *most;
    setting.foreign->gap_s.clear();
    r.notes.push_back(std::string("compute as measured with ") + ToString(view.run.scheme) + "; the cost of " +
                      ToString(r.scheme) + "'s compression is not in the trace and is counted as 0");
  }
  return setting;
}

// The mean software cost per collective as replayed: the platform's plus
// the host costs the patterns carry.
double MeanCollectiveOverhead(const std::vector<IterationPattern>& patterns, const PlatformSpec& platform) {
  double host_sum = 0;
  int calls = 0;
  for (const IterationPattern& p : patterns) {
    for (const CollectiveCall& c : p.calls) {
      host_sum += c.host_s;
      ++calls;
    }
  }
  return platform.collective_overhead_s + (calls > 0 ? host_sum / calls : 0.0);
}

// Turns timed patterns into epochs: the simulator's central formula lives in
// ProjectEpoch. Epochs that share a pattern, profile and batch compose the
// same steps, so each is composed once.
class EpochProjector {
 public:
  EpochProjector(const ReplayResult& r, const Setting& setting, const ReplayOptions& options)
      : r_(r), setting_(setting), options_(options) {}

  // An epoch's time is its steps times one step's:
  //   iteration = forward + backward + compress + exposed + other
  // where compress and exposed are the part of the step after backward
  // (host compression before held-back collectives, then communication not
  // hidden by backward) and other is the rest as measured (decompression,
  // the optimizer, loading the next batch).
  EpochProjection ProjectEpoch(const EpochStep& s, int epoch) {
    EpochProjection e;
    e.epoch = epoch;
    e.pattern = s.pattern;
    e.low_layers = s.low_layers;
    e.global_batch = s.global_batch;
    e.steps = s.steps;
    const StepParts parts = PartsOf(s);
    e.step_forward_s = parts.forward;
    e.step_backward_s = parts.backward;
    e.iteration_s = parts.iteration();
    const auto n = static_cast<double>(s.steps);
    e.compute_s = n * (parts.forward + parts.backward);
    e.compress_s = n * parts.compress;
    e.exposed_comm_s = n * (parts.after_backward - parts.compress);
    e.other_s = n * parts.tail;
    e.time_s = n * e.iteration_s;
    e.iteration_low_s = parts.low;
    e.iteration_high_s = parts.high;
    e.time_low_s = n * parts.low;
    e.time_high_s = n * parts.high;
    const auto [payload, wire] = BytesOf(s.pattern);
    e.payload_bytes = n * payload;
    e.wire_bytes = n * wire;
    return e;
  }

  // One step of `s`, composed once per pattern, profile and scale.
  const StepParts& PartsOf(const EpochStep& s) {
    const auto key = std::make_tuple(s.pattern, s.profile, s.batch_scale, s.exact_levels);
    auto it = composed_.find(key);
    if (it != composed_.end()) return it->second;
    return composed_[key] = ExpectedStep(r_.patterns[s.pattern], r_.timings[s.pattern], *s.profile, setting_.buckets,
                                         s.batch_scale * setting_.straggler, !setting_.foreign, RankShift(s),
                                         setting_.decompress_scale, ShapersOf(s.pattern));
  }

  ScheduleProjection ProjectSchedule(const std::string& name, const std::string& label,
                                     const std::vector<EpochStep>& steps) {
    ScheduleProjection p;
    p.name = name;
    p.label = label;
    p.total.epoch = -1;
    for (size_t e = 0; e < steps.size(); ++e) {
      p.epochs.push_back(ProjectEpoch(steps[e], static_cast<int>(e)));
      AddTo(p.total, p.epochs.back());
    }
    p.total.iteration_s = p.total.steps > 0 ? p.total.time_s / static_cast<double>(p.total.steps) : 0;
    p.total.iteration_low_s = p.total.steps > 0 ? p.total.time_low_s / static_cast<double>(p.total.steps) : 0;
    p.total.iteration_high_s = p.total.steps > 0 ? p.total.time_high_s / static_cast<double>(p.total.steps) : 0;
    return p;
  }

 private:
  // Only the trace's own pattern, scheme, buckets and workers may use what
  // each rank's collectives took as recorded: as they were (--model
  // recorded), or moved by what the model adds over the recorded network
  // (anchored). Elsewhere every rank waits for the slowest.
  std::optional<std::vector<double>> RankShift(const EpochStep& s) const {
    const IterationPattern& pattern = r_.patterns[s.pattern];
    if (setting_.foreign || !s.exact_levels || !setting_.recorded_buckets || r_.workers != r_.trace_workers) {
      return std::nullopt;
    }
    if (options_.timing() == TimingSource::kRecorded) return std::vector<double>(pattern.calls.size(), 0.0);
    if (!setting_.host_costs->anchored) return std::nullopt;
    std::vector<double> shift;
    for (size_t i = 0; i < pattern.calls.size(); ++i) {
      const CollectiveCall& c = pattern.calls[i];
      const CollectiveSpan& span = r_.timings[s.pattern].spans[i];
      auto measured = setting_.input->collective_s.find({c.op, c.tag, c.bucket, c.bytes});
      // The modelled time less the measured one: zero where the pattern
      // times the collective as the recorded network did.
      shift.push_back(measured == setting_.input->collective_s.end()
                          ? 0.0
                          : c.Modelled(span.end_s - span.start_s) - measured->second);
    }
    return shift;
  }

  Shapers ShapersOf(int p) const {
    Shapers shapers{setting_.shaper, setting_.recorded_shaper, {}};
    if (!shapers.any()) return shapers;
    for (const CollectiveCall& c : r_.patterns[p].calls) {
      shapers.link_bytes.push_back(LinkBytes(c.op, c.bytes, r_.workers, options_));
    }
    return shapers;
  }

  // Payload and wire bytes of one step of pattern `p`.
  std::pair<double, double> BytesOf(int p) {
    auto it = bytes_.find(p);
    if (it != bytes_.end()) return it->second;
    double payload = 0, wire = 0;
    for (const CollectiveCall& c : r_.patterns[p].calls) {
      payload += static_cast<double>(c.bytes);
      wire += WireBytesPerRank(CollectiveRounds(c.op, options_.allreduce(), c.bytes, r_.workers, options_.collective()),
                               r_.workers);
    }
    return bytes_[p] = {payload, wire};
  }

  const ReplayResult& r_;
  const Setting& setting_;
  const ReplayOptions& options_;
  std::map<std::tuple<int, const StepProfile*, double, bool>, StepParts> composed_;
  std::map<int, std::pair<double, double>> bytes_;
};

// The mean over epochs of their mean step, and the median step: over every
// sampled step (and rank) the trace measured in those epochs against every
// step the replay composed from them.
MeasuredCheck CheckAgainstMeasured(const ReplayInput& input, const std::vector<std::pair<int, EpochStep>>& plan,
                                   EpochProjector& projector) {
  MeasuredCheck check;
  std::vector<double> measured_steps, simulated_steps;
  std::set<std::pair<int, const StepProfile*>> composed;
  for (const auto& [epoch, step] : plan) {
    check.measured_iteration_s += input.measured_iteration_s.at(epoch);
    const EpochProjection projected = projector.ProjectEpoch(step, epoch);
    check.simulated_iteration_s += projected.iteration_s;
    check.simulated_low_s += projected.iteration_low_s;
    check.simulated_high_s += projected.iteration_high_s;
    ++check.epochs;
    auto steps = input.measured_step_s.find(epoch);
    if (steps != input.measured_step_s.end()) {
      measured_steps.insert(measured_steps.end(), steps->second.begin(), steps->second.end());
    }
    // Epochs of one pattern share their profile's composed steps.
    if (composed.insert({step.pattern, step.profile}).second) {
      const std::vector<double>& views = projector.PartsOf(step).views_s;
      simulated_steps.insert(simulated_steps.end(), views.begin(), views.end());
    }
  }
  check.measured_iteration_s /= check.epochs;
  check.simulated_iteration_s /= check.epochs;
  check.simulated_low_s /= check.epochs;
  check.simulated_high_s /= check.epochs;
  check.relative_error = (check.simulated_iteration_s - check.measured_iteration_s) / check.measured_iteration_s;
  check.median_measured_iteration_s = Median(measured_steps);
  check.median_simulated_iteration_s = Median(simulated_steps);
  check.median_relative_error =
      (check.median_simulated_iteration_s - check.median_measured_iteration_s) / check.median_measured_iteration_s;
  return check;
}

}  // namespace

ReplayEngine::ReplayEngine(ReplayOptions options) : options_(std::move(options)) {}

// Choose the three schedules, price the trace's host costs, plan every
// epoch's step pattern, time the distinct patterns on the network model,
// then project the epochs and check against what the trace measured.
ReplayResult ReplayEngine::Run(const ReplayInput& input, const std::function<void(int, int)>& progress) const {
  const TraceView& view = input.view;
  ReplayResult r = StartResult(input, options_);
  const auto [accordion, static_low, static_high] = ChooseSchedules(view, options_, r);
  // The platform is built once up front: it checks that it holds the ranks
  // and tells the analytic model what a ring's messages meet.
  const PlatformProbe probe = ProbePlatform(options_.platform(), r.workers, options_.cancel(), options_.timeout_s());
  PlatformSpec platform = options_.platform();
  const HostCosts host_costs = MeasureHostCosts(input, options_, probe, platform, r.notes);
  const std::unique_ptr<CommunicationModel> model = MakeCommunicationModel(input, options_, platform, probe, r.workers);
  r.platform = platform.Describe(r.workers);  // as simulated: host costs may replace its overhead
  r.communication = model->Describe();
  r.allreduce = options_.allreduce();
  r.collective = options_.collective();
  r.bucket_bytes = options_.bucket_bytes().value_or(input.bucket_bytes.value_or(kDefaultBucketBytes));
  Setting setting = MakeSetting(input, options_, host_costs, r);
  if (options_.timing() != TimingSource::kRecorded) {
    setting.shaper = WhatIfShaper(input, options_, platform);
    setting.recorded_shaper = host_costs.shaper;
    DescribeShapers(setting, r);
  }

  PatternBook book(options_.memoise());
  std::vector<std::pair<Policy, std::vector<EpochStep>>> plan_policies;
  for (Policy policy : options_.policies()) {
    if (!DescriptionOf(policy).literature_baseline) continue;  // static and Accordion are projected anyway
    const PolicySettings settings =
        PolicySettings()
            .policy(policy)
            .accordion(
                AccordionOptions().eta(r.eta).interval(r.interval).level_low(r.level_low).level_high(r.level_high))
            .msdr_factor(options_.msdr_factor().value_or(view.run.msdr_factor));
    plan_policies.emplace_back(policy, PlanSchedule(setting, DerivePolicySchedule(view, r.scheme, settings), book));
  }
  const std::vector<EpochStep> plan_accordion = PlanSchedule(setting, accordion, book);
  const std::vector<EpochStep> plan_low = PlanSchedule(setting, static_low, book);
  const std::vector<EpochStep> plan_high = PlanSchedule(setting, static_high, book);
  const std::vector<std::pair<int, EpochStep>> plan_recorded = PlanRecorded(setting, r, book);

  const int total = static_cast<int>(book.patterns().size());
  r.patterns = book.patterns();
  r.timings = model->Time(r.patterns, [&](int done) {
    if (progress) progress(done, total);
  });
  r.timed_patterns = total;
  r.collective_overhead_s = MeanCollectiveOverhead(r.patterns, platform);
  r.distinct_patterns = book.distinct();
  if (setting.inexact_epochs > 0) {
    r.notes.push_back(std::to_string(setting.inexact_epochs) +
                      " schedule epochs use levels the trace did not sample: their compute is that of the "
                      "nearest sampled levels");
  }

  EpochProjector projector(r, setting, options_);
  r.accordion = projector.ProjectSchedule(
      "accordion", "Accordion " + LevelName(r.scheme, r.level_low) + " / " + LevelName(r.scheme, r.level_high),
      plan_accordion);
  r.static_low = projector.ProjectSchedule("static-low", "static " + LevelName(r.scheme, r.level_low), plan_low);
  r.static_high = projector.ProjectSchedule("static-high", "static " + LevelName(r.scheme, r.level_high), plan_high);
  for (const auto& [policy, plan] : plan_policies) {
    r.policies.push_back(
        projector.ProjectSchedule(ToString(policy), PolicyLabel(policy, r.scheme, r.level_low, r.level_high), plan));
  }
  if (!plan_recorded.empty()) r.check = CheckAgainstMeasured(input, plan_recorded, projector);

  if (r.synthetic) r.notes.push_back("SYNTHETIC trace: no training produced these timings");
  if (r.workers != r.trace_workers) {
    r.notes.push_back("scaled from " + std::to_string(r.trace_workers) + " to " + std::to_string(r.workers) +
                      " workers at " + FormatNumber(input.profile.per_worker_batch) +
                      " samples per worker per step; compute per step as measured");
  }
  return r;
}

const ScheduleProjection* ReplayResult::Named(const std::string& name) const {
  for (const ScheduleProjection* p : {&static_low, &static_high, &accordion}) {
    if (p->name == name) return p;
  }
  for (const ScheduleProjection& p : policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace accordion::sim
