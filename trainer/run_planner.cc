#include "trainer/run_planner.h"

#include "common/errors.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

RunPlanner::RunPlanner(const RunSettings& settings, int num_layers)
    : batch_scheme_(DescriptionOf(settings.scheme.scheme()).level_kind == LevelKind::kGlobalBatch),
      num_layers_(num_layers),
      level_low_(settings.level_low) {
  const AccordionOptions accordion = AccordionOptionsOf(settings);
  accordion_ = MakeAccordionPolicy(batch_scheme_ ? 1 : num_layers, accordion);
  model_accordion_ = MakeAccordionPolicy(1, AccordionOptions(accordion).mode(ControllerMode::kPerLayer));
  // A policy that does not decide by critical regimes and has an algorithm
  // of its own (AdaQS, Smith et al.) decides for the whole model instead.
  const PolicyDescription& policy = DescriptionOf(settings.policy);
  if (!policy.critical_regimes && HasAlgorithm(settings.policy)) {
    PolicyInputs inputs;
    inputs.scheme = settings.scheme.scheme();
    inputs.num_layers = num_layers;
    inputs.accordion = accordion;
    inputs.msdr_factor = settings.msdr_factor;
    policy_ = MakeLevelPolicy(settings.policy, inputs);
  }
}

RunPlanner::~RunPlanner() = default;

RunPlanner::Plan RunPlanner::CurrentPlan() const {
  const std::vector<double>& decided = deciding().levels();
  const std::vector<bool>& critical = deciding().critical();
  const auto L = static_cast<size_t>(num_layers_);
  Plan plan;
  // A single decision (the batch scheme's, a whole-model policy's) holds for every layer.
  const bool one = decided.size() == 1;
  plan.layer_levels = one ? std::vector<double>(L, decided[0]) : decided;
  plan.critical = one ? std::vector<bool>(L, critical[0]) : critical;
  plan.model_critical = model_accordion_->critical()[0];
  if (batch_scheme_) {
    plan.global_batch = static_cast<int64_t>(decided[0]);
    plan.raw_gradient_weight = decided[0] / level_low_;
  }
  return plan;
}

AccordionDecision RunPlanner::EndEpoch(const std::vector<double>& norms, double lr, double next_lr) {
  EpochSignals s;
  s.norms = norms;
  s.lr = lr;
  s.lr_next = next_lr;
  return EndEpoch(s);
}

AccordionDecision RunPlanner::EndEpoch(const EpochSignals& s) {
  EpochSignals model;
  model.norms = {WholeModelNorm(s.norms)};
  if (!s.mean_norms.empty()) model.mean_norms = {WholeModelMeanNorm(s.mean_norms)};
  if (!s.stds.empty()) model.stds = {WholeModelStd(s.stds)};
  model.lr = s.lr;
  model.lr_next = s.lr_next;
  EpochSignals norms_only = batch_scheme_ ? model : s;
  norms_only.mean_norms.clear();
  norms_only.stds.clear();
  AccordionDecision decision = accordion_->EndEpoch(norms_only);
  EpochSignals model_norm = model;
  model_norm.mean_norms.clear();
  model_norm.stds.clear();
  model_accordion_->EndEpoch(model_norm);
  return policy_ ? policy_->EndEpoch(model) : decision;
}

std::vector<std::pair<std::string, LevelPolicy*>> RunPlanner::Policies() {
  std::vector<std::pair<std::string, LevelPolicy*>> out = {{"controller", accordion_.get()},
                                                           {"model_controller", model_accordion_.get()}};
  if (policy_) out.emplace_back("policy", policy_.get());
  return out;
}

}  // namespace accordion
