#include "analysis/schedule.h"

#include "analysis/communication_accounting.h"
#include "common/errors.h"
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
  for (int e = 0; e + 1 < E; ++e) s.lr_decay[e] = IsLrDecay(view.epochs[e].lr, view.epochs[e + 1].lr);
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
  const SchemeDescription& description = DescriptionOf(scheme);
  if (!description.has_levels()) {
    throw InputError(std::string(description.name) + " communication has no levels to schedule");
  }
  CheckLevels(scheme, options.level_low(), options.level_high());
  const bool whole_model = description.level_kind == LevelKind::kGlobalBatch;
  AccordionOptions opts = options;
  opts.mode(whole_model ? ControllerMode::kWholeModel : ControllerMode::kPerLayer);
  Schedule s = EmptySchedule(view, scheme, opts.level_low(), opts.level_high());
  const int E = view.num_epochs();
  const int L = view.num_layers();
  AccordionController controller(whole_model ? 1 : L, opts);
  for (int e = 0; e < E; ++e) {
    for (int l = 0; l < L; ++l) {
      const int g = whole_model ? 0 : l;
      s.levels[e][l] = controller.levels()[g];
      s.critical[e][l] = controller.critical()[g];
    }
    const std::vector<double> norms =
        whole_model ? std::vector<double>{WholeModelNorm(view.grad_norms[e])} : view.grad_norms[e];
    // The last recorded epoch has no successor: assume the LR holds.
    const double lr_next = e + 1 < E ? view.epochs[e + 1].lr : view.epochs[e].lr;
    const AccordionDecision d = controller.EndEpoch(norms, view.epochs[e].lr, lr_next);
    s.checked[e] = d.checked;
    for (int l = 0; l < L; ++l) s.ratios[e][l] = d.ratios[whole_model ? 0 : l];
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
