#include "gui/figures/figure_style.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace accordion::gui::style {

namespace {

constexpr const char* kLegendOnly = "accordion_legend_only";
constexpr const char* kBandsLayer = "bands";
constexpr const char* kBackSeriesLayer = "back_series";

QCPAxisRect* MainRect(QCustomPlot* plot) { return plot->axisRect(0); }

// A plot this short (a laptop's window, two figures stacked) sets its titles
// and legend smaller, so the axis rect keeps a readable height.
constexpr int kCompactHeight = 340;
bool IsCompact(const QCustomPlot* plot) { return plot != nullptr && plot->viewport().height() < kCompactHeight; }

// A title that wraps to the plot's width instead of running off both sides:
// QCPTextElement asks for its one-line width as its minimum, which the
// layout cannot give in a narrow window, and it never breaks lines. At most
// `max_lines` lines; the last one elided ("…") when the text needs more.
// In a compact plot (IsCompact) it takes `compact_font` and at most
// `compact_lines` lines.
class WrappingText : public QCPTextElement {
 public:
  WrappingText(QCustomPlot* plot, const QString& text, const QFont& font, int max_lines, const QFont& compact_font,
               int compact_lines)
      : QCPTextElement(plot, text, font),
        max_lines_(std::max(1, max_lines)),
        compact_lines_(std::max(1, compact_lines)),
        compact_font_(compact_font) {
    setTextFlags(Qt::AlignCenter);
  }

 protected:
  QSize minimumOuterSizeHint() const override {
    const QSize text = TextSize();
    return QSize(std::min(text.width(), 40) + mMargins.left() + mMargins.right(),
                 text.height() + mMargins.top() + mMargins.bottom());
  }
  QSize maximumOuterSizeHint() const override {
    return QSize(QWIDGETSIZE_MAX, TextSize().height() + mMargins.top() + mMargins.bottom());
  }
  void draw(QCPPainter* painter) override {
    Wrap();
    painter->setFont(shown_font_);
    painter->setPen(QPen(mTextColor));
    painter->drawText(mRect, mTextFlags, shown_, &mTextBoundingRect);
  }

 private:
  // The titles span the whole plot: the viewport's width is theirs.
  int Width() const {
    return std::max(40, (mParentPlot ? mParentPlot->viewport().width() : 400) - mMargins.left() - mMargins.right() - 8);
  }
  void Wrap() const {
    const int width = Width();
    const bool compact = IsCompact(mParentPlot);
    if (width == wrapped_width_ && mText == wrapped_text_ && compact == wrapped_compact_) return;
    wrapped_width_ = width;
    wrapped_text_ = mText;
    wrapped_compact_ = compact;
    shown_font_ = compact ? compact_font_ : mFont;
    const int max_lines = compact ? compact_lines_ : max_lines_;
    // Every builder makes its titles anew, and most are the same text at
    // the same width as last time: laying them out (text shaping) again
    // was a good part of a redraw.
    struct Wrapped {
      QString shown;
      QSize size;
    };
    static QHash<QString, Wrapped> cache;
    const QString key = shown_font_.key() + QChar(1) + QString::number(width) + QChar(1) + QString::number(max_lines) +
                        QChar(1) + QString::number(static_cast<int>(mTextFlags)) + QChar(1) + mText;
    if (auto it = cache.constFind(key); it != cache.constEnd()) {
      shown_ = it->shown;
      size_ = it->size;
      return;
    }
    const QFontMetrics metrics(shown_font_);
    if (metrics.horizontalAdvance(mText) <= width && !mText.contains('\n')) {
      // One line: what the word-by-word loop below ends with, measured once.
      shown_ = mText.split(' ', Qt::SkipEmptyParts).join(' ');
    } else {
      QStringList lines;
      QString line;
      const QStringList words = mText.split(' ', Qt::SkipEmptyParts);
      int i = 0;
      for (; i < words.size(); ++i) {
        const QString candidate = line.isEmpty() ? words[i] : line + ' ' + words[i];
        if (line.isEmpty() || metrics.horizontalAdvance(candidate) <= width) {
          line = candidate;
          continue;
        }
        if (lines.size() + 1 == max_lines) break;
        lines << line;
        line = words[i];
      }
      if (i < words.size()) line += ' ' + QStringList(words.mid(i)).join(' ');
      lines << metrics.elidedText(line, Qt::ElideRight, width);
      shown_ = lines.join('\n');
    }
    size_ = metrics.boundingRect(QRect(0, 0, width, 100000), mTextFlags, shown_).size();
    if (cache.size() > 256) cache.clear();
    cache.insert(key, Wrapped{shown_, size_});
  }
  QSize TextSize() const {
    Wrap();
    return size_;
  }

