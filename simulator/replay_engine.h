// ReplayEngine projects a recorded run onto another cluster and another
// Accordion setting: time, compute, exposed communication and bytes per
// epoch for Accordion's schedule and the static low / static high baselines.
//
//   ReplayInput in = LoadReplayInput("run.trace");
//   ReplayResult r = ReplayEngine(ReplayOptions()
//       .platform(FatTreePlatformOptions().bandwidth_gbps(25).latency_us(5))
//       .workers(64).eta(0.3).interval(5)).Run(in);
//
// One step of epoch e, as the trainer runs it (analysis/communication_plan.h):
// forward, then backward, during which each bucket's collectives start once
// its last gradient is ready on every rank (in issue order, one at a time);
// after backward the held-back collectives (PowerSGD's Q, each after its
// bucket's P and the host's compression), the communication still running
// ("exposed"), and the rest of the step as measured (decompression, the
// optimizer, loading the next batch). Compute is the slowest rank's per
// sampled step, averaged, from the trace's steps that ran the same levels
// (or the nearest it sampled). Epoch e takes steps(e) such steps. Scaling to
// W' workers keeps the per-worker batch: steps(e) =
// StepsPerEpoch(train_samples, per_worker_batch * W', W'), and a step's
// compute stays as measured, slowed by the expected slowest of W' ranks
// when straggler_cv is set.
//
// Every distinct pattern (levels and batch) is timed once (memoise, on by
// default); without memoisation every epoch is timed afresh, for checking.
//
// Thread safety: Run() is const and may run in several threads at once (the
// GUI projects in a thread pool): each SimGrid simulation runs in a child
// process of its own, as SimGrid allows one engine per process.
#ifndef ACCORDION_SIMULATOR_REPLAY_ENGINE_H_
#define ACCORDION_SIMULATOR_REPLAY_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/accordion_controller.h"
#include "analysis/communication_plan.h"
#include "analysis/schedule.h"
#include "analysis/time_band.h"
#include "common/options.h"
#include "simulator/communication_model.h"
#include "simulator/recorded_network.h"
#include "simulator/replay_input.h"
#include "simulator/token_bucket.h"

