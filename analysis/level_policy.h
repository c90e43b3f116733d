// LevelPolicy: what chooses each epoch's levels, behind one interface - the
// Accordion controller (Algorithm 1) and the two adaptive schemes the paper
// compares it with (Section 5.6):
//
//   AdaQS (Guo et al. 2020): at each check (every `interval` epochs) the
//     gradients' mean-to-standard-deviation ratio (MSDR, |E[g]| / std(g) of
//     one worker's per-step gradient) is compared with its value at the last
//     switch; once it has fallen to 1 / factor of it the compression halves
//     (PowerSGD's rank doubles, TopK's fraction doubles), from level_high up
//     to level_low at most. The MSDR's reference restarts at each switch.
//   Smith et al. 2017: where the LR schedule decays the LR, the global batch
//     grows by the decay's factor instead (rounded to a multiple of
//     level_low, capped at level_high); the trainer keeps the LR x batch /
//     level_low scaling, so a decay turned into batch growth leaves the LR
//     where it was, and one past the cap decays it as usual.
//
// Every choice the papers leave open is written down in docs/policies.md.
// The policies are plain state machines: no LibTorch, no I/O. The trainer
// feeds them live, the analysis tools replay a trace's recorded signals.
//
// Thread safety: a policy is not thread-safe (EndEpoch and Restore change
// it): one thread drives each.
#ifndef ACCORDION_ANALYSIS_LEVEL_POLICY_H_
#define ACCORDION_ANALYSIS_LEVEL_POLICY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/accordion_controller.h"
#include "common/options.h"
#include "traces/records.h"

namespace accordion {

// What a policy reads at the end of an epoch, per group (a layer, or the
// whole model as one group).
struct EpochSignals {
  std::vector<double> norms;       // the accumulated raw gradient's norm (Accordion)
  std::vector<double> mean_norms;  // |E[g]| of the per-step gradient (AdaQS)
  std::vector<double> stds;        // its standard deviation (AdaQS)
  double lr = 0;                   // the schedule's LR of the epoch, before any batch factor
  double lr_next = 0;              // the schedule's LR of the next epoch
};

// The whole model's moments from its layers' (the layers are independent
// coordinates of one vector): |E[g]| = sqrt(sum |E[g_l]|^2) and
// std = sqrt(sum std_l^2).
double WholeModelMeanNorm(const std::vector<double>& layer_mean_norms);
double WholeModelStd(const std::vector<double>& layer_stds);

// A policy's state for a checkpoint: named lists of numbers.
using PolicyState = std::map<std::string, std::vector<double>>;

class LevelPolicy {
 public:
  virtual ~LevelPolicy() = default;

  virtual Policy kind() const = 0;
  // Levels and regimes for the epoch about to run (next_epoch()).
  virtual const std::vector<double>& levels() const = 0;
  virtual const std::vector<bool>& critical() const = 0;
  virtual int next_epoch() const = 0;
  int num_groups() const { return static_cast<int>(levels().size()); }

  // Ends epoch next_epoch(). Throws InputError on signals that do not fit
  // (wrong count, negative or non-finite values) or that the policy needs
  // and were not given.
  virtual AccordionDecision EndEpoch(const EpochSignals& signals) = 0;

  virtual PolicyState Save() const = 0;
  // Throws InputError if `state` does not fit this policy.
  virtual void Restore(const PolicyState& state) = 0;
};

class AdaqsOptions {
 public:
  // Throws InputError naming the first bad option.
  void Validate() const;

  /// The MSDR must fall to 1 / factor of its reference to switch. Default: 2.
  ACCORDION_ARG(double, factor) = 2;
  /// Epochs between MSDR checks. Default: 10 (Accordion's interval).
  ACCORDION_ARG(int, interval) = 10;
  /// The most accurate level it may reach (PowerSGD rank 2, TopK 0.99). Default: 2.
  ACCORDION_ARG(double, level_low) = 2;
  /// The level it starts at (the most compressed). Default: 1.
  ACCORDION_ARG(double, level_high) = 1;
  /// The scheme whose levels it steps through: kPowerSgd or kTopK. Default: kPowerSgd.
  ACCORDION_ARG(Scheme, scheme) = Scheme::kPowerSgd;
};

class SmithOptions {
 public:
  void Validate() const;

  /// The starting global batch. Default: 128.
  ACCORDION_ARG(double, level_low) = 128;
  /// The largest global batch. Default: 1024.
  ACCORDION_ARG(double, level_high) = 1024;
};

// Accordion (AccordionController) behind the interface.
std::unique_ptr<LevelPolicy> MakeAccordionPolicy(int num_groups, const AccordionOptions& options);
std::unique_ptr<LevelPolicy> MakeAdaqsPolicy(int num_groups, const AdaqsOptions& options);
// One group: the batch is the whole model's.
std::unique_ptr<LevelPolicy> MakeSmithPolicy(const SmithOptions& options);

// What a policy's algorithm is built from.
struct PolicyInputs {
  Scheme scheme = Scheme::kPowerSgd;  // whose levels it chooses
  int num_layers = 1;
  // eta and interval (Accordion; AdaQS checks at the interval too) and the
  // level pair.
  AccordionOptions accordion;
  double msdr_factor = 2;  // AdaQS's (AdaqsOptions::factor)
};

// `policy`'s algorithm for `inputs` (Accordion per layer, or for the whole
// model in the batch scheme; AdaQS and Smith et al. for the whole model):
// the one place that maps a policy to its LevelPolicy, so a new policy is a
// row in traces/policy_description.cc and one here. Throws InputError when
// the policy does not fit the scheme (PolicyFitProblem) or has no algorithm
// (static: its level never moves).
std::unique_ptr<LevelPolicy> MakeLevelPolicy(Policy policy, const PolicyInputs& inputs);
// Whether MakeLevelPolicy has an algorithm for `policy`.
bool HasAlgorithm(Policy policy);

// AdaQS's next level after `level` when the compression halves: a PowerSGD
// rank and a TopK fraction both double, up to level_low.
double AdaqsNextLevel(double level, double level_low);
// Smith's batch after an LR decay from `lr` to `lr_next`.
double SmithNextBatch(double batch, double lr, double lr_next, double level_low, double level_high);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_LEVEL_POLICY_H_
