// PlotWidget's interactions on real figures: the log/linear switch, the
// crosshair (driven by synthetic mouse events), hover values on bars,
// smoothing, and colours that follow a dark palette while exports stay light.
#include <sys/stat.h>

#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QMouseEvent>
#include <QPalette>
#include <QRegularExpression>
#include <QTest>
#include <cmath>
#include <memory>
#include <qcustomplot.h>

#include "common/output_file.h"
#include "gui/app/plot_widget.h"
#include "gui/figures/figure_style.h"
#include "gui/figures/figures.h"
#include "gui/figures/smoothing.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
namespace st = accordion::gui::style;

namespace {

void MoveMouse(QWidget* widget, const QPoint& pos) {
  QMouseEvent move(QEvent::MouseMove, QPointF(pos), QPointF(widget->mapToGlobal(pos)), Qt::NoButton, Qt::NoButton,
                   Qt::NoModifier);
  QApplication::sendEvent(widget, &move);
}

QStringList TickLabels(QCPAxis* axis) {
  QStringList labels;
  for (const QString& l : axis->tickVectorLabels()) labels << l;
  return labels;
}

std::vector<double> Values(const QCPGraph* graph) {
  std::vector<double> values;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) values.push_back(it->value);
  return values;
}

// ACCORDION_SCREENSHOT_DIR=DIR keeps what a test looked at as DIR/<name>.png.
void KeepScreenshot(QWidget* widget, const QString& name) {
  const QString dir = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
  if (!dir.isEmpty()) widget->grab().save(dir + "/" + name + ".png");
}

QPalette DarkPalette() {
  QPalette p;
  p.setColor(QPalette::Window, QColor(0x2B, 0x2B, 0x2B));
  p.setColor(QPalette::WindowText, QColor(0xE6, 0xE6, 0xE6));
  p.setColor(QPalette::Base, QColor(0x1E, 0x1E, 0x1E));
  p.setColor(QPalette::Text, QColor(0xE6, 0xE6, 0xE6));
  p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
  p.setColor(QPalette::ButtonText, QColor(0xE6, 0xE6, 0xE6));
  return p;
}

}  // namespace

class PlotWidgetTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    run_ = std::make_shared<RunData>(
        LoadRunData(test_support::SampleTrace("fmnist-mlp-powersgd-accordion.trace").toStdString()));
    settings_.interval = 2;
    analysis_ = AnalyseRegimes(*run_, settings_);
    QVERIFY2(analysis_.schedulable, analysis_.problem.c_str());
    scratch_ = test_support::ScratchDir("plot-widget");
  }

  // The norms' log y axis switches to linear (scale type and ticks change),
  // stays linear for the next figure drawn on that plot, and comes back.
  void logLinearSwitchChangesScaleAndTicks() {
    PlotWidget plot("gradient-norms");
    plot.resize(1000, 600);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QCOMPARE(plot.switchableLogAxes(), QList<QCPAxis*>({plot.yAxis}));
    QVERIFY(plot.yAxis->scaleType() == QCPAxis::stLogarithmic);
    const QStringList log_labels = TickLabels(plot.yAxis);
    const QCPRange log_range = plot.yAxis->range();
    QVERIFY(plot.axisLogarithmic(QCPAxis::atLeft));

    // From the context menu, as a person does it.
    QMenu menu;
    plot.fillContextMenu(&menu);
    QAction* log_switch = nullptr;
    QMenu* smoothing = nullptr;
    for (QAction* a : menu.actions()) {
      if (a->text().startsWith("Log scale: ‖Δ‖")) log_switch = a;
      if (a->menu() != nullptr && a->text() == "Smoothing") smoothing = a->menu();
    }
    QVERIFY(log_switch != nullptr && log_switch->isCheckable() && log_switch->isChecked());
    QVERIFY(smoothing != nullptr && smoothing->actions().size() == PlotWidget::smoothingWeights().size());
    log_switch->trigger();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(plot.yAxis->scaleType() == QCPAxis::stLinear);
    QVERIFY(!plot.axisLogarithmic(QCPAxis::atLeft));
    const QStringList linear_labels = TickLabels(plot.yAxis);
    QVERIFY2(linear_labels != log_labels, qPrintable(linear_labels.join(" ")));
    // Evenly spaced ticks from 0 up to the largest norm.
    const QVector<double> ticks = plot.yAxis->tickVector();
    QVERIFY(ticks.size() >= 3);
    for (int i = 2; i < ticks.size(); ++i) {
      QVERIFY(std::fabs((ticks[i] - ticks[i - 1]) - (ticks[1] - ticks[0])) < 1e-9 * std::fabs(ticks[1]));
    }
    QCOMPARE(plot.yAxis->range().lower, 0.0);
    bool found = false;
    const double top = plot.graph(0)->getValueRange(found).upper;
    QVERIFY(found && plot.yAxis->range().upper >= top);

    // Remembered for the next figure on this plot (an eta step, a new run).
    DrawGradientNorms(&plot, *run_, analysis_, {0, 1}, false);
    plot.markDrawn();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(plot.yAxis->scaleType() == QCPAxis::stLinear);

    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    plot.setAxisLogarithmic(QCPAxis::atLeft, true);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(plot.yAxis->scaleType() == QCPAxis::stLogarithmic);
    QCOMPARE(plot.yAxis->range(), log_range);
    QCOMPARE(TickLabels(plot.yAxis), log_labels);

    // The bandwidth sweep's log x axis switches too; a bar chart has none.
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    DrawBandwidthSweep(&plot, SweepBandwidth(*run_, settings_, w, LogSpaced(0.1, 100, 4)), 1);
    plot.markDrawn();
    QVERIFY(plot.switchableLogAxes().contains(plot.xAxis));
    DrawProjection(&plot, ProjectWhatIf(*run_, settings_, w, sim::TimingSource::kAnalytic));
    plot.markDrawn();
    QVERIFY(plot.switchableLogAxes().isEmpty());
  }

  // A vertical line follows the mouse on a line chart, snapped to the
  // nearest epoch, with every visible series' value there; a hidden series
  // drops out; leaving the plot hides it. Bar charts hover their bars.
  void crosshairFollowsTheMouse() {
    PlotWidget plot("gradient-norms");
    plot.resize(1000, 600);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(plot.crosshairText().isEmpty());
    const int y = plot.axisRect()->center().y();
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(5.2)), y));
    QCOMPARE(plot.crosshairKey(), 5.0);
    const QString text = plot.crosshairText();
    QVERIFY2(text.startsWith("epoch 5\n"), qPrintable(text));
    int series = 0;
    for (int i = 0; i < plot.graphCount(); ++i) {
      QCPGraph* g = plot.graph(i);
      if (st::IsLegendOnly(g) || g->keyAxis() != plot.xAxis) continue;
      auto it = g->data()->findBegin(5, false);
      if (it == g->data()->constEnd() || it->key != 5) continue;
      const QString line = QString("%1: %2").arg(g->name(), st::Sci(it->value));
      QVERIFY2(text.contains(line), qPrintable(line + " not in\n" + text));
      ++series;
    }
    QVERIFY(series >= 3);
    KeepScreenshot(&plot, "plot-crosshair");
    // The line item sits at epoch 5.
    bool line_at_5 = false;
    for (int i = 0; i < plot.itemCount(); ++i) {
      auto* line = qobject_cast<QCPItemStraightLine*>(plot.item(i));
      line_at_5 = line_at_5 ||
                  (line && line->visible() && line->layer()->name() == "overlay" && line->point1->coords().x() == 5.0);
    }
    QVERIFY(line_at_5);
    // Snaps to the nearest epoch.
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(11.8)), y));
    QCOMPARE(plot.crosshairKey(), 12.0);
    // A series hidden from its legend entry leaves the crosshair.
    QCPGraph* first = plot.graph(0);
    const QString first_line = first->name() + ": ";
    QVERIFY(plot.crosshairText().contains(first_line));
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::NoModifier, plot.legend->itemWithPlottable(first)->rect().center());
    QVERIFY(!first->visible());
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(12)), y));
    QVERIFY2(!plot.crosshairText().contains(first_line), qPrintable(plot.crosshairText()));
    // Off the axis rect: gone.
    MoveMouse(&plot, QPoint(2, 2));
    QVERIFY(plot.crosshairText().isEmpty());
    QVERIFY(std::isnan(plot.crosshairKey()));
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(3)), y));
    QVERIFY(!plot.crosshairText().isEmpty());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(&plot, &leave);
    QVERIFY(plot.crosshairText().isEmpty());

    // A bar chart: no crosshair, and each bar hovers its value.
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    const WhatIfProjection p = ProjectWhatIf(*run_, settings_, w, sim::TimingSource::kAnalytic);
    for (int figure = 0; figure < 2; ++figure) {
      figure == 0 ? DrawProjection(&plot, p) : DrawEpochBreakdown(&plot, p);
      plot.markDrawn();
      plot.replot(QCustomPlot::rpImmediateRefresh);
      auto* bars = qobject_cast<QCPBars*>(plot.plottable(0));
      QVERIFY(bars != nullptr && bars->dataCount() > 0);
      const auto bar = bars->data()->at(0);
      const QPoint at(int(plot.xAxis->coordToPixel(bar->key)), int(plot.yAxis->coordToPixel(bar->value / 2)));
      MoveMouse(&plot, at);
      QVERIFY(plot.crosshairText().isEmpty());
      const QString hover = plot.valueAt(at);
      QVERIFY2(hover.startsWith(bars->name() + "\n") && hover.contains(st::Sci(bar->value)), qPrintable(hover));
    }
  }

  // Smoothing: the curves change to their EMA, the raw ones stay faint
  // behind, the crosshair and the tooltip give both, and the choice holds
  // for the next figure drawn on the plot until set back to 0.
  void smoothingIsRememberedAndShowsBoth() {
    PlotWidget plot("check-ratios");
    plot.resize(1000, 600);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    const std::vector<double> raw = Values(plot.graph(0));
    QVERIFY(PlotWidget::smoothingWeights().contains(0.0));
    // Chosen in the context menu's Smoothing submenu.
    QMenu menu;
    plot.fillContextMenu(&menu);
    QAction* weight = nullptr;
    for (QAction* a : menu.actions()) {
      if (a->menu() == nullptr || a->text() != "Smoothing") continue;
      for (QAction* w : a->menu()->actions()) weight = w->text() == "0.9" ? w : weight;
    }
    QVERIFY(weight != nullptr);
    weight->trigger();
    QCOMPARE(plot.smoothing(), 0.9);
    QCOMPARE(Values(plot.graph(0)), st::EmaSmooth(raw, 0.9));
    QVERIFY(st::RawSeriesOf(plot.graph(0)) != nullptr);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(4)), plot.axisRect()->center().y()));
    QVERIFY2(plot.crosshairText().contains(QString(" (raw %1)").arg(st::Sci(raw[4]))),
             qPrintable(plot.crosshairText()));
    const QPoint on_curve(int(plot.xAxis->coordToPixel(4)),
                          int(plot.yAxis->coordToPixel(plot.graph(0)->data()->at(4)->value)));
    QVERIFY2(plot.valueAt(on_curve).contains("(raw "), qPrintable(plot.valueAt(on_curve)));
    KeepScreenshot(&plot, "plot-smoothed");
    // Drawn again (an eta step): smoothed again.
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    QCOMPARE(Values(plot.graph(0)), st::EmaSmooth(raw, 0.9));
    plot.setSmoothing(0);
    QCOMPARE(Values(plot.graph(0)), raw);
    QVERIFY(st::RawSeriesOf(plot.graph(0)) == nullptr);
  }

  // With a dark palette (a dark desktop, or --theme dark) a plot's
  // background is dark and its axis labels light; its PNG export is light,
  // and the plot on screen stays dark.
  void darkPaletteGivesADarkPlotAndLightExports() {
    const QPalette before = QApplication::palette();
    QApplication::setPalette(DarkPalette());
    PlotWidget plot("gradient-norms");
    plot.resize(900, 560);
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    const QImage screen = plot.grab().toImage();
    QVERIFY2(screen.pixelColor(3, 3).lightness() < 60, qPrintable(screen.pixelColor(3, 3).name()));
    QVERIFY(plot.yAxis->tickLabelColor().lightness() > 180);
    QVERIFY(plot.yAxis->labelColor().lightness() > 180);
    QVERIFY(plot.xAxis->basePen().color().lightness() > 180);
    QVERIFY(plot.legend->item(0)->textColor().lightness() > 180);
    auto* title = qobject_cast<QCPTextElement*>(plot.plotLayout()->element(0, 0));
    QVERIFY(title && title->textColor().lightness() > 180);
    // Light text drawn on the dark background: the tick labels' pixels.
    const QRect labels(0, plot.axisRect()->top(), plot.axisRect()->left() - 2, plot.axisRect()->height());
    int light_pixels = 0;
    for (int y = labels.top(); y < labels.bottom(); ++y) {
      for (int x = labels.left(); x < labels.right(); ++x) light_pixels += screen.pixelColor(x, y).lightness() > 170;
    }
    QVERIFY2(light_pixels > 50, qPrintable(QString::number(light_pixels)));
    MoveMouse(&plot, QPoint(int(plot.xAxis->coordToPixel(21)), plot.axisRect()->center().y()));
    KeepScreenshot(&plot, "plot-dark-crosshair");
    QVERIFY(!plot.crosshairText().isEmpty());

    QString error;
    const QString png = scratch_ + "/dark.png";
    QVERIFY2(plot.exportTo(png, &error), qPrintable(error));
    const QImage exported(png);
    QCOMPARE(exported.pixelColor(3, 3), QColor(Qt::white));
    plot.copyToClipboard();
    QCOMPARE(QApplication::clipboard()->image().pixelColor(3, 3), QColor(Qt::white));
    QCOMPARE(plot.grab().toImage().pixelColor(3, 3), screen.pixelColor(3, 3));
    QVERIFY(plot.yAxis->tickLabelColor().lightness() > 180);
    // An eta step redraws in place: the new overlays are themed too.
    ScheduleSettings at3 = settings_;
    at3.eta = 0.3;
    const RegimeAnalysis a3 = AnalyseRegimes(*run_, at3);
    DrawGradientNorms(&plot, *run_, a3, {}, false);
    plot.markDrawn();
    for (int i = 0; i < plot.itemCount(); ++i) {
      if (auto* line = qobject_cast<QCPItemStraightLine*>(plot.item(i))) {
        QVERIFY2(line->pen().color().lightness() > 120, qPrintable(line->pen().color().name()));
      }
    }
    // Back to a light palette: white again.
    QApplication::setPalette(before);
    QApplication::processEvents();
    QCOMPARE(plot.grab().toImage().pixelColor(3, 3), QColor(Qt::white));
    QVERIFY(plot.yAxis->tickLabelColor().lightness() < 80);
  }

  // An export replaces an earlier export (the save dialog asked), but never
  // a trace, a FIFO (opening one nobody reads would block the GUI for ever),
  // a directory or a file inside a live run's checkpoint directory.
  void exportsNeverReplaceATraceNorBlockOnAFifo() {
    PlotWidget plot("gradient-norms");
    DrawGradientNorms(&plot, *run_, analysis_, {}, false);
    plot.markDrawn();
    QString error;
    const QString png = scratch_ + "/again.png";
    QVERIFY2(plot.exportTo(png, &error), qPrintable(error));
    QVERIFY2(plot.exportTo(png, &error), qPrintable(error));

    const QString trace = scratch_ + "/figure.csv";  // a trace, whatever its name
    QVERIFY(QFile::copy(test_support::SampleTrace("fmnist-mlp-powersgd-accordion.trace"), trace));
    const QByteArray before = ReadAll(trace);
    QVERIFY(!plot.exportTo(trace, &error));
    QVERIFY2(error.contains("is a trace"), qPrintable(error));
    QCOMPARE(ReadAll(trace), before);

    const QString fifo = scratch_ + "/fifo.png";
    QFile::remove(fifo);
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    QVERIFY(!plot.exportTo(fifo, &error));
    QVERIFY2(error.contains("not a regular file"), qPrintable(error));
    QVERIFY(!plot.exportTo(scratch_, &error));
    QVERIFY2(error.contains("is a directory"), qPrintable(error));

    const QString held = scratch_ + "/checkpoints";
    LockDirectory(QFile::encodeName(held).toStdString(), "--checkpoint-dir");
    QVERIFY(!plot.exportTo(held + "/norms.png", &error));
    QVERIFY2(error.contains("in use"), qPrintable(error));
    QVERIFY(!QFile::exists(held + "/norms.png"));
  }

 private:
  static QByteArray ReadAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
  }

  std::shared_ptr<RunData> run_;
  ScheduleSettings settings_;
  RegimeAnalysis analysis_;
  QString scratch_;
};

QTEST_MAIN(PlotWidgetTest)
#include "plot_widget_test.moc"