namespace accordion::sim {

// Where the software cost of a collective comes from: the trace's own
// collectives - what each cost these hosts during training beyond its
// transfer, under the training's own load - or the platform's
// (PlatformSpec::collective_overhead_s: a calibration's, or none).
enum class OverheadSource { kTrace, kPlatform };

class ReplayOptions {
  /// The cluster to project onto. Default: PlatformSpec() (a star).
  ACCORDION_ARG(PlatformSpec, platform);
  /// Workers to project to; 0: the trace's. Default: 0.
  ACCORDION_ARG(int, workers) = 0;
  /// The scheme to replay; empty: the trace's. Default: empty.
  ACCORDION_ARG(std::optional<Scheme>, scheme);
  /// Accordion's threshold eta and check interval (epochs); empty: the
  /// trace's own (run.eta, run.interval), so a replay derives the schedule
  /// the run had unless told otherwise. The levels are the two overrides
  /// below, the controller's mode follows the scheme. Default: empty.
  ACCORDION_ARG(std::optional<double>, eta);
  ACCORDION_ARG(std::optional<int>, interval);
  /// The low and high levels; empty: the trace's pair. Optional here, not
  /// AccordionOptions' concrete levels, because "empty" means "what the trace
  /// ran", which only the trace knows. Default: empty.
  ACCORDION_ARG(std::optional<double>, level_low);
  ACCORDION_ARG(std::optional<double>, level_high);
  /// Other policies to project beside Accordion and the static pair
  /// (analysis/level_policy.h): adaqs, smith. Each is derived from the
  /// trace's signals (a trace that lacks one is an InputError). Default: none.
  ACCORDION_ARG(std::vector<Policy>, policies);
  /// AdaQS's MSDR factor; empty: the trace's run.msdr_factor. Default: empty.
  ACCORDION_ARG(std::optional<double>, msdr_factor);
  /// What times the collectives: SimGrid, the alpha-beta formulas or the
  /// trace. Default: TimingSource::kSimulate.
  ACCORDION_ARG(TimingSource, timing) = TimingSource::kSimulate;
  /// The all-reduce algorithm. Default: AllReduceAlgorithm::kRing.
  ACCORDION_ARG(AllReduceAlgorithm, allreduce) = AllReduceAlgorithm::kRing;
  /// The all-reduce algorithm's settings (NCCL's chunks and channels, ranks
  /// per node). Default: CollectiveOptions().
  ACCORDION_ARG(CollectiveOptions, collective);
  /// How finely SimGrid simulates a collective (network_simulation.h). Default: Fidelity::kAuto.
  ACCORDION_ARG(Fidelity, fidelity) = Fidelity::kAuto;
  /// Price a batch's compute once across the levels the trace sampled
  /// where the levels do not change it beyond the steps' own spread
  /// (compute_estimate.h); false: each schedule epoch from its own levels'
  /// steps, as measured. The check against the measured epochs always
  /// uses their own. Default: true.
  ACCORDION_ARG(bool, share_compute) = true;
  /// Time every distinct pattern once. Default: true.
  ACCORDION_ARG(bool, memoise) = true;
  /// Gradient bucket size; empty: the bucket size the trace's configuration
  /// names, else DDP's 25 MiB. Default: empty.
  ACCORDION_ARG(std::optional<int64_t>, bucket_bytes);
  /// Patterns timed at once. Default: 1.
  ACCORDION_ARG(int, jobs) = 1;
  /// Stragglers: every rank's compute in every step slowed by an independent
  /// log-normal factor (mean 1, this coefficient of variation); a step waits
  /// for the slowest rank. 0: ranks as measured. Default: 0.
  ACCORDION_ARG(double, straggler_cv) = 0;
  /// The most one pattern's SimGrid simulation may take, in seconds (0: no
  /// limit); a simulation past it is stopped and the replay fails. Default: 3600.
  ACCORDION_ARG(double, timeout_s) = 3600;
  /// Where a collective's software cost comes from. Default: OverheadSource::kTrace.
  ACCORDION_ARG(OverheadSource, overhead) = OverheadSource::kTrace;
  /// Anchor on the trace's network probe when it has one: fit the recorded
  /// network from it (recorded_network.h) and take each recorded
  /// collective's host cost as its measured time less what the replay's
  /// model gives it on that network, so a replay on the recorded network
  /// reproduces what the trace measured. Default: true.
  ACCORDION_ARG(bool, anchor) = true;
  /// The network the trace was recorded on: the replay's platform at this
  /// bandwidth (and latency). With it every recorded collective's host cost
  /// is its measured time less what that network takes for it; without it,
  /// one cost for all, the fixed part of the trace's collectives. With a
  /// probe, the links' rate: what the probe found slower is then the hosts'
  /// cost per byte, kept at other rates. Default: empty.
  ACCORDION_ARG(std::optional<double>, recorded_bandwidth_gbps);
  /// Default: empty (the replay platform's latency).
  ACCORDION_ARG(std::optional<double>, recorded_latency_us);
  /// The replayed links' token-bucket shaper (token_bucket.h): its burst
  /// per link in bytes (0: no shaper) and its line rate in Gb/s, the
  /// platform's bandwidth being the sustained rate. Empty: the shaper the
  /// trace's probe found (recorded_network.h), with that burst and line
  /// rate, where it found one; none where it did not. Default: empty.
  ACCORDION_ARG(std::optional<double>, burst_bytes);
  ACCORDION_ARG(std::optional<double>, line_gbps);
  /// When set and it becomes true, a running simulation stops and Run()
  /// throws Cancelled (child_process.h). The flag must outlive Run().
  /// Default: nullptr.
  ACCORDION_ARG(const std::atomic<bool>*, cancel) = nullptr;
};

struct EpochProjection {
  int epoch = 0;
  int pattern = 0;     // index into ReplayResult::patterns
  int low_layers = 0;  // layers at the low level (critical) this epoch
  int64_t global_batch = 0;
  int64_t steps = 0;
  double iteration_s = 0;
  double step_forward_s = 0;  // one step's
  double step_backward_s = 0;
  double compute_s = 0;       // forward + backward (compression during backward included)
  double compress_s = 0;      // compression after backward, before the held-back collectives
  double exposed_comm_s = 0;  // communication still running after backward
  double other_s = 0;         // decompression, optimizer, data loading
  double time_s = 0;
  // The prediction band around iteration_s and time_s: the range that held
  // 90 % of the trace's recorded steps (their 5th to 95th percentile),
  // carried through the model, each step at the end of its collectives'
  // network / host attribution that gives it least or most
  // (CollectiveCall::attribution: the probe fit's rate uncertainty, and any
  // host cost the trace's small collectives do not show). On the recorded
  // network only the steps' own spread remains. A total's band is its
  // epochs' summed: as if every step sat at that end.
  double iteration_low_s = 0, iteration_high_s = 0;
  double time_low_s = 0, time_high_s = 0;
  TimeBand time_band() const { return {time_low_s, time_high_s}; }
  double payload_bytes = 0;  // one worker's payload, as the trace counts it
  double wire_bytes = 0;     // what one worker puts on the wire (algorithm factors included)
};

struct ScheduleProjection {
  std::string name;   // accordion, static-low, static-high
  std::string label;  // "Accordion rank 2 / rank 1", "static rank 2"
  std::vector<EpochProjection> epochs;
  EpochProjection total;  // sums; iteration_s is the mean per step
};

// The trace's own schedule at its own worker count, against the iteration
// times the trace measured (epochs with samples only).
struct MeasuredCheck {
  int epochs = 0;
  double measured_iteration_s = 0;
  double simulated_iteration_s = 0;
  double relative_error = 0;  // (simulated - measured) / measured
  // Medians over the same epochs of their mean steps: one odd epoch (a
  // loaded host) moves the mean but not these (calibrate's self-check).
  double median_measured_iteration_s = 0;  // over every sampled step and rank
  double median_simulated_iteration_s = 0;
  double median_relative_error = 0;
  // The band of the epochs' steps (EpochProjection::iteration_low_s and
  // _high_s), means over the same epochs.
  double simulated_low_s = 0;
  double simulated_high_s = 0;
  bool median_in_band() const {
    return median_measured_iteration_s >= simulated_low_s && median_measured_iteration_s <= simulated_high_s;
  }
};

struct ReplayResult {
  std::string trace;
  bool synthetic = false;
  std::string trained_model;  // the network the trace trained (run.model): "mlp"
  int trace_workers = 0;
  int workers = 0;
  Scheme scheme = Scheme::kDense;
  double eta = 0;
  int interval = 0;
  double level_low = 0;
  double level_high = 0;
  int64_t bucket_bytes = 0;
  std::string platform;              // description
  double collective_overhead_s = 0;  // mean software cost per collective, as replayed
  std::string communication;         // description of the communication model
  std::string shaper;                // the token-bucket shaper modelled; empty: none
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::kRing;
  CollectiveOptions collective;                   // the all-reduce's settings, as replayed
  TimingSource timing = TimingSource::kSimulate;  // what timed the collectives (--timing)
  IterationProfile profile;
  ScheduleProjection accordion, static_low, static_high;
  // One per ReplayOptions::policies, in order (name "adaqs", "smith").
  std::vector<ScheduleProjection> policies;
  std::vector<IterationPattern> patterns;  // timed patterns
  std::vector<IterationTiming> timings;    // one per pattern
  int timed_patterns = 0;                  // patterns the model timed
  int distinct_patterns = 0;
  std::optional<MeasuredCheck> check;
  // How each batch's compute was priced across levels: shared (one
  // estimate) or per level, with the effect that decided it. With
  // share_compute false every batch reads "per level".
  std::vector<BatchCompute> compute;
  std::vector<std::string> notes;

