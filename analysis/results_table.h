// ResultsTable: traces grouped into the rows of the paper's Tables 1-6 -
// accuracy, floats sent and time per setting (static low, static high,
// Accordion), mean and 95 % confidence interval over the runs (seeds) of each
// setting, with ratios against the setting that sends the most (the paper's
// "1x" row, normally static low compression).
//
// Thread-safe: BuildResultsTable opens a TraceReader per trace and keeps
// nothing between calls (the GUI's Compare tab runs it off the UI thread); the
// other functions are pure, and the Write* ones touch only the given stream.
#ifndef ACCORDION_ANALYSIS_RESULTS_TABLE_H_
#define ACCORDION_ANALYSIS_RESULTS_TABLE_H_

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "traces/records.h"

namespace accordion {

// Mean and the half-width of its 95 % confidence interval (Student's t);
// half-width 0 for a single run.
struct MeanCi {
  double mean = 0;
  double half_width = 0;
  int n = 0;
};
MeanCi MeanWithCi95(const std::vector<double>& values);

// A setting's name in the tables: "rank 2", "TopK 10%",
// "Accordion (rank 2 / rank 1)".
std::string SettingName(Scheme scheme, Policy policy, double level_low, double level_high);

// What makes runs the same setting (their seeds may differ): model, dataset,
// scheme, policy and levels. The table's rows and the GUI's comparison group
// runs by it.
using SettingKey = std::tuple<std::string, std::string, int, int, double, double>;
SettingKey SettingKeyOf(const RunInfo& run);

struct ResultsRow {
  std::string model;
  std::string dataset;
  Scheme scheme = Scheme::kDense;
  Policy policy = Policy::kStatic;
  double level_low = 0;
  double level_high = 0;
  std::string setting;  // "rank 2", "TopK 10%", "Accordion (rank 2 / rank 1)"
  std::vector<std::string> traces;
  int incomplete = 0;        // runs not marked complete
  MeanCi accuracy;           // final test accuracy, fraction, over the runs that recorded it (n 0: none)
  MeanCi floats;             // floats sent per worker over the run
  MeanCi seconds;            // wall time over the run
  double floats_ratio = 1;   // baseline floats / this row's floats
  double seconds_ratio = 1;  // baseline time / this row's time
};

// Reads each trace (TraceError on a bad one) and groups them into rows,
// ordered by model, dataset, scheme, then static settings by decreasing
// floats, then Accordion.
std::vector<ResultsRow> BuildResultsTable(const std::vector<std::string>& trace_paths);

void WriteResultsMarkdown(const std::vector<ResultsRow>& rows, std::ostream& out);
void WriteResultsCsv(const std::vector<ResultsRow>& rows, std::ostream& out);
void WriteResultsJson(const std::vector<ResultsRow>& rows, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_RESULTS_TABLE_H_
