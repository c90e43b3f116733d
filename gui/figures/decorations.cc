// The decorations figures lay over their data: bands, guide lines,
// messages, legend-only entries, disc markers, the layer behind the series.
#include <qcustomplot.h>

#include <cmath>

#include "gui/figures/figure_style.h"
#include "gui/figures/plot_elements.h"

namespace accordion::gui::style {

namespace {

constexpr const char* kLegendOnly = "accordion_legend_only";
constexpr const char* kBackSeriesLayer = "back_series";

}  // namespace

void SendBehindSeries(QCPAbstractPlottable* plottable) {
  QCustomPlot* plot = plottable->parentPlot();
  if (plot->layer(kBackSeriesLayer) == nullptr) {
    plot->addLayer(kBackSeriesLayer, plot->layer("main"), QCustomPlot::limBelow);
  }
  plottable->setLayer(kBackSeriesLayer);
}

namespace {

constexpr const char* kDiscDiameter = "accordion_disc_diameter";

QPixmap DiscPixmap(const QColor& color, double diameter) {
  const int side = static_cast<int>(std::ceil(diameter)) + 2;
  QPixmap pixmap(side, side);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawEllipse(QPointF(side / 2.0, side / 2.0), diameter / 2, diameter / 2);
  return pixmap;
}

}  // namespace

void SetDiscScatter(QCPGraph* graph, const QColor& color, double diameter) {
  graph->setProperty(kDiscDiameter, diameter);
  graph->setScatterStyle(QCPScatterStyle(DiscPixmap(color, diameter)));
}

void UseVectorDiscs(QCustomPlot* plot, bool vector) {
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* graph = plot->graph(i);
    const QVariant diameter = graph->property(kDiscDiameter);
    if (!diameter.isValid()) continue;
    const QColor color = graph->pen().color();
    // QCustomPlot's discs draw their outline with the graph's pen too.
    graph->setScatterStyle(
        vector ? QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, diameter.toDouble() - graph->pen().widthF())
               : QCPScatterStyle(DiscPixmap(color, diameter.toDouble())));
  }
}
QCPItemRect* AddBand(QCustomPlot* plot, double x0, double x1, const QColor& fill, double y0_ratio, double y1_ratio) {
  auto* band = new QCPItemRect(plot);
  band->setLayer(kBandsLayer);
  band->setClipAxisRect(MainRect(plot));
  for (QCPItemPosition* p : {band->topLeft, band->bottomRight}) {
    p->setAxes(plot->xAxis, plot->yAxis);
    p->setAxisRect(MainRect(plot));
    p->setTypeX(QCPItemPosition::ptPlotCoords);
    p->setTypeY(QCPItemPosition::ptAxisRectRatio);
  }
  band->topLeft->setCoords(x0, y0_ratio);
  band->bottomRight->setCoords(x1, y1_ratio);
  band->setPen(Qt::NoPen);
  band->setBrush(QBrush(fill));
  band->setSelectable(false);
  return band;
}

void AddVerticalLine(QCustomPlot* plot, double x, const QColor& color, Qt::PenStyle pen_style, double width) {
  auto* line = new QCPItemStraightLine(plot);
  line->setClipAxisRect(MainRect(plot));
  for (QCPItemPosition* p : {line->point1, line->point2}) {
    p->setAxes(plot->xAxis, plot->yAxis);
    p->setAxisRect(MainRect(plot));
    p->setTypeX(QCPItemPosition::ptPlotCoords);
    p->setTypeY(QCPItemPosition::ptAxisRectRatio);
  }
  line->point1->setCoords(x, 0);
  line->point2->setCoords(x, 1);
  line->setPen(QPen(color, width, pen_style));
  line->setSelectable(false);
}

void AddHorizontalLine(QCustomPlot* plot, double y, const QColor& color, Qt::PenStyle pen_style, double width) {
  auto* line = new QCPItemStraightLine(plot);
  line->setClipAxisRect(MainRect(plot));
  for (QCPItemPosition* p : {line->point1, line->point2}) {
    p->setAxes(plot->xAxis, plot->yAxis);
    p->setAxisRect(MainRect(plot));
    p->setTypeX(QCPItemPosition::ptAxisRectRatio);
    p->setTypeY(QCPItemPosition::ptPlotCoords);
  }
  line->point1->setCoords(0, y);
  line->point2->setCoords(1, y);
  line->setPen(QPen(color, width, pen_style));
  line->setSelectable(false);
}

QCPItemText* AddMessage(QCustomPlot* plot, const QString& text) {
  auto* item = new QCPItemText(plot);
  item->setClipToAxisRect(false);
  item->position->setAxisRect(MainRect(plot));
  item->position->setType(QCPItemPosition::ptAxisRectRatio);
  item->position->setCoords(0.5, 0.5);
  item->setPositionAlignment(Qt::AlignCenter);
  item->setTextAlignment(Qt::AlignCenter);
  QFont f = LabelFont();
  f.setPointSizeF(12);
  item->setFont(f);
  item->setColor(QColor(0x66, 0x66, 0x66));
  // Above the curves and lines, on the background: η's line drawn on a
  // higher layer struck it through.
  if (QCPLayer* top = plot->layer("overlay")) item->setLayer(top);
  item->setBrush(QBrush(Qt::white));
  item->setPadding(QMargins(6, 2, 6, 2));
  item->setText(text);
  return item;
}

QCPColorScale* AddColorScale(QCustomPlot* plot, QCPColorMap* map, const QCPColorGradient& gradient, double lower,
                             double upper, int bar_width) {
  auto* scale = new QCPColorScale(plot);
  Body(plot)->addElement(0, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(bar_width);
  map->setColorScale(scale);
  scale->setGradient(gradient);
  scale->setDataRange(QCPRange(lower, upper));
  map->setGradient(gradient);
  map->setDataRange(QCPRange(lower, upper));
  auto* group = new QCPMarginGroup(plot);
  plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  // The plot takes the width; the scale only its bar and labels.
  Body(plot)->setColumnStretchFactor(1, 0.001);
  return scale;
}

QCPAbstractPlottable* AddLegendSwatch(QCustomPlot* plot, const QString& name, const QColor& fill) {
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setName(name);
  bars->setBrush(QBrush(fill));
  bars->setPen(QPen(fill.darker(115), 1));
  bars->setSelectable(QCP::stNone);
  bars->setProperty(kLegendOnly, true);
  return bars;
}

QCPAbstractPlottable* AddLegendLine(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle pen_style,
                                    double width) {
  auto* graph = plot->addGraph(plot->xAxis, plot->yAxis);
  graph->setName(name);
  graph->setPen(QPen(color, width, pen_style));
  graph->setSelectable(QCP::stNone);
  graph->setProperty(kLegendOnly, true);
  return graph;
}

QCPAbstractPlottable* AddLegendNote(QCustomPlot* plot, const QString& text) {
  auto* graph = plot->addGraph(plot->xAxis, plot->yAxis);
  graph->setName(text);
  graph->setPen(Qt::NoPen);
  graph->setSelectable(QCP::stNone);
  graph->setProperty(kLegendOnly, true);
  return graph;
}

bool IsLegendOnly(const QCPAbstractPlottable* plottable) { return plottable->property(kLegendOnly).toBool(); }

}  // namespace accordion::gui::style
