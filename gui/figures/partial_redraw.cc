// Incremental redraws: re-rendering only some of a plot's paint buffers,
// which reaches into QCustomPlot's protected members (its buffers, replot
// queue and layout pass), and the in-place updates of the regime figures
// built on it (the figure's signature, the curves compared, the overlays
// swapped).
#include <qcustomplot.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "gui/figures/figure_style.h"
#include "gui/figures/plot_elements.h"

namespace accordion::gui::style {

namespace {

constexpr const char* kPartialLayers = "accordion_partial_layers";

// QCustomPlot keeps its paint buffers, the replot queue and the layout pass
// protected; these reach them through pointers to members (the standard
// way for a class that never exists as an object).
struct PlotAccess : QCustomPlot {
  static QList<QSharedPointer<QCPAbstractPaintBuffer>>& Buffers(QCustomPlot* plot) {
    return plot->*(&PlotAccess::mPaintBuffers);
  }
  static bool ReplotQueued(QCustomPlot* plot) { return plot->*(&PlotAccess::mReplotQueued); }
  static void Layout(QCustomPlot* plot) { (plot->*(&PlotAccess::updateLayout))(); }
};

struct LayerAccess : QCPLayer {
  static QCPAbstractPaintBuffer* Buffer(QCPLayer* layer) {
    return (layer->*(&LayerAccess::mPaintBuffer)).toStrongRef().data();
  }
  static void Draw(QCPLayer* layer) { (layer->*(&LayerAccess::drawToPaintBuffer))(); }
};

void CollectRects(QCPLayoutElement* element, std::vector<QRect>* out) {
  if (element == nullptr) return;
  out->push_back(element->outerRect());
  out->push_back(element->rect());
  for (QCPLayoutElement* child : element->elements(false)) CollectRects(child, out);
}

}  // namespace

void EnsureRegimeLayers(QCustomPlot* plot) {
  EnsureBandsLayer(plot);
  if (plot->layer(kRegimesLayer) == nullptr) {
    plot->addLayer(kRegimesLayer, plot->layer("main"), QCustomPlot::limAbove);
  }
  plot->layer(kBandsLayer)->setMode(QCPLayer::lmBuffered);
  plot->layer(kRegimesLayer)->setMode(QCPLayer::lmBuffered);
}

void RemoveRegimeItems(QCustomPlot* plot) {
  const QCPLayer* bands = plot->layer(kBandsLayer);
  const QCPLayer* regimes = plot->layer(kRegimesLayer);
  for (int i = plot->itemCount() - 1; i >= 0; --i) {
    QCPAbstractItem* item = plot->item(i);
    if (item->layer() == bands || item->layer() == regimes) plot->removeItem(item);
  }
}

bool BuffersCurrent(QCustomPlot* plot) {
  const auto& buffers = PlotAccess::Buffers(plot);
  if (buffers.isEmpty() || PlotAccess::ReplotQueued(plot)) return false;
  for (const auto& buffer : buffers) {
    if (buffer->invalidated() || buffer->size() != plot->viewport().size()) return false;
  }
  return true;
}

std::vector<QRect> LayoutRects(QCustomPlot* plot) {
  std::vector<QRect> rects;
  CollectRects(plot->plotLayout(), &rects);
  return rects;
}

void UpdateLayout(QCustomPlot* plot) { PlotAccess::Layout(plot); }

void MarkPartialRedraw(QCustomPlot* plot, const QStringList& layers) {
  if (QCPAxisRect* rect = MainRect(plot)) rect->setProperty(kPartialLayers, layers);
}

QStringList TakePartialLayers(QCustomPlot* plot) {
  if (plot->axisRectCount() == 0) return {};
  QCPAxisRect* rect = MainRect(plot);
  const QStringList layers = rect->property(kPartialLayers).toStringList();
  rect->setProperty(kPartialLayers, QVariant());
  return layers;
}

bool RerenderLayers(QCustomPlot* plot, const QStringList& layers) {
  const auto& buffers = PlotAccess::Buffers(plot);
  if (buffers.isEmpty() || PlotAccess::ReplotQueued(plot)) return false;
  std::vector<QCPAbstractPaintBuffer*> targets;
  for (const QString& name : layers) {
    QCPLayer* layer = plot->layer(name);
    QCPAbstractPaintBuffer* buffer = layer != nullptr ? LayerAccess::Buffer(layer) : nullptr;
    if (buffer == nullptr) return false;
    if (std::find(targets.begin(), targets.end(), buffer) == targets.end()) targets.push_back(buffer);
  }
  for (const auto& buffer : buffers) {
    if (buffer->size() != plot->viewport().size()) return false;
    const bool target = std::find(targets.begin(), targets.end(), buffer.data()) != targets.end();
    if (buffer->invalidated() && !target) return false;
  }
  for (QCPAbstractPaintBuffer* buffer : targets) {
    buffer->clear(Qt::transparent);
    for (int i = 0; i < plot->layerCount(); ++i) {
      QCPLayer* layer = plot->layer(i);
      if (LayerAccess::Buffer(layer) == buffer) LayerAccess::Draw(layer);
    }
    buffer->setInvalidated(false);
  }
  return true;
}

// --- In-place updates ---

namespace {

constexpr const char* kSignature = "accordion_regime_signature";

std::vector<std::pair<double, double>> Ranges(QCustomPlot* plot) {
  std::vector<std::pair<double, double>> ranges;
  for (QCPAxis* axis : plot->axisRect(0)->axes()) ranges.emplace_back(axis->range().lower, axis->range().upper);
  return ranges;
}

}  // namespace

void SetFigureSignature(QCustomPlot* plot, const QString& signature) {
  plot->axisRect(0)->setProperty(kSignature, signature);
}

QString FigureSignature(QCustomPlot* plot) {
  return plot->axisRectCount() == 0 ? QString() : plot->axisRect(0)->property(kSignature).toString();
}

bool CanUpdateInPlace(QCustomPlot* plot, const QString& signature, const std::vector<SeriesData>& series) {
  if (plot->axisRectCount() == 0 || FigureSignature(plot) != signature) return false;
  if (plot->layer(kRegimesLayer) == nullptr || Body(plot) == nullptr) return false;
  if (!BuffersCurrent(plot)) return false;
  if (plot->plottableCount() < static_cast<int>(series.size())) return false;
  for (size_t i = 0; i < series.size(); ++i) {
    auto* graph = qobject_cast<QCPGraph*>(plot->plottable(static_cast<int>(i)));
    const SeriesData& s = series[i];
    if (graph == nullptr || graph->name() != s.name || graph->dataCount() != s.x.size()) return false;
    auto it = graph->data()->constBegin();
    for (int k = 0; k < s.x.size(); ++k, ++it) {
      if (it->key != s.x[k] || it->value != s.y[k]) return false;
    }
  }
  return true;
}

InPlaceUpdate BeginInPlaceUpdate(QCustomPlot* plot, const QString& subtitle) {
  InPlaceUpdate state{LayoutRects(plot), Ranges(plot)};
  RemoveRegimeItems(plot);
  if (auto* sub = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(1, 0))) sub->setText(subtitle);
  return state;
}

void EndInPlaceUpdate(QCustomPlot* plot, const InPlaceUpdate& before, const QStringList& layers) {
  bool partial = Ranges(plot) == before.ranges;
  if (partial) {
    UpdateLayout(plot);
    partial = LayoutRects(plot) == before.rects;
  }
  MarkPartialRedraw(plot, partial ? layers : QStringList());
}

void StartFullDraw(QCustomPlot* plot) {
  EnsureRegimeLayers(plot);
  for (int row = 0; row < 2; ++row) {
    if (QCPLayoutElement* e = plot->plotLayout()->element(row, 0)) e->setLayer(kRegimesLayer);
  }
}

}  // namespace accordion::gui::style
