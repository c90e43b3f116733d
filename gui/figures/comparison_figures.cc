// Comparison across runs: test accuracy against epoch or floats sent.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"

namespace accordion::gui {

void DrawAccuracyComparison(QCustomPlot* plot, const std::vector<std::shared_ptr<const RunData>>& runs,
                            CompareAxis axis) {
  using namespace style;
  const bool floats = axis == CompareAxis::kFloats;
  ResetPlot(plot, floats ? "Test accuracy against data sent" : "Test accuracy against epoch",
            floats ? "floats each worker sent so far (log scale); further left is cheaper for the same accuracy"
                   : "Accordion runs solid, static runs dashed");
  StyleAxis(plot->xAxis, floats ? "floats sent per worker (cumulative)" : "epoch");
  StyleAxis(plot->yAxis, "test accuracy (%)");
  if (floats) MakeLogAxis(plot->xAxis);

  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  int index = 0;
  for (const auto& run : runs) {
    if (!run) continue;
    const TraceView& view = run->view();
    QCPGraph* g = plot->addGraph(plot->xAxis, plot->yAxis);
    g->setName(QString::fromStdString(run->summary.name));
    const bool accordion = view.run.policy == Policy::kAccordion;
    g->setPen(QPen(PaletteColor(index), accordion ? 2.2 : 1.6, accordion ? Qt::SolidLine : Qt::DashLine));
    ++index;
    QVector<double> x, y;
    double cumulative = 0;
    for (const EpochRecord& e : view.epochs) {
      cumulative += e.floats_sent;
      const double key = floats ? cumulative : e.epoch;
      if (floats && !(key > 0)) continue;
      x.push_back(key);
      y.push_back(e.test_acc * 100);
    }
    g->setData(x, y, true);
    for (int i = 0; i < x.size(); ++i) {
      xlo = std::min(xlo, x[i]);
      xhi = std::max(xhi, x[i]);
    }
    // The tail of training decides the y range: the first epochs often sit
    // far below and would squash the differences that matter.
    const int from = std::max(0, static_cast<int>(y.size()) - std::max(3, static_cast<int>(y.size()) * 3 / 4));
    for (int i = from; i < y.size(); ++i) {
      ylo = std::min(ylo, y[i]);
      yhi = std::max(yhi, y[i]);
    }
  }
  if (!(xhi >= xlo)) {
    AddMessage(plot, "No runs to compare");
    plot->xAxis->setRange(floats ? 1 : 0, floats ? 10 : 1);
    plot->yAxis->setRange(0, 100);
    return;
  }
  if (floats) {
    plot->xAxis->setRange(xlo / 1.5, xhi * 1.5);
  } else {
    plot->xAxis->setRange(xlo - 0.5, xhi + 0.5);
  }
  const double pad = std::max(0.5, (yhi - ylo) * 0.08);
  plot->yAxis->setRange(std::max(0.0, ylo - pad * 3), std::min(100.0, yhi + pad));
  // Above the plot: inside, it sat on the curves.
  PlaceLegendTop(plot, 3);
}

}  // namespace accordion::gui
