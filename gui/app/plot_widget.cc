#include "gui/app/plot_widget.h"

#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QSettings>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "gui/app/export_check.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figure_theme.h"
#include "gui/figures/figures.h"
#include "gui/figures/smoothing.h"

namespace accordion::gui {

namespace {

const char kExportDirKey[] = "export/lastDir";

}  // namespace

PlotWidget::PlotWidget(const QString& figure_name, QWidget* parent) : QCustomPlot(parent), figure_name_(figure_name) {
  setObjectName(figure_name);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMinimumSize(200, 150);
  setToolTip(QString());
  setMouseTracking(true);  // the crosshair and the values follow the mouse
  // The figure builders draw many items; antialiasing them all makes
  // dragging stutter, so keep the default for plottables only.
  setNotAntialiasedElements(QCP::aeItems);
  // A click on a legend entry hides its series (its entry turns grey) or
  // shows it again, as in TensorBoard; entries that only explain a colour
  // (bands, guide lines) stay as they are.
  connect(this, &QCustomPlot::legendClick, this, [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
    auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
    if (entry == nullptr || style::IsLegendOnly(entry->plottable())) return;
    QCPAbstractPlottable* plottable = entry->plottable();
    plottable->setVisible(!plottable->visible());
    if (auto* graph = qobject_cast<QCPGraph*>(plottable)) {
      if (QCPGraph* raw = style::RawSeriesOf(graph)) raw->setVisible(plottable->visible());
    }
    entry->setTextColor(plottable->visible() ? entry->parentLegend()->textColor() : style::ThemeOf(this).hidden);
    replot(QCustomPlot::rpQueuedReplot);
  });
}

void PlotWidget::markDrawn() {
  const bool changed = applyViewChoices();
  followPalette();
  drawn_ranges_.clear();
  for (QCPAxisRect* rect : axisRects()) {
    for (QCPAxis* axis : rect->axes()) drawn_ranges_.emplace_back(axis, axis->range());
  }
  if (changed) {
    // Not the figure an incremental draw prepared its layers for.
    style::TakePartialLayers(this);
    replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  // A full replot, queued, or just the layers an incremental draw changed.
  RefreshFigure(this);
}

bool PlotWidget::applyViewChoices() {
  bool changed = smoothing_ > 0 && style::SmoothSeries(this, smoothing_) > 0;
  log_ranges_.clear();
  for (QCPAxis* axis : switchableLogAxes()) {
    // The builder's range, for the way back from linear.
    log_ranges_.emplace_back(axis, axis->range());
    auto it = linear_axes_.find(axis->axisType());
    if (it == linear_axes_.end() || !it->second) continue;
    style::SetAxisLogarithmic(axis, false);
    fitLinear(axis);
    changed = true;
  }
  return changed;
}

QList<QCPAxis*> PlotWidget::switchableLogAxes() const {
  QList<QCPAxis*> axes;
  if (axisRectCount() == 0) return axes;
  // QCustomPlot::axisRect(int) is not const; reading it changes nothing.
  for (QCPAxis* axis : const_cast<PlotWidget*>(this)->axisRect(0)->axes()) {
    if (style::IsSwitchableLogAxis(axis)) axes << axis;
  }
  return axes;
}

bool PlotWidget::axisLogarithmic(QCPAxis::AxisType type) const {
  auto it = linear_axes_.find(type);
  return it == linear_axes_.end() || !it->second;
}

void PlotWidget::setAxisLogarithmic(QCPAxis::AxisType type, bool logarithmic) {
  linear_axes_[type] = !logarithmic;
  for (QCPAxis* axis : switchableLogAxes()) {
    if (axis->axisType() != type) continue;
    style::SetAxisLogarithmic(axis, logarithmic);
    if (logarithmic) {
      for (auto& [log_axis, range] : log_ranges_) {
        if (log_axis == axis) axis->setRange(range);
      }
    } else {
      fitLinear(axis);
    }
    for (auto& [drawn_axis, range] : drawn_ranges_) {
      if (drawn_axis == axis) range = axis->range();
    }
  }
  hideCrosshair();
  replot(QCustomPlot::rpQueuedReplot);
}

void PlotWidget::fitLinear(QCPAxis* axis) {
  double lo = qInf(), hi = -qInf();
  auto include = [&](double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (int i = 0; i < plottableCount(); ++i) {
    QCPAbstractPlottable* p = plottable(i);
    if (!p->visible() || style::IsLegendOnly(p)) continue;
    bool found = false;
    QCPRange range;
    if (p->valueAxis() == axis) range = p->getValueRange(found);
    if (p->keyAxis() == axis) range = p->getKeyRange(found);
    if (found) {
      include(range.lower);
      include(range.upper);
    }
  }
  // Guide lines on this axis (eta, the current bandwidth) stay in view.
  for (int i = 0; i < itemCount(); ++i) {
    auto* line = qobject_cast<QCPItemStraightLine*>(item(i));
    if (line == nullptr) continue;
    const QCPItemPosition* p = line->point1;
    if (p->keyAxis() == axis && p->typeX() == QCPItemPosition::ptPlotCoords) include(p->coords().x());
    if (p->valueAxis() == axis && p->typeY() == QCPItemPosition::ptPlotCoords) include(p->coords().y());
  }
  if (!(hi >= lo)) return;
  const double span = hi > lo ? hi - lo : std::max(1.0, std::fabs(hi));
  // Positive data from 0: a linear axis of norms or ratios reads best so.
  const double lower = lo >= 0 ? 0 : lo - 0.04 * span;
  axis->setRange(lower, hi + 0.06 * span);
}

const QList<double>& PlotWidget::smoothingWeights() {
  static const QList<double> weights = {0, 0.6, 0.8, 0.9, 0.95, 0.99};
  return weights;
}

void PlotWidget::setSmoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.999);
  style::RemoveSmoothing(this);
  style::SmoothSeries(this, smoothing_);
  hideCrosshair();
  replot(QCustomPlot::rpQueuedReplot);
}

void PlotWidget::followPalette() {
  const style::FigureTheme target = style::ThemeFromPalette(palette());
  const style::FigureTheme current = style::ThemeOf(this);
  // Builders draw light: what a draw just added is light whatever the plot
  // was, so go back to light first, then to the palette's theme.
  if (current.dark) style::RecolorPlot(this, current, style::LightTheme());
  if (target.dark) style::RecolorPlot(this, style::LightTheme(), target);
}

void PlotWidget::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    hideCrosshair();
    followPalette();
    replot(QCustomPlot::rpQueuedReplot);
  }
}

