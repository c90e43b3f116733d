#include "gui/app/policies_view.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <string>

#include "gui/app/plot_widget.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "simulator/topology_description.h"
#include "traces/policy_description.h"

namespace accordion::gui {

namespace {

// "AdaQS: the compression halves as the gradients' MSDR falls": the
// literature policy compared with Accordion on `scheme` and what it does.
QString BaselineCaption(Scheme scheme) {
  const std::optional<Policy> baseline = BaselinePolicyFor(scheme);
  if (!baseline) return QString();
  const PolicyDescription& d = DescriptionOf(*baseline);
  return QCoreApplication::translate("Policy", d.title) + ": " + QCoreApplication::translate("Policy", d.explanation);
}

QString Cluster(const WhatIfSettings& w) {
  const QString where =
      !w.platform_file.empty()
          ? QObject::tr("the platform file %1").arg(QFileInfo(QString::fromStdString(w.platform_file)).fileName())
          : QObject::tr("%1 Gb/s, %2").arg(w.bandwidth_gbps).arg(sim::ToString(w.topology));
  return QObject::tr("%1 workers, %2").arg(w.workers).arg(where);
}

// The model's headers over two lines where they are wider than their numbers.
QString HeaderText(const std::string& header) {
  static const std::map<std::string, QString> kTwoLines = {
      {"floats / worker", "floats /\nworker"},   {"vs static low", "vs static\nlow"},
      {"error (critical)", "error\n(critical)"}, {"level changes", "level\nchanges"},
      {"projected time", "projected\ntime"},     {"speedup vs static low", "speedup vs\nstatic low"},
      {"error", "error\n(all epochs)"}};
  const auto it = kTwoLines.find(header);
  if (it != kTwoLines.end()) return it->second;
  QString text = QString::fromStdString(header);
  // "floats / worker at 64 workers"
  return text.replace(" at ", "\nat ");
}

QTableWidgetItem* Cell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  item->setTextAlignment(number ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
  return item;
}

QString Escaped(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

}  // namespace

PoliciesView::PoliciesView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      caption_(new QLabel(this)),
      status_(new QLabel(this)),
      verdict_(new QLabel(this)),
      table_(new QTableWidget(this)),
      notes_(new QLabel(this)),
      cli_(new QLabel(this)),
      plot_(new PlotWidget("policies", this)) {
  caption_->setWordWrap(true);
  status_->setObjectName("policiesStatus");
  status_->setWordWrap(true);
  verdict_->setObjectName("policiesVerdict");
  verdict_->setWordWrap(true);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdict_->hide();
  table_->setObjectName("policiesTable");
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setFocusPolicy(Qt::NoFocus);
  table_->setAlternatingRowColors(true);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed);
  notes_->setObjectName("policiesNotes");
  notes_->setWordWrap(true);
  notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cli_->setObjectName("policiesCli");
  cli_->setWordWrap(true);
  cli_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(std::max(7.0, font().pointSizeF() - 1));
  cli_->setFont(mono);
  plot_->setMinimumHeight(260);

  // The table and its notes scroll in a short window; the figure keeps its height.
  auto* top = top_ = new QWidget(this);
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addWidget(verdict_);
  top_layout->addWidget(table_, 0, Qt::AlignLeft);
  top_layout->addWidget(notes_);
  top_layout->addWidget(cli_);
  top_layout->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setObjectName("policiesTableArea");
  scroll->setWidget(top);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setMinimumHeight(120);
  auto* split = split_ = new QSplitter(Qt::Vertical, this);
  split->addWidget(scroll);
  split->addWidget(plot_);
  split->setChildrenCollapsible(false);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({300, 450});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  // The comparison depends on the run, every schedule setting and the cluster.
  for (auto signal : {&ExplorerDocument::currentRunChanged, &ExplorerDocument::runsChanged,
                      &ExplorerDocument::scheduleSettingsChanged, &ExplorerDocument::whatIfSettingsChanged}) {
    connect(document_, signal, this, &PoliciesView::refresh);
  }
  connect(document_, &ExplorerDocument::policiesChanged, this, [this] {
    if (isVisible()) redraw();
  });
  redraw();
}

void PoliciesView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();
}