  int max_lines_;
  int compact_lines_;
  QFont compact_font_;
  mutable int wrapped_width_ = -1;
  mutable bool wrapped_compact_ = false;
  mutable QFont shown_font_;
  mutable QString wrapped_text_;
  mutable QString shown_;
  mutable QSize size_;
};

// A legend laid out in rows above the plot that takes as many columns as
// fit the plot's width (up to `max_columns`), so that no entry is cut.
// A legend in a column right of the plot (setFitHeight) that is taller
// than the plot takes a second column instead of drawing its entries over
// each other. In a compact plot (IsCompact) its font is a point smaller.
class FittingLegend : public QCPLegend {
 public:
  void setMaxColumns(int columns) { max_columns_ = columns; }
  void setFitHeight(bool on) { fit_height_ = on; }

  void update(UpdatePhase phase) override {
    if (phase == upPreparation && mParentPlot != nullptr) {
      const QFont font = IsCompact(mParentPlot) ? CompactFont() : LegendFont();
      if (this->font() != font) setFont(font);
      if (max_columns_ > 0) Fit();
      if (fit_height_) FitHeight();
    }
    QCPLegend::update(phase);
  }

 private:
  static QFont CompactFont() {
    QFont f = LegendFont();
    f.setPointSizeF(f.pointSizeF() - 1);
    return f;
  }

  // Entries per column: as many as the height below the titles holds.
  void FitHeight() {
    int rows = 0, entry = 0;
    for (int i = 0; i < itemCount(); ++i) {
      const QCPLayoutElement* it = item(i);
      if (it == nullptr || !it->visible()) continue;
      ++rows;
      entry = std::max(entry, it->minimumOuterSizeHint().height() + rowSpacing());
    }
    if (rows == 0 || entry <= 0) return;
    int available = mParentPlot->viewport().height() - 40;  // the x axis and the margins
    for (int r = 0; r < 2 && r < mParentPlot->plotLayout()->rowCount(); ++r) {
      if (QCPLayoutElement* title = mParentPlot->plotLayout()->element(r, 0); title && title->visible()) {
        available -= title->minimumOuterSizeHint().height();
      }
    }
    const int per_column = std::max(1, std::min(rows, available / entry));
    if (wrap() != (per_column >= rows ? 0 : per_column)) {
      setFillOrder(foRowsFirst, false);
      setWrap(per_column >= rows ? 0 : per_column);
      setFillOrder(foRowsFirst, true);
    }
  }

  void Fit() {
    std::vector<int> widths;
    for (int i = 0; i < itemCount(); ++i) {
      const QCPLayoutElement* it = item(i);
      if (it != nullptr && it->visible()) widths.push_back(it->minimumOuterSizeHint().width());
    }
    if (widths.empty()) return;
    // Less the body's right margin, the legend's margins and the legend
    // row's spacing: an entry squeezed below its width overlaps the next.
    const int available = mParentPlot->viewport().width() - 34;
    const int spacing = columnSpacing();
    // The most columns (filled row by row) whose widest entries fit.
    int columns = std::min<int>(max_columns_, static_cast<int>(widths.size()));
    for (; columns > 1; --columns) {
      int total = (columns - 1) * spacing;
      for (int c = 0; c < columns; ++c) {
        int widest = 0;
        for (size_t i = static_cast<size_t>(c); i < widths.size(); i += static_cast<size_t>(columns)) {
          widest = std::max(widest, widths[i]);
        }
        total += widest;
      }
      if (total <= available) break;
    }
    if (columns != wrap()) {
      setWrap(columns);
      setFillOrder(fillOrder(), true);
    }
  }

