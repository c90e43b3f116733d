// WhatIfView: the What-if tab - which cluster to project the current run
// onto, the projected time to train of Accordion against the static
// schedules and dense (α–β estimate at once, SimGrid replay on request),
// the bandwidth sweep and Accordion's per-epoch time breakdown.
#ifndef ACCORDION_GUI_APP_WHAT_IF_VIEW_H_
#define ACCORDION_GUI_APP_WHAT_IF_VIEW_H_

#include <QWidget>
#include <optional>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace accordion::sim {
enum class Topology;
struct TopologyParameter;
}  // namespace accordion::sim

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;

class WhatIfView : public QWidget {
  Q_OBJECT

 public:
  explicit WhatIfView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* projectionPlot() const { return projection_plot_; }
  PlotWidget* sweepPlot() const { return sweep_plot_; }
  PlotWidget* breakdownPlot() const { return breakdown_plot_; }
  QTableWidget* resultsTable() const { return results_; }
  QLabel* sourceLabel() const { return source_; }
  QLabel* cliLabel() const { return cli_; }
  QPushButton* simulateButton() const { return simulate_; }
  QPushButton* cancelButton() const { return cancel_; }
  QProgressBar* progressBar() const { return progress_; }

 private:
  void apply();  // form -> document
  void showSettings();
  void showProjection();
  void showSweep();
  void showCli();
  void chooseTopology(int index);
  void updateTopologyFields();
  void showRecorded(std::optional<double> gbps);

  ExplorerDocument* document_;
  QSpinBox* workers_;
  QDoubleSpinBox* bandwidth_;
  QDoubleSpinBox* latency_;
  QComboBox* topology_;
  QLabel* platform_file_;
  // A control for each topology parameter that has a label, enabled while
  // its topology is chosen.
  struct TopologyControl {
    sim::Topology topology;
    const sim::TopologyParameter* parameter;
    QDoubleSpinBox* spin;
  };
  std::vector<TopologyControl> topology_controls_;
  QComboBox* network_model_;
  QComboBox* allreduce_;
  // The link rate the trace was recorded at: unknown (unchecked) or a value.
  QCheckBox* recorded_known_;
  QDoubleSpinBox* recorded_bandwidth_;
  double recorded_last_gbps_;  // what checking "known" again brings back
  QPushButton* simulate_;
  QPushButton* cancel_;
  QCheckBox* auto_;
  QProgressBar* progress_;
  QLabel* sim_status_;
  QLabel* source_;
  QTableWidget* results_;
  QLabel* problem_;
  QLabel* cli_;
  PlotWidget* projection_plot_;
  PlotWidget* sweep_plot_;
  PlotWidget* breakdown_plot_;
  std::string platform_path_;
  std::string drawn_run_;  // the run the projection plots show
  int topology_index_ = 0;
  bool updating_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_WHAT_IF_VIEW_H_
