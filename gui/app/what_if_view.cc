#include "gui/app/what_if_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "common/number_format.h"
#include "gui/app/plot_widget.h"
#include "gui/app/run_list_view.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "gui/model/headlines.h"
#include "simulator/topology_description.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

// The topology menu's item for a platform file, beside the built
// topologies' items (whose data are their Topology values).
constexpr int kPlatformFileItem = -1;

// "gpus_per_node" -> "gpusPerNode": Qt's object names for a parameter's control.
QString ControlName(const char* key) {
  QString name;
  bool upper = false;
  for (const char* c = key; *c; ++c) {
    if (*c == '_') {
      upper = true;
      continue;
    }
    name += upper ? QChar(*c).toUpper() : QChar(*c);
    upper = false;
  }
  return name;
}

// A link rate in Gb/s, in steps of a tenth of the current decade: 1 → 1.1,
// 10 → 11, 100 → 110.
void SetUpBandwidthSpin(QDoubleSpinBox* spin) {
  spin->setRange(0.01, 10000);
  spin->setDecimals(2);
  spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
  spin->setSuffix(QObject::tr(" Gb/s"));
  spin->setKeyboardTracking(false);
}

QTableWidgetItem* Cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

WhatIfView::WhatIfView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      workers_(new QSpinBox(this)),
      bandwidth_(new QDoubleSpinBox(this)),
      latency_given_(new QCheckBox(this)),
      latency_(new QDoubleSpinBox(this)),
      latency_last_us_(sim::PlatformSpec().latency_s * 1e6),
      topology_(new QComboBox(this)),
      platform_file_(new QLabel(this)),
      network_model_(new QComboBox(this)),
      allreduce_(new QComboBox(this)),
      recorded_known_(new QCheckBox(this)),
      recorded_bandwidth_(new QDoubleSpinBox(this)),
      recorded_last_gbps_(GbpsFromBytesPerSecond(sim::PlatformSpec().bandwidth_Bps)),
      simulate_(new QPushButton(tr("Simulate with SimGrid"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      auto_(new QCheckBox(tr("auto"), this)),
      progress_(new QProgressBar(this)),
      sim_status_(new QLabel(this)),
      source_(new QLabel(this)),
      assumption_(new QLabel(this)),
      disagreement_(new QLabel(this)),
      results_(new QTableWidget(4, 4, this)),
      problem_(new QLabel(this)),
      cli_(new QLabel(this)),
      projection_plot_(new PlotWidget("projection", this)),
      sweep_plot_(new PlotWidget("bandwidth-sweep", this)),
      breakdown_plot_(new PlotWidget("epoch-breakdown", this)),
      figures_(new QStackedWidget(this)),
      grid_(new QSplitter(Qt::Vertical, this)),
      top_(new QSplitter(Qt::Horizontal, this)),
      figure_tabs_(new QTabWidget(this)) {
  setUpClusterControls();
  setUpProjectionControls();
  side_scroll_ = buildForm();
  buildFigureArea();
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(side_scroll_);
  split->addWidget(figures_);
  split->setStretchFactor(1, 1);
  split->setSizes({340, 1100});
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);
  connectControls();
  connectDocument();

  showSettings();
  showCli();
  showProjection();
  showSweep();
}

// The cluster form's controls: workers, links, topology (with a control for
// each parameter whose row has a label, and a platform file), network model,
// all-reduce, and the rate the trace was recorded at.
void WhatIfView::setUpClusterControls() {
  workers_->setObjectName("workersSpin");
  workers_->setRange(1, 1 << 20);
  workers_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
  workers_->setKeyboardTracking(false);
  bandwidth_->setObjectName("bandwidthSpin");
  SetUpBandwidthSpin(bandwidth_);
  bandwidth_->setToolTip(tr("Per link (the inter-node links of the hierarchical topology)"));
  latency_->setObjectName("latencySpin");
  latency_->setRange(0, 1e6);
  latency_->setDecimals(1);
  latency_->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
  latency_->setSuffix(tr(" µs"));
  latency_->setKeyboardTracking(false);
  latency_->setSpecialValueText(tr("the trace's network"));
  latency_given_->setObjectName("latencyGivenCheck");
  latency_given_->setAccessibleName(tr("Latency given"));
  const QString latency_tip =
      tr("Per link. Unchecked: the latency of the network the trace was recorded on (its probe's per-message "
         "cost: the run's own stack, measured), as accordion-sim uses without --latency-us; %1 µs for a trace "
         "without a probe. Check to ask about another network's latency.")
          .arg(sim::PlatformSpec().latency_s * 1e6);
  latency_given_->setToolTip(latency_tip);
  latency_->setToolTip(latency_tip);
  topology_->setObjectName("topologyCombo");
  for (const sim::TopologyDescription& d : sim::AllTopologies()) {
    topology_->addItem(QString::fromUtf8(d.name), static_cast<int>(d.topology));
    for (const sim::TopologyParameter& p : d.parameters) {
      if (!p.label) continue;
      auto* spin = new QDoubleSpinBox(this);
      spin->setObjectName(ControlName(p.key) + "Spin");
      spin->setDecimals(p.unit == sim::ParameterUnit::kCount ? 0 : 2);
      spin->setRange(p.unit == sim::ParameterUnit::kCount ? p.min_count : 0,
                     p.unit == sim::ParameterUnit::kCount ? p.max_count : 1e6);
      spin->setKeyboardTracking(false);
      spin->setToolTip(QString::fromStdString(p.help));
      topology_controls_.push_back({d.topology, &p, spin});
    }
  }
  topology_->addItem(tr("platform file…"), kPlatformFileItem);
  platform_file_->setObjectName("platformFileLabel");
  platform_file_->setWordWrap(true);
  network_model_->setObjectName("networkModelCombo");
  // Automatic (the item's data empty): what accordion-sim takes without
  // --network-model - the recorded network's exact CM02 for a trace whose
  // probe anchors the replay, SimGrid's default otherwise.
  network_model_->addItem(tr("automatic"), QString());
  network_model_->addItem("LV08", QString("LV08"));
  network_model_->addItem("CM02", QString("CM02"));
  network_model_->setToolTip(
      tr("SimGrid's network model. Automatic: as accordion-sim without --network-model - the recorded "
         "network's (CM02, exact) for a trace with a network probe, else %1")
          .arg(QString::fromStdString(sim::NetworkOptions().model())));
  allreduce_->setObjectName("allreduceCombo");
  for (const std::string& name : sim::AllReduceAlgorithmNames()) {
    allreduce_->addItem(QString::fromStdString(name), static_cast<int>(*sim::ParseAllReduceAlgorithm(name)));
  }
  allreduce_->setToolTip(tr("All-reduce algorithm; nccl-ring and nccl-tree with NCCL's default %1 KiB chunks "
                            "and %2 channels, nccl-tree and hierarchical with the platform's GPUs per node")
                             .arg(sim::CollectiveOptions::kDefaultChunkBytes / 1024)
                             .arg(sim::CollectiveOptions::kDefaultChannels));
  recorded_known_->setObjectName("recordedBandwidthCheck");
  recorded_known_->setAccessibleName(tr("Recorded bandwidth known"));
  recorded_bandwidth_->setObjectName("recordedBandwidthSpin");
  SetUpBandwidthSpin(recorded_bandwidth_);
  recorded_bandwidth_->setSpecialValueText(tr("unknown"));
  const QString recorded_tip =
      tr("The link rate the trace was recorded at, on this platform. Known: each recorded collective's time is "
         "split into what that network takes and the hosts' cost, and the replay keeps the hosts' cost on the new "
         "cluster. Unknown: one host cost for every collective, estimated from the fixed part of the trace's "
         "collectives (their time against their size).");
  recorded_known_->setToolTip(recorded_tip);
  recorded_bandwidth_->setToolTip(recorded_tip);
}

// The projection's controls and read-outs: SimGrid's buttons and progress,
// the source and assumption lines, the results table, the command line.
void WhatIfView::setUpProjectionControls() {
  simulate_->setObjectName("simulateButton");
  simulate_->setToolTip(
      tr("Replay the run packet by packet on the simulated cluster (seconds to minutes); "
         "the α–β estimate is shown until it lands"));
  cancel_->setObjectName("cancelSimulationButton");
  cancel_->setEnabled(false);
  auto_->setObjectName("autoSimulateCheck");
  auto_->setToolTip(tr("Run the SimGrid replay by itself once the settings have been still for a moment"));
  progress_->setObjectName("simulationProgress");
  progress_->setVisible(false);
  progress_->setTextVisible(true);
  sim_status_->setWordWrap(true);
  source_->setObjectName("projectionSource");
  source_->setWordWrap(true);
  source_->setTextFormat(Qt::RichText);
  assumption_->setObjectName("scalingAssumption");
  assumption_->setWordWrap(true);
  assumption_->setTextFormat(Qt::RichText);
  disagreement_->setObjectName("modelDisagreement");
  disagreement_->setWordWrap(true);
  disagreement_->setTextFormat(Qt::RichText);
  disagreement_->setStyleSheet("color: #a33;");
  disagreement_->setVisible(false);
  results_->setObjectName("projectionTable");
  results_->setHorizontalHeaderLabels({tr("Schedule"), tr("Time to train"), tr("Per step"), tr("vs dense")});
  results_->horizontalHeaderItem(3)->setToolTip(
      tr("This schedule's time against sending every gradient dense: \"1.71× slower\", \"1.57× faster\""));
  results_->verticalHeader()->setVisible(false);
  results_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  results_->setSelectionMode(QAbstractItemView::NoSelection);
  results_->setFocusPolicy(Qt::NoFocus);
  results_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < 4; ++c) results_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  results_->verticalHeader()->setDefaultSectionSize(results_->fontMetrics().height() + 8);
  results_->setFixedHeight(results_->horizontalHeader()->sizeHint().height() +
                           4 * results_->verticalHeader()->defaultSectionSize() + 4);
  problem_->setObjectName("projectionProblem");
  problem_->setWordWrap(true);
  problem_->setStyleSheet("color: #a33;");
  problem_->setVisible(false);
  cli_->setObjectName("cliFlags");
  cli_->setWordWrap(true);
  cli_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont mono("monospace");
  mono.setStyleHint(QFont::Monospace);
  mono.setPointSizeF(font().pointSizeF() * 0.9);
  cli_->setFont(mono);
}

// The form beside the figures: the cluster, the projection and the command
// line, in a scroll area.
QScrollArea* WhatIfView::buildForm() {
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Workers"), workers_);
  form->addRow(tr("Bandwidth"), bandwidth_);
  auto* latency_row = new QHBoxLayout;
  latency_row->addWidget(latency_given_);
  latency_row->addWidget(latency_, 1);
  form->addRow(tr("Latency"), latency_row);
  form->addRow(tr("Topology"), topology_);
  form->addRow(QString(), platform_file_);
  for (const TopologyControl& c : topology_controls_) form->addRow(tr(c.parameter->label), c.spin);
  form->addRow(tr("Network model"), network_model_);
  form->addRow(tr("All-reduce"), allreduce_);
  auto* recorded_row = new QHBoxLayout;
  recorded_row->addWidget(recorded_known_);
  recorded_row->addWidget(recorded_bandwidth_, 1);
  form->addRow(tr("Recorded at"), recorded_row);
  auto* cluster = new QGroupBox(tr("Cluster"), this);
  cluster->setLayout(form);

  auto* sim_row = new QHBoxLayout;
  sim_row->addWidget(simulate_, 1);
  sim_row->addWidget(cancel_);
  sim_row->addWidget(auto_);
  auto* results_box = new QGroupBox(tr("Projected time to train"), this);
  auto* results_layout = new QVBoxLayout(results_box);
  results_layout->addWidget(source_);
  results_layout->addWidget(results_);
  results_layout->addWidget(assumption_);
  results_layout->addWidget(disagreement_);
  results_layout->addWidget(problem_);
  results_layout->addLayout(sim_row);
  results_layout->addWidget(progress_);
  results_layout->addWidget(sim_status_);
  auto* cli_box = new QGroupBox(tr("Same projection from the command line"), this);
  auto* cli_layout = new QVBoxLayout(cli_box);
  cli_layout->addWidget(cli_);

  auto* side = new QWidget(this);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(cluster);
  side_layout->addWidget(results_box);
  side_layout->addWidget(cli_box);
  side_layout->addStretch(1);
  // The form is taller than a laptop's window leaves it: it scrolls, and the
  // figures beside it keep their height.
  auto* side_scroll = new QScrollArea(this);
  side_scroll->setObjectName("whatIfForm");
  side_scroll->setWidget(side);
  side_scroll->setWidgetResizable(true);
  side_scroll->setFrameShape(QFrame::NoFrame);
  side_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // The form needs little width; the figures need all they can get.
  side_scroll->setMinimumWidth(side->minimumSizeHint().width() + side_scroll->verticalScrollBar()->sizeHint().width());
  side_scroll->setMaximumWidth(420);
  return side_scroll;
}

// The three figures, as a grid (projection beside sweep, breakdown below) or
// as tabs; arrangeFigures picks one.
void WhatIfView::buildFigureArea() {
  top_->setObjectName("whatIfTopFigures");
  top_->addWidget(projection_plot_);
  top_->addWidget(sweep_plot_);
  top_->setChildrenCollapsible(false);
  top_->setSizes({500, 500});
  grid_->setObjectName("whatIfFigureGrid");
  grid_->addWidget(top_);
  grid_->addWidget(breakdown_plot_);
  grid_->setChildrenCollapsible(false);
  grid_->setSizes({550, 450});
  figure_tabs_->setObjectName("whatIfFigureTabs");
  figure_tabs_->setDocumentMode(true);
  figures_->addWidget(grid_);
  figures_->addWidget(figure_tabs_);
}

// Form -> document.
void WhatIfView::connectControls() {
  connect(workers_, &QSpinBox::valueChanged, this, &WhatIfView::apply);
  connect(bandwidth_, &QDoubleSpinBox::valueChanged, this, &WhatIfView::apply);
  connect(latency_, &QDoubleSpinBox::valueChanged, this, &WhatIfView::apply);
  for (const TopologyControl& c : topology_controls_) {
    connect(c.spin, &QDoubleSpinBox::valueChanged, this, &WhatIfView::apply);
  }
  connect(network_model_, &QComboBox::currentIndexChanged, this, &WhatIfView::apply);
  connect(allreduce_, &QComboBox::currentIndexChanged, this, &WhatIfView::apply);
  connect(recorded_known_, &QCheckBox::toggled, this, [this](bool known) {
    if (updating_) return;
    showRecorded(known ? std::optional<double>(recorded_last_gbps_) : std::nullopt);
    apply();
  });
  connect(recorded_bandwidth_, &QDoubleSpinBox::valueChanged, this, &WhatIfView::apply);
  connect(latency_given_, &QCheckBox::toggled, this, [this](bool given) {
    if (updating_) return;
    showLatency(given ? std::optional<double>(latency_last_us_) : std::nullopt);
    apply();
  });
  connect(topology_, &QComboBox::activated, this, &WhatIfView::chooseTopology);
  connect(simulate_, &QPushButton::clicked, document_, &ExplorerDocument::startSimulation);
  connect(cancel_, &QPushButton::clicked, document_, &ExplorerDocument::cancelSimulation);
  connect(auto_, &QCheckBox::toggled, document_, &ExplorerDocument::setAutoSimulate);
}

// Document -> view: settings, projections, the SimGrid replay's progress.
void WhatIfView::connectDocument() {
  connect(document_, &ExplorerDocument::whatIfSettingsChanged, this, &WhatIfView::showSettings);
  connect(document_, &ExplorerDocument::whatIfSettingsChanged, this, &WhatIfView::showCli);
  connect(document_, &ExplorerDocument::scheduleSettingsChanged, this, &WhatIfView::showCli);
  connect(document_, &ExplorerDocument::currentRunChanged, this, [this] {
    showCli();
    showProjection();
    showSweep();
  });
  connect(document_, &ExplorerDocument::estimateChanged, this, [this] {
    showProjection();
    showSweep();  // a scheme without levels has none to show
  });
  connect(document_, &ExplorerDocument::sweepChanged, this, &WhatIfView::showSweep);
  connect(document_, &ExplorerDocument::simulationStarted, this, [this] {
    simulate_->setEnabled(false);
    cancel_->setEnabled(true);
    progress_->setRange(0, 0);  // busy until the first progress report
    progress_->setVisible(true);
    sim_status_->setText(tr("SimGrid is replaying the run…"));
  });
  connect(document_, &ExplorerDocument::simulationProgress, this, [this](int done, int total) {
    progress_->setRange(0, std::max(total, 1));
    progress_->setValue(done);
    progress_->setFormat(tr("%1 of %2 patterns").arg(done).arg(total));
  });
  connect(document_, &ExplorerDocument::simulationFinished, this, [this] {
    simulate_->setEnabled(document_->currentRun() != nullptr);
    cancel_->setEnabled(false);
    progress_->setVisible(false);
    if (sim_status_->text() == tr("SimGrid is replaying the run…")) sim_status_->clear();
    showProjection();
  });
  connect(document_, &ExplorerDocument::simulationFailed, this,
          [this](const QString& message) { sim_status_->setText(tr("SimGrid replay failed: %1").arg(message)); });
}

void WhatIfView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Three figures in a grid need about 760 × 620 px; a laptop's window
  // leaves them less, and then each gets the whole area, one tab at a time.
  arrangeFigures(height() < 620 || width() - side_scroll_->width() < 760);
}

