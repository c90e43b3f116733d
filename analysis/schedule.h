// Schedules: which level every layer uses in every epoch, and what that costs.
//
// DeriveAccordionSchedule replays a trace's recorded gradient norms and LRs
// through AccordionController under any eta, interval and level pair;
// StaticSchedule is the fixed baseline. CostOf counts the floats each sends.
//
// Thread-safe: pure functions of their arguments; each derivation runs an
// AccordionController of its own.
#ifndef ACCORDION_ANALYSIS_SCHEDULE_H_
#define ACCORDION_ANALYSIS_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/accordion_controller.h"
#include "analysis/trace_view.h"
#include "traces/records.h"

namespace accordion {

struct Schedule {
  // The scheme, with the trace's TopK choices when it is the trace's own
  // (RecordedScheme): CostOf counts what that run's tensors really send.
  CommunicationScheme scheme;
  double level_low = 0;
  double level_high = 0;
  // [epoch][layer]. For the batch scheme every layer carries the epoch's
  // global batch size.
  std::vector<std::vector<double>> levels;
  std::vector<std::vector<bool>> critical;
  // [epoch][layer]: the ratio computed at the end of that epoch, if any.
  std::vector<std::vector<std::optional<double>>> ratios;
  std::vector<bool> checked;   // a check ran at the end of the epoch
  std::vector<bool> lr_decay;  // the LR decays after the epoch

  int num_epochs() const { return static_cast<int>(levels.size()); }
};

// Which policy re-derives a schedule, and its settings.
class PolicySettings {
  /// accordion, adaqs or smith. Default: Policy::kAccordion.
  ACCORDION_ARG(Policy, policy) = Policy::kAccordion;
  /// eta and interval (Accordion; AdaQS checks at the interval too) and the
  /// level pair. Default: AccordionOptions().
  ACCORDION_ARG(AccordionOptions, accordion);
  /// AdaQS's MSDR factor (AdaqsOptions::factor). Default: 2.
  ACCORDION_ARG(double, msdr_factor) = 2;
};

// The schedule `settings.policy()` chooses for `view`'s epochs, fed the
// trace's recorded signals (level_policy.h). Accordion decides per layer
// (whole model in the batch scheme), AdaQS and Smith for the whole model.
// Throws InputError when the trace lacks a signal the policy reads (AdaQS
// on a trace without gradient moments) or the policy does not fit the
// scheme (Smith on anything but batch).
Schedule DerivePolicySchedule(const TraceView& view, Scheme scheme, const PolicySettings& settings);
// DerivePolicySchedule with Accordion.
Schedule DeriveAccordionSchedule(const TraceView& view, Scheme scheme, const AccordionOptions& options);
// Why `view` cannot feed `policy` ("" when it can).
std::string MissingSignal(const TraceView& view, Policy policy);
// The schedule's LR of `epoch` (TraceView::schedule_lr; a view built by
// hand without it: the recorded lr).
double ScheduleLr(const TraceView& view, int epoch);

// Every layer at `level` in every epoch.
Schedule StaticSchedule(const TraceView& view, Scheme scheme, double level);

struct ScheduleCost {
  std::vector<std::vector<double>> layer_floats;  // [epoch][layer], one worker
  std::vector<double> epoch_floats;               // [epoch]
  std::vector<int64_t> steps;                     // optimizer steps per epoch
  double total_floats = 0;
};

ScheduleCost CostOf(const TraceView& view, const Schedule& schedule);

// Default level pair of a scheme (paper's settings): PowerSGD rank 2 / 1,
// TopK 0.99 / 0.1, batch B / 8B for a starting global batch B; from the
// scheme's description (traces/scheme_description.h).
std::pair<double, double> DefaultLevels(Scheme scheme, int64_t batch_size);

// The level pair to schedule `scheme` with: `low` / `high` where given, else
// the run's own pair when it used `scheme` and switched between two levels,
// else DefaultLevels.
std::pair<double, double> ResolveLevels(const RunInfo& run, Scheme scheme, std::optional<double> low,
                                        std::optional<double> high);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_SCHEDULE_H_
