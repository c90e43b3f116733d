// WhatIfView: the What-if tab - which cluster to project the current run
// onto, the projected time to train of Accordion against the static
// schedules and dense (α–β estimate at once, SimGrid replay on request),
// the bandwidth sweep and Accordion's per-epoch time breakdown. On a
// laptop's window the form scrolls and the three figures become tabs.
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
class QScrollArea;
class QSplitter;
class QStackedWidget;
class QSpinBox;
class QTabWidget;
class QTableWidget;

namespace accordion::sim {
enum class Topology;
struct TopologyParameter;
}  // namespace accordion::sim

namespace accordion::gui {

class ExplorerDocument;
class PlotWidget;
struct RunData;
struct WhatIfProjection;

class WhatIfView : public QWidget {
  Q_OBJECT

 public:
  explicit WhatIfView(ExplorerDocument* document, QWidget* parent = nullptr);

  PlotWidget* projectionPlot() const { return projection_plot_; }
  PlotWidget* sweepPlot() const { return sweep_plot_; }
  PlotWidget* breakdownPlot() const { return breakdown_plot_; }
  QTableWidget* resultsTable() const { return results_; }
  QLabel* sourceLabel() const { return source_; }
  // How the run is scaled to the workers asked for (the per-worker batch
  // kept), and, when the α–β estimate and the SimGrid replay disagree on
  // whether Accordion beats dense, which to trust (hidden otherwise).
  QLabel* assumptionLabel() const { return assumption_; }
  QLabel* disagreementLabel() const { return disagreement_; }
  QLabel* cliLabel() const { return cli_; }
  QPushButton* simulateButton() const { return simulate_; }
  QPushButton* cancelButton() const { return cancel_; }
  QProgressBar* progressBar() const { return progress_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  // The constructor's parts, in the order it calls them.
  void setUpClusterControls();
  void setUpProjectionControls();
  QScrollArea* buildForm();
  void buildFigureArea();
  void connectControls();
  void connectDocument();

  void arrangeFigures(bool tabbed);
  void apply();  // form -> document
  void showSettings();
  void showProjection();
  void showSweep();
  void showAssumptions(const RunData& run, const WhatIfProjection& projection);
  void showCli();
  void chooseTopology(int index);
  void updateTopologyFields();
  void showRecorded(std::optional<double> gbps);
  void showLatency(std::optional<double> us);

  ExplorerDocument* document_;
  QSpinBox* workers_;
  QDoubleSpinBox* bandwidth_;
  QCheckBox* latency_given_;  // unchecked: the base platform's (the trace's network)
  QDoubleSpinBox* latency_;
  double latency_last_us_;  // what checking "given" again brings back
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
  QLabel* assumption_;
  QLabel* disagreement_;
  QTableWidget* results_;
  QLabel* problem_;
  QLabel* cli_;
  PlotWidget* projection_plot_;
  PlotWidget* sweep_plot_;
  PlotWidget* breakdown_plot_;
  QScrollArea* side_scroll_ = nullptr;
  QStackedWidget* figures_;  // grid_ or figure_tabs_
  QSplitter* grid_;          // top_ above the breakdown
  QSplitter* top_;           // projection beside sweep
  QTabWidget* figure_tabs_;  // each figure a tab: a window too small for the grid
  bool tabbed_ = false;
  std::string platform_path_;
  std::string drawn_run_;  // the run the projection plots show
  int topology_index_ = 0;
  bool updating_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_WHAT_IF_VIEW_H_