void WhatIfView::arrangeFigures(bool tabbed) {
  if (tabbed == tabbed_) return;
  tabbed_ = tabbed;
  if (tabbed) {
    figure_tabs_->addTab(projection_plot_, tr("Time to train"));
    figure_tabs_->addTab(sweep_plot_, tr("Against bandwidth"));
    figure_tabs_->addTab(breakdown_plot_, tr("Epochs"));
    figures_->setCurrentWidget(figure_tabs_);
  } else {
    figure_tabs_->clear();  // takes the tabs away; the plots stay
    top_->insertWidget(0, projection_plot_);
    top_->insertWidget(1, sweep_plot_);
    grid_->insertWidget(1, breakdown_plot_);
    // The tab widget hid the plots it did not show.
    for (PlotWidget* plot : {projection_plot_, sweep_plot_, breakdown_plot_}) plot->show();
    figures_->setCurrentWidget(grid_);
  }
}

void WhatIfView::chooseTopology(int index) {
  if (topology_->itemData(index).toInt() == kPlatformFileItem) {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Platform file"), QString(),
        tr("Platform files (*.json *.xml);;SimGrid XML (*.xml);;Accordion JSON (*.json);;All files (*)"));
    if (path.isEmpty()) {
      updating_ = true;
      topology_->setCurrentIndex(topology_index_);
      updating_ = false;
      return;
    }
    platform_path_ = path.toStdString();
  }
  topology_index_ = index;
  apply();
}

