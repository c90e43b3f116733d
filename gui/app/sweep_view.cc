#include "gui/app/sweep_view.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QRadioButton>
#include <QToolTip>
#include <QVBoxLayout>

#include "gui/app/plot_widget.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "gui/model/headlines.h"
#include "simulator/topology_description.h"
#include "traces/policy_description.h"

namespace accordion::gui {

namespace {

// A press and release closer than this (manhattan, px) is a click on a cell.
constexpr int kClickSlop = 4;

QString Cluster(const WhatIfSettings& w) {
  const QString where = !w.platform_file.empty()
                            ? QObject::tr("the platform file")
                            : QObject::tr("%1 Gb/s, %2").arg(w.bandwidth_gbps).arg(sim::ToString(w.topology));
  return QObject::tr("%1 workers, %2").arg(w.workers).arg(where);
}

}  // namespace

SweepView::SweepView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      caption_(new QLabel(this)),
      floats_(new QRadioButton(tr("Floats saved"), this)),
      time_(new QRadioButton(tr("Time saved"), this)),
      status_(new QLabel(this)),
      plot_(new PlotWidget("eta-interval-sweep", this)) {
  caption_->setWordWrap(true);
  floats_->setObjectName("sweepFloats");
  time_->setObjectName("sweepTime");
  floats_->setToolTip(tr("Floats one worker sends over the run, against static low"));
  time_->setToolTip(tr("Time to train, α–β estimate on the What-if tab's cluster, against static low"));
  floats_->setChecked(true);
  auto* group = new QButtonGroup(this);
  group->addButton(floats_);
  group->addButton(time_);
  status_->setObjectName("sweepStatus");
  // A heat map is read, not panned: a click picks a cell.
  plot_->setInteraction(QCP::iRangeDrag, false);
  plot_->setInteraction(QCP::iRangeZoom, false);
  plot_->setMouseTracking(true);

  auto* switches = new QHBoxLayout;
  switches->addWidget(floats_);
  switches->addWidget(time_);
  switches->addSpacing(16);
  switches->addWidget(status_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addLayout(switches);
  layout->addWidget(plot_, 1);

  connect(floats_, &QRadioButton::toggled, this, &SweepView::redraw);
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const QString tip = tooltipAt(event->pos());
    if (tip.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(event->globalPosition().toPoint(), tip + tr("\nclick to explore this setting"), plot_);
    }
  });
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) { press_pos_ = event->pos(); });
  connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* event) {
    if (event->button() == Qt::LeftButton && (event->pos() - press_pos_).manhattanLength() < kClickSlop) {
      applyCellAt(event->pos());
    }
  });
  // The sweep depends on the run, the scheme, the levels and the cluster;
  // η and the interval only move the dashed outline.
  for (auto signal : {&ExplorerDocument::currentRunChanged, &ExplorerDocument::runsChanged,
                      &ExplorerDocument::scheduleSettingsChanged, &ExplorerDocument::whatIfSettingsChanged}) {
    connect(document_, signal, this, &SweepView::refresh);
  }
  connect(document_, &ExplorerDocument::etaIntervalSweepChanged, this, [this] {
    if (isVisible()) redraw();
  });
  redraw();
}

SweepMetric SweepView::metric() const { return time_->isChecked() ? SweepMetric::kTime : SweepMetric::kFloats; }

void SweepView::setMetric(SweepMetric metric) { (metric == SweepMetric::kTime ? time_ : floats_)->setChecked(true); }

void SweepView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();
}

void SweepView::refresh() {
  // Unseen, it neither computes nor draws: showEvent catches up.
  if (!isVisible()) return;
  document_->requestEtaIntervalSweep();
  redraw();
}

bool SweepView::cellAt(const QPoint& pos, int* eta_index, int* interval_index) const {
  const auto sweep = document_->etaIntervalSweep();
  if (!sweep || !sweep->schedulable || plot_->plottableCount() == 0 || !plot_->xAxis || !plot_->yAxis) return false;
  if (!plot_->axisRect()->rect().contains(pos)) return false;
  return EtaIntervalCellAt(*sweep, plot_->xAxis->pixelToCoord(pos.x()), plot_->yAxis->pixelToCoord(pos.y()), eta_index,
                           interval_index);
}

QString SweepView::tooltipAt(const QPoint& pos) const {
  int i = 0, j = 0;
  if (!cellAt(pos, &i, &j)) return {};
  const auto sweep = document_->etaIntervalSweep();
  return EtaIntervalTooltip(*sweep, sweep->at(i, j));
}

bool SweepView::applyCellAt(const QPoint& pos) {
  int i = 0, j = 0;
  if (!cellAt(pos, &i, &j)) return false;
  const SweepCell& cell = document_->etaIntervalSweep()->at(i, j);
  ScheduleSettings s = document_->scheduleSettings();
  s.eta = cell.eta;
  s.interval = cell.interval;
  document_->setScheduleSettings(s);
  return true;
}

void SweepView::redraw() {
  const auto run = document_->currentRun();
  headline_.clear();
  if (!run) {
    caption_->setText(tr("What Accordion would save at every η and check interval."));
    status_->clear();
    plot_->showMessage(tr("No run open"));
    return;
  }
  caption_->setText(
      tr("What Accordion would have saved on %1 against static low at each η and check interval. A larger η or a "
         "longer interval finds fewer critical epochs: more saved, more accuracy risked. Each cell says how many "
         "epochs run the low level (\"low\": Accordion sends more than static high there). Times: α–β estimate on the "
         "What-if tab's cluster (%2). Hover a cell for its numbers, "
         "click it to explore it.")
          .arg(QString::fromStdString(run->summary.name), Cluster(document_->whatIfSettings())));
  const auto sweep = document_->etaIntervalSweep();
  if (!sweep) {
    const EtaIntervalSweepOptions grid = SweepOptionsFor(run->view().run);
    const int cells = static_cast<int>(grid.etas().size() * grid.intervals().size());
    status_->setText(document_->etaIntervalSweepRunning() ? tr("Computing %1 settings…").arg(cells) : QString());
    plot_->showMessage(tr("Computing %1 schedules and α–β estimates…").arg(cells));
    return;
  }
  status_->setText(tr("%1 settings").arg(sweep->cells.size()));
  const RunInfo& info = run->view().run;
  EtaIntervalMarks marks;
  if (DescriptionOf(info.policy).critical_regimes) {  // the recorded eta and interval mean something
    marks.recorded_eta = info.eta;
    marks.recorded_interval = info.interval;
  }
  marks.current_eta = document_->scheduleSettings().eta;
  marks.current_interval = document_->scheduleSettings().interval;
  DrawEtaIntervalSweep(plot_, *sweep, metric(), marks);
  headline_ =
      QString::fromStdString(EtaIntervalHeadline(*sweep, metric(), marks.recorded_eta, marks.recorded_interval));
  plot_->markDrawn();
}

}  // namespace accordion::gui
