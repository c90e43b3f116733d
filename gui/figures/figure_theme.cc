#include "gui/figures/figure_theme.h"

#include <qcustomplot.h>

#include <QHash>
#include <algorithm>
#include <cmath>
#include <vector>

#include "gui/figures/figure_style.h"

namespace accordion::gui::style {

namespace {

constexpr const char* kDarkTheme = "accordion_dark_theme";

QColor Mix(const QColor& a, const QColor& b, double share_of_a) {
  auto mix = [share_of_a](int x, int y) {
    return static_cast<int>(std::lround(share_of_a * x + (1 - share_of_a) * y));
  };
  return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

std::vector<QColor*> Slots(FigureTheme* t) {
  return {&t->background, &t->foreground, &t->title,  &t->strong_guide, &t->guide,
          &t->subtitle,   &t->message,    &t->grid,   &t->legend_fill,  &t->legend_border,
          &t->hidden,     &t->separator,  &t->neutral};
}

std::vector<QColor> Inks(FigureTheme t) {
  std::vector<QColor> inks;
  for (const QColor* c : Slots(&t)) inks.push_back(*c);
  return inks;
}

// Maps each of `from`'s chrome colours (by exact RGBA) to `to`'s.
class InkMap {
 public:
  InkMap(const FigureTheme& from, const FigureTheme& to) {
    const std::vector<QColor> a = Inks(from), b = Inks(to);
    for (size_t i = 0; i < a.size(); ++i) map_.insert(a[i].rgba(), b[i]);
    // Text drawn on the data (a heat map's white labels on its dark cells)
    // chose its colour for contrast with that cell, not with the page.
    text_map_ = map_;
    for (const QColor& page : {from.background, from.separator, from.legend_fill}) text_map_.remove(page.rgba());
  }
  QColor operator()(const QColor& c) const { return map_.value(c.rgba(), c); }
  QColor Text(const QColor& c) const { return text_map_.value(c.rgba(), c); }
  QPen operator()(QPen pen) const {
    pen.setColor((*this)(pen.color()));
    return pen;
  }
  QCPColorGradient operator()(QCPColorGradient gradient) const {
    QMap<double, QColor> stops = gradient.colorStops();
    for (auto it = stops.begin(); it != stops.end(); ++it) it.value() = (*this)(it.value());
    gradient.setColorStops(stops);
    return gradient;
  }
  QBrush operator()(QBrush brush) const {
    if (brush.style() == Qt::SolidPattern) brush.setColor((*this)(brush.color()));
    return brush;
  }

 private:
  QHash<QRgb, QColor> map_;
  QHash<QRgb, QColor> text_map_;
};

void RecolorAxis(QCPAxis* axis, const InkMap& ink) {
  axis->setBasePen(ink(axis->basePen()));
  axis->setTickPen(ink(axis->tickPen()));
  axis->setSubTickPen(ink(axis->subTickPen()));
  axis->setLabelColor(ink(axis->labelColor()));
  axis->setTickLabelColor(ink(axis->tickLabelColor()));
  axis->grid()->setPen(ink(axis->grid()->pen()));
  axis->grid()->setSubGridPen(ink(axis->grid()->subGridPen()));
  axis->grid()->setZeroLinePen(ink(axis->grid()->zeroLinePen()));
}

void RecolorElement(QCPLayoutElement* element, const InkMap& ink) {
  if (element == nullptr) return;
  if (auto* text = qobject_cast<QCPTextElement*>(element)) text->setTextColor(ink(text->textColor()));
  if (auto* rect = qobject_cast<QCPAxisRect*>(element)) {
    for (QCPAxis* axis : rect->axes()) RecolorAxis(axis, ink);
  }
  if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
    RecolorAxis(scale->axis(), ink);
    scale->setGradient(ink(scale->gradient()));
  }
  if (auto* legend = qobject_cast<QCPLegend*>(element)) {
    legend->setBrush(ink(legend->brush()));
    legend->setBorderPen(ink(legend->borderPen()));
    legend->setTextColor(ink(legend->textColor()));
    for (int i = 0; i < legend->itemCount(); ++i) {
      if (QCPAbstractLegendItem* item = legend->item(i)) item->setTextColor(ink(item->textColor()));
    }
    return;
  }
  for (QCPLayoutElement* child : element->elements(false)) RecolorElement(child, ink);
}

}  // namespace

FigureTheme LightTheme() {
  FigureTheme t;
  t.dark = false;
  t.background = QColor(Qt::white);
  t.foreground = QColor(Qt::black);
  t.title = QColor(0x22, 0x22, 0x22);
  t.strong_guide = QColor(0x11, 0x11, 0x11);
  t.guide = GuideColor();
  t.subtitle = QColor(0x55, 0x55, 0x55);
  t.message = QColor(0x66, 0x66, 0x66);
  t.grid = QColor(0xD8, 0xD8, 0xD8);
  t.legend_fill = QColor(255, 255, 255, 215);
  t.legend_border = QColor(0xBB, 0xBB, 0xBB);
  t.hidden = QColor(0xAA, 0xAA, 0xAA);
  t.separator = QColor(Qt::white);
  t.neutral = LevelNeutralColor();
  return t;
}

FigureTheme ThemeFromPalette(const QPalette& palette) {
  if (palette.color(QPalette::Window).lightness() >= 128) return LightTheme();
  FigureTheme t;
  t.dark = true;
  const QColor bg = palette.color(QPalette::Base);
  const QColor fg = palette.color(QPalette::Text);
  t.background = bg;
  t.foreground = fg;
  // Each a shade apart, so that a plot recoloured back to light (an export)
  // gets every colour back exactly.
  t.title = Mix(fg, bg, 0.96);
  t.strong_guide = Mix(fg, bg, 0.98);
  t.guide = Mix(fg, bg, 0.7);
  t.subtitle = Mix(fg, bg, 0.72);
  t.message = Mix(fg, bg, 0.6);
  t.grid = Mix(fg, bg, 0.2);
  t.legend_fill = bg;
  t.legend_fill.setAlpha(215);
  t.legend_border = Mix(fg, bg, 0.35);
  t.hidden = Mix(fg, bg, 0.4);
  t.separator = bg;
  // Light grey cells glared on a dark plot.
  t.neutral = Mix(fg, bg, 0.3);
  // A dark colour equal to a light one (a palette's white text and the
  // light background) would be recoloured again by the next draw's
  // light-to-dark pass: nudged a shade off.
  const std::vector<QColor> light = Inks(LightTheme());
  for (QColor* c : Slots(&t)) {
    while (std::any_of(light.begin(), light.end(), [c](const QColor& l) { return l.rgba() == c->rgba(); })) {
      c->setRed(c->red() > 0 ? c->red() - 1 : 1);
    }
  }
  return t;
}

void RecolorPlot(QCustomPlot* plot, const FigureTheme& from, const FigureTheme& to) {
  const InkMap ink(from, to);
  plot->setBackground(QBrush(to.background));  // always chrome: no figure paints its own
  RecolorElement(plot->plotLayout(), ink);
  for (int i = 0; i < plot->itemCount(); ++i) {
    QCPAbstractItem* item = plot->item(i);
    if (auto* line = qobject_cast<QCPItemStraightLine*>(item)) {
      line->setPen(ink(line->pen()));
    } else if (auto* segment = qobject_cast<QCPItemLine*>(item)) {
      segment->setPen(ink(segment->pen()));
    } else if (auto* text = qobject_cast<QCPItemText*>(item)) {
      text->setColor(ink.Text(text->color()));
      text->setBrush(ink(text->brush()));
      text->setPen(ink(text->pen()));
    } else if (auto* rect = qobject_cast<QCPItemRect*>(item)) {
      rect->setPen(ink(rect->pen()));
    } else {
      RecolorKeyTicks(item, [&ink](const QColor& c) { return ink(c); });
    }
  }
  for (int i = 0; i < plot->graphCount(); ++i) plot->graph(i)->setPen(ink(plot->graph(i)->pen()));
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) map->setGradient(ink(map->gradient()));
  }
  SetThemeOf(plot, to);
}

FigureTheme ThemeOf(const QCustomPlot* plot) {
  const QVariantList inks = plot->property(kDarkTheme).toList();
  FigureTheme t = LightTheme();
  std::vector<QColor*> targets = Slots(&t);
  if (inks.size() != static_cast<int>(targets.size())) return t;
  for (size_t i = 0; i < targets.size(); ++i) *targets[i] = inks[static_cast<int>(i)].value<QColor>();
  t.dark = true;
  return t;
}

void SetThemeOf(QCustomPlot* plot, const FigureTheme& theme) {
  if (!theme.dark) {
    plot->setProperty(kDarkTheme, QVariant());
    return;
  }
  QVariantList inks;
  FigureTheme copy = theme;
  for (const QColor* c : Slots(&copy)) inks << QVariant::fromValue(*c);
  plot->setProperty(kDarkTheme, inks);
}

}  // namespace accordion::gui::style
