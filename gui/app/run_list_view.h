// RunListView: the table of opened traces (what each run was and how it
// ended), where a row is picked as the current run and checked to be drawn
// in the Compare views. A click on a column's header sorts by it (numbers as
// numbers: 16 workers after 2), again the other way, a third time back to
// the order opened; the filter box keeps the runs whose name, model,
// dataset, scheme, policy or path contain its text.
#ifndef ACCORDION_GUI_APP_RUN_LIST_VIEW_H_
#define ACCORDION_GUI_APP_RUN_LIST_VIEW_H_

#include <QWidget>
#include <vector>

class QLabel;
class QLineEdit;
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
  QLineEdit* filterEdit() const { return filter_; }
  // The line beside the filter naming the folders being watched.
  QLabel* foldersLabel() const { return folders_; }
  void setWatchedFolders(const QStringList& folders);
  // The height the filter row takes above the table.
  int filterRowHeight() const;

  // The run (document index) a row shows, and the row showing a run; -1
  // when none.
  int runAt(int row) const;
  // The Time column in one unit, the largest run's (TimeColumn).
  void fillTimeColumn();
  int rowOf(int run) const;
  // Sorts by `column` (-1: the order the runs were opened), as a click on
  // its header does.
  void sortBy(int column, Qt::SortOrder order);
  int sortColumn() const { return sort_column_; }
  Qt::SortOrder sortOrder() const { return sort_order_; }
  // Rows the filter shows.
  int visibleRowCount() const;

 signals:
  void closeRequested(int index);

 private:
  // The constructor's parts: the table's columns, headers and Delete
  // action; the filter row above it; the widgets' and the document's signals.
  void setUpTable();
  void layOut();
  void connectSignals();
  void rebuild();
  void fillRow(int row);
  void selectCurrent();
  void applyFilter();
  void headerClicked(int column);

  ExplorerDocument* document_;
  QLineEdit* filter_;
  QLabel* folders_;
  QTableWidget* table_;
  std::vector<int> row_runs_;  // [row]: the document index it shows
  int sort_column_ = -1;
  Qt::SortOrder sort_order_ = Qt::AscendingOrder;
  bool updating_ = false;
};

// Cell texts, shared with the status bar: "12.4 M", "3 min 05 s".
QString FormatFloats(double floats);
QString FormatSeconds(double seconds);
// One unit for a column of times, so a column never reads "2 min 30 s"
// above "82.0 s" above "334.0 ms": chosen by the column's largest value
// (h from 2 h, s from 1 s, ms from 1 ms, else µs), with the decimals that
// give that value three significant figures.
class TimeColumn {
 public:
  explicit TimeColumn(double largest_seconds);
  QString Format(double seconds) const;  // "–" when not a time

 private:
  double scale_ = 1;  // seconds per unit
  QString unit_;
  int decimals_ = 0;
};
QString FormatEpochs(const RunSummary& summary);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_RUN_LIST_VIEW_H_
