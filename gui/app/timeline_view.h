// TimelineView: the Timeline tab - one iteration of an epoch as compute and
// collective bars, measured (from the trace) above simulated (Accordion's
// schedule on the what-if cluster), and its export for Perfetto.
#ifndef ACCORDION_GUI_APP_TIMELINE_VIEW_H_
#define ACCORDION_GUI_APP_TIMELINE_VIEW_H_

#include <QString>
#include <QWidget>
#include <string>

class QLabel;
class QPushButton;
class QSpinBox;

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* plot() const { return plot_; }
  QSpinBox* epochSpin() const { return epoch_; }
  // Writes the Perfetto / Chrome trace-event JSON of the shown epoch.
  bool exportPerfetto(const QString& path, QString* error) const;

 public slots:
  void redraw();

 private:
  void exportWithDialog();

  ExplorerDocument* document_;
  QSpinBox* epoch_;
  QPushButton* export_;
  QLabel* caption_;
  PlotWidget* plot_;
  std::string shown_run_;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_TIMELINE_VIEW_H_
