#include "analysis/level_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/errors.h"
#include "common/number_format.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

void CheckCount(const std::vector<double>& values, int groups, const char* what) {
  if (static_cast<int>(values.size()) != groups) {
    throw InputError(std::string("policy got ") + std::to_string(values.size()) + " " + what + " for " +
                     std::to_string(groups) + " groups");
  }
  for (double v : values) {
    if (!std::isfinite(v) || v < 0) throw InputError(std::string(what) + " must be finite and >= 0");
  }
}

void CheckLrs(const EpochSignals& s) {
  if (!std::isfinite(s.lr) || s.lr < 0 || !std::isfinite(s.lr_next) || s.lr_next < 0) {
    throw InputError("the policy's learning rates must be finite and >= 0");
  }
}

const std::vector<double>& Entry(const PolicyState& state, const std::string& key, size_t size) {
  const auto it = state.find(key);
  if (it == state.end() || it->second.size() != size) {
    throw InputError("saved policy state does not match this policy (" + key + ")");
  }
  return it->second;
}

std::vector<bool> Bools(const std::vector<double>& v) {
  std::vector<bool> out;
  for (double x : v) out.push_back(x != 0);
  return out;
}

std::vector<double> Doubles(const std::vector<bool>& v) { return std::vector<double>(v.begin(), v.end()); }

class AccordionPolicy : public LevelPolicy {
 public:
  AccordionPolicy(int groups, const AccordionOptions& options) : controller_(groups, options) {}

  Policy kind() const override { return Policy::kAccordion; }
  const std::vector<double>& levels() const override { return controller_.levels(); }
  const std::vector<bool>& critical() const override { return controller_.critical(); }
  int next_epoch() const override { return controller_.next_epoch(); }

  AccordionDecision EndEpoch(const EpochSignals& s) override {
    CheckLrs(s);
    return controller_.EndEpoch(s.norms, s.lr, s.lr_next);
  }

  PolicyState Save() const override {
    const AccordionState& s = controller_.state();
    return {{"next_epoch", {double(s.next_epoch)}},
            {"critical", Doubles(s.critical)},
            {"check_critical", Doubles(s.check_critical)},
            {"levels", s.levels},
            {"check_norms", s.check_norms},
            {"check_epoch", {double(s.check_epoch)}},
            {"critical_through", {double(s.critical_through)}}};
  }

  void Restore(const PolicyState& state) override {
    const size_t groups = controller_.critical().size();
    AccordionState s;
    s.next_epoch = static_cast<int>(Entry(state, "next_epoch", 1)[0]);
    s.critical = Bools(Entry(state, "critical", groups));
    s.check_critical = Bools(Entry(state, "check_critical", groups));
    s.levels = Entry(state, "levels", groups);
    s.check_epoch = static_cast<int>(Entry(state, "check_epoch", 1)[0]);
    s.check_norms = Entry(state, "check_norms", s.check_epoch >= 0 ? groups : 0);
    s.critical_through = static_cast<int>(Entry(state, "critical_through", 1)[0]);
    controller_.Restore(s);
  }

 private:
  AccordionController controller_;
};

// One reference MSDR per group, NaN until the group's first check.
class AdaqsPolicy : public LevelPolicy {
 public:
  AdaqsPolicy(int groups, const AdaqsOptions& options) : options_(options) {
    options_.Validate();
    if (groups < 1) throw InputError("the policy needs at least one group");
    levels_.assign(groups, options_.level_high());
    critical_.assign(groups, false);
    reference_.assign(groups, std::numeric_limits<double>::quiet_NaN());
  }

  Policy kind() const override { return Policy::kAdaqs; }
  const std::vector<double>& levels() const override { return levels_; }
  const std::vector<bool>& critical() const override { return critical_; }
  int next_epoch() const override { return next_epoch_; }