void WhatIfView::updateTopologyFields() {
  const int item = topology_->currentData().toInt();
  for (const TopologyControl& c : topology_controls_) c.spin->setEnabled(static_cast<int>(c.topology) == item);
  const bool file = item == kPlatformFileItem;
  platform_file_->setVisible(file);
  platform_file_->setText(file ? QFileInfo(QString::fromStdString(platform_path_)).fileName() : QString());
  platform_file_->setToolTip(QString::fromStdString(platform_path_));
  // A platform file brings its own links.
  bandwidth_->setEnabled(!file);
  latency_given_->setEnabled(!file);
  latency_->setEnabled(!file && latency_given_->isChecked());
}

// Not given reads "the trace's network" in the spin box (its special value,
// below the range a latency takes), not a greyed number that could pass for it.
void WhatIfView::showLatency(std::optional<double> us) {
  const bool was_updating = updating_;
  updating_ = true;
  latency_given_->setChecked(us.has_value());
  latency_->setMinimum(us ? 0 : -1);
  latency_->setValue(us.value_or(-1));
  latency_->setEnabled(us.has_value());
  updating_ = was_updating;
}

// Unknown reads "unknown" in the spin box (its special value, at 0), not a
// greyed number that could pass for the rate.
void WhatIfView::showRecorded(std::optional<double> gbps) {
  const bool was_updating = updating_;
  updating_ = true;
  recorded_known_->setChecked(gbps.has_value());
  recorded_bandwidth_->setMinimum(gbps ? 0.01 : 0);
  recorded_bandwidth_->setValue(gbps.value_or(0));
  recorded_bandwidth_->setEnabled(gbps.has_value());
  updating_ = was_updating;
}

