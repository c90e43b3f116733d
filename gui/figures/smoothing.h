// Optional smoothing of noisy curves (gradient norms, check ratios) as
// TensorBoard smooths scalars: a debiased exponential moving average with a
// weight from 0 (off) to 0.99, the raw curve kept faint behind the smoothed
// one.
#ifndef ACCORDION_GUI_FIGURES_SMOOTHING_H_
#define ACCORDION_GUI_FIGURES_SMOOTHING_H_

#include <vector>

class QCPGraph;
class QCustomPlot;

namespace accordion::gui::style {

// TensorBoard's smoothing: last = last * weight + (1 - weight) * v, shown
// as last / (1 - weight^k) after k finite values (so the first point is
// itself, not pulled towards 0). Non-finite values pass through and do
// not count. weight <= 0 returns `values`.
std::vector<double> EmaSmooth(const std::vector<double>& values, double weight);

// Marks a figure builder's series as one smoothing may apply to.
void MarkSmoothable(QCPGraph* graph);
bool HasSmoothableSeries(QCustomPlot* plot);

// Replaces every smoothable series' points by their EmaSmooth at `weight`
// and adds its raw points, faint and behind it, as "<name> (raw)" (not in
// the legend; RawSeriesOf finds it). Once per draw; weight <= 0 does
// nothing.
// Returns how many series it smoothed.
int SmoothSeries(QCustomPlot* plot, double weight);
// Puts back the raw points of every series SmoothSeries smoothed and
// removes the raw curves; returns how many.
int RemoveSmoothing(QCustomPlot* plot);
// The raw curve SmoothSeries kept for `smoothed`, or null.
QCPGraph* RawSeriesOf(const QCPGraph* smoothed);
// True for a raw curve SmoothSeries added.
bool IsRawSeries(const QCPGraph* graph);

}  // namespace accordion::gui::style

#endif  // ACCORDION_GUI_FIGURES_SMOOTHING_H_