  int max_columns_ = 0;
  bool fit_height_ = false;
};

// An axis rect whose axis labels never run past its sides: a label longer
// than its axis (a y label on a short plot) drops its parenthesis, else
// ends in "…". The full label stays in the axis' kFullLabel property, for
// the CSV's header.
class FittingAxisRect : public QCPAxisRect {
 public:
  using QCPAxisRect::QCPAxisRect;

  void update(UpdatePhase phase) override {
    QCPAxisRect::update(phase);
    if (phase != upLayout) return;
    for (QCPAxis* axis : axes()) {
      const QString full = axis->property(kFullLabel).toString();
      if (full.isEmpty()) continue;
      const bool vertical = axis->orientation() == Qt::Vertical;
      const int room = (vertical ? rect().height() : rect().width()) + 20;
      const QFontMetrics metrics(axis->labelFont());
      QString shown = full;
      if (metrics.horizontalAdvance(shown) > room && shown.contains(" (")) shown = shown.section(" (", 0, 0);
      if (metrics.horizontalAdvance(shown) > room) shown = metrics.elidedText(shown, Qt::ElideRight, room);
      if (axis->label() != shown) axis->setLabel(shown);
    }
  }
};

// QCPGraph whose fast-polyline path batches its segments (see AddSeries).
class BatchedGraph : public QCPGraph {
 public:
  using QCPGraph::QCPGraph;

 protected:
  void drawLinePlot(QCPPainter* painter, const QVector<QPointF>& lines) const override {
    if (painter->pen().style() != Qt::SolidLine || painter->brush().color().alpha() == 0 ||
        !mParentPlot->plottingHints().testFlag(QCP::phFastPolylines) ||
        painter->modes().testFlag(QCPPainter::pmVectorized) || painter->modes().testFlag(QCPPainter::pmNoCaching)) {
      QCPGraph::drawLinePlot(painter, lines);
      return;
    }
    applyDefaultAntialiasingHint(painter);
    // As QCPAbstractPlottable1D::drawPolyline: 1 px pens cosmetic on screen.
    if (qFuzzyCompare(painter->pen().widthF(), 1.0)) {
      QPen pen = painter->pen();
      pen.setWidth(0);
      painter->setPen(pen);
    }
    // The segments QCPAbstractPlottable1D::drawPolyline draws one by one
    // (QCPPainter::drawLine: rounded to whole pixels when not
    // antialiased), in the same order; a NaN point leaves a gap.
    const bool aa = painter->antialiasing();
    const int n = lines.size();
    int i = 0;
    while (i < n && (qIsNaN(lines.at(i).y()) || qIsNaN(lines.at(i).x()))) ++i;
    ++i;
    bool last_is_nan = false;
    if (aa) {
      segments_f_.clear();
    } else {
      segments_.clear();
    }
    for (; i < n; ++i) {
      if (!qIsNaN(lines.at(i).y()) && !qIsNaN(lines.at(i).x())) {
        if (!last_is_nan) {
          const QLineF segment(lines.at(i - 1), lines.at(i));
          if (aa) {
            segments_f_.push_back(segment);
          } else {
            segments_.push_back(segment.toLine());
          }
        } else {
          last_is_nan = false;
        }
      } else {
        last_is_nan = true;
      }
    }
    if (aa) {
      if (!segments_f_.empty()) painter->QPainter::drawLines(segments_f_.data(), static_cast<int>(segments_f_.size()));
    } else if (!segments_.empty()) {
      painter->QPainter::drawLines(segments_.data(), static_cast<int>(segments_.size()));
    }
  }

 private:
  mutable std::vector<QLineF> segments_f_;
  mutable std::vector<QLine> segments_;
};

// Vertical ticks at a row of keys (see AddKeyTicks): draws each as
// QCPItemLine::draw draws a line from (x, 0) to (x, length) in axis-rect
// ratios.
class KeyTicks : public QCPAbstractItem {
 public:
  KeyTicks(QCustomPlot* plot, std::vector<double> xs, double length_ratio, const QPen& pen)
      : QCPAbstractItem(plot), xs_(std::move(xs)), length_(length_ratio), pen_(pen) {}

  double selectTest(const QPointF&, bool, QVariant* = nullptr) const override { return -1; }

