#include "gui/app/run_list_view.h"

#include <QAction>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gui/figures/figure_style.h"
#include "gui/model/explorer_document.h"
#include "gui/model/trace_folder.h"

namespace accordion::gui {

namespace {

QTableWidgetItem* Cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

bool NumericColumn(int column) {
  return column == RunListView::kWorkers || column == RunListView::kEpochs || column == RunListView::kAccuracy ||
         column == RunListView::kFloats || column == RunListView::kTime;
}

// What a numeric column sorts by: the number behind the cell's text ("12.4
// M" floats, "3 min 05 s"), never the text.
double NumberOf(const RunSummary& s, int column) {
  switch (column) {
    case RunListView::kWorkers:
      return s.workers;
    case RunListView::kEpochs:
      return s.epochs + s.epochs_planned * 1e-6;  // then by the epochs planned
    case RunListView::kAccuracy:
      // No epoch yet, or none recorded: below every accuracy.
      return s.epochs > 0 && Recorded(s.final_test_acc) ? s.final_test_acc : -1;
    case RunListView::kFloats:
      return s.floats_sent;
    case RunListView::kTime:
      return s.seconds;
    default:
      return 0;
  }
}

QString TextOf(const RunSummary& s, int column) {
  switch (column) {
    case RunListView::kName:
      return QString::fromStdString(s.name);
    case RunListView::kModel:
      return QString::fromStdString(s.model);
    case RunListView::kDataset:
      return QString::fromStdString(s.dataset);
    case RunListView::kScheme:
      return QString::fromStdString(s.scheme);
    case RunListView::kPolicy:
      return QString::fromStdString(s.policy);
    case RunListView::kLevels:
      return QString::fromStdString(s.levels);
    default:
      return {};
  }
}

}  // namespace

QString FormatFloats(double floats) {
  const double a = std::fabs(floats);
  if (a >= 1e12) return QString::number(floats / 1e12, 'f', 2) + " T";
  if (a >= 1e9) return QString::number(floats / 1e9, 'f', 2) + " G";
  if (a >= 1e6) return QString::number(floats / 1e6, 'f', 1) + " M";
  if (a >= 1e3) return QString::number(floats / 1e3, 'f', 1) + " k";
  return QString::number(floats, 'g', 3);
}

QString FormatSeconds(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return QStringLiteral("–");
  if (seconds < 1) return QString::number(seconds * 1e3, 'f', 1) + " ms";
  if (seconds < 120) return QString::number(seconds, 'f', 1) + " s";
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 3600 * 2) return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60, 2, 10, QChar('0'));
  if (total < 86400 * 2)
    return QStringLiteral("%1 h %2 min").arg(total / 3600).arg(total % 3600 / 60, 2, 10, QChar('0'));
  return QString::number(seconds / 86400, 'f', 1) + " days";
}

TimeColumn::TimeColumn(double largest) : unit_(QStringLiteral("s")) {
  const double a = std::isfinite(largest) ? std::fabs(largest) : 0;
  if (a >= 7200) {
    scale_ = 3600;
    unit_ = QStringLiteral("h");
  } else if (a > 0 && a < 1e-3) {
    scale_ = 1e-6;
    unit_ = QStringLiteral("µs");
  } else if (a > 0 && a < 1) {
    scale_ = 1e-3;
    unit_ = QStringLiteral("ms");
  }
  const double in_unit = a / scale_;
  decimals_ = in_unit > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(in_unit))), 0, 3) : 1;
}

QString TimeColumn::Format(double seconds) const {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return QStringLiteral("–");
  return QString::number(seconds / scale_, 'f', decimals_) + " " + unit_;
}

QString FormatEpochs(const RunSummary& summary) {
  QString text = QStringLiteral("%1/%2").arg(summary.epochs).arg(summary.epochs_planned);
  if (summary.status == "running")
    text += QStringLiteral(" ● live");
  else if (summary.status != "complete")
    text += QStringLiteral(" (%1)").arg(QString::fromStdString(summary.status));
  return text;
}

