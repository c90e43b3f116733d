// What the figure_style functions share and the QCustomPlot subclasses
// they are built from (plot_elements.cc); private to gui/figures/.
#ifndef ACCORDION_GUI_FIGURES_PLOT_ELEMENTS_H_
#define ACCORDION_GUI_FIGURES_PLOT_ELEMENTS_H_

#include <QFont>
#include <QString>

class QCPAxisRect;
class QCPLegend;
class QCPTextElement;
class QCustomPlot;

namespace accordion::gui::style {

// The layer beneath the grid that holds the regime bands.
inline constexpr const char* kBandsLayer = "bands";
void EnsureBandsLayer(QCustomPlot* plot);

// The figure's one axis rect.
QCPAxisRect* MainRect(QCustomPlot* plot);
// A plot shorter than 340 px: titles and legend a point smaller.
bool IsCompact(const QCustomPlot* plot);

// A title that wraps to the plot's width, at most `max_lines` lines (the
// last elided), `compact_font` and `compact_lines` in a compact plot.
QCPTextElement* NewWrappingText(QCustomPlot* plot, const QString& text, const QFont& font, int max_lines,
                                const QFont& compact_font, int compact_lines);
// A legend that fits: in a row above the plot, as many columns as the width
// holds (up to SetLegendMaxColumns); in a column beside it
// (SetLegendFitHeight), a second column rather than overlapping entries.
QCPLegend* NewFittingLegend();
void SetLegendMaxColumns(QCPLegend* legend, int columns);
void SetLegendFitHeight(QCPLegend* legend, bool on);
// An axis rect whose axis labels never run past its sides (figure_style.h's
// kFullLabel keeps them whole).
QCPAxisRect* NewFittingAxisRect(QCustomPlot* plot);

}  // namespace accordion::gui::style

#endif  // ACCORDION_GUI_FIGURES_PLOT_ELEMENTS_H_
