#include "gui/app/plot_widget.h"

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

#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"

namespace accordion::gui {

namespace {

const char kExportDirKey[] = "export/lastDir";

}  // namespace

PlotWidget::PlotWidget(const QString& figure_name, QWidget* parent) : QCustomPlot(parent), figure_name_(figure_name) {
  setObjectName(figure_name);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMinimumSize(200, 150);
  setToolTip(QString());
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
    entry->setTextColor(plottable->visible() ? entry->parentLegend()->textColor() : QColor(0xAA, 0xAA, 0xAA));
    replot(QCustomPlot::rpQueuedReplot);
  });
}

void PlotWidget::markDrawn() {
  drawn_ranges_.clear();
  for (QCPAxisRect* rect : axisRects()) {
    for (QCPAxis* axis : rect->axes()) drawn_ranges_.emplace_back(axis, axis->range());
  }
  // A full replot, queued, or just the layers an incremental draw changed.
  RefreshFigure(this);
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

void PlotWidget::copyToClipboard() { QApplication::clipboard()->setPixmap(toPixmap()); }

QString PlotWidget::valueAt(const QPoint& pos) const {
  constexpr double kReach = 8;  // px
  double best = kReach;
  QString text;
  for (int i = 0; i < plottableCount(); ++i) {
    // QCustomPlot::plottable(int) is not const; reading it changes nothing.
    QCPAbstractPlottable* p = const_cast<PlotWidget*>(this)->plottable(i);
    if (!p->visible() || style::IsLegendOnly(p) || p->name().isEmpty()) continue;
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
  }
  return text;
}

void PlotWidget::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  if (event->buttons() != Qt::NoButton) return;  // dragging, not reading
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

void PlotWidget::contextMenuEvent(QContextMenuEvent* event) {
  emit activated(this);
  QMenu menu(this);
  menu.addAction(tr("Export PNG…"), this, [this] { exportWithDialog("png"); });
  menu.addAction(tr("Export PDF…"), this, [this] { exportWithDialog("pdf"); });
  menu.addAction(tr("Export data as CSV…"), this, [this] { exportWithDialog("csv"); });
  menu.addSeparator();
  menu.addAction(tr("Copy image to clipboard"), this, &PlotWidget::copyToClipboard);
  menu.addAction(tr("Reset zoom"), this, &PlotWidget::resetRanges);
  menu.exec(event->globalPos());
}

}  // namespace accordion::gui