void WhatIfView::apply() {
  if (updating_) return;
  WhatIfSettings w = document_->whatIfSettings();
  w.workers = workers_->value();
  w.bandwidth_gbps = bandwidth_->value();
  w.latency_us = latency_given_->isChecked() ? std::optional<double>(latency_->value()) : std::nullopt;
  if (w.latency_us) latency_last_us_ = *w.latency_us;
  const int item = topology_->currentData().toInt();
  w.platform_file = item == kPlatformFileItem ? platform_path_ : std::string();
  if (w.platform_file.empty()) w.topology = static_cast<sim::Topology>(item);
  for (const TopologyControl& c : topology_controls_) w.topology_parameters[c.parameter->key] = c.spin->value();
  w.network_model = network_model_->currentData().toString().toStdString();
  w.allreduce = static_cast<sim::AllReduceAlgorithm>(allreduce_->currentData().toInt());
  w.recorded_bandwidth_gbps =
      recorded_known_->isChecked() ? std::optional<double>(recorded_bandwidth_->value()) : std::nullopt;
  if (w.recorded_bandwidth_gbps) recorded_last_gbps_ = *w.recorded_bandwidth_gbps;
  updateTopologyFields();
  if (w != document_->whatIfSettings()) document_->setWhatIfSettings(w);
}

