#include "gui/app/timeline_view.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "gui/app/export_check.h"
#include "gui/app/plot_widget.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"
#include "simulator/timeline.h"

namespace accordion::gui {

TimelineView::TimelineView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      epoch_(new QSpinBox(this)),
      export_(new QPushButton(tr("Export Perfetto JSON…"), this)),
      caption_(new QLabel(this)),
      plot_(new PlotWidget("iteration-timeline", this)) {
  epoch_->setObjectName("timelineEpoch");
  epoch_->setPrefix(tr("epoch "));
  epoch_->setRange(0, 0);
  epoch_->setToolTip(tr("The epoch whose simulated iteration is drawn"));
  export_->setObjectName("exportPerfetto");
  export_->setToolTip(tr("Chrome trace-event JSON: open it in ui.perfetto.dev or chrome://tracing"));
  caption_->setWordWrap(true);

  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Iteration of"), this));
  row->addWidget(epoch_);
  row->addWidget(caption_, 1);
  row->addWidget(export_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(row);
  layout->addWidget(plot_, 1);

  connect(epoch_, &QSpinBox::valueChanged, this, &TimelineView::redraw);
  connect(export_, &QPushButton::clicked, this, &TimelineView::exportWithDialog);
  connect(document_, &ExplorerDocument::currentRunChanged, this, &TimelineView::redraw);
  connect(document_, &ExplorerDocument::estimateChanged, this, &TimelineView::redraw);
  connect(document_, &ExplorerDocument::simulationFinished, this, &TimelineView::redraw);
  redraw();
}

void TimelineView::redraw() {
  const auto run = document_->currentRun();
  if (!run) {
    epoch_->setEnabled(false);
    export_->setEnabled(false);
    caption_->clear();
    plot_->showMessage(tr("No run open"));
    return;
  }
  const int epochs = run->view().num_epochs();
  {
    const QSignalBlocker block(epoch_);
    epoch_->setRange(0, std::max(0, epochs - 1));
    // A new run starts at the epoch it measured, so both tracks compare.
    if (run->path != shown_run_ && run->measured_iteration) {
      epoch_->setValue(std::min(run->measured_iteration->record.epoch, epoch_->maximum()));
    }
    shown_run_ = run->path;
  }
  epoch_->setEnabled(epochs > 0);
  const auto projection = document_->projection();
  export_->setEnabled(projection != nullptr);
  QStringList parts;
  if (run->measured_iteration) {
    parts << tr("measured: epoch %1, step %2 (rank 0)")
                 .arg(run->measured_iteration->record.epoch)
                 .arg(run->measured_iteration->record.iteration);
  } else {
    parts << tr("the trace has no measured iteration");
  }
  if (projection) {
    parts << tr("simulated: %1 on %2")
                 .arg(projection->timing == sim::TimingSource::kSimulate ? tr("SimGrid") : tr("α–β estimate"),
                      QString::fromStdString(projection->result.platform));
  } else if (!document_->projectionProblem().isEmpty()) {
    parts << tr("no simulation: %1").arg(document_->projectionProblem());
  }
  caption_->setText(parts.join(QStringLiteral(" · ")));
  if (!projection && !run->measured_iteration) {
    plot_->showMessage(document_->projectionProblem().isEmpty() ? tr("Estimating…") : document_->projectionProblem());
    return;
  }
  DrawIterationTimeline(plot_, *run, projection.get(), epoch_->value());
  // Tracks are categories, not a scale: the wheel and a drag move in time only.
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->markDrawn();
}

bool TimelineView::exportPerfetto(const QString& path, QString* error) const {
  const ExportClaim claim(path, error);
  if (!claim.ok()) return false;
  const auto run = document_->currentRun();
  const auto projection = document_->projection();
  if (!run || !projection) {
    *error = tr("no projection of the current run to export");
    return false;
  }
  std::string text;
  try {
    const sim::MeasuredIteration* measured = run->measured_iteration ? &*run->measured_iteration : nullptr;
    text = sim::IterationTimeline(projection->result, epoch_->value(), measured).dump(1);
  } catch (const std::exception& e) {
    *error = QString::fromUtf8(e.what());
    return false;
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !file.commit()) {
    *error = tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

void TimelineView::exportWithDialog() {
  QSettings settings;
  const QString dir = settings.value("export/lastDir", QDir::homePath()).toString();
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export Perfetto JSON"), dir + QStringLiteral("/timeline-epoch-%1.json").arg(epoch_->value()),
      tr("Trace-event JSON (*.json);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue("export/lastDir", QFileInfo(path).absolutePath());
  QString error;
  if (!exportPerfetto(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

}  // namespace accordion::gui
