// PlotWidget: a QCustomPlot that a person can zoom, drag, reset (double
// click), read (hovering a point shows its series and value; on a line
// chart a crosshair follows the mouse with every visible series' value at
// that x), thin out (a click on a legend entry hides its series), switch
// between log and linear axes, smooth (noisy curves) and take away - PNG,
// PDF, CSV or the clipboard - from its context menu, as in any plotting
// tool. Its colours follow the palette (a dark desktop); exports stay light.
#ifndef ACCORDION_GUI_APP_PLOT_WIDGET_H_
#define ACCORDION_GUI_APP_PLOT_WIDGET_H_

#include <QMenu>
#include <QPointer>
#include <QString>
#include <qcustomplot.h>
#include <map>
#include <utility>
#include <vector>

namespace accordion::gui {

class PlotWidget : public QCustomPlot {
  Q_OBJECT

 public:
  // `figure_name` is the default file name of exports ("gradient-norms").
  explicit PlotWidget(const QString& figure_name, QWidget* parent = nullptr);

  const QString& figureName() const { return figure_name_; }

  // Views call this after a figure builder filled the plot: the ranges it
  // chose become what a double click goes back to.
  void markDrawn();
  // Empties the plot and shows `message` in its middle (no run, no data).
  void showMessage(const QString& message);
  // Axis ranges back to what the figure builder chose.
  void resetRanges();

  // By the suffix of `path`: .png, .pdf or .csv. False with `error` set.
  bool exportTo(const QString& path, QString* error);
  // Asks for a file name (suffix picks the format) and writes it; failures
  // are shown in a message box.
  void exportWithDialog(const QString& default_suffix = QStringLiteral("png"));
  void copyToClipboard();

  // What the pointer at `pos` is on: the nearest series point or bar within
  // a few pixels, as "series\nx label x: y"; empty when none. Shown as the
  // tooltip while the pointer moves.
  QString valueAt(const QPoint& pos) const;

  // Log / linear switch of an axis the figure drew logarithmic
  // (style::MakeLogAxis): the choice stays with this plot, for every
  // figure drawn on it this session.
  QList<QCPAxis*> switchableLogAxes() const;
  void setAxisLogarithmic(QCPAxis::AxisType type, bool logarithmic);
  bool axisLogarithmic(QCPAxis::AxisType type) const;

  // Smoothing of the figure's noisy curves (style::SmoothSeries): 0 is off;
  // it stays with this plot for every figure drawn on it this session.
  static const QList<double>& smoothingWeights();
  void setSmoothing(double weight);
  double smoothing() const { return smoothing_; }

  // The crosshair of a line chart at the mouse's x: the x it snapped to and
  // the text beside it ("epoch 12" and a line per visible series); empty
  // when not shown.
  QString crosshairText() const;

  // The context menu's actions: exports, copy, reset, a "Log scale" switch
  // per switchable axis, the Smoothing submenu where the figure has noisy
  // curves.
  void fillContextMenu(QMenu* menu);
  double crosshairKey() const { return crosshair_key_; }

 signals:
  // The user pointed at or used this plot: the main window's "current figure".
  void activated(PlotWidget* plot);

 protected:
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void enterEvent(QEnterEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  // Applies this plot's log/linear choices and smoothing to what a builder
  // just drew; true when that changed the figure.
  bool applyViewChoices();
  // Fits a linear axis to the visible data and guide lines on it.
  void fitLinear(QCPAxis* axis);
  // Recolours the figure to the palette's theme.
  void followPalette();
  void updateCrosshair(const QPoint& pos);
  void hideCrosshair();

  QString figure_name_;
  bool value_shown_ = false;  // a valueAt tooltip is up
  std::vector<std::pair<QPointer<QCPAxis>, QCPRange>> drawn_ranges_;
  // Each switchable log axis' range as the figure builder chose it.
  std::vector<std::pair<QPointer<QCPAxis>, QCPRange>> log_ranges_;
  std::map<int, bool> linear_axes_;  // by QCPAxis::AxisType: the person chose linear
  double smoothing_ = 0;
  QPointer<QCPItemStraightLine> crosshair_line_;
  QPointer<QCPItemText> crosshair_label_;
  double crosshair_key_ = qQNaN();
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_PLOT_WIDGET_H_
