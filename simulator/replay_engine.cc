#include "simulator/replay_engine.h"

#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "analysis/communication_accounting.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"

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

// What one epoch of one schedule does, before its pattern is timed.
struct EpochStep {
  int pattern = 0;
  int low_layers = 0;
  int64_t global_batch = 0;
  int64_t steps = 0;
  double batch_scale = 1;  // per-worker batch over the profile's
};

struct Setting {
  const ReplayInput* input = nullptr;
  Scheme scheme = Scheme::kDense;
  int workers = 0;
  std::vector<GradientBucket> buckets;
};

int64_t GlobalBatch(const Setting& s, const Schedule& schedule, int epoch) {
  const TraceView& view = s.input->view;
  const double trace_workers = view.run.world_size;
  const double global_at_trace = schedule.scheme == Scheme::kBatch ? schedule.levels[epoch][0]
                                                                   : static_cast<double>(view.run.batch_size);
  return std::max<int64_t>(1, std::llround(global_at_trace / trace_workers * s.workers));
}

IterationPattern PatternOf(const Setting& s, const std::vector<double>& levels, double batch_scale) {
  const TraceView& view = s.input->view;
  IterationPattern pattern;
  for (const PlannedCollective& c : PlanStep(s.scheme, view.layers, s.buckets, levels)) {
    double ready = 0;
    for (int l : s.buckets[c.bucket].layers) ready = std::max(ready, s.input->profile.grad_ready_s[l]);
    pattern.calls.push_back({c.op, c.bytes, ready * batch_scale, c.tag, c.bucket});
  }
  return pattern;
}

EpochStep StepOf(const Setting& s, const Schedule& schedule, int epoch, PatternBook& book) {
  EpochStep step;
  step.global_batch = GlobalBatch(s, schedule, epoch);
  step.steps = StepsPerEpoch(s.input->view.run.train_samples, step.global_batch, s.workers);
  step.batch_scale = static_cast<double>(step.global_batch) / s.workers / s.input->profile.per_worker_batch;
  if (schedule.level_low != schedule.level_high) {
    for (double level : schedule.levels[epoch]) step.low_layers += level == schedule.level_low ? 1 : 0;
  }
  step.pattern = book.Add(PatternOf(s, schedule.levels[epoch], step.batch_scale));
  return step;
}

void AddTo(EpochProjection& total, const EpochProjection& e) {
  total.steps += e.steps;
  total.compute_s += e.compute_s;
  total.compress_s += e.compress_s;
  total.exposed_comm_s += e.exposed_comm_s;
  total.other_s += e.other_s;
  total.time_s += e.time_s;
  total.payload_bytes += e.payload_bytes;
  total.wire_bytes += e.wire_bytes;
}

std::string Format(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

struct Schedules {
  Schedule accordion, static_low, static_high;
};

// Levels: the options, else the trace's own pair when it switched between
// two, else the paper's defaults for the scheme (as accordion-analyze).
Schedules ChooseSchedules(const TraceView& view, const ReplayOptions& options, ReplayResult& r) {
  std::tie(r.level_low, r.level_high) =
      ResolveLevels(view.run, r.scheme, options.level_low(), options.level_high());
  if (r.scheme == Scheme::kDense) {
    r.notes.push_back("dense communication: there are no levels to schedule, all three schedules are dense");
    const Schedule dense = StaticSchedule(view, Scheme::kDense, 0);
    return {dense, dense, dense};
  }
  const AccordionOptions accordion =
      AccordionOptions().eta(r.eta).interval(r.interval).level_low(r.level_low).level_high(r.level_high);
  accordion.Validate();
  return {DeriveAccordionSchedule(view, r.scheme, accordion), StaticSchedule(view, r.scheme, r.level_low),
          StaticSchedule(view, r.scheme, r.level_high)};
}

// Compression costs what the trace measured for its own scheme; another
// scheme's cost is unknown.
double CompressionSeconds(const ReplayInput& input, Scheme scheme, std::vector<std::string>& notes) {
  const Scheme recorded = input.view.run.scheme;
  if (scheme == Scheme::kDense) return 0;
  if (scheme == recorded) return input.profile.compress_s;
  if (recorded == Scheme::kDense || recorded == Scheme::kBatch) {
    notes.push_back(std::string("compression time unknown: the trace used ") + ToString(recorded) +
                    "; counted as 0");
    return 0;
  }
  notes.push_back(std::string("compression time as measured with ") + ToString(recorded));
  return input.profile.compress_s;
}

}  // namespace

ReplayEngine::ReplayEngine(ReplayOptions options) : options_(std::move(options)) {}