QString PlotWidget::crosshairText() const {
  return crosshair_label_ && crosshair_label_->visible() ? crosshair_label_->text() : QString();
}

void PlotWidget::hideCrosshair() {
  crosshair_key_ = qQNaN();
  bool shown = false;
  for (QCPAbstractItem* item : {static_cast<QCPAbstractItem*>(crosshair_line_.data()),
                                static_cast<QCPAbstractItem*>(crosshair_label_.data())}) {
    if (item != nullptr && item->visible()) {
      item->setVisible(false);
      shown = true;
    }
  }
  if (shown) layer("overlay")->replot();
}

namespace {

// The point of `graph` nearest key `key`, or its end.
QCPGraphDataContainer::const_iterator Nearest(const QCPGraph* graph, double key) {
  auto data = graph->data();
  if (data->isEmpty()) return data->constEnd();
  auto it = data->findBegin(key, false);  // the first point at or after key
  if (it == data->constEnd()) return it - 1;
  if (it != data->constBegin() && std::fabs((it - 1)->key - key) <= std::fabs(it->key - key)) return it - 1;
  return it;
}

}  // namespace

void PlotWidget::updateCrosshair(const QPoint& pos) {
  QCPAxisRect* rect = axisRectCount() > 0 ? axisRect(0) : nullptr;
  if (rect == nullptr || !rect->rect().contains(pos)) return hideCrosshair();
  QCPAxis* x = rect->axis(QCPAxis::atBottom);
  // Line charts only: a bar chart's keys are categories, its bars hover.
  if (x == nullptr || !x->ticker().dynamicCast<QCPAxisTickerText>().isNull()) return hideCrosshair();
  std::vector<QCPGraph*> series;
  for (int i = 0; i < graphCount(); ++i) {
    QCPGraph* g = graph(i);
    if (!g->visible() || style::IsLegendOnly(g) || style::IsRawSeries(g) || g->name().isEmpty()) continue;
    if (g->keyAxis() != x || g->data()->isEmpty()) continue;
    series.push_back(g);
  }
  if (series.empty()) return hideCrosshair();
  // Snaps to the data key nearest the mouse, as TensorBoard's does.
  const double at = x->pixelToCoord(pos.x());
  double key = qQNaN(), best = qInf();
  for (const QCPGraph* g : series) {
    auto it = Nearest(g, at);
    if (it == g->data()->constEnd()) continue;
    const double px = std::fabs(x->coordToPixel(it->key) - pos.x());
    if (px < best) {
      best = px;
      key = it->key;
    }
  }
  if (!std::isfinite(key)) return hideCrosshair();
  // Series named in the legend first: with 62 layers, the ones in colour.
  std::stable_sort(series.begin(), series.end(), [this](QCPGraph* a, QCPGraph* b) {
    return legend != nullptr && legend->hasItemWithPlottable(a) && !legend->hasItemWithPlottable(b);
  });
  constexpr int kMaxLines = 12;
  QStringList lines;
  const QString label = x->property(style::kFullLabel).toString();
  lines << (label.isEmpty() ? QString() : label + " ") + QString::number(key, 'g', 6);
  int more = 0;
  for (const QCPGraph* g : series) {
    auto it = Nearest(g, key);
    if (it == g->data()->constEnd() || it->key != key) continue;
    if (lines.size() > kMaxLines) {
      ++more;
      continue;
    }
    QString line = QStringLiteral("%1: %2").arg(g->name(), style::Sci(it->value));
    if (const QCPGraph* raw = style::RawSeriesOf(g)) {
      auto r = Nearest(raw, key);
      if (r != raw->data()->constEnd() && r->key == key) line += QStringLiteral(" (raw %1)").arg(style::Sci(r->value));
    }
    lines << line;
  }
  if (more > 0) lines << tr("+%1 more").arg(more);

  const style::FigureTheme theme = style::ThemeOf(this);
  if (!crosshair_line_) {
    crosshair_line_ = new QCPItemStraightLine(this);
    crosshair_line_->setLayer("overlay");
    crosshair_line_->setSelectable(false);
  }
  if (!crosshair_label_) {
    crosshair_label_ = new QCPItemText(this);
    crosshair_label_->setLayer("overlay");
    crosshair_label_->setSelectable(false);
    crosshair_label_->setClipToAxisRect(false);
    crosshair_label_->position->setType(QCPItemPosition::ptAbsolute);
    crosshair_label_->setTextAlignment(Qt::AlignLeft);
    crosshair_label_->setPadding(QMargins(6, 4, 6, 4));
    crosshair_label_->setFont(style::LegendFont());
  }
  crosshair_line_->setClipAxisRect(rect);
  for (QCPItemPosition* p : {crosshair_line_->point1, crosshair_line_->point2}) {
    p->setAxes(x, rect->axis(QCPAxis::atLeft));
    p->setAxisRect(rect);
    p->setTypeX(QCPItemPosition::ptPlotCoords);
    p->setTypeY(QCPItemPosition::ptAxisRectRatio);
  }
  crosshair_line_->point1->setCoords(key, 0);
  crosshair_line_->point2->setCoords(key, 1);
  crosshair_line_->setPen(QPen(theme.guide, 1, Qt::SolidLine));
  crosshair_line_->setVisible(true);
  // Beside the line, on the side with more room.
  const double px = x->coordToPixel(key);
  const bool right_half = px > rect->center().x();
  crosshair_label_->setPositionAlignment(Qt::AlignTop | (right_half ? Qt::AlignRight : Qt::AlignLeft));
  crosshair_label_->position->setCoords(px + (right_half ? -8 : 8), rect->top() + 6);
  crosshair_label_->setText(lines.join('\n'));
  crosshair_label_->setColor(theme.foreground);
  crosshair_label_->setBrush(QBrush(theme.legend_fill));
  crosshair_label_->setPen(QPen(theme.legend_border));
  crosshair_label_->setVisible(true);
  crosshair_key_ = key;
  layer("overlay")->replot();
}

