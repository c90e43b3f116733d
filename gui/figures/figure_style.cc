// The figures' look (colours, fonts, titles, legends, axes) and the layout
// every builder starts from; the QCustomPlot subclasses behind it are in
// plot_elements.cc, the decorations in decorations.cc, the partial redraw
// in partial_redraw.cc.
#include "gui/figures/figure_style.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include "gui/figures/log_ticker.h"
#include "gui/figures/plot_elements.h"

namespace accordion::gui::style {

QCPLayoutGrid* Body(QCustomPlot* plot) {
  return qobject_cast<QCPLayoutGrid*>(plot->plotLayout()->elementCount() > 2 ? plot->plotLayout()->element(2, 0)
                                                                             : nullptr);
}

const std::vector<QColor>& Palette() {
  static const std::vector<QColor> colors = {
      QColor(0x00, 0x72, 0xB2),  // blue
      QColor(0xD5, 0x5E, 0x00),  // vermillion
      QColor(0x00, 0x9E, 0x73),  // bluish green
      QColor(0xCC, 0x79, 0xA7),  // reddish purple
      QColor(0x7A, 0x09, 0xB2),  // purple (Okabe-Ito's sky blue read as a second blue)
      QColor(0xB2, 0x09, 0x41),  // crimson
      QColor(0x8C, 0x7F, 0x3F),  // olive
      QColor(0x72, 0xD9, 0x0B),  // lime
  };
  return colors;
}

QColor PaletteColor(int index) {
  const auto& p = Palette();
  const int n = static_cast<int>(p.size());
  return p[static_cast<size_t>(((index % n) + n) % n)];
}

QColor BandColor() { return QColor(0xE6, 0x9F, 0x00, 64); }
QColor NoEffectBandColor() { return QColor(0x80, 0x80, 0x80, 40); }
QColor RecordedStripColor() { return QColor(0xB3, 0x6B, 0x00); }
QColor LevelLowColor() { return QColor(0xE6, 0x9F, 0x00); }
QColor LevelHighColor() { return QColor(0x00, 0x72, 0xB2); }
QColor LevelNeutralColor() { return QColor(0xDD, 0xDD, 0xDD); }
QColor BackgroundColor() { return QColor(Qt::white); }
QColor GuideColor() { return QColor(0x44, 0x44, 0x44); }

QColor BlendOver(const QColor& c, const QColor& background) {
  const double a = c.alphaF();
  auto mix = [a](int fg, int bg) { return static_cast<int>(std::lround(a * fg + (1 - a) * bg)); };
  return QColor(mix(c.red(), background.red()), mix(c.green(), background.green()), mix(c.blue(), background.blue()));
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
  QCPAxisRect* rect = NewFittingAxisRect(plot);
  plot->setNotAntialiasedElements(QCP::aeNone);
  plot->setPlottingHint(QCP::phFastPolylines, true);
  QFont compact_title = TitleFont();
  compact_title.setPointSizeF(11);
  QCPTextElement* heading = NewWrappingText(plot, title, TitleFont(), 3, compact_title, 2);
  heading->setTextColor(QColor(0x22, 0x22, 0x22));
  heading->setMargins(QMargins(8, 8, 8, 0));
  plot->plotLayout()->addElement(0, 0, heading);
  QFont sub_font = LabelFont();
  sub_font.setPointSizeF(10);
  QFont compact_sub = sub_font;
  compact_sub.setPointSizeF(9);
  QCPTextElement* sub = NewWrappingText(plot, subtitle, sub_font, 3, compact_sub, 3);
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

  QCPLegend* legend = NewFittingLegend();
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
  SetLegendFitHeight(legend, true);
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
  // Fewer columns where the plot is too narrow for all of them.
  SetLegendMaxColumns(legend, std::max(1, columns));
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
  axis->setProperty(kFullLabel, label);
  axis->setLabelFont(LabelFont());
  axis->setTickLabelFont(TickFont());
  axis->setVisible(true);
}

namespace {

constexpr const char* kLogSuffix = "accordion_log_suffix";

}  // namespace

namespace {

class WholeNumberTicker : public QCPAxisTicker {
 protected:
  double getTickStep(const QCPRange& range) override {
    const double step = QCPAxisTicker::getTickStep(range);
    return step < 1 ? 1 : std::floor(step);
  }
  // A sub-tick on every whole number between two ticks (none at 1).
  int getSubTickCount(double step) override {
    return step <= 10 ? static_cast<int>(step) - 1 : QCPAxisTicker::getSubTickCount(step);
  }
};

}  // namespace

void MakeWholeNumberAxis(QCPAxis* axis) { axis->setTicker(QSharedPointer<QCPAxisTicker>(new WholeNumberTicker)); }

void MakeLogAxis(QCPAxis* axis, const QString& suffix) {
  axis->setProperty(kLogSuffix, suffix);
  SetAxisLogarithmic(axis, true);
  axis->grid()->setSubGridVisible(false);
}

bool IsSwitchableLogAxis(const QCPAxis* axis) { return axis != nullptr && axis->property(kLogSuffix).isValid(); }

void SetAxisLogarithmic(QCPAxis* axis, bool logarithmic) {
  if (logarithmic) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new LogTicker(axis->property(kLogSuffix).toString())));
    axis->setNumberFormat("g");
  } else {
    axis->setScaleType(QCPAxis::stLinear);
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    axis->setNumberFormat("gb");
    axis->setNumberPrecision(6);
  }
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

QString Times(double ratio) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return QStringLiteral("–");
  return QString::number(ratio, 'f', 2) + QStringLiteral("×");
}

QString SecondsOnAxis(double s) {
  // 'g' drops to exponents from 1e6 s (11 days) on: no training here is that long.
  return QString::number(s, 'g', s >= 1000 ? 4 : 3) + " s";
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
