// The report's contents: figures (PNG, PDF, CSV), tables (CSV) and the
// index.html that shows them, written into one directory.
#ifndef ACCORDION_GUI_REPORT_REPORT_WRITER_H_
#define ACCORDION_GUI_REPORT_REPORT_WRITER_H_

#include <QString>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/model/explorer_settings.h"
#include "gui/model/policy_table.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/run_data.h"
#include "gui/model/what_if.h"

namespace accordion::gui::report {

// The marker file every report holds; --overwrite replaces only directories
// that have it.
inline constexpr const char* kMarkerFile = ".accordion-report";

struct ReportInput {
  std::vector<std::shared_ptr<const RunData>> runs;  // runs[0] is the current run
  ScheduleSettings schedule;
  WhatIfSettings what_if;
  std::string command_line;  // as invoked, for the record
  // One of the runs' paths: the results table's "vs" columns divide by its
  // setting (ResultsTableOptions::baseline); empty: dense.
  std::string baseline;
  // Derived for runs[0].
  RegimeAnalysis analysis;
  std::optional<WhatIfProjection> estimate;    // α–β
  std::optional<WhatIfProjection> simulation;  // SimGrid, with --simulate
  std::vector<SweepPointResult> sweep;
  // Every policy against Accordion on the same cluster (the Policies
  // section), with the accuracy the report's runs of each setting reached
  // (WithRecordedAccuracy); empty for a scheme without levels.
  std::optional<PolicyTable> policies;
  std::string projection_problem;  // why there is no projection, when there is none
  std::vector<std::string> notes;
};

// Writes everything into `dir` (which exists and is empty). Throws
// InputError when a file cannot be written.
void WriteReport(const ReportInput& input, const QString& dir);

}  // namespace accordion::gui::report

#endif  // ACCORDION_GUI_REPORT_REPORT_WRITER_H_