void PlotWidget::showMessage(const QString& message) {
  // Built like the figure builders build theirs (a fresh layout), so the
  // next figure drawn here starts from the same state.
  clearItems();
  clearPlottables();
  plotLayout()->clear();
  auto* rect = new QCPAxisRect(this, true);
  plotLayout()->addElement(0, 0, rect);
  xAxis = rect->axis(QCPAxis::atBottom);
  yAxis = rect->axis(QCPAxis::atLeft);
  xAxis2 = rect->axis(QCPAxis::atTop);
  yAxis2 = rect->axis(QCPAxis::atRight);
  for (QCPAxis* axis : rect->axes()) axis->setVisible(false);
  if (!message.isEmpty()) {
    auto* text = new QCPItemText(this);
    text->setClipToAxisRect(false);
    text->position->setAxisRect(rect);
    text->position->setType(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(0.5, 0.5);
    text->setPositionAlignment(Qt::AlignCenter);
    text->setTextAlignment(Qt::AlignCenter);
    text->setText(message);
    text->setColor(QColor(110, 110, 110));
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 1.2);
    text->setFont(f);
  }
  markDrawn();
}

void PlotWidget::resetRanges() {
  for (auto& [axis, range] : drawn_ranges_) {
    if (axis) axis->setRange(range);
  }
  replot(QCustomPlot::rpQueuedReplot);
}

