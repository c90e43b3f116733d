// ComputeEstimate: one price for a step's compute (forward and backward,
// less the compression hooks run inside backward) per batch size across the
// levels a trace sampled, unless the levels change it beyond the steps' own
// spread. Each level keeps its own compression.
//
// A trace samples each set of levels in different epochs, so two levels'
// mean compute differs by warm-up, drift and host noise as well as by what
// the level does. The compression a hook runs inside backward (PowerSGD's
// P, TopK's selection) is the level's own and is left out: it is measured
// (StepSample::in_backward_host_s) and kept per level. Pricing every
// schedule with its own levels' mean would let the noise decide which
// schedule is faster. So the levels of one batch are compared by their
// effect size, Cohen's f = sqrt(ω² / (1 - ω²)), where ω² is the share of
// the steps' variance the levels explain less what k means of few steps
// explain by chance (a set of levels sampled in 4 steps has a noisy mean).
// At or below kLevelEffect the levels share one estimate, the mean of every
// step of the batch; above it each keeps its own and the effect is
// reported. The compression inside backward is judged the same way, on its
// own: on a busy host it is as noisy as the rest. For two equally
// sampled levels f = 0.5 is a difference of about one within-level
// standard deviation.
//
// Thread safety: pure functions.
#ifndef ACCORDION_SIMULATOR_COMPUTE_ESTIMATE_H_
#define ACCORDION_SIMULATOR_COMPUTE_ESTIMATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/step_profile.h"
#include "traces/records.h"

namespace accordion::sim {

inline constexpr double kLevelEffect = 0.5;

// One quantity over the sampled steps of one set of levels.
struct LevelSample {
  double mean_s = 0;  // per step, the slowest rank's view
  double sd_s = 0;
  // The mean over every rank's own view of those steps, which the replay
  // composes on the trace's own network (StepSample::per_rank); 0 without.
  double rank_mean_s = 0;
};

// The sampled steps of one set of levels: their compute - forward and
// backward less the compression the hooks ran inside backward - and that
// compression (StepSample::in_backward_host_s).
struct LevelCompute {
  std::vector<double> levels;
  int64_t steps = 0;
  LevelSample compute;
  LevelSample compression;
};

// One quantity across a batch's levels: the mean of every sampled step,
// the pooled within-level spread, the levels' effect and whether they
// share the one estimate.
struct SharedEstimate {
  double mean_s = 0;
  double rank_mean_s = 0;
  double within_sd_s = 0;
  double effect = 0;  // Cohen's f from ω²; 0 with a single level
  bool shared = true;
};

// One batch size's levels, their compute and their compression inside
// backward, each shared or per level.
struct BatchCompute {
  double per_worker_batch = 0;
  std::vector<LevelCompute> levels;  // in the trace's profile order
  SharedEstimate compute;
  SharedEstimate compression;
  // "compute one estimate for 4 sets of levels: 2.11 ms a step, sd 1.2 ms
  // (levels' effect f = 0 <= 0.5); compression inside backward one
  // estimate: …"; or "… per level, the levels' effect f = 0.6 > 0.5: TopK
  // 10%: 5.95 ms; TopK 99%: 8.32 ms; sd within a level 3 ms".
  std::string Describe(Scheme scheme) const;
};

// The trace's profiles grouped by per-worker batch, in order of first
// appearance.
std::vector<BatchCompute> EstimateCompute(const std::vector<StepProfile>& profiles);

// `profiles` with the compute and the compression inside backward of every
// batch's levels made the batch's estimates where shared: forward,
// backward and the gradient-ready offsets, in each sample and rank's view,
// scaled to the shared compute plus the shared (or the level's own)
// compression. Each level keeps its steps' shape and its own gaps after
// backward, tail and collectives.
std::vector<StepProfile> ShareCompute(const std::vector<StepProfile>& profiles,
                                      const std::vector<BatchCompute>& estimates);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COMPUTE_ESTIMATE_H_
