#include "gui/app/regimes_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

#include "common/number_format.h"
#include "gui/app/plot_widget.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/model/explorer_document.h"

namespace accordion::gui {

namespace {

QString BandsText(const std::vector<Band>& bands) {
  if (bands.empty()) return QObject::tr("none");
  QStringList parts;
  for (const Band& b : bands) {
    parts << (b.first == b.last ? QString::number(b.first) : QStringLiteral("%1–%2").arg(b.first).arg(b.last));
  }
  return parts.join(", ");
}

}  // namespace

RegimesView::RegimesView(ExplorerDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      filter_(new QLineEdit(this)),
      layers_(new QListWidget(this)),
      group_(new QCheckBox(tr("Group by block"), this)),
      caption_(new QLabel(this)),
      norms_(new PlotWidget("gradient-norms", this)),
      ratios_(new PlotWidget("check-ratios", this)) {
  filter_->setObjectName("layerFilter");
  filter_->setPlaceholderText(tr("Filter layers…"));
  filter_->setClearButtonEnabled(true);
  layers_->setObjectName("layerList");
  layers_->setUniformItemSizes(true);
  group_->setObjectName("groupByBlock");
  group_->setToolTip(
      tr("List blocks instead of layers (a block: the layer name up to its first '.') here, in both plots and "
         "in the level map: a block's norm is the root-sum-square of its layers', its ratio the largest of theirs"));
  caption_->setObjectName("regimesCaption");
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* all = new QPushButton(tr("All"), this);
  auto* none = new QPushButton(tr("None"), this);
  all->setObjectName("layersAll");
  none->setObjectName("layersNone");
  all->setToolTip(tr("Check every layer the filter shows"));
  none->setToolTip(tr("Uncheck every layer the filter shows"));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(all);
  buttons->addWidget(none);
  auto* side = new QWidget(this);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(new QLabel(tr("Layers"), side));
  side_layout->addWidget(filter_);
  side_layout->addLayout(buttons);
  side_layout->addWidget(group_);
  side_layout->addWidget(layers_, 1);

  auto* plots = new QSplitter(Qt::Vertical, this);
  plots->addWidget(norms_);
  plots->addWidget(ratios_);
  plots->setStretchFactor(0, 3);
  plots->setStretchFactor(1, 2);
  plots->setChildrenCollapsible(false);
  // On a laptop's height the 3:2 split left the ratio plot too short for
  // its titles and legend: it keeps this much, the norms take the rest.
  ratios_->setMinimumHeight(240);
  auto* right = new QWidget(this);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(caption_);
  right_layout->addWidget(plots, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(side);
  split->addWidget(right);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({190, 1100});
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(filter_, &QLineEdit::textChanged, this, [this] {
    applyFilter();
    redraw();
  });
  connect(all, &QPushButton::clicked, this, [this] { setVisibleChecked(true); });
  connect(none, &QPushButton::clicked, this, [this] { setVisibleChecked(false); });
  group_->setChecked(document_->groupByBlock());
  connect(group_, &QCheckBox::toggled, document_, &ExplorerDocument::setGroupByBlock);
  connect(document_, &ExplorerDocument::groupByBlockChanged, this, [this] {
    const QSignalBlocker block(group_);
    group_->setChecked(document_->groupByBlock());
    redraw();
  });
  connect(layers_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    if (updating_) return;
    // A block's box acts on its layers the filter shows (all, if none).
    std::vector<int> members;
    for (int l : itemLayers(layers_->row(item))) {
      if (matching_[static_cast<size_t>(l)]) members.push_back(l);
    }
    if (members.empty()) members = itemLayers(layers_->row(item));
    for (int l : members) checked_[static_cast<size_t>(l)] = item->checkState() != Qt::Unchecked;
    showChecks();
    redraw();
  });
  // Every layout of either plot (a draw, a resize) re-aligns their x axes.
  connect(norms_, &QCustomPlot::afterLayout, this, &RegimesView::alignXAxes);
  connect(ratios_, &QCustomPlot::afterLayout, this, &RegimesView::alignXAxes);
  // regimesChanged also follows a change of the current run.
  connect(document_, &ExplorerDocument::regimesChanged, this, &RegimesView::redraw);
  redraw();
}

void RegimesView::rebuildLayerList() {
  const auto run = document_->currentRun();
  const std::string path = run ? run->path : std::string();
  const int count = run ? run->view().num_layers() : 0;
  const bool grouped = document_->groupByBlock();
  // A live run re-read keeps its layers and the person's choice of them.
  const bool same_run = path == layers_of_ && static_cast<int>(checked_.size()) == count;
  if (same_run && grouped == list_grouped_) return;
  updating_ = true;
  layers_->clear();
  if (!same_run) checked_.assign(static_cast<size_t>(count), true);
  if (run) {
    const std::vector<LayerInfo>& infos = run->view().layers;
    if (grouped) {
      for (const LayerBlock& block : LayerBlocks(*run)) {
        const QString name = QString::fromStdString(block.name);
        auto* item =
            new QListWidgetItem(block.layers.size() == 1 ? tr("%1 (1 layer)").arg(name)
                                                         : tr("%1 (%2 layers)").arg(name).arg(block.layers.size()),
                                layers_);
        QVariantList members;
        QStringList names;
        for (int l : block.layers) {
          members << l;
          names << QString::fromStdString(infos[static_cast<size_t>(l)].name);
        }
        item->setData(Qt::UserRole, members);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setToolTip(names.join('\n'));
      }
    } else {
      for (int l = 0; l < count; ++l) {
        const LayerInfo& layer = infos[static_cast<size_t>(l)];
        auto* item = new QListWidgetItem(QString::fromStdString(layer.name), layers_);
        item->setData(Qt::UserRole, QVariantList{l});
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setToolTip(
            tr("%1 entries, %2").arg(layer.numel).arg(layer.compressible ? tr("compressible") : tr("sent dense")));
      }
    }
  }
  layers_of_ = path;
  list_grouped_ = grouped;
  updating_ = false;
  applyFilter();
}

std::vector<int> RegimesView::itemLayers(int row) const {
  std::vector<int> layers;
  if (const QListWidgetItem* item = layers_->item(row)) {
    for (const QVariant& v : item->data(Qt::UserRole).toList()) layers.push_back(v.toInt());
  }
  return layers;
}

void RegimesView::applyFilter() {
  const auto run = document_->currentRun();
  matching_.assign(checked_.size(), false);
  if (!run) return;
  for (int l : LayersMatching(*run, filter_->text().toStdString())) {
    if (l >= 0 && l < static_cast<int>(matching_.size())) matching_[static_cast<size_t>(l)] = true;
  }
  for (int i = 0; i < layers_->count(); ++i) {
    bool any = false;
    for (int l : itemLayers(i)) any = any || matching_[static_cast<size_t>(l)];
    layers_->item(i)->setHidden(!any);
  }
  showChecks();
}

void RegimesView::showChecks() {
  updating_ = true;
  for (int i = 0; i < layers_->count(); ++i) {
    int on = 0;
    int shown = 0;
    for (int l : itemLayers(i)) {
      if (!matching_[static_cast<size_t>(l)]) continue;
      ++shown;
      on += checked_[static_cast<size_t>(l)];
    }
    const Qt::CheckState state = on == 0 ? Qt::Unchecked : (on == shown ? Qt::Checked : Qt::PartiallyChecked);
    if (layers_->item(i)->checkState() != state) layers_->item(i)->setCheckState(state);
  }
  updating_ = false;
}

void RegimesView::setVisibleChecked(bool checked) {
  for (size_t l = 0; l < checked_.size(); ++l) {
    if (matching_[l]) checked_[l] = checked;
  }
  showChecks();
  redraw();
}

std::vector<int> RegimesView::shownLayers() const {
  std::vector<int> shown;
  for (size_t l = 0; l < checked_.size() && l < matching_.size(); ++l) {
    if (checked_[l] && matching_[l]) shown.push_back(static_cast<int>(l));
  }
  return shown;
}

void RegimesView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Wide enough, or no longer, for the legend's eight named layers.
  if (draw_count_ > 0 && RegimeLegendLayers(norms_) != legend_layers_) redraw();
}

void RegimesView::redraw() {
  rebuildLayerList();
  ++draw_count_;
  legend_layers_ = RegimeLegendLayers(norms_);
  const auto run = document_->currentRun();
  const auto analysis = document_->regimes();
  if (!run || !analysis) {
    caption_->setText(tr("Open a trace (File > Open, or drop it on the window) to see its regimes."));
    norms_->showMessage(tr("No run open"));
    ratios_->showMessage(QString());
    return;
  }
  const std::vector<int> shown = shownLayers();
  if (shown.empty()) {
    norms_->showMessage(tr("No layer selected: check some in the list on the left"));
    ratios_->showMessage(QString());
  } else {
    // Every layer shown is the figure's "empty = all" case; passing the
    // full list would draw the same.
    const bool all = shown.size() == checked_.size();
    const std::vector<int> layers = all ? std::vector<int>() : shown;
    const bool grouped = document_->groupByBlock();
    DrawGradientNorms(norms_, *run, *analysis, layers, grouped);
    DrawCheckRatios(ratios_, *run, *analysis, layers, grouped);
    norms_->markDrawn();
    ratios_->markDrawn();
    linkXAxes();
  }
  QString text;
  if (analysis->schedulable) {
    // Each term said where it is shown, in as few words as fit a laptop's
    // caption; the tooltip has them in full.
    text = tr("<b>Low level</b>, sending more than static high (η %1, %2): %3 &nbsp;·&nbsp; "
              "<span style='color:#666'>as recorded: %4</span>")
               .arg(document_->scheduleSettings().eta)
               .arg(QString::fromStdString(EveryEpochs(document_->scheduleSettings().interval)))
               .arg(BandsText(analysis->model_bands), BandsText(analysis->recorded_model_bands));
    if (!analysis->no_effect_bands.empty()) {
      text += tr(" &nbsp;·&nbsp; <span style='color:#666'>critical (‖Δ‖ changed by η or more) but no effect on "
                 "traffic: %1</span>")
                  .arg(BandsText(analysis->no_effect_bands));
    }
  } else {
    text = tr("<b>No schedule:</b> %1").arg(QString::fromStdString(analysis->problem).toHtmlEscaped());
  }
  caption_->setText(text);
  caption_->setToolTip(QString::fromUtf8(RegimeTermsExplained()));
}

void RegimesView::alignXAxes() {
  if (aligning_ || norms_->axisRectCount() == 0 || ratios_->axisRectCount() == 0) return;
  QCPAxisRect* a = norms_->axisRect();
  QCPAxisRect* b = ratios_->axisRect();
  // A message, not a figure, or plots of different widths: nothing to align.
  if (!a->axis(QCPAxis::atBottom)->visible() || !b->axis(QCPAxis::atBottom)->visible() ||
      norms_->viewport().width() != ratios_->viewport().width()) {
    return;
  }
  aligning_ = true;
  const QRect a_before = a->rect();
  const QRect b_before = b->rect();
  const char kBase[] = "accordion_base_margins";
  // Each plot's own layout first (the margins it would take by itself)...
  for (QCPAxisRect* r : {a, b}) {
    if (!r->property(kBase).isValid()) r->setProperty(kBase, QVariant::fromValue(r->minimumMargins()));
    r->setMinimumMargins(r->property(kBase).value<QMargins>());
  }
  style::UpdateLayout(norms_);
  style::UpdateLayout(ratios_);
  // ...then both at the inner of the two edges on each side.
  const int left = std::max(a->left(), b->left());
  const int right = std::min(a->right(), b->right());
  for (QCPAxisRect* r : {a, b}) {
    QMargins m = r->minimumMargins();
    m.setLeft(r->margins().left() + left - r->left());
    m.setRight(r->margins().right() + r->right() - right);
    r->setMinimumMargins(m);
  }
  style::UpdateLayout(norms_);
  style::UpdateLayout(ratios_);
  // The plot being replotted (the sender) draws with this layout; the other
  // is replotted where its axis rect moved. Aligned, a second pass moves
  // nothing, which ends it.
  if (sender() != norms_ && a->rect() != a_before) norms_->replot(QCustomPlot::rpQueuedReplot);
  if (sender() != ratios_ && b->rect() != b_before) ratios_->replot(QCustomPlot::rpQueuedReplot);
  aligning_ = false;
}

void RegimesView::linkXAxes() {
  disconnect(link_a_);
  disconnect(link_b_);
  QCPAxis* a = norms_->xAxis;
  QCPAxis* b = ratios_->xAxis;
  if (!a || !b) return;
  // Both plots show epochs: zooming one zooms the other. setRange is a no-op
  // for an equal range, which ends the ping-pong.
  link_a_ = connect(a, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), b, [this, b](const QCPRange& r) {
    b->setRange(r);
    ratios_->replot(QCustomPlot::rpQueuedReplot);
  });
  link_b_ = connect(b, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), a, [this, a](const QCPRange& r) {
    a->setRange(r);
    norms_->replot(QCustomPlot::rpQueuedReplot);
  });
}

}  // namespace accordion::gui
