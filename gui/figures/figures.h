// Figure builders: each fills a QCustomPlot from the document's data,
// replacing whatever it showed. The app's views and the headless
// accordion-report draw with these same functions, so a figure in the
// report is the figure in the window.
#ifndef ACCORDION_GUI_FIGURES_FIGURES_H_
#define ACCORDION_GUI_FIGURES_FIGURES_H_

#include <QString>
#include <limits>
#include <memory>
#include <vector>

#include "gui/model/eta_interval_sweep.h"
#include "gui/model/policy_table.h"
#include "gui/model/regime_analysis.h"
#include "gui/model/run_data.h"
#include "gui/model/what_if.h"

class QCustomPlot;

namespace accordion::gui {

// Per-layer accumulated-gradient norm against epoch (log y), the regimes
// re-derived now shaded as bands over the plot and the recorded ones as a
// strip along its bottom, LR decays as dashed lines, check epochs as ticks,
// and the Hessian's top eigenvalue on the right axis where the trace has it.
// `layers` empty: every layer. `grouped`: one line per LayerGroup (the
// root-sum-square of its layers' norms) instead of one per layer.
void DrawGradientNorms(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis,
                       const std::vector<int>& layers, bool grouped);

// |‖Δprev‖ − ‖Δcurr‖| / ‖Δprev‖ at each check, per layer shown, against the
// η line; the same bands as DrawGradientNorms. `grouped`: one series per
// LayerBlock, the largest ratio among its layers shown - above η exactly
// when one of them turned critical.
void DrawCheckRatios(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis,
                     const std::vector<int>& layers, bool grouped = false);
// How many layers those two figures name in their legends at `plot`'s
// width (fewer in a narrow plot on screen: the legend stays one column
// beside it); a view redraws them when a resize changes it.
int RegimeLegendLayers(const QCustomPlot* plot);

// Layer × epoch heat map of the levels Accordion chooses (the paper's
// Figures 18-20): low level (critical) in one colour, high in another.
// `grouped`: one row per LayerBlock, at the low level where any of its
// layers whose level matters is.
void DrawLevelMap(QCustomPlot* plot, const RunData& run, const RegimeAnalysis& analysis, bool grouped = false);
// The cell under plot coordinates (x = epoch, y = row: a layer, or a
// LayerBlock when `grouped`), or false.
bool LevelMapCellAt(const RunData& run, double x, double y, int* epoch, int* row, bool grouped = false);
// Tooltip text for a cell: layer (or block) name, epoch, norm, ratio, level.
QString LevelMapTooltip(const RunData& run, const RegimeAnalysis& analysis, int epoch, int row, bool grouped = false);

// Projected time-to-train of dense, static low, static high and Accordion as
// bars, with speedups; the title says whether SimGrid or the α–β estimate
// produced it.
void DrawProjection(QCustomPlot* plot, const WhatIfProjection& projection);
// Speedup of Accordion (and of static high) over dense and static low
// against bandwidth, log x; `current_gbps` marked.
void DrawBandwidthSweep(QCustomPlot* plot, const std::vector<SweepPointResult>& sweep, double current_gbps);
// Accordion's projected epochs as stacked bars: compute / compression /
// exposed communication / other.
void DrawEpochBreakdown(QCustomPlot* plot, const WhatIfProjection& projection);

// Every policy of `table` (static low, static high, Accordion, AdaQS or
// Smith et al.) as a bar: its projected time to train stacked by component,
// labelled with the time and the speedup over static low; floats per
// worker instead where the table was not projected.
void DrawPolicyComparison(QCustomPlot* plot, const PolicyTable& table);
// The two lines a policy's bar is labelled with: "AdaQS" and "rank 1 → rank 4".
QString PolicyBarLabel(const PolicyRow& row);

enum class CompareAxis { kEpoch, kFloats };
// What the comparison draws of each run per epoch: its test accuracy, its
// training loss (every run records it; the hook records no test accuracy
// unless given one), or its throughput (training samples per second).
enum class CompareMetric { kTestAccuracy, kTrainLoss, kThroughput };
// "test accuracy", "training loss", "throughput".
const char* ToString(CompareMetric metric);
// Whether any of `runs` recorded `metric` in some epoch.
bool AnyRecorded(const std::vector<std::shared_ptr<const RunData>>& runs, CompareMetric metric);
// Test accuracy of each run against epoch, or against cumulative floats
// sent (the paper's Figure 1, right). `colours[r]`: runs[r]'s palette
// index, the run's own in every view (the run list's swatch, RunColours
// over the open runs); empty: RunColours(runs). Seeds of one setting share
// one colour and, drawn together, one legend entry.
void DrawAccuracyComparison(QCustomPlot* plot, const std::vector<std::shared_ptr<const RunData>>& runs,
                            CompareAxis axis, const std::vector<int>& colours = {},
                            CompareMetric metric = CompareMetric::kTestAccuracy);

// One iteration as bars on tracks: measured (the trace's compute and
// collectives, rank 0) above simulated (`projection`'s Accordion schedule at
// `epoch`); either may be missing.
void DrawIterationTimeline(QCustomPlot* plot, const RunData& run, const WhatIfProjection* projection, int epoch);

// Which cells of the η × interval sweep to outline: the run's recorded
// setting (solid; NaN / 0 for a run that did not run Accordion) and the
// explored one (dashed, where it differs).
struct EtaIntervalMarks {
  double recorded_eta = std::numeric_limits<double>::quiet_NaN();
  int recorded_interval = 0;
  double current_eta = std::numeric_limits<double>::quiet_NaN();
  int current_interval = 0;
};
// What Accordion saves against static low (floats or α–β time) over η (x)
// × check interval (y) as a heat map, each cell's percentage and critical
// epochs written in it, a colour scale through white at zero, and the
// headline (EtaIntervalHeadline) as its subtitle.
void DrawEtaIntervalSweep(QCustomPlot* plot, const EtaIntervalSweep& sweep, SweepMetric metric,
                          const EtaIntervalMarks& marks);
// The cell under plot coordinates, or false.
bool EtaIntervalCellAt(const EtaIntervalSweep& sweep, double x, double y, int* eta_index, int* interval_index);
// A cell's numbers: critical epochs, floats and time against static low,
// static high and dense.
QString EtaIntervalTooltip(const EtaIntervalSweep& sweep, const SweepCell& cell);

// Puts what the last Draw* call drew on `plot` on screen: a full replot,
// or, where that call only swapped overlays of a figure it had drawn
// before (DrawGradientNorms / DrawCheckRatios when only eta, the levels or
// the regimes changed), a re-render of just the layers it changed. Call it
// after drawing instead of plot->replot(). `immediate`: repaint now
// (QCustomPlot::rpImmediateRefresh) rather than queue it.
void RefreshFigure(QCustomPlot* plot, bool immediate = false);

// Writes the plot as PNG or PDF (by the path's suffix) at its current size
// (or width x height when given). False with `error` set on failure.
bool SaveFigure(QCustomPlot* plot, const QString& path, QString* error, int width = 0, int height = 0);
// Every curve, bar set and colour map of the plot as CSV, one row per point.
QString FigureCsv(const QCustomPlot* plot);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_FIGURES_FIGURES_H_