  double speedup_vs_low() const { return static_low.total.time_s / accordion.total.time_s; }
  // The schedule projection of that name ("static-low", "accordion",
  // "adaqs"); nullptr where none.
  const ScheduleProjection* Named(const std::string& name) const;
  double speedup_vs_high() const { return static_high.total.time_s / accordion.total.time_s; }
};

// The network `input` was recorded on as `options` see it: fitted from the
// trace's probe when they anchor (recorded_network.h), its links at
// recorded_bandwidth_gbps (and latency) where given; nullopt without a probe
// or when they do not anchor. What a replay's platform flags change by
// default (accordion-sim), and what its host costs are residuals over.
std::optional<RecordedNetwork> RecordedNetworkOf(const ReplayInput& input, const ReplayOptions& options);

// The platform a what-if's settings change for `input`: the recorded network
// where RecordedNetworkOf gives one, else PlatformSpec's defaults. Every tool
// starts from it (accordion-sim's flags, the GUI's what-if, accordion-report),
// so the same trace and settings give the same answer everywhere.
PlatformSpec WhatIfBasePlatform(const ReplayInput& input, const ReplayOptions& options);

// The token-bucket shaper a replay by `options` puts on `platform`'s links
// (its bandwidth the sustained rate): the options' burst and line rate,
// else the one the trace's recorded network found; Shapes() false where
// there is none. Throws InputError for a burst or line rate out of range.
TokenBucket WhatIfShaper(const ReplayInput& input, const ReplayOptions& options, const PlatformSpec& platform);

class ReplayEngine {
 public:
  explicit ReplayEngine(ReplayOptions options);
  // `progress(done, total)` while patterns are timed.
  ReplayResult Run(const ReplayInput& input, const std::function<void(int, int)>& progress = {}) const;

 private:
  ReplayOptions options_;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_REPLAY_ENGINE_H_
