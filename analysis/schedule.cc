#include "analysis/schedule.h"

#include "analysis/communication_accounting.h"
#include "analysis/level_policy.h"
#include "common/errors.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

Schedule EmptySchedule(const TraceView& view, Scheme scheme, double low, double high) {
  Schedule s;
  s.scheme = RecordedScheme(view.run, scheme);
  s.level_low = low;
  s.level_high = high;
  const int E = view.num_epochs();
  const int L = view.num_layers();
  s.levels.assign(E, std::vector<double>(L, low));
  s.critical.assign(E, std::vector<bool>(L, false));
  s.ratios.assign(E, std::vector<std::optional<double>>(L));
  s.checked.assign(E, false);
  s.lr_decay.assign(E, false);
  for (int e = 0; e + 1 < E; ++e) s.lr_decay[e] = IsLrDecay(ScheduleLr(view, e), ScheduleLr(view, e + 1));
  return s;
}

void CheckLevels(Scheme scheme, double low, double high) {
  for (const auto& [level, name] : {std::pair{low, "low"}, std::pair{high, "high"}}) {
    const std::string problem = LevelProblem(scheme, level);
    if (!problem.empty()) throw InputError(std::string(name) + " level " + problem);
  }
}

}  // namespace

std::pair<double, double> DefaultLevels(Scheme scheme, int64_t batch_size) {
  const SchemeDescription& d = DescriptionOf(scheme);
  const double unit = d.level_kind == LevelKind::kGlobalBatch ? static_cast<double>(batch_size) : 1.0;
  return {d.default_low * unit, d.default_high * unit};
}

std::pair<double, double> ResolveLevels(const RunInfo& run, Scheme scheme, std::optional<double> low,
                                        std::optional<double> high) {
  auto levels = DefaultLevels(scheme, run.batch_size);
  if (scheme == run.scheme && run.level_low != run.level_high) {
    levels = {run.level_low, run.level_high};
  }
  return {low.value_or(levels.first), high.value_or(levels.second)};
}

Schedule DeriveAccordionSchedule(const TraceView& view, Scheme scheme, const AccordionOptions& options) {
  return DerivePolicySchedule(view, scheme, PolicySettings().policy(Policy::kAccordion).accordion(options));
}

double ScheduleLr(const TraceView& view, int epoch) {
  const auto e = static_cast<size_t>(epoch);
  return e < view.schedule_lr.size() ? view.schedule_lr[e] : view.epochs[e].lr;
}

std::string MissingSignal(const TraceView& view, Policy policy) {
  if (!DescriptionOf(policy).reads_gradient_moments) return "";
  for (int e = 0; e < view.num_epochs(); ++e) {
    for (int l = 0; l < view.num_layers(); ++l) {
      const bool missing = e >= static_cast<int>(view.grad_mean_norms.size()) ||
                           !Recorded(view.grad_mean_norms[e][l]) || !Recorded(view.grad_stds[e][l]);
      if (missing) {
        return std::string("policy ") + ToString(policy) +
               " reads each layer's gradient mean norm and standard deviation "
               "(epoch_layers.grad_mean_norm, grad_std), and this trace does not record them (epoch " +
               std::to_string(e) + ", layer " + std::to_string(l) +
               "): record the run with this toolkit's accordion-train or Python hook (trace schema v" +
               std::to_string(DescriptionOf(policy).min_schema_version) + ")";
      }
    }
  }
  return "";
}

Schedule DerivePolicySchedule(const TraceView& view, Scheme scheme, const PolicySettings& settings) {
  const SchemeDescription& description = DescriptionOf(scheme);
  if (!description.has_levels()) {
    throw InputError(std::string(description.name) + " communication has no levels to schedule");
  }
  const AccordionOptions& accordion = settings.accordion();
  CheckLevels(scheme, accordion.level_low(), accordion.level_high());
  const Policy policy = settings.policy();
  const int L = view.num_layers();
  PolicyInputs inputs;
  inputs.scheme = scheme;
  inputs.num_layers = L;
  inputs.accordion = accordion;
  inputs.msdr_factor = settings.msdr_factor();
  if (!HasAlgorithm(policy)) throw InputError("a static policy has nothing to derive: StaticSchedule");
  std::unique_ptr<LevelPolicy> controller = MakeLevelPolicy(policy, inputs);
  const std::string missing = MissingSignal(view, policy);
  if (!missing.empty()) throw InputError(missing);
  // AdaQS decides once for the model (its MSDR is the whole gradient's).
  const bool one_group = controller->num_groups() == 1;
  Schedule s = EmptySchedule(view, scheme, accordion.level_low(), accordion.level_high());
  const int E = view.num_epochs();
  for (int e = 0; e < E; ++e) {
    for (int l = 0; l < L; ++l) {
      const int g = one_group ? 0 : l;
      s.levels[e][l] = controller->levels()[g];
      s.critical[e][l] = controller->critical()[g];
    }
    EpochSignals signals;
    signals.norms = one_group ? std::vector<double>{WholeModelNorm(view.grad_norms[e])} : view.grad_norms[e];
    if (DescriptionOf(policy).reads_gradient_moments) {
      signals.mean_norms = {WholeModelMeanNorm(view.grad_mean_norms[e])};
      signals.stds = {WholeModelStd(view.grad_stds[e])};
    }
    signals.lr = ScheduleLr(view, e);
    // The last recorded epoch has no successor: assume the LR holds.
    signals.lr_next = e + 1 < E ? ScheduleLr(view, e + 1) : signals.lr;
    const AccordionDecision d = controller->EndEpoch(signals);
    s.checked[e] = d.checked;
    s.lr_decay[e] = d.lr_decay;
    for (int l = 0; l < L; ++l) s.ratios[e][l] = d.ratios[one_group ? 0 : l];
  }
  return s;
}

Schedule StaticSchedule(const TraceView& view, Scheme scheme, double level) {
  CheckLevels(scheme, level, level);
  return EmptySchedule(view, scheme, level, level);
}

ScheduleCost CostOf(const TraceView& view, const Schedule& schedule) {
  const int E = schedule.num_epochs();
  const int L = view.num_layers();
  ScheduleCost cost;
  cost.layer_floats.assign(E, std::vector<double>(L, 0.0));
  cost.epoch_floats.assign(E, 0.0);
  cost.steps.assign(E, 0);
  for (int e = 0; e < E; ++e) {
    const int64_t batch = DescriptionOf(schedule.scheme.scheme()).level_kind == LevelKind::kGlobalBatch
                              ? static_cast<int64_t>(schedule.levels[e][0])
                              : view.run.batch_size;
    cost.steps[e] = StepsPerEpoch(view.run.train_samples, batch, view.run.world_size);
    for (int l = 0; l < L; ++l) {
      const double per_step = FloatsPerStep(schedule.scheme, view.layers[l].shape, schedule.levels[e][l]);
      cost.layer_floats[e][l] = per_step * static_cast<double>(cost.steps[e]);
      cost.epoch_floats[e] += cost.layer_floats[e][l];
    }
    cost.total_floats += cost.epoch_floats[e];
  }
  return cost;
}

}  // namespace accordion