  AccordionDecision EndEpoch(const EpochSignals& s) override {
    const int groups = num_groups();
    CheckLrs(s);
    AccordionDecision d;
    d.epoch = next_epoch_;
    d.lr_decay = IsLrDecay(s.lr, s.lr_next);
    d.checked = d.epoch % options_.interval() == 0;
    d.ratios.assign(groups, std::nullopt);
    if (d.checked) {
      if (s.mean_norms.empty() || s.stds.empty()) {
        throw InputError("AdaQS reads the gradients' mean norm and standard deviation, and none were given");
      }
      CheckCount(s.mean_norms, groups, "gradient mean norms");
      CheckCount(s.stds, groups, "gradient standard deviations");
      for (int g = 0; g < groups; ++g) {
        critical_[g] = false;
        // A gradient without spread (one step per epoch) says nothing.
        if (s.stds[g] == 0) continue;
        const double msdr = s.mean_norms[g] / s.stds[g];
        if (std::isnan(reference_[g]) || reference_[g] == 0) {
          reference_[g] = msdr;
          continue;
        }
        d.ratios[g] = msdr / reference_[g];
        if (msdr <= reference_[g] / options_.factor()) {
          critical_[g] = true;  // the MSDR fell: AdaQS's switch
          levels_[g] = AdaqsNextLevel(levels_[g], options_.level_low());
          reference_[g] = msdr;
        }
      }
    }
    next_epoch_ = d.epoch + 1;
    d.critical_next = critical_;
    d.levels_next = levels_;
    return d;
  }

  PolicyState Save() const override {
    return {{"next_epoch", {double(next_epoch_)}},
            {"levels", levels_},
            {"critical", Doubles(critical_)},
            {"reference_msdr", reference_}};
  }

  void Restore(const PolicyState& state) override {
    const size_t groups = levels_.size();
    const int next = static_cast<int>(Entry(state, "next_epoch", 1)[0]);
    if (next < 0) throw InputError("saved policy state does not match this policy (next_epoch)");
    levels_ = Entry(state, "levels", groups);
    critical_ = Bools(Entry(state, "critical", groups));
    reference_ = Entry(state, "reference_msdr", groups);
    next_epoch_ = next;
  }

 private:
  AdaqsOptions options_;
  std::vector<double> levels_;
  std::vector<bool> critical_;
  std::vector<double> reference_;
  int next_epoch_ = 0;
};

class SmithPolicy : public LevelPolicy {
 public:
  explicit SmithPolicy(const SmithOptions& options) : options_(options) {
    options_.Validate();
    levels_ = {options_.level_low()};
    critical_ = {false};
  }

  Policy kind() const override { return Policy::kSmith; }
  const std::vector<double>& levels() const override { return levels_; }
  const std::vector<bool>& critical() const override { return critical_; }
  int next_epoch() const override { return next_epoch_; }

  AccordionDecision EndEpoch(const EpochSignals& s) override {
    CheckLrs(s);
    AccordionDecision d;
    d.epoch = next_epoch_;
    d.lr_decay = IsLrDecay(s.lr, s.lr_next);
    d.ratios.assign(1, std::nullopt);
    if (d.lr_decay) {
      levels_[0] = SmithNextBatch(levels_[0], s.lr, s.lr_next, options_.level_low(), options_.level_high());
    }
    next_epoch_ = d.epoch + 1;
    d.critical_next = critical_;
    d.levels_next = levels_;
    return d;
  }

  PolicyState Save() const override { return {{"next_epoch", {double(next_epoch_)}}, {"levels", levels_}}; }

  void Restore(const PolicyState& state) override {
    const int next = static_cast<int>(Entry(state, "next_epoch", 1)[0]);
    const double batch = Entry(state, "levels", 1)[0];
    if (next < 0 || batch < options_.level_low() || batch > options_.level_high()) {
      throw InputError("saved policy state does not match this policy (levels)");
    }
    levels_ = {batch};
    next_epoch_ = next;
  }

 private:
  SmithOptions options_;
  std::vector<double> levels_;
  std::vector<bool> critical_;
  int next_epoch_ = 0;
};

}  // namespace

double WholeModelMeanNorm(const std::vector<double>& layer_mean_norms) { return WholeModelNorm(layer_mean_norms); }

double WholeModelStd(const std::vector<double>& layer_stds) { return WholeModelNorm(layer_stds); }

void AdaqsOptions::Validate() const {
  if (!(factor_ > 1) || !std::isfinite(factor_)) {
    throw InputError("the AdaQS MSDR factor must be a number above 1 (got " + std::to_string(factor_) + ")");
  }
  if (interval_ < 1) throw InputError("the AdaQS check interval must be at least 1 epoch");
  if (!InSet(DescriptionOf(scheme_), SchemeSet::kHalvable)) {
    throw InputError("AdaQS compresses with " + JoinSchemeNames(SchemeSet::kHalvable, ", ", " or ") + ", not " +
                     ToString(scheme_));
  }
  for (const auto& [level, name] : {std::pair{level_low_, "low"}, std::pair{level_high_, "high"}}) {
    const std::string problem = LevelProblem(scheme_, level);
    if (!problem.empty()) throw InputError(std::string("AdaQS ") + name + " level " + problem);
  }
  if (level_high_ > level_low_) {
    throw InputError(
        "AdaQS starts at the high level (more compression) and only moves to the low one: "
        "the high level must be the smaller rank or fraction");
  }
}

