// The desktop window driven through its widgets, offscreen: the run list,
// the schedule controls redrawing the regimes, bad traces answered with a
// dialog, live traces followed, figures exported, the what-if, compare and
// timeline tabs, and the accordion-gui command line.
#include <QApplication>
#include <QCheckBox>
#include <map>
#include <set>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QUrl>
#include <qcustomplot.h>

#include "analysis/results_table.h"
#include "gui/app/compare_view.h"
#include "gui/app/level_map_view.h"
#include "gui/app/main_window.h"
#include "gui/app/plot_widget.h"
#include "gui/app/policies_view.h"
#include "gui/figures/figures.h"
#include "gui/app/recent_files.h"
#include "gui/app/regimes_view.h"
#include "gui/app/run_list_view.h"
#include "gui/app/schedule_controls.h"
#include "gui/app/sweep_view.h"
#include "gui/app/timeline_view.h"
#include "gui/app/what_if_view.h"
#include "gui/figures/figure_style.h"
#include "gui/model/headlines.h"
#include "gui/model/explorer_document.h"
#include "gui/model/policy_table.h"
#include "simulator/topology_description.h"
#include "tests/support/trace_sql.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::SampleTrace;
using accordion::gui::test_support::ScratchDir;
using accordion::gui::test_support::WritePolicyTrace;

namespace {

const char kPowerSgd[] = "fmnist-mlp-powersgd-accordion.trace";
const char kTopK[] = "fmnist-mlp-topk-accordion.trace";
const char kDense[] = "fmnist-mlp-dense.trace";

// Full-height shaded bands of a regime plot: the re-derived critical
// regimes (the recorded ones are a thin strip along the top edge; the grey
// "no effect" bands are not regimes).
int FullHeightBands(QCustomPlot* plot) {
  int n = 0;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* rect = qobject_cast<QCPItemRect*>(plot->item(i));
    if (!rect || rect->brush().color() != style::BandColor()) continue;
    if (rect->topLeft->coords().y() == 0 && rect->bottomRight->coords().y() == 1) ++n;
  }
  return n;
}

QString CellText(QTableWidget* table, int row, int column) {
  const QTableWidgetItem* item = table->item(row, column);
  return item ? item->text() : QString();
}

// The column whose header reads `header` (line breaks as spaces), or -1.
int ColumnNamed(QTableWidget* table, const QString& header) {
  for (int c = 0; c < table->columnCount(); ++c) {
    const QTableWidgetItem* item = table->horizontalHeaderItem(c);
    if (item && item->text().replace('\n', ' ') == header) return c;
  }
  return -1;
}

QMessageBox* VisibleErrorDialog() {
  for (QWidget* w : QApplication::topLevelWidgets()) {
    if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible() && box->objectName() == "errorDialog") {
      return box;
    }
  }
  return nullptr;
}

void OpenAndSettle(MainWindow& window, const QStringList& paths) {
  window.openFiles(paths);
  window.document()->waitForLoads();
  window.document()->waitForIdle();
  QApplication::processEvents();
}

// The PowerSGD sample, settled, in a shown window of the size most tests use.
void ShowPowerSgdSample(MainWindow& window) {
  window.resize(1400, 900);
  window.show();
  OpenAndSettle(window, {SampleTrace(kPowerSgd)});
}

// What a person would call clipped in a drawn figure: a title squeezed
// below the height its lines need, legend entries drawn over each other, an
// axis rect too small to read. Empty when the figure is fine.
QStringList FigureProblems(QCustomPlot* plot) {
  QStringList problems;
  const QString name = plot->objectName();
  for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
    auto* text = dynamic_cast<QCPTextElement*>(element);
    if (text == nullptr || !text->visible() || text->text().isEmpty()) continue;
    // minimumOuterSizeHint is public on the base class only.
    const int needed = static_cast<QCPLayoutElement*>(text)->minimumOuterSizeHint().height();
    if (text->outerRect().height() < needed) {
      problems << QString("%1: text '%2' squeezed to %3 px of %4")
                      .arg(name, text->text().left(30))
                      .arg(text->outerRect().height())
                      .arg(needed);
    }
  }
  if (QCPLegend* legend = plot->legend; legend != nullptr && legend->visible()) {
    std::vector<QRect> rects;
    for (int i = 0; i < legend->itemCount(); ++i) {
      if (legend->item(i) != nullptr && legend->item(i)->visible()) rects.push_back(legend->item(i)->rect());
    }
    for (size_t i = 0; i < rects.size(); ++i) {
      for (size_t j = i + 1; j < rects.size(); ++j) {
        if (rects[i].intersects(rects[j]))
          problems << QString("%1: legend entries %2 and %3 overlap").arg(name).arg(i).arg(j);
      }
      if (rects[i].height() < QFontMetrics(legend->font()).height()) {
        problems << QString("%1: legend entry %2 is %3 px tall").arg(name).arg(i).arg(rects[i].height());
      }
    }
  }
  for (QCPAxisRect* rect : plot->axisRects()) {
    if (!rect->axis(QCPAxis::atBottom)->visible()) continue;  // a message, not a figure
    // 120 px wide: VGG-19-BN's two Regimes plots at 1280×720 are 148 (two
    // legend columns each, and the shared x axis takes the narrower).
    if (rect->height() < 100 || rect->width() < 120) {
      problems << QString("%1: plot area %2×%3 px").arg(name).arg(rect->width()).arg(rect->height());
    }
    for (QCPAxis* axis : rect->axes()) {
      if (!axis->visible() || axis->label().isEmpty()) continue;
      const int length = axis->orientation() == Qt::Vertical ? rect->height() : rect->width();
      if (QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label()) > length + 20) {
        problems << QString("%1: axis label '%2' longer than its axis").arg(name, axis->label());
      }
    }
  }
  return problems;
}

