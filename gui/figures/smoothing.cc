#include "gui/figures/smoothing.h"

#include <qcustomplot.h>

#include <cmath>

#include "gui/figures/figure_style.h"

namespace accordion::gui::style {

namespace {

constexpr const char* kSmoothable = "accordion_smoothable";
constexpr const char* kRawSeries = "accordion_raw_series";
constexpr const char* kIsRaw = "accordion_is_raw";

}  // namespace

std::vector<double> EmaSmooth(const std::vector<double>& values, double weight) {
  if (!(weight > 0)) return values;
  std::vector<double> out(values.size());
  double last = 0;
  int count = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      out[i] = values[i];
      continue;
    }
    last = last * weight + (1 - weight) * values[i];
    ++count;
    out[i] = last / (1 - std::pow(weight, count));
  }
  return out;
}

void MarkSmoothable(QCPGraph* graph) { graph->setProperty(kSmoothable, true); }

bool HasSmoothableSeries(QCustomPlot* plot) {
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->property(kSmoothable).toBool()) return true;
  }
  return false;
}

int SmoothSeries(QCustomPlot* plot, double weight) {
  if (!(weight > 0)) return 0;
  int smoothed_series = 0;
  const int count = plot->graphCount();
  for (int i = 0; i < count; ++i) {
    QCPGraph* graph = plot->graph(i);
    if (!graph->property(kSmoothable).toBool() || RawSeriesOf(graph) != nullptr) continue;
    QVector<double> keys;
    std::vector<double> values;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
      keys.push_back(it->key);
      values.push_back(it->value);
    }
    const std::vector<double> smoothed = EmaSmooth(values, weight);
    const bool in_legend = plot->autoAddPlottableToLegend();
    plot->setAutoAddPlottableToLegend(false);
    QCPGraph* raw = AddSeries(graph->keyAxis(), graph->valueAxis());
    plot->setAutoAddPlottableToLegend(in_legend);
    raw->setName(graph->name() + " (raw)");
    QColor faint = graph->pen().color();
    faint.setAlpha(70);
    raw->setPen(QPen(faint, 1.0));
    raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
    raw->setVisible(graph->visible());
    raw->setAdaptiveSampling(false);
    raw->setData(keys, QVector<double>(values.begin(), values.end()), true);
    raw->setProperty(kIsRaw, true);
    SendBehindSeries(raw);
    graph->setData(keys, QVector<double>(smoothed.begin(), smoothed.end()), true);
    graph->setProperty(kRawSeries, QVariant::fromValue<QObject*>(raw));
    ++smoothed_series;
  }
  return smoothed_series;
}

int RemoveSmoothing(QCustomPlot* plot) {
  int restored = 0;
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* graph = plot->graph(i);
    QCPGraph* raw = RawSeriesOf(graph);
    if (raw == nullptr) continue;
    graph->data()->set(*raw->data());
    graph->setProperty(kRawSeries, QVariant());
    plot->removeGraph(raw);
    ++restored;
    i = -1;  // removing a graph renumbers the others
  }
  return restored;
}

QCPGraph* RawSeriesOf(const QCPGraph* smoothed) {
  return qobject_cast<QCPGraph*>(smoothed->property(kRawSeries).value<QObject*>());
}

bool IsRawSeries(const QCPGraph* graph) { return graph->property(kIsRaw).toBool(); }

}  // namespace accordion::gui::style