void SmithOptions::Validate() const {
  for (const auto& [level, name] : {std::pair{level_low_, "low"}, std::pair{level_high_, "high"}}) {
    const std::string problem = LevelProblem(Scheme::kBatch, level);
    if (!problem.empty()) throw InputError(std::string("Smith et al.'s ") + name + " level " + problem);
  }
  if (level_high_ < level_low_) {
    throw InputError("Smith et al.'s batch only grows: the high level must be the larger batch");
  }
  // Its batches are whole numbers of low batches (SmithNextBatch), the cap
  // too: a schedule accordion-train would refuse is no schedule.
  if (std::fmod(level_high_, level_low_) != 0) {
    throw InputError("Smith et al.'s high level (batch " + FormatNumber(level_high_) +
                     ") must be a whole number of low batches (" + FormatNumber(level_low_) +
                     "): the batch grows by whole low batches, as accordion-train trains them");
  }
}

double AdaqsNextLevel(double level, double level_low) { return std::min(level * 2, level_low); }

double SmithNextBatch(double batch, double lr, double lr_next, double level_low, double level_high) {
  if (!(lr_next > 0)) return level_high;  // a decay to zero: as large as allowed
  const double grown = batch * lr / lr_next;
  // A whole number of low batches, so every step accumulates whole micro-batches.
  const double rounded = std::max(1.0, std::round(grown / level_low)) * level_low;
  return std::clamp(rounded, batch, level_high);
}

std::unique_ptr<LevelPolicy> MakeAccordionPolicy(int num_groups, const AccordionOptions& options) {
  return std::make_unique<AccordionPolicy>(num_groups, options);
}

std::unique_ptr<LevelPolicy> MakeAdaqsPolicy(int num_groups, const AdaqsOptions& options) {
  return std::make_unique<AdaqsPolicy>(num_groups, options);
}

std::unique_ptr<LevelPolicy> MakeSmithPolicy(const SmithOptions& options) {
  return std::make_unique<SmithPolicy>(options);
}

namespace {

std::unique_ptr<LevelPolicy> AccordionFor(const PolicyInputs& in) {
  // The batch is the whole model's: one group decides it.
  const bool whole_model = DescriptionOf(in.scheme).level_kind == LevelKind::kGlobalBatch;
  return MakeAccordionPolicy(
      whole_model ? 1 : in.num_layers,
      AccordionOptions(in.accordion).mode(whole_model ? ControllerMode::kWholeModel : ControllerMode::kPerLayer));
}

std::unique_ptr<LevelPolicy> AdaqsFor(const PolicyInputs& in) {
  // One group: the MSDR is the whole gradient's.
  return MakeAdaqsPolicy(1, AdaqsOptions()
                                .factor(in.msdr_factor)
                                .interval(in.accordion.interval())
                                .level_low(in.accordion.level_low())
                                .level_high(in.accordion.level_high())
                                .scheme(in.scheme));
}

std::unique_ptr<LevelPolicy> SmithFor(const PolicyInputs& in) {
  return MakeSmithPolicy(SmithOptions().level_low(in.accordion.level_low()).level_high(in.accordion.level_high()));
}

struct PolicyAlgorithm {
  Policy policy;
  std::unique_ptr<LevelPolicy> (*make)(const PolicyInputs&);
};

// Each adaptive policy's algorithm; a static policy has none (its levels
// never move). traces/policy_description.cc describes the same policies.
constexpr PolicyAlgorithm kAlgorithms[] = {
    {Policy::kAccordion, &AccordionFor},
    {Policy::kAdaqs, &AdaqsFor},
    {Policy::kSmith, &SmithFor},
};

}  // namespace

bool HasAlgorithm(Policy policy) {
  for (const PolicyAlgorithm& a : kAlgorithms) {
    if (a.policy == policy) return true;
  }
  return false;
}

std::unique_ptr<LevelPolicy> MakeLevelPolicy(Policy policy, const PolicyInputs& inputs) {
  const std::string problem = PolicyFitProblem(policy, inputs.scheme);
  if (!problem.empty()) throw InputError(problem);
  for (const PolicyAlgorithm& a : kAlgorithms) {
    if (a.policy == policy) return a.make(inputs);
  }
  throw InputError(std::string("policy ") + ToString(policy) + " keeps one level: it has no levels to choose");
}

}  // namespace accordion