// Widgets of `tab` drawn outside the window or under another: every plot
// and table lies inside the window (or inside a scroll area's viewport).
QStringList WidgetProblems(QMainWindow& window, QWidget* tab) {
  QStringList problems;
  const QRect inside = window.rect();
  for (QWidget* w : tab->findChildren<QWidget*>()) {
    if (!w->isVisible() || !(qobject_cast<QCustomPlot*>(w) || qobject_cast<QTableWidget*>(w))) continue;
    bool scrolled = false;
    for (QWidget* p = w->parentWidget(); p != nullptr && p != tab; p = p->parentWidget()) {
      scrolled = scrolled || qobject_cast<QAbstractScrollArea*>(p) != nullptr;
    }
    if (scrolled) continue;
    const QRect r(w->mapTo(&window, QPoint(0, 0)), w->size());
    if (!inside.contains(r)) {
      problems << QString("%1 at %2,%3 %4×%5 is outside the window")
                      .arg(w->objectName())
                      .arg(r.x())
                      .arg(r.y())
                      .arg(r.width())
                      .arg(r.height());
    }
  }
  return problems;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // Never read or write the user's own settings (recent files, geometry).
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("Accordion Toolkit");
    QCoreApplication::setApplicationName("accordion-gui-test");
    QSettings().clear();
  }

  void cleanupTestCase() { QSettings().clear(); }

  void runListShowsEachTrace() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace(kTopK), SampleTrace(kDense)});
    QTableWidget* table = window.runList()->table();
    QCOMPARE(window.document()->runCount(), 3);
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->columnCount(), static_cast<int>(RunListView::kColumnCount));
    QCOMPARE(table->horizontalHeaderItem(RunListView::kAccuracy)->text(), QString("Accuracy"));
    for (int row = 0; row < 3; ++row) {
      const RunSummary& s = window.document()->run(row)->summary;
      QVERIFY(CellText(table, row, RunListView::kName).startsWith(QString::fromStdString(s.name)));
      QCOMPARE(CellText(table, row, RunListView::kModel), QString::fromStdString(s.model));
      QCOMPARE(CellText(table, row, RunListView::kScheme), QString::fromStdString(s.scheme));
      QCOMPARE(CellText(table, row, RunListView::kWorkers), QString::number(s.workers));
      QCOMPARE(CellText(table, row, RunListView::kEpochs), QString("30/30"));
      QCOMPARE(CellText(table, row, RunListView::kAccuracy), QString::number(s.final_test_acc * 100, 'f', 2) + " %");
      QCOMPARE(table->item(row, RunListView::kName)->checkState(), Qt::Checked);
    }
    // Rows come in the order the loads finish.
    const int psgd = window.document()->indexOfPath(QFileInfo(SampleTrace(kPowerSgd)).absoluteFilePath());
    const int dense = window.document()->indexOfPath(QFileInfo(SampleTrace(kDense)).absoluteFilePath());
    QVERIFY(psgd >= 0 && dense >= 0);
    QCOMPARE(CellText(table, psgd, RunListView::kName), QString(kPowerSgd));
    QCOMPARE(CellText(table, psgd, RunListView::kModel), QString("mlp"));
    QCOMPARE(CellText(table, psgd, RunListView::kScheme), QString("powersgd"));
    QCOMPARE(CellText(table, psgd, RunListView::kPolicy), QString("accordion"));
    QVERIFY(CellText(table, psgd, RunListView::kFloats).endsWith(" M") ||
            CellText(table, psgd, RunListView::kFloats).endsWith(" G"));

    // A run is current, and its row is selected.
    QVERIFY(window.document()->currentIndex() >= 0);
    QCOMPARE(table->currentRow(), window.document()->currentIndex());
    // Selecting a row makes it the current run.
    table->selectRow(dense);
    QCOMPARE(window.document()->currentIndex(), dense);
    QVERIFY(window.windowTitle().contains(kDense));
    // The checkbox decides what Compare draws.
    table->item(psgd, RunListView::kName)->setCheckState(Qt::Unchecked);
    QVERIFY(!window.document()->isCompared(psgd));
    QCOMPARE(window.document()->comparedRuns().size(), size_t{2});
    // Recent files remember what was opened.
    QVERIFY(RecentFiles::load().contains(QFileInfo(SampleTrace(kTopK)).absoluteFilePath()));
    // Close run drops it from the list.
    window.closeCurrentRun();
    QCOMPARE(table->rowCount(), 2);
  }

  void scheduleControlsDriveTheDocumentAndRedraw() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    ScheduleControls* controls = window.controls();
    RegimesView* regimes = window.regimesView();
    ExplorerDocument* doc = window.document();
    QVERIFY(doc->regimes() != nullptr);
    QCOMPARE(FullHeightBands(regimes->normsPlot()), static_cast<int>(doc->regimes()->model_bands.size()));

    // η through its spin box: the document follows and the slider with it.
    const int draws = regimes->drawCount();
    controls->etaSpin()->setValue(0.3);
    QCOMPARE(doc->scheduleSettings().eta, 0.3);
    QCOMPARE(controls->etaSlider()->value(), 6);
    QVERIFY(regimes->drawCount() > draws);
    QCOMPARE(doc->regimes()->options.eta(), 0.3);
    QCOMPARE(FullHeightBands(regimes->normsPlot()), static_cast<int>(doc->regimes()->model_bands.size()));

    // η through the slider, then the interval.
    controls->etaSlider()->setValue(18);
    QCOMPARE(controls->etaSpin()->value(), 0.9);
    QCOMPARE(doc->scheduleSettings().eta, 0.9);
    controls->intervalSpin()->setValue(3);
    QCOMPARE(doc->scheduleSettings().interval, 3);
    QCOMPARE(doc->regimes()->options.interval(), 3);
    QCOMPARE(FullHeightBands(regimes->normsPlot()), static_cast<int>(doc->regimes()->model_bands.size()));
    QCOMPARE(FullHeightBands(regimes->ratiosPlot()), static_cast<int>(doc->regimes()->model_bands.size()));

    // A small η finds more critical epochs than a large one: the plot shows
    // the document's answer, not a fixed picture.
    controls->etaSpin()->setValue(0.05);
    controls->intervalSpin()->setValue(1);
    const int bands_small_eta = FullHeightBands(regimes->normsPlot());
    QCOMPARE(bands_small_eta, static_cast<int>(doc->regimes()->model_bands.size()));

    // Levels: "auto" is the minimum; a value sets the pair explicitly.
    QVERIFY(!doc->scheduleSettings().level_low.has_value());
    QVERIFY(controls->lowSpin()->specialValueText().startsWith("auto"));
    controls->lowSpin()->setValue(4);
    QCOMPARE(doc->scheduleSettings().level_low, std::optional<double>(4));
    QCOMPARE(doc->regimes()->resolved.level_low, 4.0);
    controls->lowSpin()->setValue(0);
    QVERIFY(!doc->scheduleSettings().level_low.has_value());

    // Scheme: a dense trace explored as TopK.
    controls->schemeCombo()->setCurrentIndex(controls->schemeCombo()->findText("TopK"));
    QCOMPARE(doc->scheduleSettings().scheme, std::optional<Scheme>(Scheme::kTopK));
    controls->schemeCombo()->setCurrentIndex(0);
    QVERIFY(!doc->scheduleSettings().scheme.has_value());

    // The read-out shows the document's floats and the ratio.
    const auto analysis = doc->regimes();
    QVERIFY(analysis->schedulable);
    QVERIFY(controls->readout()->text().contains("Accordion"));
    QVERIFY(controls->readout()->text().contains(
        QString::number(analysis->low_floats() / analysis->accordion_floats(), 'f', 2) + "×"));

    // Settings changed elsewhere show in the controls.
    ScheduleSettings s = doc->scheduleSettings();
    s.eta = 0.55;
    s.interval = 7;
    doc->setScheduleSettings(s);
    QCOMPARE(controls->etaSpin()->value(), 0.55);
    QCOMPARE(controls->intervalSpin()->value(), 7);
    QCOMPARE(controls->etaSlider()->value(), 11);
  }

  // The controls say whether they show the run's recorded settings or
  // explored ones; another run shows its own; one click goes back.
  void settingsAreEachRunsOwnWithAReset() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace(kTopK)});
    ExplorerDocument* doc = window.document();
    ScheduleControls* controls = window.controls();
    const int psgd = doc->indexOfPath(SampleTrace(kPowerSgd));
    const int topk = doc->indexOfPath(SampleTrace(kTopK));
    window.runList()->table()->selectRow(psgd);
    QVERIFY(controls->stateLabel()->text().contains("As recorded"));
    QVERIFY(!controls->resetButton()->isEnabled());
    controls->schemeCombo()->setCurrentIndex(controls->schemeCombo()->findText("TopK"));
    controls->etaSpin()->setValue(0.3);
    QVERIFY(controls->stateLabel()->text().contains("Explored"));
    QVERIFY(controls->resetButton()->isEnabled());

    window.runList()->table()->selectRow(topk);
    QCOMPARE(doc->currentIndex(), topk);
    QVERIFY(controls->stateLabel()->text().contains("As recorded"));
    QCOMPARE(controls->schemeCombo()->currentIndex(), 0);  // "as recorded"
    QCOMPARE(controls->etaSpin()->value(), doc->currentRun()->view().run.eta);
    QVERIFY(!controls->resetButton()->isEnabled());

    window.runList()->table()->selectRow(psgd);
    QCOMPARE(controls->schemeCombo()->currentText(), QString("TopK"));
    QCOMPARE(controls->etaSpin()->value(), 0.3);
    controls->resetButton()->click();
    QVERIFY(doc->settingsAsRecorded());
    QCOMPARE(controls->schemeCombo()->currentIndex(), 0);
    QCOMPARE(controls->etaSpin()->value(), doc->currentRun()->view().run.eta);
    QVERIFY(controls->stateLabel()->text().contains("As recorded"));
    QVERIFY(!controls->resetButton()->isEnabled());
    doc->waitForIdle();
  }

  // The two stacked Regimes plots share their x axis: an epoch is at the
  // same x in both, whatever their y labels and legends, at any size.
  void regimePlotsShareTheirXAxis() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace("gpu/vgg19bn-powersgd-accordion.trace")});
    RegimesView* regimes = window.regimesView();
    for (const QSize size : {QSize(1280, 720), QSize(1600, 1000)}) {
      window.resize(size);
      for (int run = 0; run < window.document()->runCount(); ++run) {
        window.runList()->table()->selectRow(run);
        for (int round = 0; round < 5; ++round) QApplication::processEvents();
        PlotWidget* norms = regimes->normsPlot();
        PlotWidget* ratios = regimes->ratiosPlot();
        for (double epoch : {0.0, 5.0}) {
          const int top = norms->mapTo(&window, QPoint(int(norms->xAxis->coordToPixel(epoch)), 0)).x();
          const int bottom = ratios->mapTo(&window, QPoint(int(ratios->xAxis->coordToPixel(epoch)), 0)).x();
          QVERIFY2(std::abs(top - bottom) <= 1, qPrintable(QString("%1×%2, run %3, epoch %4: x %5 above, %6 below")
                                                               .arg(size.width())
                                                               .arg(size.height())
                                                               .arg(run)
                                                               .arg(epoch)
                                                               .arg(top)
                                                               .arg(bottom)));
        }
      }
    }
  }

  // A click on a series' legend entry hides it, a second shows it again;
  // a band's swatch is no series and stays.
  void legendClickHidesASeries() {
    MainWindow window;
    ShowPowerSgdSample(window);
    PlotWidget* norms = window.regimesView()->normsPlot();
    norms->replot(QCustomPlot::rpImmediateRefresh);
    QCPAbstractPlottable* series = norms->graph(0);
    auto* entry = norms->legend->itemWithPlottable(series);
    QVERIFY(entry != nullptr);
    QVERIFY(series->visible());
    QTest::mouseClick(norms, Qt::LeftButton, Qt::NoModifier, entry->rect().center());
    QVERIFY(!series->visible());
    QTest::mouseClick(norms, Qt::LeftButton, Qt::NoModifier, entry->rect().center());
    QVERIFY(series->visible());
    for (int i = 0; i < norms->legend->itemCount(); ++i) {
      auto* swatch = qobject_cast<QCPPlottableLegendItem*>(norms->legend->item(i));
      if (swatch == nullptr || !style::IsLegendOnly(swatch->plottable())) continue;
      QTest::mouseClick(norms, Qt::LeftButton, Qt::NoModifier, swatch->rect().center());
      QVERIFY(swatch->plottable()->visible());
      break;
    }
  }

  // Hovering a curve's point names the series, the x and the value; empty
  // space says nothing.
  void hoverShowsSeriesAndValue() {
    MainWindow window;
    ShowPowerSgdSample(window);
    PlotWidget* norms = window.regimesView()->normsPlot();
    norms->replot(QCustomPlot::rpImmediateRefresh);
    QCPGraph* series = norms->graph(0);
    const auto point = series->data()->at(10);
    const QPoint at(int(norms->xAxis->coordToPixel(point->key)), int(norms->yAxis->coordToPixel(point->value)));
    const QString text = norms->valueAt(at);
    QVERIFY2(text.startsWith(series->name() + "\n"), qPrintable(text));
    QVERIFY2(text.contains(QString("epoch %1: %2").arg(point->key).arg(style::Sci(point->value))), qPrintable(text));
    QVERIFY(norms->valueAt(QPoint(2, 2)).isEmpty());
  }

  void layerListFiltersTheRegimePlots() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    RegimesView* regimes = window.regimesView();
    const int layers = window.document()->currentRun()->view().num_layers();
    QCOMPARE(regimes->layerList()->count(), layers);
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), layers);
    regimes->filterEdit()->setText("weight");
    const auto matching = LayersMatching(*window.document()->currentRun(), "weight");
    QCOMPARE(regimes->shownLayers(), matching);
    QVERIFY(static_cast<int>(matching.size()) < layers);
    regimes->findChild<QPushButton*>("layersNone")->click();
    QVERIFY(regimes->shownLayers().empty());
    regimes->filterEdit()->clear();
    // The bias layers the filter hid are still checked.
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), layers - static_cast<int>(matching.size()));
    regimes->findChild<QPushButton*>("layersAll")->click();
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), layers);
    const int draws = regimes->drawCount();
    regimes->groupCheck()->setChecked(true);
    QVERIFY(regimes->drawCount() > draws);
  }

  void corruptTraceOpensADialogAndTheWindowStaysUsable() {
    const QString dir = ScratchDir("corrupt");
    const QString bad = gui::test_support::WriteTruncatedTrace(dir, "cut.trace");
    QVERIFY(!bad.isEmpty());
    MainWindow window;
    window.show();
    OpenAndSettle(window, {bad});
    QCOMPARE(window.errorCount(), 1);
    QVERIFY(window.lastError().contains("cut.trace"));
    QCOMPARE(window.errors().size(), 1);
    // The status bar gives the reason too, not only "Cannot open <path>:".
    const QString status = window.statusBar()->currentMessage();
    QVERIFY2(status.contains("cut.trace") && !status.trimmed().endsWith(':') &&
                 status.size() > QString("Cannot open %1:").arg(bad).size() + 5,
             qPrintable(status));
    QCOMPARE(window.document()->runCount(), 0);
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = VisibleErrorDialog()) != nullptr);
    QVERIFY(box->text().contains("cut.trace"));
    // The reader's one-line reason, not just "failed".
    QVERIFY(box->text().section('\n', 1).trimmed().size() > 5);
    box->accept();
    QTRY_VERIFY(VisibleErrorDialog() == nullptr);

    // A missing file in a missing directory (a mistyped path; a missing file
    // in a directory that exists is waited for): another dialog, and a good
    // trace still opens after.
    OpenAndSettle(window, {dir + "/no-such-dir/no-such.trace"});
    QCOMPARE(window.errorCount(), 2);
    QTRY_VERIFY((box = VisibleErrorDialog()) != nullptr);
    box->accept();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    QCOMPARE(window.document()->runCount(), 1);
    QCOMPARE(window.runList()->table()->rowCount(), 1);
    QVERIFY(window.document()->regimes() != nullptr);
    // Files that failed are not offered as recent.
    QVERIFY(!RecentFiles::load().contains(QFileInfo(dir + "/no-such-dir/no-such.trace").absoluteFilePath()));
  }

  void liveTraceGrowsWhileOpen() {
    const QString dir = ScratchDir("live");
    synthetic::SyntheticTraceOptions options;
    options.model = "mlp";
    options.world_size = 2;
    options.epochs = 6;
    options.decay_epochs = {};
    options.final_status = RunStatus::kRunning;
    const QString path = gui::test_support::WriteSynthetic(dir, "live.trace", options);
    MainWindow window;
    window.show();
    OpenAndSettle(window, {path});
    QCOMPARE(window.document()->runCount(), 1);
    QVERIFY(window.document()->currentRun()->live());
    QTableWidget* table = window.runList()->table();
    QVERIFY(CellText(table, 0, RunListView::kEpochs).startsWith("6/"));
    QVERIFY(CellText(table, 0, RunListView::kEpochs).contains("live"));

    // The trainer writes five more epochs: a new file renamed over the old
    // one, as an atomic writer would.
    options.epochs = 11;
    const QString grown = gui::test_support::WriteSynthetic(dir, "grown.tmp", options);
    QVERIFY(std::rename(grown.toLocal8Bit().constData(), path.toLocal8Bit().constData()) == 0);
    window.document()->pollLiveRuns();
    QTRY_COMPARE(window.document()->run(0)->summary.epochs, 11);
    QTRY_VERIFY(CellText(table, 0, RunListView::kEpochs).startsWith("11/"));
    QVERIFY(window.statusBar()->currentMessage().contains("live.trace"));
    QVERIFY(window.statusBar()->currentMessage().contains("11"));
    // The views show the new epochs: the regimes are derived from 11 of them.
    QCOMPARE(window.document()->regimes()->comparison.accordion.critical.size(), size_t{11});
  }

  // docs/gui.md's live run: the trace opened before `accordion-train
  // --trace` has created it. The status line says, in one line, that it is
  // waited for; no error; the run opens when the trainer's first epoch lands
  // and follows it to the end. ACCORDION_TRAIN names the trainer where this
  // build has none (ACCORDION_BUILD_TRAINER=OFF).
  void opensARunBeforeTheTrainerWritesIt() {
    const QString trainer = qEnvironmentVariable("ACCORDION_TRAIN", QString(ACCORDION_BIN_DIR) + "/accordion-train");
    if (!QFileInfo(trainer).isExecutable()) QSKIP("accordion-train is not built (set ACCORDION_TRAIN)");
    const QString path = ScratchDir("train-live") + "/live.trace";
    MainWindow window;
    window.show();
    window.openFiles({path});
    window.document()->waitForLoads();
    QApplication::processEvents();
    QCOMPARE(window.errorCount(), 0);
    QCOMPARE(window.document()->waitingPaths(), QStringList{QFileInfo(path).absoluteFilePath()});
    const QString message = window.statusBar()->currentMessage();
    QVERIFY2(message.startsWith("Waiting for live.trace to appear") && !message.contains('\n'), qPrintable(message));
    QProcess train;
    train.setProcessChannelMode(QProcess::MergedChannels);
    train.start(trainer,
                {"--dataset", "synthetic", "--nproc", "2", "--model", "mlp", "--epochs",   "4", "--scheme", "powersgd",
                 "--policy",  "accordion", "--low",   "2", "--high",  "1",   "--interval", "2", "--trace",  path});
    QVERIFY(train.waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->runCount() == 1, 60000);
    QCOMPARE(window.errorCount(), 0);
    QVERIFY(window.document()->waitingPaths().isEmpty());
    // (Already done, waitForFinished would say false.)
    if (train.state() != QProcess::NotRunning) QVERIFY(train.waitForFinished(120000));
    QCOMPARE(train.exitStatus(), QProcess::NormalExit);
    QVERIFY2(train.exitCode() == 0, train.readAll().constData());
    // Followed to the end: all four epochs, the run no longer live.
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->run(0)->summary.epochs == 4 && !window.document()->run(0)->live(),
                             10000);
    QCOMPARE(window.errorCount(), 0);
  }

  void exportsTheCurrentFigure() {
    MainWindow window;
    ShowPowerSgdSample(window);
    const QString dir = ScratchDir("export");
    for (int tab = 0; tab < window.tabs()->count(); ++tab) {
      window.tabs()->setCurrentIndex(tab);
      window.document()->waitForIdle();  // the Sweep tab computes once shown
      QApplication::processEvents();
      PlotWidget* figure = window.currentFigure();
      QVERIFY(figure != nullptr);
      QVERIFY(window.tabs()->currentWidget()->isAncestorOf(figure));
      for (const char* suffix : {"png", "pdf", "csv"}) {
        const QString path = QString("%1/%2.%3").arg(dir, MainWindow::tabKeys()[tab], suffix);
        QString error;
        QVERIFY2(window.exportCurrentFigure(path, &error), qPrintable(error));
        QVERIFY2(QFileInfo(path).size() > 0, qPrintable(path));
      }
      QFile csv(QString("%1/%2.csv").arg(dir, MainWindow::tabKeys()[tab]));
      QVERIFY(csv.open(QIODevice::ReadOnly));
      QVERIFY2(csv.readAll().count('\n') > 1, qPrintable(MainWindow::tabKeys()[tab]));
    }
    QFile png(dir + "/regimes.png");
    QVERIFY(png.open(QIODevice::ReadOnly));
    QVERIFY(png.read(8).startsWith("\x89PNG"));
    QFile pdf(dir + "/regimes.pdf");
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    // An unknown suffix is refused with a reason.
    QString error;
    QVERIFY(!window.exportCurrentFigure(dir + "/figure.bmpx", &error));
    QVERIFY(!error.isEmpty());
    // The figure last pointed at is the one exported.
    window.tabs()->setCurrentIndex(0);
    emit window.regimesView()->ratiosPlot()->activated(window.regimesView()->ratiosPlot());
    QCOMPARE(window.currentFigure(), window.regimesView()->ratiosPlot());
  }

  // The topology menu and the parameter controls come from the simulator's
  // topology descriptions: each built topology is offered, and a parameter's
  // control is enabled only under its topology and reaches the settings and
  // the accordion-sim command line.
  void whatIfOffersEveryTopologyAndItsParameters() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    WhatIfView* what_if = window.whatIfView();
    ExplorerDocument* doc = window.document();
    auto* topology = what_if->findChild<QComboBox*>("topologyCombo");
    for (const sim::TopologyDescription& d : sim::AllTopologies()) QVERIFY(topology->findText(d.name) >= 0);
    auto* gpus = what_if->findChild<QDoubleSpinBox*>("gpusPerNodeSpin");
    auto* per_leaf = what_if->findChild<QDoubleSpinBox*>("hostsPerLeafSpin");
    QVERIFY(gpus != nullptr);
    QVERIFY(per_leaf != nullptr);
    topology->setCurrentIndex(topology->findText("hierarchical"));
    emit topology->activated(topology->currentIndex());
    QVERIFY(gpus->isEnabled());
    QVERIFY(!per_leaf->isEnabled());
    gpus->setValue(4);
    QCOMPARE(doc->whatIfSettings().topology, sim::Topology::kHierarchical);
    QCOMPARE(doc->whatIfSettings().topology_parameters.at("gpus_per_node"), 4.0);
    QVERIFY(what_if->cliLabel()->text().contains("--gpus-per-node 4"));
    QVERIFY(!what_if->cliLabel()->text().contains("--hosts-per-leaf"));
    topology->setCurrentIndex(topology->findText("fat-tree"));
    emit topology->activated(topology->currentIndex());
    QVERIFY(!gpus->isEnabled());
    QVERIFY(per_leaf->isEnabled());
    QVERIFY(what_if->cliLabel()->text().contains("--hosts-per-leaf 16"));
    doc->waitForIdle();
  }

  // The recorded link rate is unknown until checked; checked, its value
  // reaches the settings and the command line.
  void whatIfRecordedBandwidthIsUnknownUntilChecked() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    WhatIfView* what_if = window.whatIfView();
    ExplorerDocument* doc = window.document();
    auto* known = what_if->findChild<QCheckBox*>("recordedBandwidthCheck");
    auto* rate = what_if->findChild<QDoubleSpinBox*>("recordedBandwidthSpin");
    QVERIFY(known != nullptr && rate != nullptr);
    QVERIFY(!known->isChecked());
    QVERIFY(!rate->isEnabled());
    QVERIFY(!rate->toolTip().isEmpty());
    QVERIFY(!doc->whatIfSettings().recorded_bandwidth_gbps);
    known->setChecked(true);
    QVERIFY(rate->isEnabled());
    rate->setValue(2.5);
    QCOMPARE(doc->whatIfSettings().recorded_bandwidth_gbps, std::optional(2.5));
    QVERIFY(what_if->cliLabel()->text().contains("--recorded-bandwidth-gbps 2.5"));
    known->setChecked(false);
    QVERIFY(!rate->isEnabled());
    QVERIFY(!doc->whatIfSettings().recorded_bandwidth_gbps);
    QVERIFY(!what_if->cliLabel()->text().contains("--recorded-bandwidth-gbps"));
    doc->waitForIdle();
  }

  // A dense run has no schedule: the table shows dense alone, not
  // "Accordion", "static dense" and "static dense" all alike, and the
  // bandwidth figure says why it has nothing to show.
  void whatIfShowsNoScheduleForADenseRun() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kDense)});
    window.tabs()->setCurrentWidget(window.whatIfView());
    ExplorerDocument* doc = window.document();
    doc->waitForIdle();
    QApplication::processEvents();
    QVERIFY(doc->estimate() != nullptr);
    QTableWidget* results = window.whatIfView()->resultsTable();
    for (int row = 0; row < 3; ++row) QVERIFY2(results->isRowHidden(row), qPrintable(QString::number(row)));
    QVERIFY(!results->isRowHidden(3));
    QCOMPARE(CellText(results, 3, 0), QString("dense"));
    QVERIFY(results->toolTip().startsWith("No schedule: dense"));
    // A PowerSGD run shows every row again.
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    doc->waitForIdle();
    QApplication::processEvents();
    for (int row = 0; row < 4; ++row) QVERIFY(!results->isRowHidden(row));
  }

  void whatIfFormProjectsTheRun() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    WhatIfView* what_if = window.whatIfView();
    ExplorerDocument* doc = window.document();
    what_if->findChild<QSpinBox*>("workersSpin")->setValue(16);
    what_if->findChild<QDoubleSpinBox*>("bandwidthSpin")->setValue(10);
    // Unchecked, the latency is the trace's network's, as accordion-sim's without --latency-us.
    QVERIFY(!doc->whatIfSettings().latency_us.has_value());
    QVERIFY(!what_if->findChild<QDoubleSpinBox*>("latencySpin")->isEnabled());
    what_if->findChild<QCheckBox*>("latencyGivenCheck")->setChecked(true);
    what_if->findChild<QDoubleSpinBox*>("latencySpin")->setValue(20);
    auto* topology = what_if->findChild<QComboBox*>("topologyCombo");
    topology->setCurrentIndex(topology->findText("fat-tree"));
    emit topology->activated(topology->currentIndex());
    auto* allreduce = what_if->findChild<QComboBox*>("allreduceCombo");
    allreduce->setCurrentIndex(allreduce->findText("tree"));
    QCOMPARE(doc->whatIfSettings().workers, 16);
    QCOMPARE(doc->whatIfSettings().bandwidth_gbps, 10.0);
    QCOMPARE(doc->whatIfSettings().latency_us.value_or(-1), 20.0);
    QCOMPARE(doc->whatIfSettings().topology, sim::Topology::kFatTree);
    QCOMPARE(doc->whatIfSettings().allreduce, sim::AllReduceAlgorithm::kTree);
    doc->waitForIdle();
    QApplication::processEvents();
    const auto projection = doc->projection();
    QVERIFY(projection != nullptr);
    QCOMPARE(projection->timing, sim::TimingSource::kAnalytic);
    QVERIFY(what_if->sourceLabel()->text().contains("α–β estimate"));
    QTableWidget* results = what_if->resultsTable();
    QCOMPARE(results->rowCount(), 4);
    QCOMPARE(CellText(results, 3, 0), QString::fromStdString(projection->dense.label).isEmpty()
                                          ? QString("dense")
                                          : QString::fromStdString(projection->dense.label));
    QCOMPARE(CellText(results, 3, 3), QString("—"));  // dense against itself
    QCOMPARE(CellText(results, 0, 3), QString::fromStdString(CompareTimes(projection->result.accordion.total.time_s,
                                                                          projection->dense.total.time_s, "")));
    QVERIFY(what_if->cliLabel()->text().startsWith("accordion-sim replay " + QString(kPowerSgd)));
    QVERIFY(what_if->cliLabel()->text().contains("--workers 16"));
    QVERIFY(what_if->cliLabel()->text().contains("--topology fat-tree"));
    QVERIFY(what_if->projectionPlot()->plottableCount() > 0);
    QVERIFY(what_if->sweepPlot()->plottableCount() > 0);
    QVERIFY(what_if->breakdownPlot()->plottableCount() > 0);

    // The SimGrid replay, with progress, lands and relabels the table.
    what_if->simulateButton()->click();
    QVERIFY(doc->simulationRunning() || doc->simulation() != nullptr);
    doc->waitForIdle();
    QApplication::processEvents();
    QVERIFY(doc->simulation() != nullptr);
    QVERIFY(what_if->sourceLabel()->text().contains("SimGrid replay"));
    QVERIFY(what_if->cliLabel()->text().contains("--timing simulate"));
    QVERIFY(!what_if->progressBar()->isVisible());
    QVERIFY(what_if->simulateButton()->isEnabled());

    // A new setting drops the replay and goes back to the estimate.
    what_if->findChild<QSpinBox*>("workersSpin")->setValue(32);
    doc->waitForIdle();
    QApplication::processEvents();
    QVERIFY(what_if->sourceLabel()->text().contains("α–β estimate"));
  }

  // The what-if tab's sentences are the sentence builder's, on the numbers
  // its plots show, for a setting where Accordion pays (64 workers over
  // 25 Gb/s) and one where it is slower (2 workers over 100 Gb/s). With
  // ACCORDION_SCREENSHOT_DIR set, each is saved there as a PNG to look at.
  // A trace whose probe saw a token-bucket shaper: the what-if names the
  // shaper it replays under its source line, as accordion-sim's "shaper:".
  void whatIfSaysTheShaperItReplays() {
    const std::vector<NetworkProbeRecord> probe = accordion::test_support::ShapedTwoRankProbe(1, 65536);
    const QString trace = ScratchDir("shaped") + "/shaped.trace";
    accordion::test_support::CopyWithNetworkProbe(SampleTrace(kPowerSgd).toStdString(), trace.toStdString(), probe);
    MainWindow window;
    window.resize(1500, 950);
    OpenAndSettle(window, {trace});
    WhatIfView* what_if = window.whatIfView();
    what_if->findChild<QSpinBox*>("workersSpin")->setValue(2);
    what_if->findChild<QDoubleSpinBox*>("bandwidthSpin")->setValue(0.5);
    window.document()->waitForIdle();
    QApplication::processEvents();
    const QString source = what_if->sourceLabel()->text();
    QVERIFY2(source.contains("Token-bucket shaper on every link: bursts of up to 64 KiB per link at the line rate, "
                             "then 0.5 Gb/s sustained"),
             qPrintable(source));
    if (const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QDir().mkpath(shots);
      window.tabs()->setCurrentWidget(what_if);
      QApplication::processEvents();
      QVERIFY(window.grab().save(shots + "/what-if-shaper.png"));
    }
  }

  void whatIfHeadlinesAreTrueOfTheirPlots() {
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    window.tabs()->setCurrentIndex(MainWindow::tabKeys().indexOf("what-if"));
    WhatIfView* what_if = window.whatIfView();
    ExplorerDocument* doc = window.document();
    const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
    const struct {
      int workers;
      double gbps;
      const char* name;
    } settings[] = {{64, 25, "what-if-64x25"}, {2, 100, "what-if-2x100"}};
    for (const auto& s : settings) {
      what_if->findChild<QSpinBox*>("workersSpin")->setValue(s.workers);
      what_if->findChild<QDoubleSpinBox*>("bandwidthSpin")->setValue(s.gbps);
      doc->waitForIdle();
      QApplication::processEvents();
      const auto projection = doc->projection();
      const auto sweep = doc->sweep();
      QVERIFY(projection != nullptr && sweep != nullptr);
      const sim::ReplayResult& r = projection->result;
      auto* subtitle = qobject_cast<QCPTextElement*>(what_if->projectionPlot()->plotLayout()->element(1, 0));
      QVERIFY(subtitle != nullptr);
      const std::string against = ProjectionHeadline(r.accordion.total.time_s, projection->dense.total.time_s, 0, 0);
      QVERIFY2(subtitle->text().startsWith(QString::fromStdString(against)), qPrintable(subtitle->text()));
      auto* headline = qobject_cast<QCPTextElement*>(what_if->sweepPlot()->plotLayout()->element(1, 0));
      QVERIFY(headline != nullptr);
      QCOMPARE(headline->text(), QString::fromStdString(SweepHeadline(*sweep)));
      // A ratio below 1 is said the other way round ("1.72× slower"), never "0.58×".
      const QRegularExpression below_one("(^|[^0-9.])0\\.[0-9]+×");
      QVERIFY2(!below_one.match(subtitle->text()).hasMatch(), qPrintable(subtitle->text()));
      QVERIFY2(!below_one.match(headline->text()).hasMatch(), qPrintable(headline->text()));
      // The table says it the same way: Accordion's row against dense.
      auto* table = what_if->findChild<QTableWidget*>("projectionTable");
      QVERIFY(table != nullptr);
      QCOMPARE(table->item(0, 3)->text(),
               QString::fromStdString(CompareTimes(r.accordion.total.time_s, projection->dense.total.time_s, "")));
      QCOMPARE(table->item(3, 3)->text(), QString("—"));
      for (int row = 0; row < 4; ++row) {
        QVERIFY2(!below_one.match(table->item(row, 3)->text()).hasMatch(), qPrintable(table->item(row, 3)->text()));
      }
      if (!shots.isEmpty()) {
        QDir().mkpath(shots);
        QVERIFY(window.grab().save(shots + "/" + s.name + ".png"));
      }
    }
  }

  // The what-if says how it scaled the run (the per-worker batch kept, the
  // global batch and steps that gives) and, once the SimGrid replay is in,
  // whether it and the α–β estimate disagree on Accordion against dense.
  void whatIfStatesItsAssumptions() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd)});
    WhatIfView* what_if = window.whatIfView();
    ExplorerDocument* doc = window.document();
    const RunInfo& info = doc->currentRun()->view().run;
    const struct {
      int workers;
      double gbps;
    } settings[] = {{64, 25}, {2, 100}, {8, 2}, {8, 3}, {16, 4}};
    int disagreements = 0;
    for (const auto& setting : settings) {
      what_if->findChild<QSpinBox*>("workersSpin")->setValue(setting.workers);
      what_if->findChild<QDoubleSpinBox*>("bandwidthSpin")->setValue(setting.gbps);
      doc->waitForIdle();
      QApplication::processEvents();
      auto projection = doc->projection();
      QVERIFY(projection != nullptr);
      const QString assumption = what_if->assumptionLabel()->text();
      const sim::EpochProjection& first = projection->dense.epochs.front();
      QVERIFY2(assumption.contains("per-worker batch kept"), qPrintable(assumption));
      QVERIFY2(assumption.contains(QString("%1 workers × %2 = global batch %3, %4 steps an epoch")
                                       .arg(setting.workers)
                                       .arg(info.batch_size / info.world_size)
                                       .arg(first.global_batch)
                                       .arg(first.steps)),
               qPrintable(assumption));
      QCOMPARE(first.global_batch, info.batch_size / info.world_size * setting.workers);
      // isVisibleTo: the what-if tab itself is not the one shown.
      QVERIFY(!what_if->disagreementLabel()->isVisibleTo(what_if));  // the estimate alone
      what_if->simulateButton()->click();
      doc->waitForIdle();
      QApplication::processEvents();
      QVERIFY(doc->simulation() != nullptr && doc->estimate() != nullptr);
      const double est = doc->estimate()->dense.total.time_s / doc->estimate()->result.accordion.total.time_s;
      const double sim = doc->simulation()->dense.total.time_s / doc->simulation()->result.accordion.total.time_s;
      auto side = [](double r) { return r > 1.005 ? 1 : r < 1 / 1.005 ? -1 : 0; };
      const bool disagree = side(est) != side(sim);
      qInfo("%d workers, %g Gb/s: dense/Accordion %.3f (α–β) %.3f (SimGrid)", setting.workers, setting.gbps, est, sim);
      QCOMPARE(what_if->disagreementLabel()->isVisibleTo(what_if), disagree);
      if (disagree) {
        ++disagreements;
        if (const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR"); !shots.isEmpty()) {
          QDir().mkpath(shots);
          window.tabs()->setCurrentWidget(what_if);
          QApplication::processEvents();
          QVERIFY(window.grab().save(shots + "/what-if-models-disagree.png"));
        }
        const QString text = what_if->disagreementLabel()->text();
        QVERIFY2(text.contains("Trust the SimGrid replay"), qPrintable(text));
        QVERIFY2(text.contains(QString::fromStdString(CompareTimes(doc->simulation()->result.accordion.total.time_s,
                                                                   doc->simulation()->dense.total.time_s, "dense"))),
                 qPrintable(text));
      }
    }
    // Near where Accordion starts to pay, the two crossovers differ: on
    // 2026-11-26, 8 workers at 2 Gb/s were 1.12× faster (α–β) and 1.07×
    // slower (SimGrid). If the simulator moves them, pick settings that
    // straddle the new crossovers.
    QVERIFY2(disagreements > 0, "no setting here where the two models disagree: the label went untested");
  }

  void compareTabTabulatesCheckedRuns() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace("fmnist-mlp-powersgd-static-2.trace"),
                           SampleTrace("fmnist-mlp-powersgd-static-1.trace"), SampleTrace(kPowerSgd)});
    CompareView* compare = window.compareView();
    QTRY_VERIFY(!compare->tableLoading());
    QTRY_COMPARE(compare->table()->rowCount(), 3);
    QStringList settings;
    for (int r = 0; r < 3; ++r) settings << CellText(compare->table(), r, 3);
    QVERIFY(settings.filter("Accordion").size() == 1);
    // The 1x row: the setting that sends the most.
    QVERIFY(settings.contains(
        QString::fromStdString(BuildResultsTable({SampleTrace(kPowerSgd).toStdString()}).front().setting)));
    QCOMPARE(compare->epochPlot()->graphCount(), 3);
    QCOMPARE(compare->floatsPlot()->graphCount(), 3);
    // Each run's colour: its curve's is its swatch in the run list.
    const auto colours = [&] {
      std::map<QString, QColor> by_run;
      for (int g = 0; g < compare->epochPlot()->graphCount(); ++g) {
        by_run[compare->epochPlot()->graph(g)->name()] = compare->epochPlot()->graph(g)->pen().color();
      }
      return by_run;
    };
    const std::map<QString, QColor> before = colours();
    QTableWidget* list = window.runList()->table();
    for (int row = 0; row < list->rowCount(); ++row) {
      const QTableWidgetItem* name = list->item(row, RunListView::kName);
      QCOMPARE(name->data(Qt::DecorationRole).value<QColor>(), before.at(name->text()));
    }
    // Unchecking a run takes it out of both plots and the table, and the
    // others keep their colours.
    const QString gone = list->item(0, RunListView::kName)->text();
    list->item(0, RunListView::kName)->setCheckState(Qt::Unchecked);
    QTRY_COMPARE(compare->epochPlot()->graphCount(), 2);
    QTRY_COMPARE(compare->table()->rowCount(), 2);
    for (const auto& [run, colour] : colours()) {
      QVERIFY(run != gone);
      QCOMPARE(colour, before.at(run));
    }
  }

  // Runs that recorded no test accuracy (the hook's default) are compared
  // by their training loss, not shown as two empty plots; the menu also
  // offers throughput.
  void seedsOfOneSettingShareTheirColour() {
    // Two seeds of rank 1 and one run of rank 2: the two seeds' swatches,
    // and their curves, are one colour; rank 2's is another. Before, the
    // second seed's swatch kept its own colour while its curve took the
    // first seed's.
    MainWindow window;
    OpenAndSettle(window,
                  {SampleTrace("fmnist-mlp-powersgd-static-1.trace"), SampleTrace("fmnist-mlp-powersgd-static-2.trace"),
                   SampleTrace("seeds/seed-2/fmnist-mlp-powersgd-static-1.trace")});
    ExplorerDocument* doc = window.document();
    QCOMPARE(doc->runCount(), 3);
    QCOMPARE(doc->colourOf(0), doc->colourOf(2));
    QVERIFY(doc->colourOf(0) != doc->colourOf(1));
    CompareView* compare = window.compareView();
    // A curve per run, and a legend line per setting.
    QTRY_COMPARE(compare->epochPlot()->graphCount(), 3 + 2);
    std::map<QString, QColor> curve;
    for (int g = 0; g < compare->epochPlot()->graphCount(); ++g) {
      curve[compare->epochPlot()->graph(g)->name()] = compare->epochPlot()->graph(g)->pen().color();
    }
    QTableWidget* list = window.runList()->table();
    std::set<QRgb> swatches;
    for (int row = 0; row < list->rowCount(); ++row) {
      const QTableWidgetItem* name = list->item(row, RunListView::kName);
      const QColor swatch = name->data(Qt::DecorationRole).value<QColor>();
      QCOMPARE(swatch, curve.at(name->text()));
      swatches.insert(swatch.rgb());
      if (name->text().contains("static-1")) QVERIFY2(name->toolTip().contains("(seeds)"), qPrintable(name->toolTip()));
    }
    QCOMPARE(swatches.size(), size_t{2});
  }

  void compareDrawsTheLossWhereNoRunRecordedAccuracy() {
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 6;
    o.world_size = 2;
    o.decay_epochs = {4};
    o.writer = kWriterPythonHook;
    o.record_test_metrics = false;
    const QString dir = ScratchDir("compare-loss");
    const QString a = accordion::gui::test_support::WriteSynthetic(dir, "hook-a.trace", o);
    o.seed = 2;
    o.policy = Policy::kStatic;
    o.level_low = o.level_high = 2;
    const QString b = accordion::gui::test_support::WriteSynthetic(dir, "hook-b.trace", o);
    MainWindow window;
    window.show();
    OpenAndSettle(window, {a, b});
    CompareView* compare = window.compareView();
    window.tabs()->setCurrentWidget(compare);
    QTRY_VERIFY(!compare->tableLoading());
    QTRY_COMPARE(compare->epochPlot()->graphCount(), 2);
    QCOMPARE(compare->epochPlot()->yAxis->label(), QString("training loss"));
    for (int g = 0; g < 2; ++g) QCOMPARE(compare->epochPlot()->graph(g)->data()->size(), 6);
    QComboBox* metric = compare->metricCombo();
    metric->setCurrentIndex(metric->findData(static_cast<int>(accordion::gui::CompareMetric::kThroughput)));
    QTRY_COMPARE(compare->epochPlot()->yAxis->label(), QString("throughput (samples/s)"));
    QVERIFY(compare->epochPlot()->graph(0)->data()->size() == 6);
    QVERIFY(compare->epochPlot()->graph(0)->data()->at(0)->value > 0);
    // Smoothing from the visible control: both plots, and a redraw keeps it.
    QComboBox* smoothing = compare->smoothingCombo();
    QVERIFY(smoothing->isVisible());
    smoothing->setCurrentIndex(smoothing->findData(0.9));
    QCOMPARE(compare->epochPlot()->smoothing(), 0.9);
    QCOMPARE(compare->floatsPlot()->smoothing(), 0.9);
    metric->setCurrentIndex(metric->findData(static_cast<int>(accordion::gui::CompareMetric::kTrainLoss)));
    QTRY_COMPARE(compare->epochPlot()->yAxis->label(), QString("training loss"));
    QCOMPARE(compare->epochPlot()->smoothing(), 0.9);
    smoothing->setCurrentIndex(smoothing->findData(0.0));
    QCOMPARE(compare->epochPlot()->smoothing(), 0.0);
  }

  // W&B's pinned run: dense by default, any checked run on request; its
  // row reads "(baseline)" and 1.00×, the others divide by it.
  void comparePinsABaselineRun() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace(kDense)});
    CompareView* compare = window.compareView();
    window.tabs()->setCurrentWidget(compare);
    QTRY_VERIFY(!compare->tableLoading());
    QTableWidget* table = compare->table();
    QTRY_COMPARE(table->rowCount(), 2);
    QVERIFY(ColumnNamed(table, "vs dense") > 0);
    QComboBox* baseline = compare->baselineCombo();
    QVERIFY(baseline->isVisible());
    QCOMPARE(baseline->count(), 3);  // dense (default) and the two runs
    const int pin = baseline->findData(QString::fromStdString(window.document()->run(0)->path));
    QVERIFY(pin > 0);
    baseline->setCurrentIndex(pin);
    emit baseline->activated(pin);
    const QString accordion = "vs Accordion (rank 2 / rank 1)";
    QTRY_VERIFY(ColumnNamed(table, accordion) > 0);
    QTRY_VERIFY(!compare->tableLoading());
    const int vs = ColumnNamed(table, accordion);
    int pinned_row = -1, dense_row = -1;
    for (int r = 0; r < table->rowCount(); ++r) {
      if (CellText(table, r, 3).endsWith("(baseline)")) pinned_row = r;
      if (CellText(table, r, 3) == "dense") dense_row = r;
    }
    QVERIFY(pinned_row >= 0 && dense_row >= 0);
    QCOMPARE(CellText(table, pinned_row, vs), QString("1.00×"));
    QVERIFY2(CellText(table, dense_row, vs).startsWith("0.0"), qPrintable(CellText(table, dense_row, vs)));
    // Unchecked, the pinned run goes and dense is the baseline again.
    window.document()->setCompared(0, false);
    QTRY_VERIFY(ColumnNamed(table, "vs dense") > 0);
    QCOMPARE(baseline->currentIndex(), 0);
  }

  void compareWarnsWhenRunsAreNotLikeForLike() {
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace(kDense)});
    CompareView* compare = window.compareView();
    window.tabs()->setCurrentWidget(compare);
    QLabel* warning = compare->warningLabel();
    QTRY_VERIFY(!compare->tableLoading());
    // Two MLP runs on Fashion-MNIST with 2 workers: nothing to warn about.
    QVERIFY(!warning->isVisible());
    // A ResNet-18 run on one GPU beside them: a visible line says what differs.
    OpenAndSettle(window, {SampleTrace("gpu/resnet18-powersgd-accordion.trace")});
    QTRY_VERIFY(warning->isVisible());
    QVERIFY2(warning->text().contains("model (mlp, resnet18)") && warning->text().contains("workers (2, 1)"),
             qPrintable(warning->text()));
    QVERIFY(!warning->text().contains("dataset"));  // all three are Fashion-MNIST
    // Unchecked, it is no longer compared, and the warning goes.
    const int resnet = window.document()->indexOfPath(
        QFileInfo(SampleTrace("gpu/resnet18-powersgd-accordion.trace")).absoluteFilePath());
    window.document()->setCompared(resnet, false);
    QTRY_VERIFY(!warning->isVisible());
  }

  void levelMapTooltipAndTimelineExport() {
    MainWindow window;
    ShowPowerSgdSample(window);
    window.tabs()->setCurrentWidget(window.levelMapView());
    QApplication::processEvents();
    PlotWidget* map = window.levelMapView()->plot();
    map->replot();
    // The middle of the first layer's row at epoch 0.
    const QPoint cell(static_cast<int>(map->xAxis->coordToPixel(0)), static_cast<int>(map->yAxis->coordToPixel(0)));
    const QString tip = window.levelMapView()->tooltipAt(cell);
    QVERIFY2(tip.contains(QString::fromStdString(window.document()->currentRun()->view().layers[0].name)),
             qPrintable(tip));
    QVERIFY(window.levelMapView()->tooltipAt(QPoint(1, 1)).isEmpty());

    window.tabs()->setCurrentWidget(window.timelineView());
    TimelineView* timeline = window.timelineView();
    // The timeline zooms and pans in time only: its tracks stay put.
    auto* track_rect = timeline->findChild<PlotWidget*>("iteration-timeline")->axisRect();
    QCOMPARE(track_rect->rangeZoom(), Qt::Orientations(Qt::Horizontal));
    QCOMPARE(track_rect->rangeDrag(), Qt::Orientations(Qt::Horizontal));
    QCOMPARE(timeline->epochSpin()->maximum(), 29);
    timeline->epochSpin()->setValue(12);
    const QString path = ScratchDir("timeline") + "/epoch12.json";
    QString error;
    QVERIFY2(timeline->exportPerfetto(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonDocument json = QJsonDocument::fromJson(file.readAll());
    QVERIFY(json.isObject());
    QVERIFY(json.object().value("traceEvents").isArray());
    QVERIFY(!json.object().value("traceEvents").toArray().isEmpty());
  }

  // A laptop's screen: at 1280×720 and 1366×768 the window fits (its
  // minimum size is smaller) and every tab's figures and tables are drawn
  // whole - titles at their height, legend entries apart, plot areas big
  // enough to read - for a PowerSGD and a TopK run (TopK's level labels are
  // the longest) and VGG-19-BN (many layers). With ACCORDION_SCREENSHOT_DIR set, each tab is saved there
  // as <size>-<run>-<tab>.png to look at.
  void fitsALaptopScreen() {
    MainWindow window;
    window.show();
    // VGG-19-BN: 70 layers, whose legends overflowed the ratio plot.
    const char kVgg[] = "gpu/vgg19bn-powersgd-accordion.trace";
    OpenAndSettle(window, {SampleTrace(kPowerSgd), SampleTrace(kTopK), SampleTrace(kVgg)});
    const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
    if (!shots.isEmpty()) QDir().mkpath(shots);
    for (const QSize size : {QSize(1280, 720), QSize(1366, 768)}) {
      QVERIFY2(
          window.minimumSizeHint().width() <= size.width() && window.minimumSizeHint().height() <= size.height(),
          qPrintable(
              QString("minimum %1×%2").arg(window.minimumSizeHint().width()).arg(window.minimumSizeHint().height())));
      window.resize(size);
      QApplication::processEvents();
      QCOMPARE(window.size(), size);
      for (const char* trace : {kPowerSgd, kTopK, kVgg}) {
        window.runList()->table()->selectRow(
            window.document()->indexOfPath(QFileInfo(SampleTrace(trace)).absoluteFilePath()));
        window.document()->waitForIdle();
        for (int tab = 0; tab < window.tabs()->count(); ++tab) {
          window.tabs()->setCurrentIndex(tab);
          window.document()->waitForIdle();  // the Sweep tab computes once shown
          for (int round = 0; round < 5; ++round) QApplication::processEvents();
          QWidget* shown = window.tabs()->currentWidget();
          // A tab whose figures are tabs themselves (the what-if's on a
          // small window): each of them in turn.
          QTabWidget* inner = shown->findChild<QTabWidget*>();
          const int pages = inner != nullptr && inner->isVisible() ? inner->count() : 1;
          for (int page = 0; page < pages; ++page) {
            if (pages > 1) inner->setCurrentIndex(page);
            for (int round = 0; round < 3; ++round) QApplication::processEvents();
            QStringList problems = WidgetProblems(window, shown);
            int figures = 0;
            for (PlotWidget* plot : shown->findChildren<PlotWidget*>()) {
              if (!plot->isVisible()) continue;
              ++figures;
              plot->replot(QCustomPlot::rpImmediateRefresh);
              problems << FigureProblems(plot);
            }
            QVERIFY(figures > 0);
            const QString key = QString("%1x%2-%3-%4%5")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(QFileInfo(trace).completeBaseName().remove("fmnist-mlp-").remove("-accordion"),
                                         MainWindow::tabKeys()[tab], pages > 1 ? QString("-%1").arg(page) : QString());
            if (!shots.isEmpty()) QVERIFY(window.grab().save(shots + "/" + key + ".png"));
            QVERIFY2(problems.isEmpty(), qPrintable(key + ": " + problems.join("; ")));
          }
        }
        // The what-if form scrolls down, never sideways: it is as wide as
        // it shows.
        auto* form = window.whatIfView()->findChild<QScrollArea*>("whatIfForm");
        QVERIFY(form != nullptr);
        QVERIFY2(form->widget()->width() <= form->viewport()->width(),
                 qPrintable(QString("form %1 px in %2").arg(form->widget()->width()).arg(form->viewport()->width())));
        // The what-if table's cells are whole, not "Accord…".
        QTableWidget* results = window.whatIfView()->resultsTable();
        for (int row = 0; row < results->rowCount(); ++row) {
          for (int column = 0; column < results->columnCount(); ++column) {
            const QTableWidgetItem* item = results->item(row, column);
            if (item == nullptr) continue;
            QFont font = item->font();
            // The margins QCommonStyle leaves either side of an item's text.
            const int margin = 2 * (results->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, results) + 1);
            const int needed = QFontMetrics(font).horizontalAdvance(item->text()) + margin;
            QVERIFY2(needed <= results->columnWidth(column), qPrintable(QString("'%1' needs %2 px, has %3")
                                                                            .arg(item->text())
                                                                            .arg(needed)
                                                                            .arg(results->columnWidth(column))));
          }
        }
      }
    }
  }

  void sweepTabMapsEtaAndIntervalAndExploresACell() {
    MainWindow window;
    ShowPowerSgdSample(window);
    ExplorerDocument* doc = window.document();
    SweepView* view = window.sweepView();
    // Unseen, the sweep is not computed: an eta step on the Regimes tab costs nothing more.
    ScheduleSettings s = doc->scheduleSettings();
    s.eta = 0.4;
    doc->setScheduleSettings(s);
    QVERIFY(!doc->etaIntervalSweepRunning());
    QVERIFY(!doc->etaIntervalSweep());
    window.tabs()->setCurrentIndex(MainWindow::tabKeys().indexOf("sweep"));
    QCOMPARE(window.tabs()->tabText(window.tabs()->currentIndex()), QString("Sweep"));
    QVERIFY(doc->etaIntervalSweepRunning());
    doc->waitForIdle();
    QApplication::processEvents();
    const auto sweep = doc->etaIntervalSweep();
    QVERIFY(sweep && sweep->schedulable && sweep->has_time);

    // One cell per setting, each cell's saving; a labelled colour scale.
    PlotWidget* plot = view->plot();
    QCPColorMap* map = nullptr;
    for (int i = 0; i < plot->plottableCount(); ++i) map = map ? map : qobject_cast<QCPColorMap*>(plot->plottable(i));
    QVERIFY(map != nullptr);
    QCOMPARE(map->data()->keySize(), static_cast<int>(sweep->etas.size()));
    QCOMPARE(map->data()->valueSize(), static_cast<int>(sweep->intervals.size()));
    const int eta_03 = static_cast<int>(std::find(sweep->etas.begin(), sweep->etas.end(), 0.3) - sweep->etas.begin());
    const int every_5 =
        static_cast<int>(std::find(sweep->intervals.begin(), sweep->intervals.end(), 5) - sweep->intervals.begin());
    const SweepCell& cell = sweep->at(eta_03, every_5);
    QCOMPARE(map->data()->cell(eta_03, every_5), sweep->Saved(cell, SweepMetric::kFloats) * 100);
    QVERIFY(map->colorScale() != nullptr);
    QCOMPARE(map->colorScale()->axis()->label(), QString("floats saved vs static low (%)"));
    // The recorded setting outlined, the explored one (0.4) dashed.
    QCOMPARE(plot->legend->itemCount(), 2);
    QVERIFY(plot->legend->visible());
    // The headline is the sentence builder's, about these numbers.
    const RunInfo& info = doc->currentRun()->view().run;
    QCOMPARE(view->headline(),
             QString::fromStdString(EtaIntervalHeadline(*sweep, SweepMetric::kFloats, info.eta, info.interval)));
    QVERIFY2(view->headline().contains("of static low's floats"), qPrintable(view->headline()));

    // Hover: the cell's numbers; click: explored everywhere.
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const QPoint at(static_cast<int>(plot->xAxis->coordToPixel(eta_03)),
                    static_cast<int>(plot->yAxis->coordToPixel(every_5)));
    const QString tip = view->tooltipAt(at);
    QVERIFY2(tip.startsWith("η 0.3, a check every 5 epochs"), qPrintable(tip));
    QVERIFY2(tip.contains(QString("low level: traffic changes: %1 of 30 epochs").arg(cell.low_level_epochs)),
             qPrintable(tip));
    QVERIFY2(tip.contains("than static low"), qPrintable(tip));
    QVERIFY(view->tooltipAt(QPoint(1, 1)).isEmpty());
    QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, at);
    QCOMPARE(doc->scheduleSettings().eta, 0.3);
    QCOMPARE(doc->scheduleSettings().interval, 5);
    QCOMPARE(doc->regimes()->options.eta(), 0.3);  // the other views follow
    QCOMPARE(doc->regimes()->options.interval(), 5);
    // η and the interval are the cells': the same sweep, no new one.
    QVERIFY(!doc->etaIntervalSweepRunning());
    QCOMPARE(doc->etaIntervalSweep(), sweep);

    // The switch: time saved, its own scale and sentence.
    view->setMetric(SweepMetric::kTime);
    QCPColorMap* time_map = qobject_cast<QCPColorMap*>(plot->plottable(0));
    QVERIFY(time_map != nullptr);
    QCOMPARE(time_map->colorScale()->axis()->label(), QString("time saved vs static low (%)"));
    QCOMPARE(time_map->data()->cell(eta_03, every_5), sweep->Saved(cell, SweepMetric::kTime) * 100);
    QCOMPARE(view->headline(),
             QString::fromStdString(EtaIntervalHeadline(*sweep, SweepMetric::kTime, info.eta, info.interval)));
    QVERIFY2(view->headline().contains("static low's time") || view->headline().contains("as long as"),
             qPrintable(view->headline()));

    // Another cluster is another sweep, computed while the tab is shown.
    WhatIfSettings w = doc->whatIfSettings();
    w.workers = 8;
    doc->setWhatIfSettings(w);
    QVERIFY(doc->etaIntervalSweepRunning());
    doc->waitForIdle();
    QVERIFY(doc->etaIntervalSweep() && doc->etaIntervalSweep() != sweep);
  }

  void screenshotsWaitForTheSweep() {
    MainWindow window;
    ShowPowerSgdSample(window);
    const QString dir = ScratchDir("shots");
    QString error;
    QVERIFY2(window.saveTabScreenshots(dir, &error), qPrintable(error));
    QCOMPARE(QFileInfo(dir + "/sweep.png").exists(), true);
    const QImage shot(dir + "/sweep.png");
    // The heat map, not "Computing…": the cells that save the most are the
    // high level's blue.
    int blue = 0;
    for (int y = 0; y < shot.height(); ++y) {
      for (int x = 0; x < shot.width(); ++x) blue += QColor(shot.pixel(x, y)) == style::LevelHighColor();
    }
    QVERIFY2(blue > 1000, qPrintable(QString("%1 blue pixels").arg(blue)));
  }

  // The Policies tab: every policy that fits the scheme, derived from a v4
  // trace's gradient moments and error profile, each row the comparison the
  // document computed (accordion-sim compare-policies' numbers) on the
  // What-if tab's cluster; computed only once the tab is seen, again for
  // another cluster; a batch run compared with Smith et al.; an old trace
  // without moments gets a note instead of AdaQS, a dense run a reason.
  void policiesTabComparesEveryPolicy() {
    const QString dir = ScratchDir("policies");
    const QString powersgd = WritePolicyTrace(dir, "powersgd-v4.trace", Scheme::kPowerSgd);
    const QString batch = WritePolicyTrace(dir, "batch-v4.trace", Scheme::kBatch);
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    OpenAndSettle(window, {powersgd, batch, SampleTrace(kPowerSgd), SampleTrace(kDense)});
    ExplorerDocument* doc = window.document();
    QCOMPARE(doc->currentRun()->path, QFileInfo(powersgd).absoluteFilePath().toStdString());
    // Unseen, nothing is computed.
    QVERIFY(!doc->policiesRunning());
    QVERIFY(!doc->policies());
    const int tab = MainWindow::tabKeys().indexOf("policies");
    QVERIFY(tab >= 0);
    window.tabs()->setCurrentIndex(tab);
    QCOMPARE(window.tabs()->tabText(tab), QString("Policies"));
    QCOMPARE(window.tabs()->currentWidget(), window.policiesView());
    QVERIFY(doc->policiesRunning());
    doc->waitForIdle();
    QApplication::processEvents();
    const auto policies = doc->policies();
    QVERIFY(policies && policies->comparable && policies->projected());

    QTableWidget* table = window.policiesView()->table();
    // The four policies, then what they have to beat: every gradient whole,
    // dense or cast to 16 bits.
    QCOMPARE(table->rowCount(), 7);
    const QStringList names = {
        "static rank 4", "static rank 1", "Accordion rank 4 / rank 1", "AdaQS rank 1 → rank 4", "dense",
        "bf16 cast",     "fp16 cast"};
    for (int row = 0; row < 7; ++row) QCOMPARE(CellText(table, row, 0), names[row]);
    const int floats = ColumnNamed(table, "floats / worker at 64 workers");
    const int vs_low = ColumnNamed(table, "vs static low");
    const int error = ColumnNamed(table, "error (all epochs)");
    const int critical = ColumnNamed(table, "error (critical)");
    const int changes = ColumnNamed(table, "level changes");
    const int time = ColumnNamed(table, "projected time");
    const int speedup = ColumnNamed(table, "speedup vs static low");
    for (const int c : {floats, vs_low, error, critical, changes, time, speedup}) {
      QVERIFY(c > 0);
      QVERIFY(!table->isColumnHidden(c));
    }
    // Static low and static high and Accordion are what the what-if projects
    // on the same cluster, to the last bit; AdaQS is another schedule.
    const auto estimate = doc->estimate();
    QVERIFY(estimate != nullptr);
    const std::vector<PolicyRow>& rows = policies->comparison.rows;
    QCOMPARE(rows[0].projected_s.value(), estimate->result.static_low.total.time_s);
    QCOMPARE(rows[1].projected_s.value(), estimate->result.static_high.total.time_s);
    QCOMPARE(rows[2].projected_s.value(), estimate->result.accordion.total.time_s);
    QCOMPARE(rows[3].name, std::string("adaqs"));
    for (int row = 0; row < 4; ++row) {
      const double t = rows[static_cast<size_t>(row)].projected_s.value();
      QVERIFY2(t > 0, qPrintable(names[row]));
      QCOMPARE(CellText(table, row, time), QString::fromStdString(PolicySecondsText(t)));
      QCOMPARE(CellText(table, row, speedup), QString::fromStdString(PolicyRatioText(*rows[0].projected_s / t)));
      QCOMPARE(CellText(table, row, floats),
               QString::fromStdString(PolicyFloatsText(rows[static_cast<size_t>(row)].cost.total_floats)));
      // The trace profiled PowerSGD's errors: every row has the proxy.
      QVERIFY2(CellText(table, row, error) != "—", qPrintable(names[row]));
    }
    QCOMPARE(CellText(table, 0, speedup), QString("1.00×"));
    QCOMPARE(CellText(table, 0, vs_low), QString("1.00×"));
    // Dense is the what-if's dense baseline on the same cluster, to the last
    // bit; every row's "vs dense" is dense's time over its own; a cast sends
    // half of dense's bytes.
    const std::vector<PolicyRow>& whole = policies->comparison.whole_gradient;
    QCOMPARE(whole.size(), size_t{3});
    QCOMPARE(whole[0].projected_s.value(), estimate->dense.total.time_s);
    QCOMPARE(whole[1].cost.total_floats * 2, whole[0].cost.total_floats);
    const int vs_dense = ColumnNamed(table, "vs dense");
    QVERIFY(vs_dense > 0);
    QCOMPARE(CellText(table, 4, vs_dense), QString("1.00×"));
    QCOMPARE(CellText(table, 2, vs_dense),
             QString::fromStdString(PolicyRatioText(*whole[0].projected_s / *rows[2].projected_s)));
    QCOMPARE(CellText(table, 5, error), QString("—"));  // a cast's rounding is not profiled
    // Above the table, which is fastest and the rate Accordion would need.
    const QString verdict = window.policiesView()->verdictLabel()->text();
    QVERIFY2(verdict.contains("Fastest on this cluster: "), qPrintable(verdict));
    QVERIFY(policies->break_even.has_value());
    QVERIFY2(verdict.contains("Accordion beats"), qPrintable(verdict));
    // Rank 1 sends the fewest floats and makes the largest error; rank 4 the opposite.
    QVERIFY(rows[1].cost.total_floats < rows[3].cost.total_floats);
    QVERIFY(rows[3].cost.total_floats < rows[0].cost.total_floats);
    QVERIFY(rows[1].error->mean > rows[0].error->mean);
    // The MSDR halves at the first two checks: rank 1 → 2 → 4.
    QCOMPARE(CellText(table, 3, changes), QString("2"));
    QCOMPARE(CellText(table, 0, changes), QString("0"));
    // Every cell whole, not "Accordion rank 4 / ra…".
    const int margin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
    for (int row = 0; row < table->rowCount(); ++row) {
      for (int column = 0; column < table->columnCount(); ++column) {
        QFont font = table->item(row, column)->font();
        const int needed = QFontMetrics(font).horizontalAdvance(CellText(table, row, column)) + margin;
        QVERIFY2(needed <= table->columnWidth(column), qPrintable(CellText(table, row, column)));
      }
    }
    // The figure: one bar per policy and component, the CLI line.
    PlotWidget* plot = window.policiesView()->plot();
    QVERIFY(plot->plottableCount() >= 4);
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(0));
    QVERIFY(bars != nullptr);
    QCOMPARE(bars->data()->size(), 7);
    QVERIFY(window.policiesView()->cliLabel()->text().startsWith("accordion-sim compare-policies powersgd-v4.trace"));
    QVERIFY(window.policiesView()->notesLabel()->text().contains("note(s) of the replay"));
    if (const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QDir().mkpath(shots);
      QVERIFY(window.grab().save(shots + "/policies-powersgd.png"));
    }

    // Another cluster: computed again while the tab is shown.
    WhatIfSettings w = doc->whatIfSettings();
    w.workers = 8;
    doc->setWhatIfSettings(w);
    QVERIFY(doc->policiesRunning());
    doc->waitForIdle();
    QApplication::processEvents();
    QVERIFY(doc->policies() && doc->policies() != policies);
    QVERIFY(ColumnNamed(table, "floats / worker at 8 workers") > 0);
    QVERIFY(doc->policies()->comparison.rows[0].projected_s != policies->comparison.rows[0].projected_s);

    // The batch run: Smith et al. instead of AdaQS; no error proxy to show.
    window.runList()->table()->selectRow(doc->indexOfPath(QFileInfo(batch).absoluteFilePath()));
    doc->waitForIdle();
    QApplication::processEvents();
    QVERIFY(doc->policies() != nullptr);
    QCOMPARE(table->rowCount(), 7);
    QCOMPARE(CellText(table, 3, 0), QString("Smith et al. batch 128 → batch 512"));
    QCOMPARE(CellText(table, 0, ColumnNamed(table, "speedup vs static low")), QString("1.00×"));
    QVERIFY(table->isColumnHidden(ColumnNamed(table, "error (all epochs)")));
    // The first LR decay (÷10) grows the batch to the cap, 512; the second
    // finds it there and decays the LR instead: one change, and floats
    // between static low's and static high's.
    QCOMPARE(CellText(table, 3, ColumnNamed(table, "level changes")), QString("1"));
    const std::vector<PolicyRow>& smith = doc->policies()->comparison.rows;
    QCOMPARE(smith[3].name, std::string("smith"));
    QVERIFY(smith[3].cost.total_floats < smith[0].cost.total_floats);
    QVERIFY(smith[3].cost.total_floats > smith[1].cost.total_floats);
    if (const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR"); !shots.isEmpty()) {
      QVERIFY(window.grab().save(shots + "/policies-batch.png"));
    }

    // A schema v3 trace has no gradient moments: AdaQS is a note, not a failure.
    window.runList()->table()->selectRow(doc->indexOfPath(QFileInfo(SampleTrace(kPowerSgd)).absoluteFilePath()));
    doc->waitForIdle();
    QApplication::processEvents();
    QCOMPARE(table->rowCount(), 6);  // three policies, dense and the two casts
    for (int row = 0; row < 6; ++row) QVERIFY(!CellText(table, row, 0).startsWith("AdaQS"));
    const QString notes = window.policiesView()->notesLabel()->text();
    QVERIFY2(notes.contains("policy adaqs reads each layer's gradient mean norm"), qPrintable(notes));
    QCOMPARE(window.errorCount(), 0);

    // A dense run has no levels to choose: a reason, no table.
    window.runList()->table()->selectRow(doc->indexOfPath(QFileInfo(SampleTrace(kDense)).absoluteFilePath()));
    doc->waitForIdle();
    QApplication::processEvents();
    QCOMPARE(table->rowCount(), 0);
    const QString status = window.findChild<QLabel*>("policiesStatus")->text();
    QVERIFY2(status.contains("no levels"), qPrintable(status));
  }

  // accordion-gui --tab policies --screenshot: the Policies tab's table,
  // not "Deriving…", in its PNG.
  void policiesTabFromTheCommandLine() {
    const QString binary = QString(ACCORDION_BIN_DIR) + "/accordion-gui";
    if (!QFileInfo::exists(binary)) QSKIP("accordion-gui is not built");
    const QString dir = ScratchDir("policies-cli");
    const QString trace = WritePolicyTrace(dir, "powersgd-v4.trace", Scheme::kPowerSgd);
    QProcess p;
    p.start(binary, {"--tab", "policies", "--screenshot", dir + "/shots", trace});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QImage shot(dir + "/shots/policies.png");
    QVERIFY(!shot.isNull());
    // The bars' exposed communication, in the figure's colour.
    int orange = 0;
    for (int y = 0; y < shot.height(); ++y) {
      for (int x = 0; x < shot.width(); ++x) orange += QColor(shot.pixel(x, y)) == QColor(0xD5, 0x5E, 0x00);
    }
    QVERIFY2(orange > 1000, qPrintable(QString("%1 orange pixels").arg(orange)));
    p.start(binary, {"--tab", "policy"});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(QString(p.readAllStandardError()).contains("policies"));
    // Nothing opened (a path that is no trace): no screenshots, exit 2, the reason.
    p.start(binary, {"--screenshot", dir + "/none", dir + "/no-such.trace"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QString said = QString(p.readAllStandardError());
    QVERIFY2(said.contains("no trace is open"), qPrintable(said));
    QVERIFY(!QFileInfo::exists(dir + "/none/policies.png"));
    // Two damaged traces: each is named, not only the last.
    const QString bad = ScratchDir("policies-cli-bad");
    const QString first = gui::test_support::WriteTruncatedTrace(bad, "first.trace");
    const QString second = gui::test_support::WriteTruncatedTrace(bad, "second.trace");
    QVERIFY(!first.isEmpty() && !second.isEmpty());
    p.start(binary, {"--screenshot", dir + "/none", first, second});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QString both = QString(p.readAllStandardError());
    QVERIFY2(both.contains("first.trace") && both.contains("second.trace"), qPrintable(both));
  }

  void droppedFilesOpen() {
    MainWindow window;
    window.show();
    QVERIFY(window.acceptDrops());
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(SampleTrace(kTopK)), QUrl::fromLocalFile(SampleTrace(kDense))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    enter.setAccepted(false);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    window.document()->waitForLoads();
    QCOMPARE(window.document()->runCount(), 2);
    QCOMPARE(window.runList()->table()->rowCount(), 2);
    // Text without files is not taken.
    QMimeData text;
    text.setText("hello");
    QDragEnterEvent enter_text(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
    enter_text.setAccepted(false);
    QApplication::sendEvent(&window, &enter_text);
    QVERIFY(!enter_text.isAccepted());
  }

  void recentFilesDropMissingOnesAndKeepTen() {
    RecentFiles::clear();
    const QString dir = ScratchDir("recent");
    QStringList made;
    for (int i = 0; i < 12; ++i) {
      const QString path = QString("%1/run-%2.trace").arg(dir).arg(i);
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      made << path;
      RecentFiles::add(path);
    }
    QStringList recent = RecentFiles::load();
    QCOMPARE(recent.size(), RecentFiles::kMax);
    QCOMPARE(recent.first(), made.last());
    QFile::remove(made.last());
    recent = RecentFiles::load();
    QVERIFY(!recent.contains(made.last()));
    QCOMPARE(recent.first(), made[10]);
    RecentFiles::add(made[5]);
    QCOMPARE(RecentFiles::load().first(), made[5]);
    QCOMPARE(RecentFiles::load().count(made[5]), 1);
    RecentFiles::clear();
  }

  void commandLineFollowsTheToolkitContract() {
    const QString binary = QString(ACCORDION_BIN_DIR) + "/accordion-gui";
    if (!QFileInfo::exists(binary)) QSKIP("accordion-gui is not built");
    QProcess p;
    p.start(binary, {"--version"});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(QString(p.readAllStandardOutput()).startsWith("accordion-gui "));
    p.start(binary, {"--help"});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 0);
    const QString help = p.readAllStandardOutput();
    QVERIFY(help.startsWith("Usage: accordion-gui [options] [TRACE|DIR...]"));
    QVERIFY(!help.contains("--screenshot"));
    p.start(binary, {"--no-such-flag"});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString(p.readAllStandardError()).trimmed();
    QVERIFY(err.startsWith("accordion-gui: error:"));
    QVERIFY(!err.contains('\n'));
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
