// ResultsTable: traces grouped into the rows of the paper's Tables 1-6 -
// accuracy, floats sent and time per setting (static low, static high,
// Accordion), mean and 95 % confidence interval over the runs (seeds) of each
// setting, with ratios against the scheme's setting that sends the most (the
// paper's "1x" row, normally static low compression) and against dense. Runs
// are seeds of one setting only when their training and communication agree
// (SettingKey): a 1-GPU and a 2-worker run are two rows.
//
// Thread-safe: BuildResultsTable opens a TraceReader per trace and keeps
// nothing between calls (the GUI's Compare tab runs it off the UI thread); the
// other functions are pure, and the Write* ones touch only the given stream.
#ifndef ACCORDION_ANALYSIS_RESULTS_TABLE_H_
#define ACCORDION_ANALYSIS_RESULTS_TABLE_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/options.h"
#include "traces/records.h"

namespace accordion {

struct TraceView;

// Mean and the half-width of its 95 % confidence interval (Student's t),
// which is given from kMinRunsForCi runs on: two runs' interval (t = 12.7)
// says more about t than about the runs. Half-width 0 below.
struct MeanCi {
  static constexpr int kMinRunsForCi = 3;
  double mean = 0;
  double half_width = 0;
  int n = 0;
  bool has_ci() const { return n >= kMinRunsForCi; }
};
MeanCi MeanWithCi95(const std::vector<double>& values);

// A setting's name in the tables: "rank 2", "TopK 10%",
// "Accordion (rank 2 / rank 1)".
std::string SettingName(Scheme scheme, Policy policy, double level_low, double level_high);

// The training runs share when they are comparable at all: the model on the
// dataset, with the same workers, epochs, global batch and LR schedule (the
// schedule's LR of every epoch). Ratios are only taken within one.
struct TrainingKey {
  std::string model;
  std::string dataset;
  int workers = 0;
  int epochs = 0;
  int64_t batch_size = 0;
  std::vector<double> lr_schedule;
  bool operator<(const TrainingKey& o) const;
  bool operator==(const TrainingKey& o) const;
};
TrainingKey TrainingKeyOf(const TraceView& view);

// What makes runs seeds of one setting: the same training under the same
// communication - scheme, policy, levels, and for a policy that switches
// levels its eta and check interval. The table's rows and the GUI's
// comparison group runs by it.
struct SettingKey {
  TrainingKey training;
  Scheme scheme = Scheme::kDense;
  Policy policy = Policy::kStatic;
  double level_low = 0;
  double level_high = 0;
  double eta = 0;    // 0 for a policy with one level
  int interval = 0;  // 0 for a policy with one level
  bool operator<(const SettingKey& o) const;
};
SettingKey SettingKeyOf(const TraceView& view);

struct ResultsRow {
  std::string model;
  std::string dataset;
  int workers = 0;
  int epochs = 0;
  int64_t batch_size = 0;
  Scheme scheme = Scheme::kDense;
  Policy policy = Policy::kStatic;
  double level_low = 0;
  double level_high = 0;
  std::string setting;  // "rank 2", "TopK 10%", "Accordion (rank 2 / rank 1)"
  std::vector<std::string> traces;
  int incomplete = 0;  // runs not marked complete
  MeanCi accuracy;     // final test accuracy, fraction, over the runs that recorded it (n 0: none)
  MeanCi floats;       // floats sent per worker over the run
  MeanCi seconds;      // wall time over the run
  // Against the scheme's baseline, the paper's "1x" row: its first static
  // row (the one that sends the most) of the same training; empty where the
  // traces hold none (an Accordion run alone is not 1x of itself).
  std::optional<double> floats_ratio;   // baseline floats / this row's floats
  std::optional<double> seconds_ratio;  // baseline time / this row's time
  // Against the baseline of the same training: the pinned setting
  // (ResultsTableOptions::baseline) where it is of this training, else
  // dense where a dense run is among the traces. `baseline` is its setting's
  // name ("dense", "rank 2"); empty, with no ratios, where there is none.
  std::string baseline;
  bool is_baseline = false;  // this row is its training's baseline
  std::optional<double> floats_vs_baseline;
  std::optional<double> seconds_vs_baseline;
};

// What the table's "vs" ratios are against.
class ResultsTableOptions {
  /// One of the traces tabulated: its setting is the baseline of the rows
  /// of its training (W&B's pinned run); the others keep dense. Empty:
  /// dense everywhere. Default: empty.
  ACCORDION_ARG(std::string, baseline);
};

// Reads each trace (TraceError on a bad one) and groups them into rows,
// ordered by training (model, dataset, workers, epochs, batch), scheme, then
// static settings by decreasing floats, then Accordion.
// InputError when the baseline is not one of `trace_paths`.
std::vector<ResultsRow> BuildResultsTable(const std::vector<std::string>& trace_paths,
                                          const ResultsTableOptions& options = ResultsTableOptions());
// The one name of the rows' baselines ("dense"), or "baseline" where they
// differ or none has one: the "vs" columns' header.
std::string BaselineHeader(const std::vector<ResultsRow>& rows);

void WriteResultsMarkdown(const std::vector<ResultsRow>& rows, std::ostream& out);
void WriteResultsCsv(const std::vector<ResultsRow>& rows, std::ostream& out);
void WriteResultsJson(const std::vector<ResultsRow>& rows, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_RESULTS_TABLE_H_
