// RunPlanner: which levels each epoch of one rank's run trains with. The
// deciding LevelPolicy (analysis/level_policy.h: Accordion, or AdaQS or
// Smith et al. for the whole model) chooses them, exactly as the analysis
// tools replay a trace; Accordion's controllers run beside a policy that is
// not Accordion, for the record (epochs.critical, layers' regimes).
//
// The batch scheme decides once for the whole model (its level is the global
// batch, and the batch only grows); the others decide per layer. A second,
// whole-model Accordion always runs beside them: epochs.critical records its
// verdict. A static run keeps its one level (its low and high are equal)
// while its controllers still say what Accordion would do.
//
// Pure state: no LibTorch, no I/O. AccordionRun (accordion_run.h) drives it
// for accordion-train and the DDP hook.
//
// Thread safety: not thread-safe; the training thread drives it.
#ifndef ACCORDION_TRAINER_RUN_PLANNER_H_
#define ACCORDION_TRAINER_RUN_PLANNER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/level_policy.h"
#include "analysis/run_settings.h"

namespace accordion {

class RunPlanner {
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

  // Throws InputError on settings its policies refuse.
  RunPlanner(const RunSettings& settings, int num_layers);
  ~RunPlanner();
  RunPlanner(const RunPlanner&) = delete;
  RunPlanner& operator=(const RunPlanner&) = delete;

  bool batch_scheme() const { return batch_scheme_; }

  // The running epoch's plan, from the last decision.
  Plan CurrentPlan() const;

  // Feeds the epoch's per-layer signals (the accumulated raw gradient's
  // norms and, for AdaQS, moments) and its LR and the next epoch's
  // (unscaled by any batch factor); CurrentPlan() is then the next epoch's.
  // Returns the deciding policy's verdict (one group for the batch scheme
  // and the whole-model policies).
  AccordionDecision EndEpoch(const EpochSignals& layer_signals);
  // The same without gradient moments (enough unless AdaQS decides).
  AccordionDecision EndEpoch(const std::vector<double>& norms, double lr, double next_lr);

  // Every policy's state, by the name a checkpoint stores it under:
  // "controller" (Accordion, per layer or the batch scheme's whole model),
  // "model_controller" (Accordion, whole model) and "policy" (AdaQS or
  // Smith et al., when one decides).
  std::vector<std::pair<std::string, LevelPolicy*>> Policies();

 private:
  LevelPolicy& deciding() const { return policy_ ? *policy_ : *accordion_; }

  bool batch_scheme_;
  int num_layers_;
  double level_low_;
  std::unique_ptr<LevelPolicy> accordion_;        // per layer, or whole model (batch)
  std::unique_ptr<LevelPolicy> model_accordion_;  // whole model
  std::unique_ptr<LevelPolicy> policy_;           // AdaQS or Smith et al., whole model
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RUN_PLANNER_H_