bool PlotWidget::exportTo(const QString& path, QString* error) {
  const ExportClaim claim(path, error);
  if (!claim.ok()) return false;
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("csv")) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
      *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
      return false;
    }
    file.write(FigureCsv(this).toUtf8());
    if (!file.commit()) {
      *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
      return false;
    }
    return true;
  }
  if (suffix == QLatin1String("png") || suffix == QLatin1String("pdf")) {
    return SaveFigure(this, path, error);
  }
  *error = QStringLiteral("unknown format \"%1\": use .png, .pdf or .csv").arg(suffix);
  return false;
}

void PlotWidget::exportWithDialog(const QString& default_suffix) {
  QSettings settings;
  const QString dir = settings.value(kExportDirKey, QDir::homePath()).toString();
  const QString png = tr("PNG image (*.png)");
  const QString pdf = tr("PDF document (*.pdf)");
  const QString csv = tr("Data as CSV (*.csv)");
  QString selected = default_suffix == QLatin1String("pdf") ? pdf : default_suffix == QLatin1String("csv") ? csv : png;
  QString path =
      QFileDialog::getSaveFileName(this, tr("Export figure"), dir + "/" + figure_name_ + "." + default_suffix,
                                   png + ";;" + pdf + ";;" + csv, &selected);
  if (path.isEmpty()) return;
  // A name typed without a suffix takes the chosen filter's.
  if (QFileInfo(path).suffix().isEmpty()) {
    path += selected == pdf ? ".pdf" : selected == csv ? ".csv" : ".png";
  }
  settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
  QString error;
  if (!exportTo(path, &error)) QMessageBox::warning(this, tr("Export failed"), error);
}

void PlotWidget::copyToClipboard() {
  // A copied figure goes where exports go (a document, a slide): light.
  const style::FigureTheme screen = style::ThemeOf(this);
  if (screen.dark) style::RecolorPlot(this, screen, style::LightTheme());
  QApplication::clipboard()->setPixmap(toPixmap());
  if (screen.dark) {
    style::RecolorPlot(this, style::LightTheme(), screen);
    replot(QCustomPlot::rpQueuedReplot);
  }
}