void PoliciesView::refresh() {
  // Unseen, it neither computes nor draws: showEvent catches up.
  if (!isVisible()) return;
  document_->requestPolicies();
  redraw();
}

void PoliciesView::redraw() {
  const auto run = document_->currentRun();
  if (!run) {
    caption_->setText(tr("Accordion against the other policies that choose levels: AdaQS and Smith et al."));
    status_->clear();
    status_->hide();
    clearTable();
    cli_->clear();
    plot_->showMessage(tr("No run open"));
    return;
  }
  showCaption(*run);

  const auto table = document_->policies();
  if (!table) {
    status_->setText(document_->policiesRunning() ? tr("Deriving the policies' schedules and projecting them…")
                                                  : QString());
    status_->setVisible(!status_->text().isEmpty());
    // Keep the last table while the next one is on its way (milliseconds).
    if (table_->rowCount() == 0) plot_->showMessage(tr("Deriving the policies' schedules…"));
    return;
  }
  status_->clear();
  status_->hide();
  if (!table->comparable) {
    status_->setText(tr("No comparison: %1").arg(QString::fromStdString(table->problem)));
    status_->show();
    clearTable();
    plot_->showMessage(QString::fromStdString(table->problem));
    return;
  }
  // The accuracy each setting reached where an open run recorded it.
  std::vector<std::shared_ptr<const RunData>> open;
  for (int i = 0; i < document_->runCount(); ++i) open.push_back(document_->run(i));
  fillTable(WithRecordedAccuracy(*table, *run, open));
  const std::string verdict = PolicyVerdict(*table);
  verdict_->setText("<b>" + Escaped(verdict) + "</b>");
  verdict_->setVisible(!verdict.empty());
  showNotes(*table);
  DrawPolicyComparison(plot_, *table);
  plot_->markDrawn();
  fitSplit();
}

void PoliciesView::clearTable() {
  verdict_->clear();
  verdict_->hide();
  table_->clear();
  table_->setRowCount(0);
  table_->setColumnCount(0);
  notes_->clear();
}

void PoliciesView::showCaption(const RunData& run) {
  const ScheduleSettings& s = document_->scheduleSettings();
  const WhatIfSettings& w = document_->whatIfSettings();
  const ResolvedSchedule r = Resolve(run.view().run, s);
  caption_->setText(
      tr("%1 under each policy, re-derived from the signals the run recorded (Accordion at η %2, %3; %4). Times: "
         "α–β estimate on the What-if tab's cluster (%5).%6")
          .arg(QString::fromStdString(run.summary.name))
          .arg(s.eta)
          .arg(s.interval == 1 ? tr("a check every epoch") : tr("a check every %1 epochs").arg(s.interval))
          .arg(BaselineCaption(r.scheme), Cluster(w),
               InSet(DescriptionOf(r.scheme), SchemeSet::kCompressing)
                   ? tr(" Error: the measured compression error at the chosen levels, a proxy, not an accuracy.")
                   : QString()));
  cli_->setText(QStringLiteral("accordion-sim compare-policies %1 %2")
                    .arg(QFileInfo(QString::fromStdString(run.path)).fileName(),
                         QString::fromStdString(CliFlagsOf(s, w, sim::TimingSource::kAnalytic))));
  cli_->setToolTip(tr("The same table from the command line. Trace: %1").arg(QString::fromStdString(run.path)));
}

