// PlotWidget: a QCustomPlot that a person can zoom, drag, reset (double
// click), read (hovering a point shows its series and value), thin out (a
// click on a legend entry hides its series) and take
// away - PNG, PDF, CSV or the clipboard - from its context menu, as in any
// plotting tool.
#ifndef ACCORDION_GUI_APP_PLOT_WIDGET_H_
#define ACCORDION_GUI_APP_PLOT_WIDGET_H_

#include <QPointer>
#include <QString>
#include <qcustomplot.h>
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

 signals:
  // The user pointed at or used this plot: the main window's "current figure".
  void activated(PlotWidget* plot);

 protected:
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void enterEvent(QEnterEvent* event) override;

 private:
  QString figure_name_;
  bool value_shown_ = false;  // a valueAt tooltip is up
  std::vector<std::pair<QPointer<QCPAxis>, QCPRange>> drawn_ranges_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_PLOT_WIDGET_H_
