#include "gui/app/compare_view.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>

#include "analysis/results_table.h"
#include "gui/app/plot_widget.h"
#include "gui/app/run_list_view.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "gui/model/run_comparison.h"
#include "traces/policy_description.h"

namespace accordion::gui {

namespace {

struct TableJob {
  std::vector<ResultsRow> rows;
  QString error;
};

QTableWidgetItem* Cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

// "—" where no run recorded it (n 0: a test accuracy the runs left out).
QString WithCi(const MeanCi& m, const QString& text, const QString& half) {
  if (m.n == 0) return QStringLiteral("—");
  return m.has_ci() ? QStringLiteral("%1 ± %2").arg(text, half) : text;
}

}  // namespace

CompareView::CompareView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      by_epoch_(new PlotWidget("accuracy-by-epoch", this)),
      by_floats_(new PlotWidget("accuracy-by-floats", this)),
      table_(new QTableWidget(this)),
      metric_(new QComboBox(this)),
      smoothing_(new QComboBox(this)),
      baseline_(new QComboBox(this)),
      status_(new QLabel(this)),
      warning_(new QLabel(this)),
      refresh_timer_(new QTimer(this)) {
  table_->setObjectName("resultsTable");
  table_->setColumnCount(12);
  table_->setHorizontalHeaderLabels({tr("Model"), tr("Dataset"), tr("Workers"), tr("Setting"), tr("Runs"),
                                     tr("Accuracy"), tr("Floats sent"), tr("Floats ratio"), tr("vs dense"), tr("Time"),
                                     tr("Time ratio"), tr("vs dense")});
  table_->horizontalHeaderItem(4)->setToolTip(
      tr("Runs of this setting (seeds): the same model, data, workers, epochs, global batch, LR schedule, scheme, "
         "policy and levels"));
  table_->horizontalHeaderItem(5)->setToolTip(
      tr("Final test accuracy: the mean, ± its 95 % confidence interval from %1 runs on").arg(MeanCi::kMinRunsForCi));
  table_->horizontalHeaderItem(7)->setToolTip(
      tr("The scheme's setting that sends the most (same training), divided by this row's: the paper's ratio"));
  const QString vs_baseline =
      tr("The baseline's (Baseline above: dense unless another run is pinned), same training, "
         "divided by this row's (— where the training has no baseline open)");
  table_->horizontalHeaderItem(8)->setToolTip(vs_baseline);
  table_->horizontalHeaderItem(11)->setToolTip(vs_baseline);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setStretchLastSection(false);
  status_->setObjectName("compareStatus");
  status_->setWordWrap(true);
  warning_->setObjectName("compareWarning");
  warning_->setWordWrap(true);
  warning_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Dark red on a pale band: seen at a glance, readable in print.
  warning_->setStyleSheet(
      "QLabel { color: #8a1c1c; background: #fdecea; border: 1px solid #e6b8b3; border-radius: 3px; padding: 3px 6px; "
      "font-weight: bold; }");
  warning_->setToolTip(
      tr("Accuracy, floats and time of different models, datasets or cluster sizes are not like for "
         "like: compare within a model, dataset and number of workers"));
  warning_->hide();
  refresh_timer_->setSingleShot(true);
  refresh_timer_->setInterval(50);
  connect(refresh_timer_, &QTimer::timeout, this, &CompareView::refresh);

  metric_->setObjectName("compareMetricCombo");
  for (CompareMetric m : {CompareMetric::kTestAccuracy, CompareMetric::kTrainLoss, CompareMetric::kThroughput}) {
    metric_->addItem(tr(ToString(m)), static_cast<int>(m));
  }
  metric_->setToolTip(
      tr("What the plots draw per epoch. Test accuracy where no checked run recorded one (the "
         "Python hook's default) draws the training loss, which every run records."));
  connect(metric_, &QComboBox::currentIndexChanged, this, &CompareView::scheduleRefresh);
  auto* metric_row = new QHBoxLayout;
  metric_row->addWidget(new QLabel(tr("Plot"), this));
  metric_row->addWidget(metric_);
  // Smoothing in sight, not only in the plots' right-click menu: noisy
  // per-epoch curves are what Compare is read for.
  smoothing_->setObjectName("compareSmoothingCombo");
  for (double weight : PlotWidget::smoothingWeights()) {
    smoothing_->addItem(weight > 0 ? QString::number(weight) : tr("off"), weight);
  }
  smoothing_->setToolTip(
      tr("Exponential moving average of the curves (TensorBoard's): the raw points stay drawn faintly behind"));
  connect(smoothing_, &QComboBox::currentIndexChanged, this, [this] {
    const double weight = smoothing_->currentData().toDouble();
    by_epoch_->setSmoothing(weight);
    by_floats_->setSmoothing(weight);
  });
  metric_row->addSpacing(16);
  metric_row->addWidget(new QLabel(tr("Smoothing"), this));
  metric_row->addWidget(smoothing_);
  baseline_->setObjectName("compareBaselineCombo");
  baseline_->setToolTip(
      tr("What the table's \"vs\" columns divide by: dense of the same training by default, or "
         "the setting of a run you pin (rows of another training keep dense)"));
  baseline_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(baseline_, &QComboBox::activated, this, &CompareView::scheduleRefresh);
  metric_row->addSpacing(16);
  metric_row->addWidget(new QLabel(tr("Baseline"), this));
  metric_row->addWidget(baseline_);
  metric_row->addStretch(1);
  auto* plots = new QSplitter(Qt::Horizontal, this);
  plots->addWidget(by_epoch_);
  plots->addWidget(by_floats_);
  plots->setChildrenCollapsible(false);
  plots->setSizes({500, 500});
  auto* bottom = new QWidget(this);
  auto* bottom_layout = new QVBoxLayout(bottom);
  bottom_layout->setContentsMargins(0, 0, 0, 0);
  bottom_layout->addWidget(status_);
  bottom_layout->addWidget(table_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plots);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);
  // The table's size hint grows with its columns, not its rows: without a
  // floor, a few runs left the plots squashed under a mostly empty table.
  plots->setMinimumHeight(320);
  split->setSizes({600, 300});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(warning_);
  layout->addLayout(metric_row);
  layout->addWidget(split, 1);

