// EtaIntervalSweep: what Accordion would have saved on one run under every
// η and check interval of a grid - floats sent, projected time to train and
// epochs kept critical per cell - to answer "which η should I use?" in one
// picture (the Sweep tab). Every cell is AnalyseRegimes (the analysis
// module's AccordionController over the run's recorded norms, the schedule
// the Regimes tab shows) and the what-if's α–β estimate (ReplayEngine,
// TimingSource::kAnalytic) on the what-if's cluster, at that η and interval;
// the scheme and levels are the explorer's, the same in every cell.
//
// Thread safety: SweepEtaInterval keeps no state and reads `run` only; it
// runs in ExplorerDocument's pool, `cancel` set from the GUI thread.
#ifndef ACCORDION_GUI_MODEL_ETA_INTERVAL_SWEEP_H_
#define ACCORDION_GUI_MODEL_ETA_INTERVAL_SWEEP_H_

#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "common/options.h"
#include "gui/model/explorer_settings.h"
#include "gui/model/run_data.h"

namespace accordion::gui {

class EtaIntervalSweepOptions {
 public:
  /// The η values (x), increasing. Default: 0.1, 0.2, ..., 0.9.
  ACCORDION_ARG(std::vector<double>, etas) = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  /// The check intervals (y), increasing. Default: 1, 2, 3, 5, 10, 15, 20.
  ACCORDION_ARG(std::vector<int>, intervals) = {1, 2, 3, 5, 10, 15, 20};
  /// Project each cell's time with the α–β estimate (a replay per cell,
  /// most of the sweep's cost). Default: true.
  ACCORDION_ARG(bool, project_time) = true;
};

// The grid the Sweep tab shows for `run`: the default axes with the run's
// recorded η and interval added where they are missing, so its cell exists.
EtaIntervalSweepOptions SweepOptionsFor(const RunInfo& run);

struct SweepCell {
  double eta = 0;
  int interval = 0;
  double floats = 0;         // Accordion, one worker over the run
  int low_level_epochs = 0;  // epochs at the low level where it changes traffic (kLowLevelTerm)
  double time_s = std::numeric_limits<double>::quiet_NaN();  // α–β time to train; NaN without
};

enum class SweepMetric { kFloats, kTime };

struct EtaIntervalSweep {
  std::vector<double> etas;
  std::vector<int> intervals;
  std::vector<SweepCell> cells;  // row-major: cells[interval_index * etas.size() + eta_index]
  int epochs = 0;
  ResolvedSchedule resolved;  // the scheme and levels of every cell
  bool schedulable = false;   // false: no cells, `problem` says why
  std::string problem;
  // Floats per worker over the run of the baselines.
  double low_floats = 0;
  double high_floats = 0;
  double dense_floats = 0;
  // α–β times to train of the baselines; NaN without times (`time_problem`
  // says why: the run cannot be replayed, or the cluster is refused).
  double low_time_s = std::numeric_limits<double>::quiet_NaN();
  double high_time_s = std::numeric_limits<double>::quiet_NaN();
  double dense_time_s = std::numeric_limits<double>::quiet_NaN();
  bool has_time = false;
  std::string time_problem;

  const SweepCell& at(int eta_index, int interval_index) const {
    return cells[static_cast<size_t>(interval_index) * etas.size() + static_cast<size_t>(eta_index)];
  }
  // The cell at exactly (eta, interval), or null.
  const SweepCell* find(double eta, int interval) const;
  // The fraction of static low's floats or time the cell saves (negative:
  // it costs more); NaN where the metric has no value.
  double Saved(const SweepCell& cell, SweepMetric metric) const;
};

// Throws sim::Cancelled (simulator/child_process.h) when `cancel` becomes
// true; never for a valid run otherwise: settings that cannot be scheduled
// leave schedulable false, a cluster the replay refuses leaves has_time false.
EtaIntervalSweep SweepEtaInterval(const RunData& run, const ScheduleSettings& settings, const WhatIfSettings& what_if,
                                  const EtaIntervalSweepOptions& options = EtaIntervalSweepOptions(),
                                  const std::atomic<bool>* cancel = nullptr);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_ETA_INTERVAL_SWEEP_H_
