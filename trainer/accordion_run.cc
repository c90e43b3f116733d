#include "trainer/accordion_run.h"

#include "common/errors.h"
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
  const Scheme scheme = options.scheme().scheme();
  if (options.policy() == Policy::kAdaqs) {
    policy_ = MakeAdaqsPolicy(1, AdaqsOptions()
                                     .factor(options.msdr_factor())
                                     .interval(options.accordion().interval())
                                     .level_low(options.level_low())
                                     .level_high(options.level_high())
                                     .scheme(scheme));
  } else if (options.policy() == Policy::kSmith) {
    if (!batch_scheme_) throw InputError("policy smith grows the batch: it needs the batch scheme");
    policy_ = MakeSmithPolicy(SmithOptions().level_low(options.level_low()).level_high(options.level_high()));
  }
}

AccordionRun::~AccordionRun() = default;

AccordionRun::Plan AccordionRun::CurrentPlan() const {
  const std::vector<double>& decided = policy_ ? policy_->levels() : controller_->levels();
  const std::vector<bool>& critical = policy_ ? policy_->critical() : controller_->critical();
  const auto L = static_cast<size_t>(num_layers_);
  Plan plan;
  // A single decision (the batch scheme's, a whole-model policy's) holds for every layer.
  const bool one = decided.size() == 1;
  plan.layer_levels = one ? std::vector<double>(L, decided[0]) : decided;
  plan.critical = one ? std::vector<bool>(L, critical[0]) : critical;
  plan.model_critical = model_controller_->critical()[0];
  if (batch_scheme_) {
    plan.global_batch = static_cast<int64_t>(decided[0]);
    plan.raw_gradient_weight = decided[0] / level_low_;
  }
  return plan;
}

AccordionDecision AccordionRun::EndEpoch(const std::vector<double>& norms, double lr, double next_lr) {
  EpochSignals s;
  s.norms = norms;
  s.lr = lr;
  s.lr_next = next_lr;
  return EndEpoch(s);
}

AccordionDecision AccordionRun::EndEpoch(const EpochSignals& s) {
  const double model_norm = WholeModelNorm(s.norms);
  AccordionDecision decision =
      controller_->EndEpoch(batch_scheme_ ? std::vector<double>{model_norm} : s.norms, s.lr, s.lr_next);
  model_controller_->EndEpoch({model_norm}, s.lr, s.lr_next);
  if (!policy_) return decision;
  EpochSignals model;
  model.norms = {model_norm};
  if (!s.mean_norms.empty()) model.mean_norms = {WholeModelMeanNorm(s.mean_norms)};
  if (!s.stds.empty()) model.stds = {WholeModelStd(s.stds)};
  model.lr = s.lr;
  model.lr_next = s.lr_next;
  return policy_->EndEpoch(model);
}

}  // namespace accordion
