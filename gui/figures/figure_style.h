// The figures' shared look: a colour-blind-safe palette (Okabe & Ito), the
// colours that carry a meaning in every figure (critical regimes, low and
// high levels), fonts, and the layout helpers each builder starts from.
// Tests read the colours from here to probe rendered pixels.
#ifndef ACCORDION_GUI_FIGURES_FIGURE_STYLE_H_
#define ACCORDION_GUI_FIGURES_FIGURE_STYLE_H_

#include <QColor>
#include <QFont>
#include <QImage>
#include <QRect>
#include <QString>
#include <QStringList>
#include <QVector>
#include <functional>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPAbstractItem;
class QCPAbstractPlottable;
class QCPAxis;
class QCPAxisRect;
class QCPColorGradient;
class QCPColorMap;
class QCPColorScale;
class QCPGraph;
class QCPItemRect;
class QCPItemText;
class QCPLayoutGrid;

namespace accordion::gui::style {

// Line colours for runs and layers, in order: Okabe-Ito's blue, vermillion,
// bluish green and reddish purple, then purple, crimson, olive and lime,
// chosen so that every pair is at least 25 apart in CIEDE2000 and each
// stands out on a white and on a dark background (no orange: the regimes
// own it; no black or grey: the guide lines and a dark theme own those).
const std::vector<QColor>& Palette();
QColor PaletteColor(int index);

// A critical regime re-derived under the current settings: translucent
// band over the plot.
QColor BandColor();
// Epochs critical only in layers both levels send alike ("critical, no
// effect"): a grey band, not the orange of a regime that changes traffic.
QColor NoEffectBandColor();
// A critical regime as the run recorded it: the opaque strip along the
// bottom of the plot.
QColor RecordedStripColor();
// The level map's cells.
QColor LevelLowColor();      // low level: critical, gradients nearly intact
QColor LevelHighColor();     // high level: compressed hard
QColor LevelNeutralColor();  // the level makes no difference to this layer
QColor BackgroundColor();    // the plot's background (white)
QColor GuideColor();         // LR decays, the eta line, 1x, check ticks

// `c` drawn (with its alpha) over `background`: what a pixel probe sees.
QColor BlendOver(const QColor& c, const QColor& background);

QFont TitleFont();
QFont LabelFont();
QFont TickFont();
QFont LegendFont();

// Default export size of the report's figures.
inline constexpr int kExportWidth = 1200;
inline constexpr int kExportHeight = 700;

// Clears the plot and rebuilds its layout: a title row above one axis rect
// (plot->xAxis etc. point at the new axes; read them after drawing, never
// cache them across draws), fonts and background set, legend visible in the
// axis rect's top-right corner with a translucent brush. A plot shorter than
// 340 px sets its title and legend smaller, titles in fewer lines.
QCPAxisRect* ResetPlot(QCustomPlot* plot, const QString& title, const QString& subtitle = QString());

// The grid below the titles that holds the axis rect at (0, 0).
QCPLayoutGrid* Body(QCustomPlot* plot);

// Moves the legend out of the axis rect into a column on its right
// (many entries) or a row above it (a few entries, laid out in columns).
void PlaceLegendRight(QCustomPlot* plot);
void PlaceLegendTop(QCustomPlot* plot, int columns);
// Keeps the legend inside the axis rect at `corner` (Qt::Alignment flags).
void PlaceLegendInside(QCustomPlot* plot, Qt::Alignment corner);

// A graph like plot->addGraph(key, value) makes, whose solid line on screen
// goes to the painter in one batch of segments instead of one call per
// segment (QCustomPlot's fast-polyline path): the same pixels, a fraction of
// the per-call overhead on curves with hundreds of points. Vector exports
// (PDF) draw it as QCustomPlot always does.
QCPGraph* AddSeries(QCPAxis* key_axis, QCPAxis* value_axis);

// Short vertical ticks of `length_ratio` of the axis rect's height at keys
// `xs`, down from its top edge (y ratio 0): one item that paints them all,
// pixel for pixel what a QCPItemLine per tick paints.
void AddKeyTicks(QCustomPlot* plot, const std::vector<double>& xs, double length_ratio, const QPen& pen);
// When `item` is AddKeyTicks' item, gives its pen the colour `map` returns
// for it (a theme change) and returns true.
bool RecolorKeyTicks(QCPAbstractItem* item, const std::function<QColor(const QColor&)>& map);

// Puts a plottable on a layer beneath the other series (above the grid):
// for the many thin background curves under the few named ones.
void SendBehindSeries(QCPAbstractPlottable* plottable);

// Filled discs of `diameter` px in `color` as a scatter style: on screen a
// cached antialiased pixmap (an antialiased ellipse per point made the
// ratio figure's redraw slow), in vector exports (SaveFigure to PDF) real
// discs again. For markers on many points.
void SetDiscScatter(QCPGraph* graph, const QColor& color, double diameter);
// Swaps the pixmap discs of SetDiscScatter for vector ones (`vector`) or
// back; SaveFigure does this around a PDF.
void UseVectorDiscs(QCustomPlot* plot, bool vector);

// Axis labels and fonts. On screen a label longer than its axis is
// shortened; the axis' kFullLabel property keeps `label` whole.
inline constexpr const char* kFullLabel = "accordion_full_label";
void StyleAxis(QCPAxis* axis, const QString& label);
// An axis of whole counts (epochs): ticks on whole numbers only. QCustomPlot's
// steps run 1, 2.5, 5 x 10^n, which on 12 epochs put ticks at 2.5 and 7.5.
void MakeWholeNumberAxis(QCPAxis* axis);
// Logarithmic axis with LogTicker's ticks (1, 10, 100 or 10ⁿ; 1-2-5 on a
// range of less than two decades), each label followed by `suffix`. The
// axis is marked as one a person may switch to linear and back
// (SetAxisLogarithmic).
void MakeLogAxis(QCPAxis* axis, const QString& suffix = QString());
// True for an axis MakeLogAxis made, whatever its scale is now.
bool IsSwitchableLogAxis(const QCPAxis* axis);
// Puts a MakeLogAxis axis on a log scale (its ticker again) or a linear one
// (plain numbers); the range is the caller's to set.
void SetAxisLogarithmic(QCPAxis* axis, bool logarithmic);

// A translucent band spanning the whole value range of `rect`'s axes from
// key `x0` to `x1` (plot coordinates), on the "bands" layer beneath the grid.
QCPItemRect* AddBand(QCustomPlot* plot, double x0, double x1, const QColor& fill, double y0_ratio = 0,
                     double y1_ratio = 1);
// A vertical line at key `x` across the axis rect (dashed by default).
void AddVerticalLine(QCustomPlot* plot, double x, const QColor& color, Qt::PenStyle style = Qt::DashLine,
                     double width = 1.2);
// A horizontal line at value `y`.
void AddHorizontalLine(QCustomPlot* plot, double y, const QColor& color, Qt::PenStyle style = Qt::DashLine,
                       double width = 1.2);
// Centered grey message when a figure has nothing to show.
QCPItemText* AddMessage(QCustomPlot* plot, const QString& text);
// `map`'s colour scale, `bar_width` px wide, right of the axis rect and as
// tall: `gradient` over [lower, upper] on both.
QCPColorScale* AddColorScale(QCustomPlot* plot, QCPColorMap* map, const QCPColorGradient& gradient, double lower,
                             double upper, int bar_width);

// A legend entry without data (a swatch or a line): marked so that
// FigureCsv leaves it out.
QCPAbstractPlottable* AddLegendSwatch(QCustomPlot* plot, const QString& name, const QColor& fill);
QCPAbstractPlottable* AddLegendLine(QCustomPlot* plot, const QString& name, const QColor& color,
                                    Qt::PenStyle style = Qt::SolidLine, double width = 1.5);
// A legend entry with no icon, e.g. "+54 more layers".
QCPAbstractPlottable* AddLegendNote(QCustomPlot* plot, const QString& text);
bool IsLegendOnly(const QCPAbstractPlottable* plottable);

// Incremental redraws. A figure that changes only some overlays between
// draws (the regime figures on an eta step) keeps its layout and curves and
// re-renders only its buffered overlay layers; RefreshFigure (figures.h)
// puts that on screen.
//
// The layers of the regime figures: "bands" (beneath the grid) and
// "regimes" (above the curves: guide lines, check ticks, the titles), both
// buffered (QCPLayer::lmBuffered), so the curves' buffer survives a redraw
// of either.
inline constexpr const char* kRegimesLayer = "regimes";
void EnsureRegimeLayers(QCustomPlot* plot);
// Deletes the items on the "bands" and "regimes" layers.
void RemoveRegimeItems(QCustomPlot* plot);
// True when the plot's paint buffers hold its last replot as it is now: no
// replot queued, no buffer invalidated, buffers the viewport's size.
bool BuffersCurrent(QCustomPlot* plot);
// Every layout element's rects, as the last layout left them.
std::vector<QRect> LayoutRects(QCustomPlot* plot);
// Lays the plot out as QCustomPlot::replot does first (no drawing).
void UpdateLayout(QCustomPlot* plot);
// Records on the plot's axis rect that its last draw changed only
// `layers`; TakePartialLayers returns (and forgets) that list: empty when
// the last draw was a full one.
void MarkPartialRedraw(QCustomPlot* plot, const QStringList& layers);
QStringList TakePartialLayers(QCustomPlot* plot);
// Re-renders the paint buffers that hold `layers` (each buffer whole, its
// layers in order, as QCustomPlot::replot renders them) and nothing else.
// False, with nothing drawn, when that would not leave every buffer
// current (another buffer invalidated, a replot queued, a size changed):
// the caller replots in full.
bool RerenderLayers(QCustomPlot* plot, const QStringList& layers);

// In-place updates, built on the above. A figure records what its layout,
// legend and curves depend on (its signature); drawn again with the same
// signature and the same curves, it swaps only its overlays between
// BeginInPlaceUpdate and EndInPlaceUpdate.
struct SeriesData {
  QString name;
  QVector<double> x, y;
};
void SetFigureSignature(QCustomPlot* plot, const QString& signature);
QString FigureSignature(QCustomPlot* plot);
// True when `plot` shows the figure of `signature` with `series` as its
// first graphs, and its paint buffers hold it as it is.
bool CanUpdateInPlace(QCustomPlot* plot, const QString& signature, const std::vector<SeriesData>& series);
// The layout and axis ranges an update started from.
struct InPlaceUpdate {
  std::vector<QRect> rects;
  std::vector<std::pair<double, double>> ranges;  // each axis's lower, upper
};
// Removes the overlays (RemoveRegimeItems) and sets the subtitle.
InPlaceUpdate BeginInPlaceUpdate(QCustomPlot* plot, const QString& subtitle);
// After the overlays were swapped and the ranges set: when the layout and
// ranges are those the buffers were drawn with, RefreshFigure needs to
// re-render only `layers`; otherwise it replots in full.
void EndInPlaceUpdate(QCustomPlot* plot, const InPlaceUpdate& before, const QStringList& layers);
// A full draw, after ResetPlot: the regime layers, the titles on the
// "regimes" layer.
void StartFullDraw(QCustomPlot* plot);

// Renders at `width` x `height` (the plot keeps that layout afterwards, so
// coordToPixel maps into the returned image). For tests and previews.
QImage RenderFigure(QCustomPlot* plot, int width = kExportWidth, int height = kExportHeight);

// Compact numbers: 3.44e7, 1.2 s, 45 ms.
QString Sci(double v);
QString Seconds(double s);
// A time labelled on an axis in seconds: seconds, three significant figures
// ("0.999 s", "46.5 s"), so a label never reads "998.58 ms" beside ticks in s.
QString SecondsOnAxis(double s);
// A ratio as "1.44×"; "–" when it is not a positive finite number.
QString Times(double ratio);

}  // namespace accordion::gui::style

#endif  // ACCORDION_GUI_FIGURES_FIGURE_STYLE_H_
