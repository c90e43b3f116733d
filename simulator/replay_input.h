// ReplayInput: what a replay needs from a trace, loaded once and kept in
// memory - the epoch tables schedules are derived from, the sampled steps
// per set of levels (StepProfile), what each recorded collective took, and
// an IterationProfile of the whole trace's mean for reports.
//
// Thread safety: plain values, safe to share read-only (the GUI shares one per
// run, immutable, between its pool threads); NearestStepProfile is pure. The
// Load* overloads taking a reader use it (one thread each, trace_reader.h).
#ifndef ACCORDION_SIMULATOR_REPLAY_INPUT_H_
#define ACCORDION_SIMULATOR_REPLAY_INPUT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trace_view.h"
#include "simulator/compute_estimate.h"
#include "simulator/step_profile.h"
#include "traces/records.h"

namespace accordion {
class TraceReader;
}

namespace accordion::sim {

// One optimizer step's compute, as measured, per rank and averaged over the
// sampled iterations and ranks - leaving out an epoch's first step (warm-up)
// where the epoch has later samples. Forward and backward (and the
// gradient-ready offsets) were measured at per_worker_batch samples per rank;
// the replay scales them linearly when a batch-size schedule changes the batch.
// The whole trace's mean, for reports; the replay uses StepProfiles.
struct IterationProfile {
  double per_worker_batch = 0;
  double forward_s = 0;
  double backward_s = 0;
  double compress_s = 0;
  double other_s = 0;                // total_s - the rest (optimizer, bookkeeping), >= 0
  std::vector<double> grad_ready_s;  // [layer], from the start of backward
  int64_t iteration_samples = 0;
  int64_t grad_ready_samples = 0;
};

// How a step's collective is named in the maps below ("powersgd-q/1"): its
// tag and bucket, which identify it within a step's plan.
std::string CallName(const std::string& tag, int bucket);

// What one recorded collective took on the network, by its identity in the
// step plan: per sampled step the shortest over ranks (the last rank to
// arrive waited least), less any time it queued behind the collective
// issued before it, then the mean over steps (a step's mean time is what an
// epoch adds up; on a noisy host the median can be far from it).
struct RecordedCollectiveKey {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::string tag;
  int bucket = 0;
  int64_t bytes = 0;
  bool operator<(const RecordedCollectiveKey& o) const;
};

struct ReplayInput {
  std::string path;
  TraceView view;
  IterationProfile profile;
  std::vector<StepProfile> steps;  // one per distinct set of levels sampled
  // Each batch's compute across its levels (compute_estimate.h), and
  // `steps` with the compute of the batches that share one estimate made
  // equal: projections price schedules from these, the check against the
  // measured epochs from `steps`.
  std::vector<BatchCompute> compute;
  std::vector<StepProfile> shared_steps;
  std::map<RecordedCollectiveKey, double> collective_s;
  // Per op, collective_s as a line: seconds = fixed_s + per_byte_s * bytes
  // (least squares; where sizes are too few or too alike to give a line
  // with both terms >= 0, the shortest collective's time and no slope).
  // fixed_s is what one collective cost these hosts during training whatever
  // its size: the network's latency and the software's overhead.
  struct CollectiveLine {
    double fixed_s = 0;
    double per_byte_s = 0;
  };
  std::map<CollectiveOp, CollectiveLine> collective_line;
  // The gradient bucket size the trainer used (run.config_json "bucket_mb").
  std::optional<int64_t> bucket_bytes;
  // Mean measured iteration time (total_s) per epoch that has samples, over
  // the same steps as the profile.
  std::map<int, double> measured_iteration_s;
  // Each of those steps' total_s, per epoch: one per (step, rank).
  std::map<int, std::vector<double>> measured_step_s;
  // The network probe the run made at start (schema v2; empty without).
  std::vector<NetworkProbeRecord> network_probe;
};

// The measured steps closest to `levels`: the same levels if sampled, else
// those differing in the fewest layers (then the smallest level ratios).
const StepProfile& NearestStepProfile(const ReplayInput& input, const std::vector<double>& levels);
// The same among `profiles` (input.steps or input.shared_steps).
const StepProfile& NearestStepProfile(const std::vector<StepProfile>& profiles, const std::vector<double>& levels);

// Throws InputError when the trace lacks what replay needs: sampled
// iterations, and gradient-ready offsets for every layer.
ReplayInput LoadReplayInput(const std::string& path);
// The same from an open trace whose view is already loaded.
ReplayInput LoadReplayInput(TraceReader& reader, TraceView view);

// One measured iteration (rank 0) for timelines: the sampled iteration of
// `epoch`, or of the nearest sampled epoch.
struct MeasuredIteration {
  IterationRecord record;
  std::vector<CollectiveRecord> collectives;
  std::vector<GradReadyRecord> grad_ready;
};
MeasuredIteration LoadMeasuredIteration(const std::string& path, int epoch);
MeasuredIteration LoadMeasuredIteration(TraceReader& reader, int epoch);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_REPLAY_INPUT_H_
