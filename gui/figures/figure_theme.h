// The figures' chrome colours (background, text, axes, grid, legend, guide
// lines) as a theme: light, as every builder draws and every export and the
// HTML report keep, or taken from a widget palette, so that plots on screen
// follow a dark desktop. Curve, band and level colours are the same in both.
#ifndef ACCORDION_GUI_FIGURES_FIGURE_THEME_H_
#define ACCORDION_GUI_FIGURES_FIGURE_THEME_H_

#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace accordion::gui::style {

struct FigureTheme {
  bool dark = false;
  QColor background;     // the plot's background
  QColor foreground;     // axes, tick labels, axis labels, legend text
  QColor title;          // titles, the Hessian curve, timeline markers
  QColor strong_guide;   // the eta line
  QColor guide;          // LR decays, check ticks, the 1x line
  QColor subtitle;       // subtitles
  QColor message;        // "no data" messages
  QColor grid;           // grid lines
  QColor legend_fill;    // the legend's translucent box
  QColor legend_border;  // its border
  QColor hidden;         // a hidden series' legend entry
  QColor separator;      // gaps between the timeline's spans
  QColor neutral;        // the level map's "no difference" cells
};

// The colours the figure builders draw with.
FigureTheme LightTheme();
// Dark when `palette`'s window colour is dark (a dark desktop, or
// accordion-gui --theme dark); then background and text are the palette's
// base and text colours, the rest between them. Else LightTheme().
FigureTheme ThemeFromPalette(const QPalette& palette);

// Recolours what `plot` shows from `from`'s chrome colours to `to`'s
// (background, axes, grid, legend, titles, guide items, legend-only lines),
// leaving the data's colours alone. No replot.
void RecolorPlot(QCustomPlot* plot, const FigureTheme& from, const FigureTheme& to);

// The theme a plot was last recoloured to (LightTheme() when never),
// colour for colour.
// SaveFigure draws a dark plot light and puts it back afterwards.
FigureTheme ThemeOf(const QCustomPlot* plot);
void SetThemeOf(QCustomPlot* plot, const FigureTheme& theme);

}  // namespace accordion::gui::style

#endif  // ACCORDION_GUI_FIGURES_FIGURE_THEME_H_
