#include "gui/figures/figure_style.h"

#include <qcustomplot.h>

#include <cmath>

namespace accordion::gui::style {

namespace {

constexpr const char* kLegendOnly = "accordion_legend_only";
constexpr const char* kBandsLayer = "bands";

QCPAxisRect* MainRect(QCustomPlot* plot) { return plot->axisRect(0); }

}  // namespace

QCPLayoutGrid* Body(QCustomPlot* plot) {
  return qobject_cast<QCPLayoutGrid*>(plot->plotLayout()->elementCount() > 2 ? plot->plotLayout()->element(2, 0)
                                                                              : nullptr);
}

namespace {

void EnsureBandsLayer(QCustomPlot* plot) {
  if (plot->layer(kBandsLayer) == nullptr) {
    plot->addLayer(kBandsLayer, plot->layer("grid"), QCustomPlot::limBelow);
  }
}

}  // namespace

const std::vector<QColor>& Palette() {
  static const std::vector<QColor> colors = {
      QColor(0x00, 0x72, 0xB2),  // blue
      QColor(0xD5, 0x5E, 0x00),  // vermillion
      QColor(0x00, 0x9E, 0x73),  // bluish green
      QColor(0xCC, 0x79, 0xA7),  // reddish purple
      QColor(0x56, 0xB4, 0xE9),  // sky blue
      QColor(0x00, 0x00, 0x00),  // black
      QColor(0x8C, 0x6D, 0x00),  // dark yellow (Okabe-Ito yellow is too pale on white)
      QColor(0x7F, 0x7F, 0x7F),  // grey
  };
  return colors;
}

QColor PaletteColor(int index) {
  const auto& p = Palette();
  const int n = static_cast<int>(p.size());
  return p[static_cast<size_t>(((index % n) + n) % n)];
}

QColor BandColor() { return QColor(0xE6, 0x9F, 0x00, 64); }
QColor RecordedStripColor() { return QColor(0xB3, 0x6B, 0x00); }
QColor LevelLowColor() { return QColor(0xE6, 0x9F, 0x00); }
QColor LevelHighColor() { return QColor(0x00, 0x72, 0xB2); }
QColor LevelNeutralColor() { return QColor(0xDD, 0xDD, 0xDD); }
QColor BackgroundColor() { return QColor(Qt::white); }
QColor GuideColor() { return QColor(0x44, 0x44, 0x44); }

QColor BlendOver(const QColor& c, const QColor& background) {
  const double a = c.alphaF();
  auto mix = [a](int fg, int bg) { return static_cast<int>(std::lround(a * fg + (1 - a) * bg)); };
  return QColor(mix(c.red(), background.red()), mix(c.green(), background.green()),
                mix(c.blue(), background.blue()));
}

QFont TitleFont() {
  QFont f;
  f.setPointSizeF(13);
  f.setBold(true);
  return f;
}
QFont LabelFont() {
  QFont f;
  f.setPointSizeF(11);
  return f;
}
QFont TickFont() {
  QFont f;
  f.setPointSizeF(9.5);
  return f;
}
QFont LegendFont() {
  QFont f;
  f.setPointSizeF(9.5);
  return f;
}

QCPAxisRect* ResetPlot(QCustomPlot* plot, const QString& title, const QString& subtitle) {
  plot->clearItems();
  plot->clearPlottables();
  plot->plotLayout()->clear();
  EnsureBandsLayer(plot);
  plot->setBackground(QBrush(BackgroundColor()));
  plot->setAutoAddPlottableToLegend(true);

  // Rows: title, subtitle, then the body grid: the axis rect and, beside
  // it, the legend or the colour scale. Titles outside the body so their
  // width never squeezes the body's columns.
  auto* rect = new QCPAxisRect(plot, true);
  auto* heading = new QCPTextElement(plot, title, TitleFont());
  heading->setTextColor(QColor(0x22, 0x22, 0x22));
  heading->setMargins(QMargins(8, 8, 8, 0));
  plot->plotLayout()->addElement(0, 0, heading);
  QFont sub_font = LabelFont();
  sub_font.setPointSizeF(10);
  auto* sub = new QCPTextElement(plot, subtitle, sub_font);
  sub->setTextColor(QColor(0x55, 0x55, 0x55));
  sub->setMargins(QMargins(8, 2, 8, subtitle.isEmpty() ? 0 : 4));
  sub->setVisible(!subtitle.isEmpty());
  plot->plotLayout()->addElement(1, 0, sub);
  auto* body = new QCPLayoutGrid;
  plot->plotLayout()->addElement(2, 0, body);
  body->addElement(0, 0, rect);
  body->setColumnSpacing(4);
  body->setMargins(QMargins(0, 0, 10, 2));
  plot->plotLayout()->setRowStretchFactors({0.001, 0.001, 1});
  plot->plotLayout()->setRowSpacing(0);
  rect->setLayer("background");
  plot->xAxis = rect->axis(QCPAxis::atBottom);
  plot->yAxis = rect->axis(QCPAxis::atLeft);
  plot->xAxis2 = rect->axis(QCPAxis::atTop);
  plot->yAxis2 = rect->axis(QCPAxis::atRight);
  for (QCPAxis* axis : rect->axes()) {
    axis->setLayer("axes");
    axis->grid()->setLayer("grid");
    axis->setTickLabelFont(TickFont());
    axis->setLabelFont(LabelFont());
    axis->grid()->setPen(QPen(QColor(0xD8, 0xD8, 0xD8), 1, Qt::DotLine));
    axis->grid()->setSubGridVisible(false);
  }

  auto* legend = new QCPLegend;
  rect->insetLayout()->addElement(legend, Qt::AlignRight | Qt::AlignTop);
  rect->insetLayout()->setMargins(QMargins(10, 10, 10, 10));
  legend->setLayer("legend");
  plot->legend = legend;
  legend->setVisible(true);
  legend->setFont(LegendFont());
  legend->setBrush(QBrush(QColor(255, 255, 255, 215)));
  legend->setBorderPen(QPen(QColor(0xBB, 0xBB, 0xBB)));
  legend->setIconSize(22, 12);
  legend->setRowSpacing(0);
  return rect;
}

void PlaceLegendRight(QCustomPlot* plot) {
  QCPAxisRect* rect = MainRect(plot);
  QCPLegend* legend = plot->legend;
  if (rect == nullptr || legend == nullptr) return;
  rect->insetLayout()->take(legend);
  auto* column = new QCPLayoutGrid;
  Body(plot)->addElement(0, 1, column);
  column->addElement(0, 0, legend);
  column->addElement(1, 0, new QCPLayoutElement(plot));  // pushes the legend to the top
  column->setRowStretchFactor(0, 0.001);
  column->setMargins(QMargins(0, 10, 8, 0));
  Body(plot)->setColumnStretchFactor(1, 0.001);
  legend->setBrush(QBrush(Qt::NoBrush));
  legend->setBorderPen(Qt::NoPen);
}

void PlaceLegendTop(QCustomPlot* plot, int columns) {
  QCPAxisRect* rect = MainRect(plot);
  QCPLegend* legend = plot->legend;
  if (rect == nullptr || legend == nullptr) return;
  rect->insetLayout()->take(legend);
  Body(plot)->insertRow(0);
  auto* row = new QCPLayoutGrid;
  Body(plot)->addElement(0, 0, row);
  row->addElement(0, 0, new QCPLayoutElement(plot));
  row->addElement(0, 1, legend);
  row->addElement(0, 2, new QCPLayoutElement(plot));
  row->setColumnStretchFactor(1, 0.001);
  Body(plot)->setRowStretchFactor(0, 0.001);
  legend->setFillOrder(QCPLegend::foColumnsFirst, false);
  legend->setWrap(std::max(1, columns));
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  legend->setColumnSpacing(14);
  legend->setBrush(QBrush(Qt::NoBrush));
  legend->setBorderPen(Qt::NoPen);
}

void PlaceLegendInside(QCustomPlot* plot, Qt::Alignment corner) {
  QCPAxisRect* rect = MainRect(plot);
  if (rect == nullptr || plot->legend == nullptr) return;
  rect->insetLayout()->setInsetAlignment(0, corner);
}

void StyleAxis(QCPAxis* axis, const QString& label) {
  axis->setLabel(label);
  axis->setLabelFont(LabelFont());
  axis->setTickLabelFont(TickFont());
  axis->setVisible(true);
}

void MakeLogAxis(QCPAxis* axis) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
  ticker->setLogBase(10);
  ticker->setSubTickCount(8);
  axis->setTicker(ticker);
  axis->setNumberFormat("eb");
  axis->setNumberPrecision(0);
  axis->grid()->setSubGridVisible(false);
}

