// RunData: one opened trace, read once into memory - everything the views
// draw from it. Plain C++ (no Qt), so it is tested without a display.
//
// Thread safety: a RunData is immutable once loaded and shared between threads
// as shared_ptr<const RunData>; LoadRunData and ReadTraceProgress open readers
// of their own and run in ExplorerDocument's pool threads, several at once.
#ifndef ACCORDION_GUI_MODEL_RUN_DATA_H_
#define ACCORDION_GUI_MODEL_RUN_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trace_view.h"
#include "simulator/replay_input.h"
#include "traces/records.h"

namespace accordion::gui {

// The run list's columns for one trace.
struct RunSummary {
  std::string name;  // file name without directory
  std::string model;
  std::string dataset;
  std::string scheme;  // "powersgd"
  std::string policy;  // "accordion"
  std::string levels;  // "rank 2 / rank 1", "dense"
  int workers = 0;
  int epochs = 0;  // finished epochs in the file
  int epochs_planned = 0;
  std::string status;  // complete, running, ...
  // Fraction, last finished epoch; kNotRecorded when no epoch has finished
  // or the run recorded none (shown as "—").
  double final_test_acc = kNotRecorded;
  double floats_sent = 0;  // per worker over the finished epochs
  double seconds = 0;      // wall time over the finished epochs
  bool synthetic = false;
};

struct RunData {
  std::string path;
  RunSummary summary;
  // Run, layers, epochs, norms and recorded levels; also the replay's view.
  sim::ReplayInput input;
  // False when the trace lacks what a replay needs (iteration samples or
  // gradient-ready offsets); replay_problem says why. Everything but the
  // what-if and timeline views still works.
  bool replayable = false;
  std::string replay_problem;
  std::vector<HessianRecord> hessian;  // all blocks; "" is the whole model
  // The regimes and ratios the run recorded are in view().critical and
  // view().ratios.
  // One measured iteration (rank 0) for the timeline, when the trace has one.
  std::optional<sim::MeasuredIteration> measured_iteration;

  const TraceView& view() const { return input.view; }
  bool live() const { return input.view.run.status == RunStatus::kRunning; }
};

// Reads a trace (read-only; a trace still being written is fine). Throws
// TraceError / InputError with the reader's one-line reason.
RunData LoadRunData(const std::string& path);

// How far the run at `path` has got: a cheap check for live runs. Throws
// like LoadRunData.
struct TraceProgress {
  int epochs = 0;  // finished epochs in the file
  RunStatus status = RunStatus::kRunning;
};
TraceProgress ReadTraceProgress(const std::string& path);

RunSummary SummariseRun(const std::string& path, const TraceView& view);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_RUN_DATA_H_