 protected:
  void draw(QCPPainter* painter) override {
    QCPAxisRect* rect = clipAxisRect();
    if (rect == nullptr) return;
    QCPAxis* x_axis = rect->axis(QCPAxis::atBottom);
    if (x_axis == nullptr) return;
    const QRect r = rect->rect();
    const double y0 = r.top() + 0 * r.height();
    const double y1 = r.top() + length_ * r.height();
    if (qFuzzyIsNull((y1 - y0) * (y1 - y0))) return;
    const int pad = qCeil(pen_.widthF());
    const QRect clip = clipRect().adjusted(-pad, -pad, pad, pad);
    painter->setPen(pen_);
    for (double x : xs_) {
      const double px = x_axis->coordToPixel(x);
      // QCPItemLine clips its line to the clip rect (+ pen width) and skips
      // it when nothing is left: a vertical line inside the rect's x span is
      // cut to its y span.
      if (px < clip.left() || px > clip.right()) continue;
      const double top = std::max<double>(std::min(y0, y1), clip.top());
      const double bottom = std::min<double>(std::max(y0, y1), clip.bottom());
      if (top > bottom) continue;
      painter->drawLine(QLineF(px, y0 < y1 ? top : bottom, px, y0 < y1 ? bottom : top));
    }
  }

 private:
  std::vector<double> xs_;
  double length_;
  QPen pen_;
};

}  // namespace

QCPGraph* AddSeries(QCPAxis* key_axis, QCPAxis* value_axis) {
  auto* graph = new BatchedGraph(key_axis, value_axis);
  graph->setName(QString("Graph %1").arg(key_axis->parentPlot()->graphCount()));
  return graph;
}

void AddKeyTicks(QCustomPlot* plot, const std::vector<double>& xs, double length_ratio, const QPen& pen) {
  if (xs.empty()) return;
  auto* ticks = new KeyTicks(plot, xs, length_ratio, pen);
  ticks->setClipAxisRect(MainRect(plot));
  ticks->setSelectable(false);
}

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
  auto* rect = new FittingAxisRect(plot, true);
  plot->setNotAntialiasedElements(QCP::aeNone);
  plot->setPlottingHint(QCP::phFastPolylines, true);
  QFont compact_title = TitleFont();
  compact_title.setPointSizeF(11);
  auto* heading = new WrappingText(plot, title, TitleFont(), 3, compact_title, 2);
  heading->setTextColor(QColor(0x22, 0x22, 0x22));
  heading->setMargins(QMargins(8, 8, 8, 0));
  plot->plotLayout()->addElement(0, 0, heading);
  QFont sub_font = LabelFont();
  sub_font.setPointSizeF(10);
  QFont compact_sub = sub_font;
  compact_sub.setPointSizeF(9);
  auto* sub = new WrappingText(plot, subtitle, sub_font, 3, compact_sub, 3);
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

  auto* legend = new FittingLegend;
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
  if (auto* fitting = dynamic_cast<FittingLegend*>(legend)) fitting->setFitHeight(true);
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
  if (auto* fitting = dynamic_cast<FittingLegend*>(legend)) fitting->setMaxColumns(std::max(1, columns));
  legend->setBrush(QBrush(Qt::NoBrush));
  legend->setBorderPen(Qt::NoPen);
}

void PlaceLegendInside(QCustomPlot* plot, Qt::Alignment corner) {
  QCPAxisRect* rect = MainRect(plot);
  if (rect == nullptr || plot->legend == nullptr) return;
  rect->insetLayout()->setInsetAlignment(0, corner);
}

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

void StyleAxis(QCPAxis* axis, const QString& label) {
  axis->setLabel(label);
  axis->setProperty(kFullLabel, label);
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

QString Seconds(double s) {
  const double a = std::fabs(s);
  if (a >= 3600) return QString::number(s / 3600, 'f', 2) + " h";
  if (a >= 100) return QString::number(s, 'f', 0) + " s";
  if (a >= 1) return QString::number(s, 'f', 2) + " s";
  if (a >= 1e-3) return QString::number(s * 1e3, 'f', 2) + " ms";
  return QString::number(s * 1e6, 'f', 1) + " µs";
}

}  // namespace accordion::gui::style