QCPItemRect* AddBand(QCustomPlot* plot, double x0, double x1, const QColor& fill, double y0_ratio,
                     double y1_ratio) {
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

void AddHorizontalLine(QCustomPlot* plot, double y, const QColor& color, Qt::PenStyle pen_style,
                       double width) {
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
  item->setText(text);
  return item;
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

QCPAbstractPlottable* AddLegendLine(QCustomPlot* plot, const QString& name, const QColor& color,
                                    Qt::PenStyle pen_style, double width) {
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

bool IsLegendOnly(const QCPAbstractPlottable* plottable) {
  return plottable->property(kLegendOnly).toBool();
}

QImage RenderFigure(QCustomPlot* plot, int width, int height) {
  plot->setViewport(QRect(0, 0, width, height));
  plot->replot(QCustomPlot::rpImmediateRefresh);
  QPixmap pixmap(width, height);
  pixmap.fill(BackgroundColor());
  {
    QCPPainter painter(&pixmap);
    plot->toPainter(&painter, width, height);
  }
  plot->replot(QCustomPlot::rpImmediateRefresh);
  return pixmap.toImage().convertToFormat(QImage::Format_RGB32);
}

QString Sci(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-2 && a < 1e5) return QString::number(v, 'g', 4);
  return QString::number(v, 'e', 2).replace("e+0", "e").replace("e+", "e").replace("e-0", "e-");
}

QString Seconds(double s) {
  const double a = std::fabs(s);
  if (a >= 3600) return QString::number(s / 3600, 'f', 2) + " h";
  if (a >= 100) return QString::number(s, 'f', 0) + " s";
  if (a >= 1) return QString::number(s, 'f', 2) + " s";
  if (a >= 1e-3) return QString::number(s * 1e3, 'f', 2) + " ms";
  return QString::number(s * 1e6, 'f', 1) + " µs";
}

}  // namespace accordion::gui::style
