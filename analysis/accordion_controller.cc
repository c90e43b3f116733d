#include "analysis/accordion_controller.h"

#include <cmath>
#include <string>

#include "common/errors.h"
#include "common/number_format.h"

namespace accordion {

void AccordionOptions::Validate() const {
  if (!(eta_ > 0) || !std::isfinite(eta_)) {
    throw InputError("eta must be a positive number (got " + FormatNumber(eta_) + ")");
  }
  if (interval_ < 1) {
    throw InputError("interval must be at least 1 epoch (got " + std::to_string(interval_) + ")");
  }
  if (!std::isfinite(level_low_) || !std::isfinite(level_high_)) {
    throw InputError("levels must be finite numbers");
  }
  if (mode_ == ControllerMode::kWholeModel && level_high_ < level_low_) {
    throw InputError("in whole-model (batch size) mode the high level must be the larger batch");
  }
}

AccordionController::AccordionController(int num_groups, const AccordionOptions& options) : options_(options) {
  options_.Validate();
  if (num_groups < 1) throw InputError("the controller needs at least one layer");
  if (options_.mode() == ControllerMode::kWholeModel && num_groups != 1) {
    throw InputError("whole-model mode takes exactly one group");
  }
  state_.critical.assign(num_groups, true);  // epoch 0 is critical
  state_.check_critical.assign(num_groups, true);
  state_.levels.assign(num_groups, options_.level_low());
}

AccordionDecision AccordionController::EndEpoch(const std::vector<double>& norms, double lr_current, double lr_next) {
  const int groups = num_groups();
  if (static_cast<int>(norms.size()) != groups) {
    throw InputError("controller got " + std::to_string(norms.size()) + " norms for " + std::to_string(groups) +
                     " groups");
  }
  for (double n : norms) {
    if (!std::isfinite(n) || n < 0) throw InputError("gradient norms must be finite and >= 0");
  }
  AccordionDecision d;
  d.epoch = state_.next_epoch;
  d.ratios.assign(groups, std::nullopt);
  d.lr_decay = IsLrDecay(lr_current, lr_next);
  d.checked = d.epoch % options_.interval() == 0;

  // `found` is what the checks say; `critical` adds the post-decay hold.
  std::vector<bool>& found = state_.check_critical;
  if (d.checked) {
    const bool have_prev = state_.check_epoch >= 0 && state_.check_epoch == d.epoch - options_.interval();
    for (int g = 0; g < groups; ++g) {
      if (d.epoch == 0 || !have_prev) {
        found[g] = true;  // nothing to compare against yet
        continue;
      }
      const double prev = state_.check_norms[g];
      if (prev == 0) {
        found[g] = true;  // as the reference code: no baseline, stay careful
        continue;
      }
      const double ratio = std::fabs(prev - norms[g]) / prev;
      d.ratios[g] = ratio;
      found[g] = ratio >= options_.eta();
    }
    state_.check_norms = norms;
    state_.check_epoch = d.epoch;
  }
  // The next epoch is the first at a decayed LR: hold every layer critical
  // through `interval` epochs from there. The one check inside the hold
  // (against the pre-decay norm) decides what follows it.
  if (d.lr_decay) state_.critical_through = d.epoch + options_.interval();
  std::vector<bool> critical = found;
  if (d.epoch + 1 <= state_.critical_through) critical.assign(groups, true);

  std::vector<double> levels(groups);
  for (int g = 0; g < groups; ++g) {
    levels[g] = critical[g] ? options_.level_low() : options_.level_high();
    // The batch only grows: once large, it stays large.
    if (options_.mode() == ControllerMode::kWholeModel && state_.levels[g] == options_.level_high()) {
      levels[g] = options_.level_high();
    }
  }
  state_.critical = critical;
  state_.levels = levels;
  state_.next_epoch = d.epoch + 1;
  d.critical_next = critical;
  d.levels_next = levels;
  return d;
}

void AccordionController::Restore(const AccordionState& state) {
  const size_t groups = state_.critical.size();
  if (state.critical.size() != groups || state.levels.size() != groups || state.check_critical.size() != groups ||
      state.critical_through < -1 || (state.check_epoch >= 0 && state.check_norms.size() != groups) ||
      state.next_epoch < 0) {
    throw InputError("saved controller state does not match this model's layers");
  }
  state_ = state;
}

bool IsLrDecay(double lr_current, double lr_next) {
  // A decay is a real drop: warm-up arithmetic such as 0.1 * 3 / 3 can land a
  // rounding error above 0.1, which must not declare a critical regime.
  return lr_next < lr_current * (1.0 - 1e-9);
}

double WholeModelNorm(const std::vector<double>& layer_norms) {
  double sum = 0;
  for (double n : layer_norms) sum += n * n;
  return std::sqrt(sum);
}

}  // namespace accordion
