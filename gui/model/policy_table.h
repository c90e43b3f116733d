// The Policies tab's and the report's table: every policy that fits the
// run's scheme (static low, static high, Accordion, AdaQS or Smith et al.)
// side by side - floats per worker, the error proxy, level changes and the
// time each takes to train on the what-if's cluster - as `accordion-sim
// compare-policies` prints it for the same flags (sim::ProjectPolicies),
// and its cells as text, so the tab and the report write the same numbers.
// Runs off the UI thread; no Qt.
//
// Thread safety: ComparePoliciesOf keeps no state; it runs in
// ExplorerDocument's pool reading `run` only, and in accordion-report.
// `cancel` is set from the GUI thread.
#ifndef ACCORDION_GUI_MODEL_POLICY_TABLE_H_
#define ACCORDION_GUI_MODEL_POLICY_TABLE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/policy_comparison.h"
#include "gui/model/explorer_settings.h"
#include "gui/model/run_data.h"
#include "simulator/replay_engine.h"
#include "simulator/whole_gradient.h"

namespace accordion::gui {

struct PolicyTable {
  // False when the scheme has no levels (dense): `problem` says so and
  // there are no rows.
  bool comparable = false;
  std::string problem;
  PolicyComparison comparison;  // rows; each row's projected_s where projected
  // The replay the times come from; empty when the run cannot be replayed or
  // the replay refused the settings (projection_problem says why).
  std::optional<sim::ReplayResult> replay;
  // The whole-gradient rows' projections, in the order of
  // comparison.whole_gradient.
  std::vector<sim::ScheduleProjection> whole_gradient;
  std::string projection_problem;
  sim::TimingSource timing = sim::TimingSource::kAnalytic;
  // The link rate below which Accordion (at the schedule's settings) beats
  // the fastest whole-gradient exchange at the what-if's workers, all else
  // as the cluster says (α–β, as advise); empty when not projected or not
  // searchable (break_even_problem says why).
  std::optional<sim::BreakEven> break_even;
  std::string break_even_problem;

  bool projected() const { return replay.has_value(); }
  // The policies' rows, then the whole-gradient exchanges' (dense, the
  // 16-bit casts): the table's rows, in order.
  std::vector<const PolicyRow*> AllRows() const;
  // The rows' schedule projections from `replay`, by row of AllRows (null
  // where none: the whole-gradient rows have their own replays).
  const sim::ScheduleProjection* projectionOf(size_t row) const;
};

// The comparison for `run` under the explorer's schedule settings, each row
// projected by the replay engine with the options ReplayOptionsOf(s, w,
// timing) builds - those of the what-if tab and of `accordion-sim
// compare-policies` with CliFlagsOf's flags. A policy the trace cannot feed
// is a note, never an error. Throws Cancelled (simulator/child_process.h)
// when `cancel` becomes true.
PolicyTable ComparePoliciesOf(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                              sim::TimingSource timing, const std::atomic<bool>* cancel = nullptr);

// `table` with each row's final test accuracy from the open runs of its
// setting (AddRecordedAccuracy over `runs`, `run` among them or not): the
// Policies tab's and the report's, so a projected time has the accuracy
// that setting reached beside it where it was run.
PolicyTable WithRecordedAccuracy(const PolicyTable& table, const RunData& run,
                                 const std::vector<std::shared_ptr<const RunData>>& runs);

// The table as text: the column headers, then one row of cells per row of
// AllRows (the same count as the headers); the projected columns only where
// the table was projected.
//   policy | floats / worker [at N workers] | vs static low | error | error (critical) |
//   level changes [| projected time | speedup vs static low | vs dense] [| accuracy (run)]
// Missing values are "—"; ratios "1.00×".
std::vector<std::string> PolicyTableHeaders(const PolicyTable& table);
std::vector<std::vector<std::string>> PolicyTableCells(const PolicyTable& table);
// Per column of PolicyTableCells: true where no row has a value (every
// cell "—": the error proxy of a batch run, which has no compression
// error); the tab and the report leave those columns out.
std::vector<bool> EmptyPolicyColumns(const std::vector<std::vector<std::string>>& cells);
// What each column means, one sentence per header (the tab's header
// tooltips and the report's legend under the table).
std::vector<std::string> PolicyColumnHelp(const PolicyTable& table);

// What the table answers, for the line above it: the fastest row against
// the fastest of the other kind, and the break-even rate -
//   "Fastest on this cluster: bf16 cast, 2.91× faster than static rank 2.
//    Accordion beats every whole-gradient exchange only below 0.102 Gb/s
//    at 64 workers."
// Empty where nothing was projected.
std::string PolicyVerdict(const PolicyTable& table);

// "425.1 k", "34.4 M", "512": floats as the run list writes them.
std::string PolicyFloatsText(double floats);
// "1.2 s", "45 ms", "2.05 h".
std::string PolicySecondsText(double seconds);
// "1.00×"; "—" when not a positive finite number.
std::string PolicyRatioText(double ratio);
// A policy's label as people read it: "AdaQS rank 1 → rank 4".
std::string PolicyDisplayLabel(const PolicyRow& row);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_POLICY_TABLE_H_