RunListView::RunListView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      filter_(new QLineEdit(this)),
      folders_(new QLabel(this)),
      table_(new QTableWidget(this)) {
  filter_->setObjectName("runFilter");
  filter_->setPlaceholderText(tr("Filter runs: name, model, scheme, path…"));
  filter_->setClearButtonEnabled(true);
  filter_->setToolTip(tr("Keeps the runs whose name, model, dataset, scheme, policy or path contain this text"));
  folders_->setObjectName("runFolders");
  folders_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  folders_->hide();
  setUpTable();
  layOut();
  connectSignals();
  rebuild();
}

void RunListView::setUpTable() {
  table_->setObjectName("runTable");
  table_->setColumnCount(kColumnCount);
  table_->setHorizontalHeaderLabels({tr("Run"), tr("Model"), tr("Dataset"), tr("Scheme"), tr("Policy"),
                                     tr("Levels (low / high)"), tr("Workers"), tr("Epochs"), tr("Accuracy"),
                                     tr("Floats sent"), tr("Time")});
  table_->horizontalHeaderItem(kName)->setToolTip(tr("Checked runs are drawn in the Compare tab"));
  table_->horizontalHeaderItem(kFloats)->setToolTip(tr("Floats sent per worker over the finished epochs"));
  table_->horizontalHeaderItem(kAccuracy)->setToolTip(tr("Test accuracy after the last finished epoch"));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  // The run's name takes the spare width; the numbers keep theirs.
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->horizontalHeader()->setSectionResizeMode(kName, QHeaderView::Stretch);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->horizontalHeader()->setSectionsClickable(true);
  table_->horizontalHeader()->setSortIndicatorShown(false);
  connect(table_->horizontalHeader(), &QHeaderView::sectionClicked, this, &RunListView::headerClicked);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->setContextMenuPolicy(Qt::ActionsContextMenu);

  auto* close = new QAction(tr("Close run"), table_);
  close->setShortcut(QKeySequence::Delete);
  close->setShortcutContext(Qt::WidgetShortcut);
  connect(close, &QAction::triggered, this, [this] {
    const int run = runAt(table_->currentRow());
    if (run >= 0) emit closeRequested(run);
  });
  table_->addAction(close);
}

void RunListView::layOut() {
  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  // The filter as wide as a long run name, on the left; the folders line
  // takes the rest.
  filter_->setFixedWidth(filter_->fontMetrics().horizontalAdvance(QString(44, 'x')));
  top->addWidget(filter_);
  top->addWidget(folders_, 100);
  top->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
}

void RunListView::connectSignals() {
  connect(filter_, &QLineEdit::textChanged, this, [this] {
    applyFilter();
    // The current run filtered out: the rows shown from the top, not the
    // place it was scrolled to.
    const int current = rowOf(document_->currentIndex());
    if (current < 0 || table_->isRowHidden(current)) {
      table_->scrollToTop();
    } else if (QTableWidgetItem* item = table_->item(current, kName)) {
      table_->scrollToItem(item);
    }
  });
  connect(document_, &ExplorerDocument::runsChanged, this, &RunListView::rebuild);
  connect(document_, &ExplorerDocument::currentRunChanged, this, &RunListView::selectCurrent);
  connect(document_, &ExplorerDocument::liveRunUpdated, this, [this](int index) {
    if (index < 0 || index >= document_->runCount()) return;
    // A new epoch can move the run in a sorted list.
    if (sort_column_ >= 0) {
      rebuild();
      return;
    }
    const int row = rowOf(index);
    if (row >= 0) fillRow(row);
    fillTimeColumn();  // the run may now be the longest: the column's unit follows
    applyFilter();
  });
  connect(document_, &ExplorerDocument::comparedChanged, this, [this] {
    updating_ = true;
    for (int row = 0; row < table_->rowCount(); ++row) {
      if (QTableWidgetItem* item = table_->item(row, kName)) {
        item->setCheckState(document_->isCompared(runAt(row)) ? Qt::Checked : Qt::Unchecked);
      }
    }
    updating_ = false;
  });
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    if (updating_) return;
    const auto rows = table_->selectionModel()->selectedRows();
    if (rows.isEmpty()) return;
    const int run = runAt(rows.first().row());
    if (run >= 0 && run != document_->currentIndex()) document_->setCurrentRun(run);
  });
  connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (updating_ || item->column() != kName) return;
    const int run = runAt(item->row());
    const bool checked = item->checkState() == Qt::Checked;
    if (run < 0 || document_->isCompared(run) == checked) return;
    document_->setCompared(run, checked);
  });
}

