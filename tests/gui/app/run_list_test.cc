// The run list driven through its widgets, offscreen: a click on a header
// sorts numbers as numbers and keeps each row's run, the filter box, and a
// folder opened as TensorBoard opens a log folder - a trace written there
// afterwards joins the list, shown as live, within a bounded wait.
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QStatusBar>
#include <QFile>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <algorithm>
#include <vector>

#include "analysis/communication_accounting.h"
#include "gui/app/compare_view.h"
#include "gui/app/main_window.h"
#include "gui/app/run_list_view.h"
#include "gui/model/explorer_document.h"
#include "tests/gui/gui_test_support.h"
#include "traces/trace_writer.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::SampleTrace;
using accordion::gui::test_support::ScratchDir;
using accordion::gui::test_support::StartRunningTrace;
using accordion::gui::test_support::WriteSynthetic;

namespace {

constexpr int kBoundMs = 5000;

void OpenAndSettle(MainWindow& window, const QStringList& paths) {
  window.openFiles(paths);
  window.document()->waitForLoads();
  window.document()->waitForIdle();
  QApplication::processEvents();
}

synthetic::SyntheticTraceOptions Mlp(int workers) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 4;
  o.decay_epochs = {};
  o.world_size = workers;
  return o;
}

// A column's cells top to bottom, over the rows the filter shows.
QStringList Column(QTableWidget* table, int column) {
  QStringList cells;
  for (int row = 0; row < table->rowCount(); ++row) {
    if (!table->isRowHidden(row)) cells << table->item(row, column)->text();
  }
  return cells;
}

}  // namespace

class RunListTest : public QObject {
  Q_OBJECT