void WhatIfView::showSettings() {
  const WhatIfSettings& w = document_->whatIfSettings();
  updating_ = true;
  workers_->setValue(w.workers);
  bandwidth_->setValue(w.bandwidth_gbps);
  if (w.latency_us) latency_last_us_ = *w.latency_us;
  showLatency(w.latency_us);
  if (!w.platform_file.empty()) platform_path_ = w.platform_file;
  const int t = topology_->findData(w.platform_file.empty() ? static_cast<int>(w.topology) : kPlatformFileItem);
  topology_->setCurrentIndex(t >= 0 ? t : 0);
  topology_index_ = topology_->currentIndex();
  for (const TopologyControl& c : topology_controls_) c.spin->setValue(TopologyParameterOf(w, *c.parameter));
  const int m = network_model_->findData(QString::fromStdString(w.network_model));
  network_model_->setCurrentIndex(m >= 0 ? m : 0);
  allreduce_->setCurrentIndex(allreduce_->findData(static_cast<int>(w.allreduce)));
  if (w.recorded_bandwidth_gbps) recorded_last_gbps_ = *w.recorded_bandwidth_gbps;
  showRecorded(w.recorded_bandwidth_gbps);
  auto_->setChecked(document_->autoSimulate());
  updateTopologyFields();
  updating_ = false;
}

