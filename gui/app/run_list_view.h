// RunListView: the table of opened traces (what each run was and how it
// ended), where a row is picked as the current run and checked to be drawn
// in the Compare views.
#ifndef ACCORDION_GUI_APP_RUN_LIST_VIEW_H_
#define ACCORDION_GUI_APP_RUN_LIST_VIEW_H_

#include <QWidget>

class QTableWidget;

namespace accordion::gui {

class ExplorerDocument;
struct RunSummary;

class RunListView : public QWidget {
  Q_OBJECT

 public:
  enum Column {
    kName,  // with the Compare checkbox
    kModel,
    kDataset,
    kScheme,
    kPolicy,
    kLevels,
    kWorkers,
    kEpochs,
    kAccuracy,
    kFloats,
    kTime,
    kColumnCount
  };

  explicit RunListView(ExplorerDocument* document, QWidget* parent = nullptr);

  QTableWidget* table() const { return table_; }

 signals:
  void closeRequested(int index);

 private:
  void rebuild();
  void fillRow(int row);
  void selectCurrent();

  ExplorerDocument* document_;
  QTableWidget* table_;
  bool updating_ = false;
};

// Cell texts, shared with the status bar: "12.4 M", "3 min 05 s".
QString FormatFloats(double floats);
QString FormatSeconds(double seconds);
QString FormatEpochs(const RunSummary& summary);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_RUN_LIST_VIEW_H_
