// ScheduleComparison: an Accordion schedule next to the static low and
// static high baselines, and its renderings as a table, CSV or JSON.
//
// Thread-safe: pure functions; the Write* functions touch only the stream they
// are given.
#ifndef ACCORDION_ANALYSIS_SCHEDULE_REPORT_H_
#define ACCORDION_ANALYSIS_SCHEDULE_REPORT_H_

#include <ostream>
#include <string>

#include "analysis/schedule.h"

namespace accordion {

struct ScheduleComparison {
  Scheme scheme = Scheme::kDense;
  AccordionOptions options;
  // The policy that chose `accordion` (named so because Accordion is the
  // usual one) and AdaQS's factor.
  Policy policy = Policy::kAccordion;
  double msdr_factor = 2;
  Schedule accordion;
  ScheduleCost accordion_cost;
  ScheduleCost low_cost;   // static level_low everywhere
  ScheduleCost high_cost;  // static level_high everywhere
};

ScheduleComparison CompareSchedules(const TraceView& view, Scheme scheme, const AccordionOptions& options);
// The same with any policy's schedule (DerivePolicySchedule).
ScheduleComparison CompareSchedules(const TraceView& view, Scheme scheme, const PolicySettings& settings);

// "Accordion", "AdaQS", "Smith et al.", "static".
std::string PolicyName(Policy policy);

// "rank 2", "TopK 25%", "batch 4096", "dense".
std::string LevelName(Scheme scheme, double level);
// A policy's two levels in the order its levels move: "rank 2 / rank 1"
// (Accordion switches), "rank 1 -> rank 2" (AdaQS climbs from high),
// "batch 128 -> batch 1024" (Smith et al. grow from low), "rank 2" (static).
std::string PolicyLevelsText(Policy policy, Scheme scheme, double level_low, double level_high);

// Per-epoch rows (levels as one glyph per layer: L low, H high, '.' where the
// level makes no difference to that layer) and the totals.
void WriteScheduleTable(const TraceView& view, const ScheduleComparison& c, std::ostream& out);
// One row per (epoch, layer).
void WriteScheduleCsv(const TraceView& view, const ScheduleComparison& c, std::ostream& out);
// Settings, per-epoch levels and floats, totals and ratios.
void WriteScheduleJson(const TraceView& view, const ScheduleComparison& c, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_SCHEDULE_REPORT_H_
