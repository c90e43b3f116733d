#include "trainer/accordion_run.h"

#include "traces/scheme_description.h"

namespace accordion {

AccordionRun::AccordionRun(const AccordionRunOptions& options, int num_layers)
    : batch_scheme_(DescriptionOf(options.scheme().scheme()).level_kind == LevelKind::kGlobalBatch),
      num_layers_(num_layers),
      level_low_(options.level_low()) {
  const AccordionOptions accordion =
      AccordionOptions(options.accordion()).level_low(options.level_low()).level_high(options.level_high());
  controller_ = batch_scheme_ ? std::make_unique<AccordionController>(
                                    1, AccordionOptions(accordion).mode(ControllerMode::kWholeModel))
                              : std::make_unique<AccordionController>(num_layers, accordion);
  model_controller_ = std::make_unique<AccordionController>(1, accordion);
}

AccordionRun::~AccordionRun() = default;

AccordionRun::Plan AccordionRun::CurrentPlan() const {
  const std::vector<double>& decided = controller_->levels();
  const std::vector<bool>& critical = controller_->critical();
  const auto L = static_cast<size_t>(num_layers_);
  Plan plan;
  // The batch scheme's single decision holds for every layer.
  plan.layer_levels = batch_scheme_ ? std::vector<double>(L, decided[0]) : decided;
  plan.critical = batch_scheme_ ? std::vector<bool>(L, critical[0]) : critical;
  plan.model_critical = model_controller_->critical()[0];
  if (batch_scheme_) {
    plan.global_batch = static_cast<int64_t>(decided[0]);
    plan.raw_gradient_weight = decided[0] / level_low_;
  }
  return plan;
}

AccordionDecision AccordionRun::EndEpoch(const std::vector<double>& norms, double lr, double next_lr) {
  const double model_norm = WholeModelNorm(norms);
  AccordionDecision decision =
      controller_->EndEpoch(batch_scheme_ ? std::vector<double>{model_norm} : norms, lr, next_lr);
  model_controller_->EndEpoch({model_norm}, lr, next_lr);
  return decision;
}

}  // namespace accordion