 private slots:
  // A column of times in one unit, the largest row's, to three figures: not
  // "2 min 12 s" above "85.1 s" above "334.0 ms".
  void aTimeColumnHasOneUnit() {
    const TimeColumn seconds(132.4);
    QCOMPARE(seconds.Format(132.4), QString("132 s"));
    QCOMPARE(seconds.Format(85.1), QString("85 s"));
    QCOMPARE(seconds.Format(0.334), QString("0 s"));
    const TimeColumn short_runs(45.6);
    QCOMPARE(short_runs.Format(15.5), QString("15.5 s"));
    const TimeColumn steps(0.334);
    QCOMPARE(steps.Format(0.0456), QString("46 ms"));  // the column's decimals, the largest's
    QCOMPARE(TimeColumn(0.0456).Format(0.0456), QString("45.6 ms"));
    QCOMPARE(TimeColumn(9000).Format(9000), QString("2.50 h"));
    QCOMPARE(seconds.Format(-1), QString("–"));
  }
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("Accordion Toolkit");
    QCoreApplication::setApplicationName("accordion-gui-run-list-test");
    QSettings().clear();
  }

  void cleanupTestCase() { QSettings().clear(); }

  void headerClickSortsNumbersAsNumbers() {
    const QString dir = ScratchDir("sort");
    // As text, "16" < "2" < "4": the sort must not read it that way.
    const QString w2 = WriteSynthetic(dir, "b-two.trace", Mlp(2));
    const QString w16 = WriteSynthetic(dir, "c-sixteen.trace", Mlp(16));
    const QString w4 = WriteSynthetic(dir, "a-four.trace", Mlp(4));
    MainWindow window;
    OpenAndSettle(window, {w2, w16, w4});
    RunListView* list = window.runList();
    QTableWidget* table = list->table();
    QCOMPARE(Column(table, RunListView::kWorkers), (QStringList{"2", "16", "4"}));  // the order opened

    QHeaderView* header = table->horizontalHeader();
    emit header->sectionClicked(RunListView::kWorkers);
    QCOMPARE(Column(table, RunListView::kWorkers), (QStringList{"2", "4", "16"}));
    QVERIFY(header->isSortIndicatorShown());
    QCOMPARE(header->sortIndicatorSection(), static_cast<int>(RunListView::kWorkers));
    emit header->sectionClicked(RunListView::kWorkers);
    QCOMPARE(Column(table, RunListView::kWorkers), (QStringList{"16", "4", "2"}));
    // Text columns sort as text.
    emit header->sectionClicked(RunListView::kName);
    QCOMPARE(Column(table, RunListView::kName),
             (QStringList{"a-four.trace (synthetic)", "b-two.trace (synthetic)", "c-sixteen.trace (synthetic)"}));

    // Sorted, a row still stands for its own run: picking it, checking it,
    // closing it act on that run.
    emit header->sectionClicked(RunListView::kWorkers);  // ascending: 2, 4, 16
    const int sixteen = window.document()->indexOfPath(QFileInfo(w16).absoluteFilePath());
    QCOMPARE(list->runAt(2), sixteen);
    QCOMPARE(list->rowOf(sixteen), 2);
    table->selectRow(2);
    QCOMPARE(window.document()->currentIndex(), sixteen);
    QCOMPARE(window.document()->currentRun()->summary.workers, 16);
    table->item(0, RunListView::kName)->setCheckState(Qt::Unchecked);
    QVERIFY(!window.document()->isCompared(list->runAt(0)));
    QCOMPARE(window.document()->run(list->runAt(0))->summary.workers, 2);
    QVERIFY(window.document()->isCompared(sixteen));
    window.closeCurrentRun();
    QCOMPARE(Column(table, RunListView::kWorkers), (QStringList{"2", "4"}));

    // A third click on the same header: the order opened again.
    emit header->sectionClicked(RunListView::kWorkers);
    emit header->sectionClicked(RunListView::kWorkers);
    QCOMPARE(list->sortColumn(), -1);
    QVERIFY(!header->isSortIndicatorShown());
    QCOMPARE(Column(table, RunListView::kWorkers), (QStringList{"2", "4"}));
  }

  void accuracyAndFloatsSortByValue() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace("fmnist-mlp-powersgd-accordion.trace"), SampleTrace("fmnist-mlp-dense.trace"),
                           SampleTrace("fmnist-mlp-topk-static-0.1.trace"), SampleTrace("gpu/resnet18-dense.trace")});
    RunListView* list = window.runList();
    for (int column : {RunListView::kAccuracy, RunListView::kFloats, RunListView::kTime}) {
      list->sortBy(column, Qt::AscendingOrder);
      std::vector<double> values;
      for (int row = 0; row < list->table()->rowCount(); ++row) {
        const RunSummary& s = window.document()->run(list->runAt(row))->summary;
        values.push_back(column == RunListView::kAccuracy ? s.final_test_acc
                         : column == RunListView::kFloats ? s.floats_sent
                                                          : s.seconds);
      }
      QVERIFY2(std::is_sorted(values.begin(), values.end()), qPrintable(QString("column %1").arg(column)));
    }
  }

  void filterKeepsRunsMatchingNameModelSchemeOrPath() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace("fmnist-mlp-powersgd-accordion.trace"), SampleTrace("fmnist-mlp-dense.trace"),
                           SampleTrace("fmnist-mlp-topk-accordion.trace"), SampleTrace("gpu/resnet18-dense.trace")});
    RunListView* list = window.runList();
    QLineEdit* filter = list->filterEdit();
    QCOMPARE(list->visibleRowCount(), 4);
    filter->setText("TOPK");  // scheme and name, any case
    QCOMPARE(list->visibleRowCount(), 1);
    QCOMPARE(Column(list->table(), RunListView::kScheme), QStringList{"topk"});
    filter->setText("resnet");  // the model
    QCOMPARE(Column(list->table(), RunListView::kModel), QStringList{"resnet18"});
    filter->setText("samples/gpu");  // only the path says it
    QCOMPARE(list->visibleRowCount(), 1);
    filter->setText("mlp");
    QCOMPARE(list->visibleRowCount(), 3);
    filter->setText("no such run");
    QCOMPARE(list->visibleRowCount(), 0);
    filter->clear();
    QCOMPARE(list->visibleRowCount(), 4);
    // Filtered and sorted at once.
    filter->setText("mlp");
    list->sortBy(RunListView::kName, Qt::DescendingOrder);
    QCOMPARE(Column(list->table(), RunListView::kName),
             (QStringList{"fmnist-mlp-topk-accordion.trace", "fmnist-mlp-powersgd-accordion.trace",
                          "fmnist-mlp-dense.trace"}));
  }

  void folderListsItsTracesAndPicksUpNewOnesAsLive() {
    const QString root = ScratchDir("gui-folder");
    QVERIFY(QDir(root).mkpath("seed-1"));
    const QString first = WriteSynthetic(root + "/seed-1", "run.trace", Mlp(2));
    MainWindow window;
    window.show();
    window.openFiles({root});
    QTRY_COMPARE(window.document()->runCount(), 1);
    window.document()->waitForLoads();
    QCOMPARE(window.watchedFolders(), QStringList{QFileInfo(root).absoluteFilePath()});
    QVERIFY(window.runList()->foldersLabel()->isVisible());
    QVERIFY(window.runList()->foldersLabel()->text().contains(QDir::toNativeSeparators(root)));
    const int current = window.document()->currentIndex();
    QCOMPARE(window.document()->currentRun()->path, QFileInfo(first).absoluteFilePath().toStdString());

    // A run started after the folder was opened, still writing (the trace's
    // run row says running): it joins the list, marked live, without taking
    // the view from the run being looked at.
    QVERIFY(QDir(root).mkpath("seed-2"));
    synthetic::SyntheticTraceOptions live = Mlp(2);
    live.final_status = RunStatus::kRunning;
    QElapsedTimer clock;
    clock.start();
    const QString second = WriteSynthetic(root + "/seed-2", "run.trace", live);
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->runCount() == 2, kBoundMs);
    qInfo("the new trace was listed %lld ms after its writer started", static_cast<long long>(clock.elapsed()));
    const int index = window.document()->indexOfPath(QFileInfo(second).absoluteFilePath());
    QVERIFY(index >= 0);
    const int row = window.runList()->rowOf(index);
    QVERIFY(window.runList()->table()->item(row, RunListView::kEpochs)->text().endsWith("● live"));
    QCOMPARE(window.document()->currentIndex(), current);
    // Two files named run.trace: told apart by their folder.
    QCOMPARE(window.runList()->table()->item(row, RunListView::kName)->text(), QString("seed-2/run.trace (synthetic)"));
    // Opening the same folder again watches it once.
    window.openFiles({root});
    QCOMPARE(window.watchedFolders().size(), 1);
  }

  // A run that has just started in the folder: its trace holds the run and
  // its layers, no epoch yet. Waited for (no error), then listed as live
  // once its first epochs land.
  void folderWaitsForATraceStillBeingWritten() {
    const QString root = ScratchDir("gui-folder-starting");
    MainWindow window;
    window.show();
    window.openFiles({root});
    QTRY_VERIFY(window.statusBar()->currentMessage().startsWith("No trace in"));
    const QString path = root + "/starting.trace";
    auto writer = StartRunningTrace(path);
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->waitingPaths().contains(path), kBoundMs);
    QCOMPARE(window.errorCount(), 0);
    QCOMPARE(window.document()->runCount(), 0);
    // The first epochs land (a longer trace takes the file's place).
    writer.reset();
    synthetic::SyntheticTraceOptions o = Mlp(2);
    o.epochs = 2;
    o.final_status = RunStatus::kRunning;
    WriteSynthetic(root, "next.tmp", o);
    QVERIFY(QFile::remove(path));
    QVERIFY(QFile::rename(root + "/next.tmp", path));
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->runCount() == 1, kBoundMs);
    QVERIFY(window.runList()->table()->item(0, RunListView::kEpochs)->text().endsWith("● live"));
    QCOMPARE(window.errorCount(), 0);
  }

  // With ACCORDION_SCREENSHOT_DIR set: the sample folder opened, sorted and
  // filtered, and a comparison of runs that are not like for like, each at
  // 1600×1000 and 1280×720, saved there to look at (docs/images).
  void screenshots() {
    const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
    if (shots.isEmpty()) QSKIP("ACCORDION_SCREENSHOT_DIR is not set");
    QVERIFY(QDir().mkpath(shots));
    MainWindow folder;
    folder.show();
    folder.openFiles({QString(ACCORDION_SOURCE_DIR) + "/traces/samples"});
    QTRY_VERIFY_WITH_TIMEOUT(folder.document()->runCount() >= 40, 60000);
    folder.document()->waitForLoads();
    folder.runList()->sortBy(RunListView::kAccuracy, Qt::DescendingOrder);
    folder.runList()->filterEdit()->setText("powersgd");
    for (int row = 0; row < folder.runList()->table()->rowCount(); ++row) {
      if (folder.runList()->table()->isRowHidden(row)) continue;
      folder.runList()->table()->selectRow(row);  // the best PowerSGD run
      break;
    }
    MainWindow compare;
    compare.show();
    OpenAndSettle(
        compare, {SampleTrace("fmnist-mlp-powersgd-accordion.trace"), SampleTrace("fmnist-mlp-powersgd-static-1.trace"),
                  SampleTrace("gpu/resnet18-powersgd-accordion.trace")});
    compare.tabs()->setCurrentWidget(compare.compareView());
    for (const QSize size : {QSize(1600, 1000), QSize(1280, 720)}) {
      const QString suffix = size.width() == 1600 ? QString() : QString("-%1x%2").arg(size.width()).arg(size.height());
      for (MainWindow* window : {&folder, &compare}) {
        window->resize(size);
        window->document()->waitForIdle();
        QTest::qWait(300);  // the compare table builds in the background
        for (int round = 0; round < 5; ++round) QApplication::processEvents();
      }
      QVERIFY(folder.grab().save(shots + "/gui-run-list-folder" + suffix + ".png"));
      QVERIFY(compare.grab().save(shots + "/gui-compare-warning" + suffix + ".png"));
    }
  }
};

QTEST_MAIN(RunListTest)
#include "run_list_test.moc"