void PoliciesView::fillTable(const PolicyTable& table) {
  const std::vector<std::string> headers = PolicyTableHeaders(table);
  const std::vector<std::string> help = PolicyColumnHelp(table);
  const std::vector<std::vector<std::string>> cells = PolicyTableCells(table);
  table_->clear();
  table_->setColumnCount(static_cast<int>(headers.size()));
  table_->setRowCount(static_cast<int>(cells.size()));
  for (size_t c = 0; c < headers.size(); ++c) {
    auto* header = new QTableWidgetItem(HeaderText(headers[c]));
    header->setToolTip(QString::fromStdString(help[c]));
    table_->setHorizontalHeaderItem(static_cast<int>(c), header);
  }
  const std::vector<const PolicyRow*> rows = table.AllRows();
  for (size_t i = 0; i < cells.size(); ++i) {
    const PolicyRow& row = *rows[i];
    for (size_t c = 0; c < cells[i].size(); ++c) {
      QTableWidgetItem* item = Cell(QString::fromStdString(cells[i][c]), c > 0);
      if (row.name == "accordion") {
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
      }
      table_->setItem(static_cast<int>(i), static_cast<int>(c), item);
    }
  }
  // A column no row has a value in (the error proxy of a batch run, which
  // has no compression error) is left out: the header's tooltip says why.
  const std::vector<bool> empty = EmptyPolicyColumns(cells);
  for (int c = 0; c < table_->columnCount(); ++c) {
    table_->setColumnHidden(c, static_cast<size_t>(c) < empty.size() && empty[static_cast<size_t>(c)]);
  }
  fitTable();
}

void PoliciesView::showNotes(const PolicyTable& table) {
  // What the table leaves out, and the replay's warnings, under it; every
  // note of the replay in the tooltip, as accordion-sim prints them.
  QStringList shown, all;
  for (const std::string& note : table.comparison.notes) shown << Escaped(note);
  if (!table.break_even_problem.empty()) {
    shown << tr("No break-even rate: %1").arg(Escaped(table.break_even_problem));
  }
  if (!table.projection_problem.empty()) {
    shown << tr("<span style='color:#b35c00'><b>Not projected:</b> %1</span>").arg(Escaped(table.projection_problem));
  }
  if (table.replay) {
    for (const std::string& note : table.replay->notes) {
      all << Escaped(note);
      if (note.rfind("warning: ", 0) == 0) {
        shown << tr("<span style='color:#b35c00'><b>Warning:</b> %1</span>").arg(Escaped(note.substr(9)));
      }
    }
  }
  if (!all.isEmpty())
    shown << tr("<span style='color:#666'>%n note(s) of the replay: hover here.</span>", "",
                static_cast<int>(all.size()));
  for (QString& line : shown) {
    if (!line.contains("hover here")) line = "• " + line;
  }
  notes_->setText(shown.join("<br>"));
  notes_->setToolTip(all.isEmpty() ? QString() : "<p>" + all.join("</p><p>") + "</p>");
}

void PoliciesView::fitSplit() {
  // The table and its notes as tall as they are (the figure takes the
  // rest), when that changes: a height the person dragged to stays.
  top_->layout()->activate();
  const int wanted = top_->sizeHint().height() + 2;
  if (wanted == fitted_height_) return;
  fitted_height_ = wanted;
  const int total = split_->height() - split_->handleWidth();
  if (total <= 0) return;
  const int top = std::min(wanted, std::max(split_->widget(0)->minimumHeight(), total - plot_->minimumHeight()));
  split_->setSizes({top, total - top});
}

void PoliciesView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitted_height_ = -1;
  fitSplit();
}

void PoliciesView::fitTable() {
  // Every cell whole: as wide and as tall as its contents, the area above
  // the figure scrolls where the window is smaller.
  table_->resizeColumnsToContents();
  int width = 2 * table_->frameWidth();
  for (int c = 0; c < table_->columnCount(); ++c) {
    if (table_->isColumnHidden(c)) continue;
    const QAbstractItemView* view = table_;
    const int needed = std::max(view->sizeHintForColumn(c), table_->horizontalHeader()->sectionSizeHint(c));
    width += needed;
  }
  int height = 2 * table_->frameWidth() + table_->horizontalHeader()->sizeHint().height();
  for (int r = 0; r < table_->rowCount(); ++r) height += table_->rowHeight(r);
  table_->setFixedSize(width, height);
}

}  // namespace accordion::gui
