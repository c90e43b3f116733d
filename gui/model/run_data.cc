#include "gui/model/run_data.h"

#include <numeric>

#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

namespace accordion::gui {

namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string LevelsText(const RunInfo& run) {
  if (!DescriptionOf(run.scheme).has_levels()) return ToString(run.scheme);
  const std::string low = LevelName(run.scheme, run.level_low);
  if (DescriptionOf(run.policy).one_level() || run.level_low == run.level_high) return low;
  return low + " / " + LevelName(run.scheme, run.level_high);
}

}  // namespace

RunSummary SummariseRun(const std::string& path, const TraceView& view) {
  const RunInfo& run = view.run;
  RunSummary s;
  s.name = BaseName(path);
  s.model = run.model;
  s.dataset = run.dataset;
  s.scheme = ToString(run.scheme);
  s.policy = ToString(run.policy);
  s.levels = LevelsText(run);
  s.workers = run.world_size;
  s.epochs = view.num_epochs();
  s.epochs_planned = run.epochs_planned;
  s.status = ToString(run.status);
  s.synthetic = run.synthetic;
  if (!view.epochs.empty()) s.final_test_acc = view.epochs.back().test_acc;
  for (const EpochRecord& e : view.epochs) {
    s.floats_sent += e.floats_sent;
    s.seconds += e.total_s;
  }
  return s;
}

RunData LoadRunData(const std::string& path) {
  // The same checks as `accordion-analyze validate`: rows past the run's
  // epochs or layers would otherwise reach the views as out-of-range indices.
  ValidateTrace(path);
  auto reader = TraceReader::Open(path);
  RunData data;
  data.path = path;
  TraceView view = LoadTraceView(*reader);
  data.summary = SummariseRun(path, view);
  data.hessian = reader->Hessian();
  try {
    data.input = sim::LoadReplayInput(*reader, view);
    data.replayable = true;
  } catch (const InputError& e) {
    // Regimes, levels and comparisons need only the epoch tables.
    data.input.path = path;
    data.input.view = std::move(view);
    data.replay_problem = e.what();
  }
  if (data.replayable) {
    try {
      data.measured_iteration = sim::LoadMeasuredIteration(*reader, data.view().num_epochs() - 1);
    } catch (const InputError&) {
      // No rank-0 sample: the timeline shows the simulated iteration only.
    }
  }
  return data;
}

TraceProgress ReadTraceProgress(const std::string& path) {
  auto reader = TraceReader::Open(path);
  return {static_cast<int>(reader->CountRows("epochs")), reader->run().status};
}

}  // namespace accordion::gui