void WhatIfView::showCli() {
  const auto run = document_->currentRun();
  if (!run) {
    cli_->setText(tr("Open a trace first."));
    return;
  }
  const auto projection = document_->projection();
  const sim::TimingSource model = projection ? projection->timing : sim::TimingSource::kAnalytic;
  cli_->setText(
      QStringLiteral("accordion-sim replay %1 %2")
          .arg(QFileInfo(QString::fromStdString(run->path)).fileName(),
               QString::fromStdString(CliFlagsOf(document_->scheduleSettings(), document_->whatIfSettings(), model))));
  cli_->setToolTip(tr("Trace: %1").arg(QString::fromStdString(run->path)));
}

void WhatIfView::showProjection() {
  const auto run = document_->currentRun();
  const auto projection = document_->projection();
  const QString problem = document_->projectionProblem();
  simulate_->setEnabled(run && problem.isEmpty() && !document_->simulationRunning());
  problem_->setVisible(!problem.isEmpty());
  problem_->setText(tr("This run cannot be projected: %1").arg(problem));
  showCli();
  const std::string run_path = run ? run->path : std::string();
  if (!projection) {
    if (!run) {
      source_->setText(tr("No run open."));
    } else if (!problem.isEmpty()) {
      source_->setText(tr("No projection."));
    } else {
      source_->setText(tr("<i>Estimating…</i>"));
    }
    // Keep the last figures while the next estimate is on its way (it takes
    // milliseconds); blank them only when they belong to another run.
    if (run_path != drawn_run_ || !problem.isEmpty() || !run) {
      const QString text = !run ? tr("No run open") : !problem.isEmpty() ? problem : tr("Estimating…");
      projection_plot_->showMessage(text);
      breakdown_plot_->showMessage(QString());
      results_->clearContents();
      assumption_->clear();
      disagreement_->setVisible(false);
      drawn_run_.clear();
    }
    return;
  }
  drawn_run_ = run_path;
  const bool simulated = projection->timing == sim::TimingSource::kSimulate;
  QString source = simulated ? tr("<b>SimGrid replay</b> &nbsp;%1")
                                   .arg(QString::fromStdString(projection->result.platform).toHtmlEscaped())
                             : tr("<b>α–β estimate</b> &nbsp;%1<br><span style='color:#666'>Simulate for SimGrid's "
                                  "flow-level answer (contention between messages).</span>")
                                   .arg(QString::fromStdString(projection->result.platform).toHtmlEscaped());
  // The links' shaper where the replay models one, as accordion-sim's "shaper:" line.
  if (!projection->result.shaper.empty()) {
    source += tr("<br>Token-bucket shaper on every link: %1")
                  .arg(QString::fromStdString(projection->result.shaper).toHtmlEscaped());
  }
  // The replay's warnings (a recorded network in doubt), as accordion-sim
  // and accordion-report give them.
  for (const std::string& note : projection->result.notes) {
    if (note.rfind("warning: ", 0) != 0) continue;
    source += tr("<br><span style='color:#b35c00'><b>Warning:</b> %1</span>")
                  .arg(QString::fromStdString(note.substr(9)).toHtmlEscaped());
  }
  source_->setText(source);
  const sim::ReplayResult& r = projection->result;
  const double dense_s = projection->dense.total.time_s;
  const sim::ScheduleProjection* rows[4] = {&r.accordion, &r.static_low, &r.static_high, &projection->dense};
  const QString names[4] = {tr("Accordion"), tr("static low"), tr("static high"), tr("dense")};
  // A scheme without levels has no schedule: dense, and the cast where the
  // run is one; not "Accordion", "static dense", "static dense", all alike.
  const SchemeDescription& scheme = DescriptionOf(r.scheme);
  for (int i = 0; i < 4; ++i) {
    const bool shown = scheme.has_levels() || i == 3 || (i == 1 && !scheme.dense_baseline);
    results_->setRowHidden(i, !shown);
  }
  // Each column in one unit, its largest row's.
  double longest = 0, longest_step = 0;
  for (const sim::ScheduleProjection* p : rows) {
    longest = std::max(longest, p->total.time_s);
    longest_step = std::max(longest_step, p->total.iteration_s);
  }
  const TimeColumn time_column(longest), step_column(longest_step);
  for (int i = 0; i < 4; ++i) {
    const sim::ScheduleProjection& p = *rows[i];
    // "Accordion rank 2 / rank 1" does not fit the column; the tooltip has it.
    auto* name = Cell(i == 0 || p.label.empty() ? names[i] : QString::fromStdString(p.label), false);
    name->setToolTip(QString::fromStdString(p.label));
    if (i == 0) {
      QFont bold = name->font();
      bold.setBold(true);
      name->setFont(bold);
    }
    results_->setItem(i, 0, name);
    // The prediction band in the tooltips: a column more does not fit the panel.
    auto* time = Cell(time_column.Format(p.total.time_s), true);
    auto* step = Cell(step_column.Format(p.total.iteration_s), true);
    time->setToolTip(tr("90 % band: %1 – %2 (the range that held 90 % of the trace's recorded steps, carried "
                        "through the model)")
                         .arg(time_column.Format(p.total.time_low_s), time_column.Format(p.total.time_high_s)));
    step->setToolTip(
        tr("90 % band: %1 – %2")
            .arg(step_column.Format(p.total.iteration_low_s), step_column.Format(p.total.iteration_high_s)));
    results_->setItem(i, 1, time);
    results_->setItem(i, 2, step);
    // The headlines' wording, not a ratio: "0.58×" read as faster when it was slower.
    const std::string against = CompareTimes(p.total.time_s, dense_s, "");
    results_->setItem(i, 3,
                      Cell(p.total.time_s == dense_s || rows[i] == &projection->dense ? QString("—")
                                                                                      : QString::fromStdString(against),
                           true));
  }
  // Every cell whole ("static TopK 99 %", not "static …"): the form is as
  // wide as the table needs, and scrolls rather than squeezes it.
  int table_width = 2 * results_->frameWidth();
  for (int c = 0; c < results_->columnCount(); ++c) {
    // QTableView keeps sizeHintForColumn protected; QAbstractItemView has it public.
    const QAbstractItemView* view = results_;
    table_width += std::max(view->sizeHintForColumn(c), results_->horizontalHeader()->sectionSizeHint(c));
  }
  if (table_width != results_->minimumWidth()) {
    results_->setMinimumWidth(table_width);
    // The layouts between the table and the form cache their minimum sizes.
    for (QWidget* w = results_->parentWidget(); w != nullptr && w != side_scroll_->widget(); w = w->parentWidget()) {
      w->updateGeometry();
    }
    side_scroll_->widget()->layout()->invalidate();
    side_scroll_->setMinimumWidth(side_scroll_->widget()->minimumSizeHint().width() +
                                  side_scroll_->verticalScrollBar()->sizeHint().width());
  }
  results_->setToolTip(
      scheme.has_levels()
          ? QString::fromStdString(ProjectionHeadline(r.accordion.total.time_s, dense_s, r.static_low.total.time_s,
                                                      r.static_high.total.time_s))
          : tr("No schedule: %1 communication has no levels to switch; choose PowerSGD, TopK or batch size in the "
               "Schedule panel to explore one")
                .arg(QString::fromUtf8(scheme.title)));
  showAssumptions(*run, *projection);
  DrawProjection(projection_plot_, *projection);
  projection_plot_->markDrawn();
  DrawEpochBreakdown(breakdown_plot_, *projection);
  breakdown_plot_->markDrawn();
}

