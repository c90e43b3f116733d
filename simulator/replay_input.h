// ReplayInput: what a replay needs from a trace, loaded once and kept in
// memory - the epoch tables schedules are derived from, and an
// IterationProfile of compute times averaged over the sampled iterations.
#ifndef ACCORDION_SIMULATOR_REPLAY_INPUT_H_
#define ACCORDION_SIMULATOR_REPLAY_INPUT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trace_view.h"
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

struct ReplayInput {
  std::string path;
  TraceView view;
  IterationProfile profile;
  // The gradient bucket size the trainer used (run.config_json "bucket_mb").
  std::optional<int64_t> bucket_bytes;
  // Mean measured iteration time (total_s) per epoch that has samples, over
  // the same steps as the profile.
  std::map<int, double> measured_iteration_s;
};

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
