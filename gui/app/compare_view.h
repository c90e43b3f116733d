// CompareView: the Compare tab - test accuracy of the checked runs against
// epoch and against floats sent, and the paper's results table (mean ± 95 %
// CI over seeds) for them, as `accordion-analyze table` prints it.
//
// Thread safety: a widget of the GUI thread. refresh() builds the results
// table by QtConcurrent::run in Qt's global pool (not ExplorerDocument's), from
// copied paths only; a QFutureWatcher hands the rows back to this thread.
#ifndef ACCORDION_GUI_APP_COMPARE_VIEW_H_
#define ACCORDION_GUI_APP_COMPARE_VIEW_H_

#include <QWidget>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QTableWidget;
class QTimer;

namespace accordion {
struct ResultsRow;
}

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;
struct RunData;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* epochPlot() const { return by_epoch_; }
  PlotWidget* floatsPlot() const { return by_floats_; }
  QTableWidget* table() const { return table_; }
  // What the two plots draw: test accuracy (the default), training loss or
  // throughput. Test accuracy where no compared run recorded one (the
  // hook's default) draws the training loss instead, and says so.
  QComboBox* metricCombo() const { return metric_; }
  // The curves' smoothing, both plots at once (PlotWidget::setSmoothing).
  QComboBox* smoothingCombo() const { return smoothing_; }
  // The run whose setting the table's "vs" columns divide by (W&B's pinned
  // run): "dense (default)", or one of the checked runs by its path.
  QComboBox* baselineCombo() const { return baseline_; }
  // The line above the plots saying what differs between the checked runs
  // (model, dataset, workers); hidden when they are like for like.
  QLabel* warningLabel() const { return warning_; }
  // True while the results table is being built in the background.
  bool tableLoading() const { return loading_; }

 public slots:
  // Coalesces bursts (opening ten traces) into one redraw.
  void scheduleRefresh();
  void refresh();

 private:
  void showTable(uint64_t generation, const std::vector<ResultsRow>& rows, const QString& error);
  // The baseline combo's items from the checked runs, keeping the pinned
  // one while it is checked; returns the pinned path ("" for dense).
  std::string listBaselines(const std::vector<std::shared_ptr<const RunData>>& runs);

  ExplorerDocument* document_;
  PlotWidget* by_epoch_;
  PlotWidget* by_floats_;
  QTableWidget* table_;
  QComboBox* metric_;
  QComboBox* smoothing_;
  QComboBox* baseline_;
  QLabel* status_;
  QLabel* warning_;
  QTimer* refresh_timer_;
  uint64_t generation_ = 0;
  std::vector<std::string> table_paths_;
  std::string table_baseline_;
  bool loading_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_COMPARE_VIEW_H_