void WhatIfView::showAssumptions(const RunData& run, const WhatIfProjection& projection) {
  const RunInfo& info = run.view().run;
  const sim::ReplayResult& r = projection.result;
  const std::vector<sim::EpochProjection>& epochs = projection.dense.epochs;
  const int64_t per_worker = info.world_size > 0 ? info.batch_size / info.world_size : 0;
  // How the schedules' compute was priced: one estimate across levels, or
  // each its own where the levels change it (ReplayOptions::share_compute).
  QString compute;
  for (const sim::BatchCompute& b : r.compute) {
    compute += tr("<br><b>Pricing</b> at %1 samples per worker: %2")
                   .arg(QString::fromStdString(FormatNumber(b.per_worker_batch)),
                        QString::fromStdString(b.Describe(r.scheme)).toHtmlEscaped());
  }
  if (epochs.empty() || per_worker <= 0) {
    assumption_->setText(compute.mid(4));
  } else {
    // The replay keeps each worker's batch (ReplayEngine): more workers make
    // a bigger global batch and fewer steps an epoch, which is most of why
    // "time to train" falls with the workers. The CLI says so in its notes.
    assumption_->setText(
        tr("<b>Scaling:</b> per-worker batch kept: %1 workers × %2 = global batch %3, %4 steps an epoch "
           "(recorded: %5 × %2 = %6). Keeping the global batch at %6 instead is not what this replay models.")
            .arg(r.workers)
            .arg(per_worker)
            .arg(epochs.front().global_batch)
            .arg(epochs.front().steps)
            .arg(info.world_size)
            .arg(info.batch_size) +
        compute);
  }
  // Both answers in hand: say so when they point different ways.
  const auto estimate = document_->estimate();
  const auto simulation = document_->simulation();
  disagreement_->setVisible(false);
  if (!estimate || !simulation) return;
  const double est_dense = estimate->dense.total.time_s;
  const double sim_dense = simulation->dense.total.time_s;
  const double est = estimate->result.accordion.total.time_s;
  const double sim = simulation->result.accordion.total.time_s;
  // The headlines' rule: within 0.5 % is "as fast", neither side.
  auto side = [](double accordion_s, double dense_s) {
    if (!(accordion_s > 0) || !(dense_s > 0)) return 0;
    const double ratio = dense_s / accordion_s;
    return ratio > 1.005 ? 1 : ratio < 1 / 1.005 ? -1 : 0;
  };
  const int est_side = side(est, est_dense);
  const int sim_side = side(sim, sim_dense);
  if (est_side == sim_side) return;
  disagreement_->setText(tr("<b>The two models disagree:</b> the α–β estimate has Accordion %1, the SimGrid "
                            "replay %2. Trust the SimGrid replay: it sends every message through the simulated "
                            "network (latency per message, contention), which the α–β sum leaves out.")
                             .arg(QString::fromStdString(CompareTimes(est, est_dense, "dense")),
                                  QString::fromStdString(CompareTimes(sim, sim_dense, "dense"))));
  disagreement_->setVisible(true);
}

void WhatIfView::showSweep() {
  const auto sweep = document_->sweep();
  if (!document_->currentRun()) {
    sweep_plot_->showMessage(tr("No run open"));
    return;
  }
  if (!sweep) {
    if (!document_->projectionProblem().isEmpty()) sweep_plot_->showMessage(QString());
    return;
  }
  const auto projection = document_->projection();
  if (projection && !DescriptionOf(projection->result.scheme).has_levels()) {
    // Short: the message is one line across the plot.
    sweep_plot_->showMessage(tr("No schedule: %1 has no levels to switch")
                                 .arg(QString::fromUtf8(DescriptionOf(projection->result.scheme).title)));
    return;
  }
  DrawBandwidthSweep(sweep_plot_, *sweep, document_->whatIfSettings().bandwidth_gbps);
  sweep_plot_->markDrawn();
}

}  // namespace accordion::gui