int RunListView::runAt(int row) const {
  return row >= 0 && row < static_cast<int>(row_runs_.size()) ? row_runs_[static_cast<size_t>(row)] : -1;
}

int RunListView::rowOf(int run) const {
  const auto it = std::find(row_runs_.begin(), row_runs_.end(), run);
  return it == row_runs_.end() ? -1 : static_cast<int>(it - row_runs_.begin());
}

void RunListView::setWatchedFolders(const QStringList& folders) {
  QStringList shown;
  for (const QString& f : folders) shown << QDir::toNativeSeparators(f);
  folders_->setText(tr("Watching %1 for new traces").arg(shown.join(", ")));
  folders_->setToolTip(tr("Traces written under these folders (%1 levels of subfolders) join the list as they appear")
                           .arg(TraceFolder::kMaxDepth));
  folders_->setVisible(!folders.isEmpty());
}

void RunListView::headerClicked(int column) {
  // Ascending, descending, then the order opened again.
  if (column != sort_column_) {
    sortBy(column, Qt::AscendingOrder);
  } else if (sort_order_ == Qt::AscendingOrder) {
    sortBy(column, Qt::DescendingOrder);
  } else {
    sortBy(-1, Qt::AscendingOrder);
  }
}

void RunListView::sortBy(int column, Qt::SortOrder order) {
  sort_column_ = column >= 0 && column < kColumnCount ? column : -1;
  sort_order_ = order;
  QHeaderView* header = table_->horizontalHeader();
  header->setSortIndicatorShown(sort_column_ >= 0);
  if (sort_column_ >= 0) header->setSortIndicator(sort_column_, sort_order_);
  rebuild();
}

int RunListView::filterRowHeight() const { return filter_->sizeHint().height() + layout()->spacing(); }

int RunListView::visibleRowCount() const {
  int n = 0;
  for (int row = 0; row < table_->rowCount(); ++row) n += !table_->isRowHidden(row);
  return n;
}

void RunListView::applyFilter() {
  const QString needle = filter_->text().trimmed();
  for (int row = 0; row < table_->rowCount(); ++row) {
    const auto run = document_->run(runAt(row));
    bool match = needle.isEmpty();
    if (run && !match) {
      const RunSummary& s = run->summary;
      for (const std::string& field : {s.name, s.model, s.dataset, s.scheme, s.policy, run->path}) {
        if (QString::fromStdString(field).contains(needle, Qt::CaseInsensitive)) {
          match = true;
          break;
        }
      }
    }
    table_->setRowHidden(row, !match);
  }
}

void RunListView::rebuild() {
  // Rows in the order opened, or sorted (stable: equal keys keep that order).
  std::vector<int> order(static_cast<size_t>(document_->runCount()));
  std::iota(order.begin(), order.end(), 0);
  if (sort_column_ >= 0) {
    const int column = sort_column_;
    const bool numeric = NumericColumn(column);
    auto less = [this, column, numeric](int a, int b) {
      const RunSummary& x = document_->run(a)->summary;
      const RunSummary& y = document_->run(b)->summary;
      if (numeric) return NumberOf(x, column) < NumberOf(y, column);
      return TextOf(x, column).compare(TextOf(y, column), Qt::CaseInsensitive) < 0;
    };
    if (sort_order_ == Qt::AscendingOrder) {
      std::stable_sort(order.begin(), order.end(), less);
    } else {
      std::stable_sort(order.begin(), order.end(), [&less](int a, int b) { return less(b, a); });
    }
  }
  row_runs_ = order;
  updating_ = true;
  table_->setRowCount(document_->runCount());
  for (int row = 0; row < document_->runCount(); ++row) fillRow(row);
  fillTimeColumn();
  updating_ = false;
  applyFilter();
  table_->resizeColumnsToContents();
  selectCurrent();
}

