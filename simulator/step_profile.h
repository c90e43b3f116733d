// StepSample and StepProfile: the sampled steps of one set of levels, as a
// synchronous step sees them - what the replay composes with a network's
// collective times (replay_input.h loads them from a trace).
#ifndef ACCORDION_SIMULATOR_STEP_PROFILE_H_
#define ACCORDION_SIMULATOR_STEP_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accordion::sim {

// One sampled step as a synchronous step sees it (StepProfile says how).
struct StepSample {
  double forward_s = 0;
  double backward_s = 0;
  // Of backward, the host's compression inside it: the gaps of the
  // collectives issued while backward runs (PowerSGD's P, TopK's selection
  // hold up the autograd thread); the mean over ranks.
  double in_backward_host_s = 0;
  std::vector<double> grad_ready_s;
  std::map<std::string, double> gap_s;
  std::map<std::string, double> network_s;  // each collective's, by "tag/bucket"
  double tail_s = 0;
  // A rank's own view only: from the end of its backward to the end of its
  // last collective, as it measured it (the anchored replay moves this by
  // what a what-if changes, so the recorded setting gives it back exactly).
  double after_backward_s = 0;
  // Of the tail, the decompression: all compression time less what was
  // spent before issuing collectives (the gaps). TopK's grows with the
  // number of workers (it adds every worker's k entries).
  double decompress_s = 0;
  bool valid = false;  // some rank had every layer's gradient-ready offset
  // Each rank's own view, in its own clock, its collectives' times as it
  // was blocked on them (waiting for the other ranks included): composing
  // these reproduces what each rank measured, which checks the step model
  // on the trace's own setting (--timing recorded). Ranks' clocks start at
  // their own step start and are not aligned with each other.
  std::vector<StepSample> per_rank;
};

// How the steps of one set of levels went, as a synchronous step sees them:
// every collective waits for the last rank to reach it, so per sampled step
// the slowest rank's times count, averaged over the steps. Times are from
// the end of the slowest rank's forward pass (the start of backward).
struct StepProfile {
  std::vector<double> levels;  // the epochs' levels (one per layer)
  double per_worker_batch = 0;
  double forward_s = 0;              // slowest rank
  double backward_s = 0;             // until the last rank's backward ended
  std::vector<double> grad_ready_s;  // [layer]: when the last rank had it
  // Host computation before each after-backward collective (PowerSGD's
  // Q = G^T P), by "tag/bucket".
  std::map<std::string, double> gap_s;
  // From the end of backward or of the last collective, whichever is later,
  // to the end of the step: decompression, the optimizer, loading the next
  // batch. Mean over ranks.
  double tail_s = 0;
  double compress_s = 0;  // all compression and decompression, mean per rank (reported)
  int64_t steps = 0;      // sampled steps averaged
  // Each sampled step: the replay composes every one with the network's
  // collective times and averages the steps, because a step's time is a
  // maximum (of readiness and communication) and the mean of maxima is not
  // the maximum of means.
  std::vector<StepSample> samples;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_STEP_PROFILE_H_