  connect(document_, &ExplorerDocument::runsChanged, this, &CompareView::scheduleRefresh);
  connect(document_, &ExplorerDocument::comparedChanged, this, &CompareView::scheduleRefresh);
  connect(document_, &ExplorerDocument::liveRunUpdated, this, [this] {
    table_paths_.clear();  // the files changed: read them again
    scheduleRefresh();
  });
  refresh();
}

void CompareView::scheduleRefresh() { refresh_timer_->start(); }

void CompareView::refresh() {
  refresh_timer_->stop();
  const auto runs = document_->comparedRuns();
  const QString caveat = QString::fromStdString(ComparisonCaveat(runs));
  warning_->setText(QStringLiteral("⚠ ") + caveat);
  warning_->setVisible(!caveat.isEmpty());
  if (runs.empty()) {
    const QString text = document_->runCount() == 0 ? tr("No run open") : tr("No run checked in the run list");
    by_epoch_->showMessage(text);
    by_floats_->showMessage(text);
  } else {
    // Each run in its setting's colour, the run list's swatch, whichever are checked.
    std::vector<int> colours;
    for (int i = 0; i < document_->runCount(); ++i) {
      if (document_->isCompared(i)) colours.push_back(document_->colourOf(i));  // as comparedRuns() lists them
    }
    CompareMetric metric = static_cast<CompareMetric>(metric_->currentData().toInt());
    // No test accuracy to show: the loss every run records, not two empty plots.
    if (metric == CompareMetric::kTestAccuracy && !AnyRecorded(runs, metric)) metric = CompareMetric::kTrainLoss;
    DrawAccuracyComparison(by_epoch_, runs, CompareAxis::kEpoch, colours, metric);
    DrawAccuracyComparison(by_floats_, runs, CompareAxis::kFloats, colours, metric);
    by_epoch_->markDrawn();
    by_floats_->markDrawn();
  }

  std::vector<std::string> paths;
  for (const auto& run : runs) paths.push_back(run->path);
  const std::string baseline = listBaselines(runs);
  if (paths == table_paths_ && baseline == table_baseline_) return;
  table_paths_ = paths;
  table_baseline_ = baseline;
  const uint64_t generation = ++generation_;
  if (paths.empty()) {
    showTable(generation, {}, QString());
    return;
  }
  // Reading every trace again takes a moment with many runs.
  loading_ = true;
  status_->setText(tr("Building the results table…"));
  auto* watcher = new QFutureWatcher<TableJob>(this);
  connect(watcher, &QFutureWatcher<TableJob>::finished, this, [this, watcher, generation] {
    const TableJob job = watcher->result();
    watcher->deleteLater();
    showTable(generation, job.rows, job.error);
  });
  watcher->setFuture(QtConcurrent::run([paths, baseline] {
    TableJob job;
    try {
      job.rows = BuildResultsTable(paths, ResultsTableOptions().baseline(baseline));
    } catch (const std::exception& e) {
      job.error = QString::fromUtf8(e.what());
    }
    return job;
  }));
}

