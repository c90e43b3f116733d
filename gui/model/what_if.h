// What-if projections of one run: ReplayEngine under the explorer's
// settings, with the dense baseline beside Accordion and the two static
// schedules, and a bandwidth sweep. Runs off the UI thread; no Qt.
//
// Thread safety: ProjectWhatIf and SweepBandwidth keep no state; several run
// at once in ExplorerDocument's pools, reading `run` only. `cancel` is set
// from the GUI thread.
#ifndef ACCORDION_GUI_MODEL_WHAT_IF_H_
#define ACCORDION_GUI_MODEL_WHAT_IF_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "gui/model/explorer_settings.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/run_data.h"
#include "simulator/replay_engine.h"

namespace accordion::gui {

struct WhatIfProjection {
  sim::TimingSource timing = sim::TimingSource::kAnalytic;  // which produced it
  sim::ReplayResult result;                                 // Accordion, static low, static high
  sim::ScheduleProjection dense;                            // every layer dense, same cluster
  // The schedule's epochs as the Regimes tab shades them (RegimeAnalysis
  // over every layer, regime_analysis.h's vocabulary): at a low level that
  // changes the traffic, and critical with no effect on it.
  std::vector<Band> low_level_bands;
  std::vector<Band> no_effect_bands;
  double speedup_vs_dense() const { return dense.total.time_s / result.accordion.total.time_s; }
};

// What `w` changes for `run` (sim::WhatIfBasePlatform): the run's recorded
// network where its probe anchors the replay, as accordion-sim starts from.
sim::PlatformSpec BasePlatformOf(const RunData& run, const WhatIfSettings& w);

// Throws InputError for settings the simulator refuses, and Cancelled
// (simulator/child_process.h) when `cancel` becomes true.
WhatIfProjection ProjectWhatIf(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                               sim::TimingSource model, const std::atomic<bool>* cancel = nullptr,
                               const std::function<void(int, int)>& progress = {});

struct SweepPointResult {
  double bandwidth_gbps = 0;
  double accordion_s = 0;
  double static_low_s = 0;
  double static_high_s = 0;
  double dense_s = 0;
};

// Bandwidths from lo to hi, `points` of them evenly spaced on a log scale.
std::vector<double> LogSpaced(double lo, double hi, int points);

// The analytic projection at each bandwidth (the other settings as given;
// InputError on a SimGrid XML platform, whose links are its own).
std::vector<SweepPointResult> SweepBandwidth(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                                             const std::vector<double>& bandwidths,
                                             const std::atomic<bool>* cancel = nullptr);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_WHAT_IF_H_
