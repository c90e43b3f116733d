// SweepView: the Sweep tab - "which η should I use?" in one picture: what
// Accordion saves against static low (floats, or α–β time on the What-if
// tab's cluster) at every η and check interval of a grid, as a heat map
// with the run's recorded setting outlined. Hovering a cell gives its
// numbers; clicking it explores that η and interval in every other view.
// The sweep is the document's (ExplorerDocument::requestEtaIntervalSweep),
// computed in the background and only while this tab is seen.
#ifndef ACCORDION_GUI_APP_SWEEP_VIEW_H_
#define ACCORDION_GUI_APP_SWEEP_VIEW_H_

#include <QString>
#include <QWidget>

class QLabel;
class QRadioButton;

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;
enum class SweepMetric;

class SweepView : public QWidget {
  Q_OBJECT

 public:
  explicit SweepView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* plot() const { return plot_; }
  SweepMetric metric() const;
  void setMetric(SweepMetric metric);
  // The sentence above the map (the figure's subtitle); empty until the
  // sweep lands.
  QString headline() const { return headline_; }
  // The tooltip for the cell under widget position `pos` ("" when none).
  QString tooltipAt(const QPoint& pos) const;
  // Explores the η and interval of the cell under `pos`; false when there
  // is none.
  bool applyCellAt(const QPoint& pos);

 public slots:
  void redraw();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // Asks the document for the sweep while this tab is seen; a hidden tab
  // waits until it is shown (the sweep is hundreds of schedules and replays).
  void refresh();
  bool cellAt(const QPoint& pos, int* eta_index, int* interval_index) const;

  ExplorerDocument* document_;
  QLabel* caption_;
  QRadioButton* floats_;
  QRadioButton* time_;
  QLabel* status_;
  PlotWidget* plot_;
  QString headline_;
  QPoint press_pos_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_SWEEP_VIEW_H_