void RunListView::fillTimeColumn() {
  double largest = 0;
  for (int i = 0; i < document_->runCount(); ++i) {
    if (const auto run = document_->run(i)) largest = std::max(largest, run->summary.seconds);
  }
  const TimeColumn column(largest);
  for (int row = 0; row < table_->rowCount(); ++row) {
    const auto run = document_->run(runAt(row));
    QTableWidgetItem* item = table_->item(row, kTime);
    if (run && item != nullptr) item->setText(column.Format(run->summary.seconds));
  }
}

void RunListView::fillRow(int row) {
  const int index = runAt(row);
  const auto run = document_->run(index);
  if (!run) return;
  const RunSummary& s = run->summary;
  const bool was_updating = updating_;
  updating_ = true;
  auto* name = Cell(QString::fromStdString(s.name), false);
  name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
  name->setCheckState(document_->isCompared(index) ? Qt::Checked : Qt::Unchecked);
  // The run's colour in every figure that draws several runs (Compare, the report).
  name->setData(Qt::DecorationRole, style::PaletteColor(document_->colourOf(index)));
  QString tip = QString::fromStdString(run->path);
  int seeds = 0;
  for (int i = 0; i < document_->runCount(); ++i) seeds += document_->colourOf(i) == document_->colourOf(index);
  if (seeds > 1) tip += tr("\nOne colour with the %n other open run(s) of its setting (seeds)", nullptr, seeds - 1);
  if (s.synthetic) tip += tr("\nSYNTHETIC: generated, no training produced it");
  if (!run->replayable) tip += tr("\nNo what-if: ") + QString::fromStdString(run->replay_problem);
  name->setToolTip(tip);
  if (s.synthetic) name->setText(name->text() + tr(" (synthetic)"));
  table_->setItem(row, kName, name);
  table_->setItem(row, kModel, Cell(QString::fromStdString(s.model), false));
  table_->setItem(row, kDataset, Cell(QString::fromStdString(s.dataset), false));
  table_->setItem(row, kScheme, Cell(QString::fromStdString(s.scheme), false));
  table_->setItem(row, kPolicy, Cell(QString::fromStdString(s.policy), false));
  table_->setItem(row, kLevels, Cell(QString::fromStdString(s.levels), false));
  table_->setItem(row, kWorkers, Cell(QString::number(s.workers), true));
  auto* epochs = Cell(FormatEpochs(s), true);
  if (s.status == "running") epochs->setForeground(QColor(0, 128, 0));
  table_->setItem(row, kEpochs, epochs);
  table_->setItem(row, kAccuracy,
                  Cell(s.epochs == 0                ? QString("–")
                       : Recorded(s.final_test_acc) ? QString::number(s.final_test_acc * 100, 'f', 2) + " %"
                                                    : QString("—"),  // the run recorded no test accuracy
                       true));
  table_->setItem(row, kFloats, Cell(FormatFloats(s.floats_sent), true));
  table_->setItem(row, kTime, Cell(FormatSeconds(s.seconds), true));
  updating_ = was_updating;
}

void RunListView::selectCurrent() {
  const int current = rowOf(document_->currentIndex());
  if (current == table_->currentRow() && (current < 0 || table_->selectionModel()->isRowSelected(current, {}))) {
    return;
  }
  updating_ = true;
  if (current >= 0 && current < table_->rowCount())
    table_->selectRow(current);
  else
    table_->clearSelection();
  updating_ = false;
}

}  // namespace accordion::gui
