#include "gui/app/run_list_view.h"

#include <QAction>
#include <QHeaderView>
#include <QKeySequence>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "gui/model/explorer_document.h"

namespace accordion::gui {

namespace {

QTableWidgetItem* Cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
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

QString FormatEpochs(const RunSummary& summary) {
  QString text = QStringLiteral("%1/%2").arg(summary.epochs).arg(summary.epochs_planned);
  if (summary.status == "running")
    text += QStringLiteral(" ● live");
  else if (summary.status != "complete")
    text += QStringLiteral(" (%1)").arg(QString::fromStdString(summary.status));
  return text;
}

RunListView::RunListView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), table_(new QTableWidget(this)) {
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
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->setContextMenuPolicy(Qt::ActionsContextMenu);

  auto* close = new QAction(tr("Close run"), table_);
  close->setShortcut(QKeySequence::Delete);
  close->setShortcutContext(Qt::WidgetShortcut);
  connect(close, &QAction::triggered, this, [this] {
    const int row = table_->currentRow();
    if (row >= 0) emit closeRequested(row);
  });
  table_->addAction(close);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_);

  connect(document_, &ExplorerDocument::runsChanged, this, &RunListView::rebuild);
  connect(document_, &ExplorerDocument::currentRunChanged, this, &RunListView::selectCurrent);
  connect(document_, &ExplorerDocument::liveRunUpdated, this, [this](int index) {
    if (index >= 0 && index < table_->rowCount() && index < document_->runCount()) fillRow(index);
  });
  connect(document_, &ExplorerDocument::comparedChanged, this, [this] {
    updating_ = true;
    for (int row = 0; row < table_->rowCount(); ++row) {
      if (QTableWidgetItem* item = table_->item(row, kName)) {
        item->setCheckState(document_->isCompared(row) ? Qt::Checked : Qt::Unchecked);
      }
    }
    updating_ = false;
  });
  connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
    if (updating_) return;
    const auto rows = table_->selectionModel()->selectedRows();
    if (!rows.isEmpty() && rows.first().row() != document_->currentIndex()) {
      document_->setCurrentRun(rows.first().row());
    }
  });
  connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (updating_ || item->column() != kName) return;
    const bool checked = item->checkState() == Qt::Checked;
    if (document_->isCompared(item->row()) == checked) return;
    document_->setCompared(item->row(), checked);
  });
  rebuild();
}

void RunListView::rebuild() {
  updating_ = true;
  table_->setRowCount(document_->runCount());
  for (int row = 0; row < document_->runCount(); ++row) fillRow(row);
  updating_ = false;
  table_->resizeColumnsToContents();
  selectCurrent();
}

void RunListView::fillRow(int row) {
  const auto run = document_->run(row);
  if (!run) return;
  const RunSummary& s = run->summary;
  const bool was_updating = updating_;
  updating_ = true;
  auto* name = Cell(QString::fromStdString(s.name), false);
  name->setFlags(name->flags() | Qt::ItemIsUserCheckable);
  name->setCheckState(document_->isCompared(row) ? Qt::Checked : Qt::Unchecked);
  QString tip = QString::fromStdString(run->path);
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
                  Cell(s.epochs > 0 ? QString::number(s.final_test_acc * 100, 'f', 2) + " %" : "–", true));
  table_->setItem(row, kFloats, Cell(FormatFloats(s.floats_sent), true));
  table_->setItem(row, kTime, Cell(FormatSeconds(s.seconds), true));
  updating_ = was_updating;
}

void RunListView::selectCurrent() {
  const int current = document_->currentIndex();
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
