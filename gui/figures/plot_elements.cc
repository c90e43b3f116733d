// The QCustomPlot subclasses the figures are made of: titles that wrap,
// legends that fit, axis rects whose labels fit, graphs drawn in one batch,
// rows of key ticks.
#include "gui/figures/plot_elements.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gui/figures/figure_style.h"

namespace accordion::gui::style {

QCPAxisRect* MainRect(QCustomPlot* plot) { return plot->axisRect(0); }

namespace {

// A plot this short (a laptop's window, two figures stacked) sets its titles
// and legend smaller, so the axis rect keeps a readable height.
constexpr int kCompactHeight = 340;

}  // namespace

bool IsCompact(const QCustomPlot* plot) { return plot != nullptr && plot->viewport().height() < kCompactHeight; }

void EnsureBandsLayer(QCustomPlot* plot) {
  if (plot->layer(kBandsLayer) == nullptr) {
    plot->addLayer(kBandsLayer, plot->layer("grid"), QCustomPlot::limBelow);
  }
}

namespace {

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
// than its axis (a y label on a short plot) shortens its words and keeps
// its unit - "time per e… (s)", never "time per e…", whose numbers could
// be seconds or milliseconds. The full label stays in the axis'
// kFullLabel property, for the CSV's header.
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
      if (metrics.horizontalAdvance(shown) > room) {
        const int unit_at = full.lastIndexOf(" (");
        const QString unit = unit_at > 0 && full.endsWith(')') ? full.mid(unit_at) : QString();
        const QString words = unit.isEmpty() ? full : full.left(unit_at);
        const QString cut =
            metrics.elidedText(words, Qt::ElideRight, std::max(0, room - metrics.horizontalAdvance(unit)));
        // No room for a word beside the parenthesis (a long one is a gloss,
        // not a unit): the words alone, cut.
        const bool fits =
            !cut.isEmpty() && cut != QString(QChar(0x2026)) && metrics.horizontalAdvance(cut + unit) <= room;
        shown = fits ? cut + unit : metrics.elidedText(words, Qt::ElideRight, room);
      }
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
  void Recolor(const std::function<QColor(const QColor&)>& map) { pen_.setColor(map(pen_.color())); }

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

QCPTextElement* NewWrappingText(QCustomPlot* plot, const QString& text, const QFont& font, int max_lines,
                                const QFont& compact_font, int compact_lines) {
  return new WrappingText(plot, text, font, max_lines, compact_font, compact_lines);
}

QCPLegend* NewFittingLegend() { return new FittingLegend; }

void SetLegendMaxColumns(QCPLegend* legend, int columns) {
  if (auto* fitting = dynamic_cast<FittingLegend*>(legend)) fitting->setMaxColumns(columns);
}

void SetLegendFitHeight(QCPLegend* legend, bool on) {
  if (auto* fitting = dynamic_cast<FittingLegend*>(legend)) fitting->setFitHeight(on);
}

QCPAxisRect* NewFittingAxisRect(QCustomPlot* plot) { return new FittingAxisRect(plot, true); }

QCPGraph* AddSeries(QCPAxis* key_axis, QCPAxis* value_axis) {
  auto* graph = new BatchedGraph(key_axis, value_axis);
  graph->setName(QString("Graph %1").arg(key_axis->parentPlot()->graphCount()));
  return graph;
}

bool RecolorKeyTicks(QCPAbstractItem* item, const std::function<QColor(const QColor&)>& map) {
  auto* ticks = dynamic_cast<KeyTicks*>(item);
  if (ticks == nullptr) return false;
  ticks->Recolor(map);
  return true;
}

void AddKeyTicks(QCustomPlot* plot, const std::vector<double>& xs, double length_ratio, const QPen& pen) {
  if (xs.empty()) return;
  auto* ticks = new KeyTicks(plot, xs, length_ratio, pen);
  ticks->setClipAxisRect(MainRect(plot));
  ticks->setSelectable(false);
}
}  // namespace accordion::gui::style
