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
