#include "gui/model/eta_interval_sweep.h"

#include <algorithm>
#include <cmath>

#include "analysis/schedule.h"
#include "common/errors.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/what_if.h"
#include "simulator/child_process.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

template <typename T>
std::vector<T> WithValue(std::vector<T> values, T value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  std::sort(values.begin(), values.end());
  return values;
}

int EpochsIn(const std::vector<Band>& bands) {
  int n = 0;
  for (const Band& b : bands) n += b.last - b.first + 1;
  return n;
}

void ThrowIfCancelled(const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load()) throw sim::Cancelled();
}

}  // namespace

EtaIntervalSweepOptions SweepOptionsFor(const RunInfo& run) {
  EtaIntervalSweepOptions o;
  if (run.eta > 0 && std::isfinite(run.eta)) o.etas(WithValue(o.etas(), run.eta));
  if (run.interval > 0) o.intervals(WithValue(o.intervals(), run.interval));
  return o;
}

const SweepCell* EtaIntervalSweep::find(double eta, int interval) const {
  for (const SweepCell& c : cells) {
    if (c.eta == eta && c.interval == interval) return &c;
  }
  return nullptr;
}

double EtaIntervalSweep::Saved(const SweepCell& cell, SweepMetric metric) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (metric == SweepMetric::kFloats) return low_floats > 0 ? 1 - cell.floats / low_floats : nan;
  if (!has_time || !(low_time_s > 0) || !std::isfinite(cell.time_s)) return nan;
  return 1 - cell.time_s / low_time_s;
}

EtaIntervalSweep SweepEtaInterval(const RunData& run, const ScheduleSettings& settings, const WhatIfSettings& what_if,
                                  const EtaIntervalSweepOptions& options, const std::atomic<bool>* cancel) {
  const TraceView& view = run.view();
  EtaIntervalSweep sweep;
  sweep.etas = options.etas();
  sweep.intervals = options.intervals();
  sweep.epochs = view.num_epochs();
  sweep.resolved = Resolve(view.run, settings);

  // The baselines do not depend on η or the interval: once, from the first
  // cell's analysis (static low and high) and the dense schedule.
  bool baselines = false;
  if (options.project_time()) {
    if (!run.replayable) {
      sweep.time_problem = run.replay_problem;
    } else {
      try {
        const WhatIfProjection p = ProjectWhatIf(run, settings, what_if, sim::TimingSource::kAnalytic, cancel);
        sweep.low_time_s = p.result.static_low.total.time_s;
        sweep.high_time_s = p.result.static_high.total.time_s;
        sweep.dense_time_s = p.dense.total.time_s;
        sweep.has_time = true;
      } catch (const InputError& e) {
        sweep.time_problem = e.what();
      }
    }
  } else {
    sweep.time_problem = "time not projected";
  }

  // The run's recorded network, fitted once for every cell.
  const sim::PlatformSpec base = sweep.has_time ? BasePlatformOf(run, what_if) : sim::PlatformSpec();
  for (int interval : sweep.intervals) {
    for (double eta : sweep.etas) {
      ThrowIfCancelled(cancel);
      ScheduleSettings s = settings;
      s.eta = eta;
      s.interval = interval;
      const RegimeAnalysis a = AnalyseRegimes(run, s);
      if (!a.schedulable) {
        // The scheme and levels are every cell's: no cell can be scheduled.
        sweep.cells.clear();
        sweep.problem = a.problem;
        sweep.has_time = false;
        return sweep;
      }
      if (!baselines) {
        sweep.low_floats = a.low_floats();
        sweep.high_floats = a.high_floats();
        sweep.dense_floats = CostOf(view, StaticSchedule(view, DenseBaselineScheme(), 0)).total_floats;
        baselines = true;
      }
      SweepCell cell;
      cell.eta = eta;
      cell.interval = interval;
      cell.floats = a.accordion_floats();
      cell.low_level_epochs = EpochsIn(a.model_bands);
      if (sweep.has_time) {
        const sim::ReplayOptions o = ReplayOptionsOf(s, what_if, sim::TimingSource::kAnalytic, base).cancel(cancel);
        cell.time_s = sim::ReplayEngine(o).Run(run.input).accordion.total.time_s;
      }
      sweep.cells.push_back(cell);
    }
  }
  sweep.schedulable = !sweep.cells.empty();
  if (!sweep.schedulable && sweep.problem.empty()) sweep.problem = "the grid has no η or no interval";
  return sweep;
}

}  // namespace accordion::gui
