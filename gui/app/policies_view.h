// PoliciesView: the Policies tab - "is Accordion the policy to use?": the
// run's schedules under static low, static high, Accordion and AdaQS (PowerSGD,
// TopK) or Smith et al. (batch) side by side, as `accordion-sim
// compare-policies` prints them: floats per worker, the error proxy over all
// and over the critical epochs, level changes, and the time to train on the
// What-if tab's cluster (α–β estimate) with the speedup over static low; the
// projected times as bars below. A policy the trace cannot feed (AdaQS on a
// trace without gradient moments) is a note under the table.
// The table is the document's (ExplorerDocument::requestPolicies),
// computed in the background and only while this tab is seen.
#ifndef ACCORDION_GUI_APP_POLICIES_VIEW_H_
#define ACCORDION_GUI_APP_POLICIES_VIEW_H_

#include <QWidget>

class QLabel;
class QSplitter;
class QTableWidget;

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;
struct PolicyTable;
struct RunData;

class PoliciesView : public QWidget {
  Q_OBJECT

 public:
  explicit PoliciesView(ExplorerDocument* document, QWidget* parent = nullptr);

  QTableWidget* table() const { return table_; }
  PlotWidget* plot() const { return plot_; }
  // The notes under the table: policies the trace cannot feed, the
  // replay's warnings, why nothing was projected.
  QLabel* notesLabel() const { return notes_; }
  QLabel* verdictLabel() const { return verdict_; }
  QLabel* cliLabel() const { return cli_; }

 public slots:
  void redraw();

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  // Asks the document for the comparison while this tab is seen.
  void refresh();
  // redraw()'s parts: the empty table, the caption and command line above
  // it, the table's cells, the notes under it.
  void clearTable();
  void showCaption(const RunData& run);
  void fillTable(const PolicyTable& table);
  void showNotes(const PolicyTable& table);
  void fitTable();
  // Gives the table and its notes the height they need, the figure the rest.
  void fitSplit();

  ExplorerDocument* document_;
  QLabel* caption_;
  QLabel* status_;
  QLabel* verdict_;  // the fastest row and the break-even rate (PolicyVerdict)
  QTableWidget* table_;
  QLabel* notes_;
  QLabel* cli_;
  PlotWidget* plot_;
  QWidget* top_ = nullptr;
  QSplitter* split_ = nullptr;
  int fitted_height_ = -1;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_POLICIES_VIEW_H_