QString PlotWidget::valueAt(const QPoint& pos) const {
  constexpr double kReach = 8;  // px
  double best = kReach;
  QString text;
  for (int i = 0; i < plottableCount(); ++i) {
    // QCustomPlot::plottable(int) is not const; reading it changes nothing.
    QCPAbstractPlottable* p = const_cast<PlotWidget*>(this)->plottable(i);
    if (!p->visible() || style::IsLegendOnly(p) || p->name().isEmpty()) continue;
    // A smoothed curve's raw points hover through it (below).
    if (auto* graph = qobject_cast<QCPGraph*>(p); graph && style::IsRawSeries(graph)) continue;
    if (p->keyAxis() == nullptr || !p->keyAxis()->axisRect()->rect().contains(pos)) continue;
    QVariant details;
    const double distance = p->selectTest(pos, false, &details);
    if (distance < 0 || distance >= best) continue;
    const QCPDataSelection hit = details.value<QCPDataSelection>();
    if (hit.isEmpty()) continue;
    const int index = hit.dataRange().begin();
    double key = 0, value = 0;
    if (auto* graph = qobject_cast<QCPGraph*>(p); graph && index < graph->data()->size()) {
      key = graph->data()->at(index)->key;
      value = graph->data()->at(index)->value;
    } else if (auto* bars = qobject_cast<QCPBars*>(p); bars && index < bars->data()->size()) {
      key = bars->data()->at(index)->key;
      value = bars->data()->at(index)->value;
    } else {
      continue;
    }
    best = distance;
    // A text axis (the what-if's schedules) names its key; else the number.
    QCPAxis* x = p->keyAxis();
    QString where = QString::number(key, 'g', 6);
    if (auto ticker = x->ticker().dynamicCast<QCPAxisTickerText>(); ticker && ticker->ticks().contains(key)) {
      where = ticker->ticks().value(key).simplified();
    } else {
      const QString label = x->property(style::kFullLabel).toString();
      if (!label.isEmpty()) where = label + " " + where;
    }
    text = QStringLiteral("%1\n%2: %3").arg(p->name(), where, style::Sci(value));
    if (auto* graph = qobject_cast<QCPGraph*>(p)) {
      if (const QCPGraph* raw = style::RawSeriesOf(graph); raw && index < raw->data()->size()) {
        text += QStringLiteral(" (raw %1)").arg(style::Sci(raw->data()->at(index)->value));
      }
    }
  }
  return text;
}

void PlotWidget::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  if (event->buttons() != Qt::NoButton) return hideCrosshair();  // dragging, not reading
  updateCrosshair(event->pos());
  const QString text = valueAt(event->pos());
  if (!text.isEmpty()) {
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
    value_shown_ = true;
  } else if (value_shown_) {
    QToolTip::hideText();
    value_shown_ = false;
  }
}

void PlotWidget::mouseDoubleClickEvent(QMouseEvent* event) {
  QCustomPlot::mouseDoubleClickEvent(event);
  resetRanges();
}

void PlotWidget::mousePressEvent(QMouseEvent* event) {
  emit activated(this);
  QCustomPlot::mousePressEvent(event);
}

void PlotWidget::enterEvent(QEnterEvent* event) {
  emit activated(this);
  QCustomPlot::enterEvent(event);
}

void PlotWidget::leaveEvent(QEvent* event) {
  hideCrosshair();
  QCustomPlot::leaveEvent(event);
}

void PlotWidget::contextMenuEvent(QContextMenuEvent* event) {
  emit activated(this);
  QMenu menu(this);
  fillContextMenu(&menu);
  menu.exec(event->globalPos());
}

void PlotWidget::fillContextMenu(QMenu* menu) {
  menu->addAction(tr("Export PNG…"), this, [this] { exportWithDialog("png"); });
  menu->addAction(tr("Export PDF…"), this, [this] { exportWithDialog("pdf"); });
  menu->addAction(tr("Export data as CSV…"), this, [this] { exportWithDialog("csv"); });
  menu->addSeparator();
  menu->addAction(tr("Copy image to clipboard"), this, &PlotWidget::copyToClipboard);
  menu->addAction(tr("Reset zoom"), this, &PlotWidget::resetRanges);
  const QList<QCPAxis*> log_axes = switchableLogAxes();
  if (!log_axes.isEmpty()) menu->addSeparator();
  for (QCPAxis* axis : log_axes) {
    const QString label = axis->property(style::kFullLabel).toString();
    QAction* log = menu->addAction(tr("Log scale: %1").arg(label.isEmpty() ? tr("axis") : label));
    log->setCheckable(true);
    log->setChecked(axis->scaleType() == QCPAxis::stLogarithmic);
    const QCPAxis::AxisType type = axis->axisType();
    connect(log, &QAction::toggled, this, [this, type](bool on) { setAxisLogarithmic(type, on); });
  }
  if (style::HasSmoothableSeries(this)) {
    QMenu* smoothing = menu->addMenu(tr("Smoothing"));
    auto* group = new QActionGroup(smoothing);
    for (double weight : smoothingWeights()) {
      QAction* a = smoothing->addAction(weight > 0 ? QString::number(weight) : tr("Off"));
      a->setCheckable(true);
      a->setChecked(weight == smoothing_);
      group->addAction(a);
      connect(a, &QAction::triggered, this, [this, weight] { setSmoothing(weight); });
    }
  }
}

}  // namespace accordion::gui
