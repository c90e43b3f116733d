// AccordionRun: the Accordion side of one rank's run, shared by
// accordion-train and the DDP hook: the controllers built from the run's
// scheme and settings, the plan each epoch trains with (per-layer levels and
// regimes, the batch scheme's global batch) and the decision at each epoch's
// end. Whichever writer records a run, its levels come from this one place.
//
// The batch scheme decides once for the whole model (its level is the global
// batch, and the batch only grows); the others decide per layer. A second,
// whole-model controller always runs beside them: epochs.critical records
// its verdict. A static run keeps its one level while the controllers still
// say what Accordion would do. Under AdaQS or Smith et al. (level_policy.h)
// that policy decides for the whole model instead, the Accordion
// controllers still running beside it for the record.
//
// Thread safety: not thread-safe; the training thread drives it.
#ifndef ACCORDION_TRAINER_ACCORDION_RUN_H_
#define ACCORDION_TRAINER_ACCORDION_RUN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "analysis/level_policy.h"
#include "common/options.h"
#include "traces/records.h"

namespace accordion {

class AccordionRunOptions {
  /// What travels (its kind of level decides the controllers' mode).
  /// Default: CommunicationScheme() (dense).
  ACCORDION_ARG(CommunicationScheme, scheme);
  /// Level inside critical regimes (and of a static run). Default: 0.
  ACCORDION_ARG(double, level_low) = 0;
  /// Level outside them (== level_low for a static run). Default: 0.
  ACCORDION_ARG(double, level_high) = 0;
  /// eta and interval (levels and mode are set from the options above).
  /// Default: AccordionOptions().
  ACCORDION_ARG(AccordionOptions, accordion);
  /// Who decides: static and accordion keep the controllers above in
  /// charge; adaqs (PowerSGD, TopK) and smith (batch) hand the decision to
  /// that policy. Default: Policy::kAccordion.
  ACCORDION_ARG(Policy, policy) = Policy::kAccordion;
  /// AdaQS's MSDR factor (AdaqsOptions::factor). Default: 2.
  ACCORDION_ARG(double, msdr_factor) = 2;
};

class AccordionRun {
 public:
  // What one epoch trains with, as decided at the end of the one before.
  struct Plan {
    std::vector<double> layer_levels;  // per layer, also for the batch scheme
    std::vector<bool> critical;        // per layer
    bool model_critical = false;       // the whole-model regime, for epochs.critical
    // The batch scheme's global batch (its level); 0 for the other schemes.
    int64_t global_batch = 0;
    // What a step's raw gradient counts for in the epoch's norm: a step at a
    // grown batch counts as that many steps at the low batch, so the norm
    // does not shrink because the epoch's steps became fewer.
    double raw_gradient_weight = 1;
  };

  AccordionRun(const AccordionRunOptions& options, int num_layers);
  ~AccordionRun();
  AccordionRun(const AccordionRun&) = delete;
  AccordionRun& operator=(const AccordionRun&) = delete;

  bool batch_scheme() const { return batch_scheme_; }

  // The running epoch's plan, from the controllers' last decision.
  Plan CurrentPlan() const;

  // Feeds the epoch's per-layer signals (the accumulated raw gradient's
  // norms and, for AdaQS, moments) and its LR and the next epoch's
  // (unscaled by any batch factor) to the controllers; CurrentPlan() is then
  // the next epoch's. Returns the deciding one's verdict (one group for the
  // batch scheme and the whole-model policies).
  AccordionDecision EndEpoch(const EpochSignals& layer_signals);
  // The same without gradient moments (enough unless AdaQS decides).
  AccordionDecision EndEpoch(const std::vector<double>& norms, double lr, double next_lr);

  // The controllers, for checkpoints to save and restore; policy() is null
  // unless AdaQS or Smith et al. decide.
  AccordionController& controller() { return *controller_; }
  AccordionController& model_controller() { return *model_controller_; }
  LevelPolicy* policy() { return policy_.get(); }

 private:
  bool batch_scheme_;
  int num_layers_;
  double level_low_;
  std::unique_ptr<AccordionController> controller_;        // per layer, or whole model (batch)
  std::unique_ptr<AccordionController> model_controller_;  // whole model
  std::unique_ptr<LevelPolicy> policy_;                    // AdaQS or Smith et al., whole model
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_ACCORDION_RUN_H_
