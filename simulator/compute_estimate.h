// ComputeEstimate: one price for a step's compute (forward and backward)
// per batch size across the levels a trace sampled, unless the levels
// change it beyond the steps' own spread.
//
// A trace samples each set of levels in different epochs, so two levels'
// mean compute differs by warm-up, drift and host noise as well as by what
// the level does (PowerSGD's P and TopK's selection run inside backward, as
// each bucket's gradients arrive). Pricing every schedule with its own
// levels' mean lets that noise decide which schedule is faster. So the
// levels of one batch are compared by their effect size, Cohen's f: the
// standard deviation of the levels' mean step compute (weighted by steps)
// over the pooled standard deviation of steps within a level. Below
// kLevelEffect the levels share one estimate, the mean of every step of
// the batch; above it each keeps its own and the effect is reported. For
// two levels of equal weight f = 0.5 is a difference of one within-level
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

// The compute of the sampled steps of one set of levels.
struct LevelCompute {
  std::vector<double> levels;
  double mean_s = 0;  // forward + backward of the slowest rank, per step
  double sd_s = 0;
  int64_t steps = 0;
  // The mean over every rank's own view of those steps, which the replay
  // composes on the trace's own network (StepSample::per_rank); 0 without.
  double rank_mean_s = 0;
};

// One batch size's levels and whether they share an estimate.
struct BatchCompute {
  double per_worker_batch = 0;
  std::vector<LevelCompute> levels;  // in the trace's profile order
  double mean_s = 0;                 // over every sampled step of the batch
  double rank_mean_s = 0;            // over every rank's view of them
  double within_sd_s = 0;            // pooled within-level standard deviation
  double effect = 0;                 // Cohen's f; 0 with a single level
  bool shared = true;                // one estimate for every level
  // "one estimate for 4 levels: 6.9 ms a step, sd 3.2 ms (levels' effect
  // f = 0.21 < 0.5)"; or "per level, the levels' effect f = 0.64 > 0.5:
  // 0.99 19.1 ms, 0.1 15.2 ms (sd within a level 3.0 ms)".
  std::string Describe(Scheme scheme) const;
};

// The trace's profiles grouped by per-worker batch, in order of first
// appearance.
std::vector<BatchCompute> EstimateCompute(const std::vector<StepProfile>& profiles);

// `profiles` with the compute of every shared batch's levels (forward,
// backward, gradient-ready offsets, in each sample and rank's view) scaled
// to the batch's mean: each level keeps its steps' shape and its own
// compression gaps, tail and collectives.
std::vector<StepProfile> ShareCompute(const std::vector<StepProfile>& profiles,
                                      const std::vector<BatchCompute>& estimates);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COMPUTE_ESTIMATE_H_