ReplayResult ReplayEngine::Run(const ReplayInput& input,
                               const std::function<void(int, int)>& progress) const {
  const TraceView& view = input.view;
  if (options_.workers() < 0) throw InputError("workers must be positive");
  if (options_.jobs() < 1) throw InputError("--jobs must be at least 1");
  ReplayResult r;
  r.trace = input.path;
  r.synthetic = view.run.synthetic;
  r.model_name = view.run.model;
  r.trace_workers = view.run.world_size;
  r.workers = options_.workers() > 0 ? options_.workers() : view.run.world_size;
  r.scheme = options_.scheme().value_or(view.run.scheme);
  r.eta = options_.eta();
  r.interval = options_.interval();
  r.model = options_.model();
  r.profile = input.profile;

  const auto [accordion, static_low, static_high] = ChooseSchedules(view, options_, r);
  // The platform is built once up front: it checks that it holds the ranks
  // and tells the analytic model what a ring's messages meet.
  const PlatformProbe probe = ProbePlatform(options_.platform(), r.workers);
  std::unique_ptr<CommunicationModel> model;
  if (options_.model() == ModelKind::kAnalytic) {
    model = std::make_unique<AnalyticCommunication>(AlphaBetaModelFor(options_.platform(), probe),
                                                    options_.allreduce(), r.workers);
  } else {
    model = std::make_unique<SimulatedCommunication>(options_.platform(), r.workers, options_.allreduce(),
                                                     options_.fidelity(), options_.jobs(), options_.cancel());
  }
  r.platform = options_.platform().Describe(r.workers);
  r.communication = model->Describe();

  r.bucket_bytes = options_.bucket_bytes().value_or(input.bucket_bytes.value_or(kDefaultBucketBytes));
  Setting setting{&input, r.scheme, r.workers, AssignBuckets(view.layers, r.bucket_bytes)};
  PatternBook book(options_.memoise());
  const int E = view.num_epochs();
  auto plan = [&](const Schedule& s) {
    std::vector<EpochStep> steps;
    for (int e = 0; e < E; ++e) steps.push_back(StepOf(setting, s, e, book));
    return steps;
  };
  const std::vector<EpochStep> plan_accordion = plan(accordion);
  const std::vector<EpochStep> plan_low = plan(static_low);
  const std::vector<EpochStep> plan_high = plan(static_high);
  // The trace's own levels, to compare with what it measured.
  std::vector<std::pair<int, EpochStep>> plan_recorded;
  if (r.workers == view.run.world_size && r.scheme == view.run.scheme) {
    Schedule recorded = StaticSchedule(view, view.run.scheme, view.run.level_low);
    recorded.levels = view.levels;
    for (const auto& [epoch, measured] : input.measured_iteration_s) {
      plan_recorded.emplace_back(epoch, StepOf(setting, recorded, epoch, book));
    }
  }

  const int total = static_cast<int>(book.patterns().size());
  r.patterns = book.patterns();
  r.timings = model->Time(r.patterns, [&](int done) {
    if (progress) progress(done, total);
  });
  r.timed_patterns = total;
  r.distinct_patterns = book.distinct();

  const double compress_s = CompressionSeconds(input, r.scheme, r.notes);
  std::map<int, std::pair<double, double>> pattern_bytes;  // payload, wire per step
  auto bytes_of = [&](int p) {
    auto it = pattern_bytes.find(p);
    if (it != pattern_bytes.end()) return it->second;
    double payload = 0, wire = 0;
    for (const CollectiveCall& c : r.patterns[p].calls) {
      payload += static_cast<double>(c.bytes);
      wire += WireBytesPerRank(CollectiveRounds(c.op, options_.allreduce(), c.bytes, r.workers), r.workers);
    }
    return pattern_bytes[p] = {payload, wire};
  };
  auto project = [&](const EpochStep& s, int epoch) {
    EpochProjection e;
    e.epoch = epoch;
    e.pattern = s.pattern;
    e.low_layers = s.low_layers;
    e.global_batch = s.global_batch;
    e.steps = s.steps;
    const double forward = input.profile.forward_s * s.batch_scale;
    const double backward = input.profile.backward_s * s.batch_scale;
    const double exposed = std::max(0.0, r.timings[s.pattern].comm_end_s - backward);
    e.iteration_s = forward + backward + compress_s + exposed + input.profile.other_s;
    const auto n = static_cast<double>(s.steps);
    e.compute_s = n * (forward + backward);
    e.compress_s = n * compress_s;
    e.exposed_comm_s = n * exposed;
    e.other_s = n * input.profile.other_s;
    e.time_s = n * e.iteration_s;
    const auto [payload, wire] = bytes_of(s.pattern);
    e.payload_bytes = n * payload;
    e.wire_bytes = n * wire;
    return e;
  };
  auto schedule_projection = [&](const std::string& name, const std::string& label,
                                 const std::vector<EpochStep>& steps) {
    ScheduleProjection p;
    p.name = name;
    p.label = label;
    p.total.epoch = -1;
    for (int e = 0; e < E; ++e) {
      p.epochs.push_back(project(steps[e], e));
      AddTo(p.total, p.epochs.back());
    }
    p.total.iteration_s = p.total.steps > 0 ? p.total.time_s / static_cast<double>(p.total.steps) : 0;
    return p;
  };
  r.accordion = schedule_projection(
      "accordion",
      "Accordion " + LevelName(r.scheme, r.level_low) + " / " + LevelName(r.scheme, r.level_high),
      plan_accordion);
  r.static_low = schedule_projection("static-low", "static " + LevelName(r.scheme, r.level_low), plan_low);
  r.static_high =
      schedule_projection("static-high", "static " + LevelName(r.scheme, r.level_high), plan_high);

  if (!plan_recorded.empty()) {
    MeasuredCheck check;
    for (const auto& [epoch, step] : plan_recorded) {
      check.measured_iteration_s += input.measured_iteration_s.at(epoch);
      check.simulated_iteration_s += project(step, epoch).iteration_s;
      ++check.epochs;
    }
    check.measured_iteration_s /= check.epochs;
    check.simulated_iteration_s /= check.epochs;
    check.relative_error =
        (check.simulated_iteration_s - check.measured_iteration_s) / check.measured_iteration_s;
    r.check = check;
  }
  if (r.synthetic) r.notes.push_back("SYNTHETIC trace: no training produced these timings");
  if (r.workers != r.trace_workers) {
    r.notes.push_back("scaled from " + std::to_string(r.trace_workers) + " to " + std::to_string(r.workers) +
                      " workers at " + Format(input.profile.per_worker_batch) +
                      " samples per worker per step; compute per step as measured");
  }
  return r;
}

}  // namespace accordion::sim