std::string CompareView::listBaselines(const std::vector<std::shared_ptr<const RunData>>& runs) {
  const QString pinned = baseline_->currentData().toString();
  const QSignalBlocker block(baseline_);
  baseline_->clear();
  baseline_->addItem(tr("dense (default)"), QString());
  for (const auto& run : runs) {
    baseline_->addItem(QString::fromStdString(run->summary.name), QString::fromStdString(run->path));
  }
  const int kept = baseline_->findData(pinned);
  baseline_->setCurrentIndex(kept >= 0 ? kept : 0);
  return baseline_->currentData().toString().toStdString();
}

void CompareView::showTable(uint64_t generation, const std::vector<ResultsRow>& rows, const QString& error) {
  if (generation != generation_) return;  // a newer request is on its way
  loading_ = false;
  table_->setRowCount(static_cast<int>(rows.size()));
  int incomplete = 0;
  double longest = 0;
  for (const ResultsRow& r : rows) longest = std::max(longest, r.seconds.mean);
  const TimeColumn time_column(longest);
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const ResultsRow& r = rows[static_cast<size_t>(i)];
    incomplete += r.incomplete;
    auto* setting = Cell(QString::fromStdString(r.setting) + (r.is_baseline ? tr(" (baseline)") : QString()), false);
    QStringList traces;
    for (const std::string& t : r.traces) traces << QString::fromStdString(t);
    setting->setToolTip(traces.join('\n'));
    if (DescriptionOf(r.policy).critical_regimes) {  // the paper's policy stands out
      QFont bold = setting->font();
      bold.setBold(true);
      setting->setFont(bold);
    }
    // "—" where the traces hold no row to divide by.
    auto vs_dense = [](const std::optional<double>& ratio) {
      return ratio ? style::Times(*ratio) : QStringLiteral("—");
    };
    table_->setItem(i, 0, Cell(QString::fromStdString(r.model), false));
    table_->setItem(i, 1, Cell(QString::fromStdString(r.dataset), false));
    table_->setItem(i, 2, Cell(QString::number(r.workers), true));
    table_->setItem(i, 3, setting);
    QString runs = QString::number(r.traces.size());
    if (r.incomplete > 0) runs += tr(" (%1 incomplete)").arg(r.incomplete);
    table_->setItem(i, 4, Cell(runs, true));
    table_->setItem(i, 5,
                    Cell(WithCi(r.accuracy, QString::number(r.accuracy.mean * 100, 'f', 2) + " %",
                                QString::number(r.accuracy.half_width * 100, 'f', 2)),
                         true));
    table_->setItem(i, 6, Cell(WithCi(r.floats, FormatFloats(r.floats.mean), FormatFloats(r.floats.half_width)), true));
    table_->setItem(i, 7, Cell(vs_dense(r.floats_ratio), true));
    table_->setItem(i, 8, Cell(vs_dense(r.floats_vs_baseline), true));
    table_->setItem(
        i, 9,
        Cell(WithCi(r.seconds, time_column.Format(r.seconds.mean), time_column.Format(r.seconds.half_width)), true));
    table_->setItem(i, 10, Cell(vs_dense(r.seconds_ratio), true));
    table_->setItem(i, 11, Cell(vs_dense(r.seconds_vs_baseline), true));
  }
  const QString vs = tr("vs %1").arg(QString::fromStdString(BaselineHeader(rows)));
  table_->horizontalHeaderItem(8)->setText(vs);
  table_->horizontalHeaderItem(11)->setText(vs);
  table_->resizeColumnsToContents();
  // The setting names the row: it gets the spare width, not the last column.
  table_->horizontalHeader()->resizeSection(3, table_->horizontalHeader()->sectionSize(3) + 60);
  if (!error.isEmpty()) {
    status_->setText(tr("Results table: %1").arg(error));
  } else if (rows.empty()) {
    status_->setText(tr("Check runs in the run list to tabulate them."));
  } else {
    status_->setText(tr("Final accuracy, floats sent per worker and wall time per setting (runs of one training "
                        "and setting; n under Runs); mean, ± 95 % CI from 3 runs on; ratios against the scheme's "
                        "setting that sends the most, and against the baseline (dense unless one is pinned).%1")
                         .arg(incomplete > 0 ? tr(" %1 run(s) not complete.").arg(incomplete) : QString()));
  }
}

}  // namespace accordion::gui
