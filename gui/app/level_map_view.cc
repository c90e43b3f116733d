#include "gui/app/level_map_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include "gui/app/plot_widget.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"

namespace accordion::gui {

LevelMapView::LevelMapView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      caption_(new QLabel(this)),
      group_(new QCheckBox(tr("Group by block"), this)),
      plot_(new PlotWidget("level-map", this)) {
  caption_->setWordWrap(true);
  caption_->setText(
      tr("The level Accordion picks for each layer in each epoch under the current settings: the low level "
         "(low compression, small batch) where the layer is critical, the high level elsewhere; the batch only "
         "grows. Low cells that change what a layer sends are the Regimes tab's shaded epochs. Hover a cell for "
         "its numbers."));
  group_->setObjectName("levelMapGroupByBlock");
  group_->setToolTip(
      tr("One row per block (the layer name up to its first '.'), at the low level where any of "
         "its layers is; the same setting as the Regimes tab's"));
  group_->setChecked(document_->groupByBlock());
  plot_->setMouseTracking(true);
  auto* top = new QHBoxLayout;
  top->addWidget(caption_, 1);
  top->addWidget(group_, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(plot_, 1);
  connect(group_, &QCheckBox::toggled, document_, &ExplorerDocument::setGroupByBlock);

  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const QString tip = tooltipAt(event->pos());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(event->globalPosition().toPoint(), tip, plot_);
  });
  connect(document_, &ExplorerDocument::regimesChanged, this, &LevelMapView::redrawWhenSeen);
  connect(document_, &ExplorerDocument::groupByBlockChanged, this, [this] {
    const QSignalBlocker block(group_);
    group_->setChecked(document_->groupByBlock());
    redrawWhenSeen();
  });
  redraw();
}

QString LevelMapView::tooltipAt(const QPoint& pos) const {
  const auto run = document_->currentRun();
  const auto analysis = document_->regimes();
  if (!run || !analysis || !analysis->schedulable || !plot_->xAxis || !plot_->yAxis) return {};
  if (!plot_->axisRect()->rect().contains(pos)) return {};
  int epoch = -1;
  int layer = -1;
  const bool grouped = document_->groupByBlock();
  if (!LevelMapCellAt(*run, plot_->xAxis->pixelToCoord(pos.x()), plot_->yAxis->pixelToCoord(pos.y()), &epoch, &layer,
                      grouped)) {
    return {};
  }
  return LevelMapTooltip(*run, *analysis, epoch, layer, grouped);
}

void LevelMapView::redrawWhenSeen() {
  // Only a tab hidden in a shown window waits; without a window on screen
  // (tests, exports) the map stays current.
  if (!isVisible() && window()->isVisible()) {
    stale_ = true;
    return;
  }
  redraw();
}

void LevelMapView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) redraw();
}

void LevelMapView::redraw() {
  stale_ = false;
  const auto run = document_->currentRun();
  const auto analysis = document_->regimes();
  if (!run || !analysis) {
    plot_->showMessage(tr("No run open"));
    return;
  }
  if (!analysis->schedulable) {
    plot_->showMessage(tr("No schedule: %1").arg(QString::fromStdString(analysis->problem)));
    return;
  }
  DrawLevelMap(plot_, *run, *analysis, document_->groupByBlock());
  plot_->markDrawn();
}

}  // namespace accordion::gui
