// Group by block is one setting for every view that lists layers: the
// Regimes tab's layer list, gradient norms and check ratios, and the level
// map each show one row or series per block when it is on and one per layer
// when it is off, whichever tab's box turned it on.
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QLineEdit>
#include <QListWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <qcustomplot.h>

#include "gui/app/level_map_view.h"
#include "gui/app/main_window.h"
#include "gui/app/plot_widget.h"
#include "gui/app/regimes_view.h"
#include "gui/figures/figure_style.h"
#include "gui/model/explorer_document.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::SampleTrace;

namespace {

// A real ResNet-18 training run: 62 parameter tensors in 7 blocks (conv1,
// bn1, layer1-4, fc).
const char kResNet[] = "gpu/resnet18-powersgd-accordion.trace";

void OpenAndSettle(MainWindow& window, const QStringList& paths) {
  window.openFiles(paths);
  window.document()->waitForLoads();
  window.document()->waitForIdle();
  QApplication::processEvents();
}

// Curves of layers or blocks on the left axis: not the Hessian (right
// axis), not a legend-only swatch or note.
int Series(QCustomPlot* plot) {
  int n = 0;
  for (int i = 0; i < plot->graphCount(); ++i) {
    QCPGraph* g = plot->graph(i);
    if (g->valueAxis() == plot->yAxis && !style::IsLegendOnly(g)) ++n;
  }
  return n;
}

// Rows of the level map's colour map.
int MapRows(QCustomPlot* plot) {
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i))) return map->data()->valueSize();
  }
  return -1;
}

int VisibleItems(QListWidget* list) {
  int n = 0;
  for (int i = 0; i < list->count(); ++i) n += !list->item(i)->isHidden();
  return n;
}

}  // namespace

class LayerGroupsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("Accordion Toolkit");
    QCoreApplication::setApplicationName("accordion-gui-layer-groups-test");
    QSettings().clear();
  }

  void everyLayerListingViewFollowsTheSetting() {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    OpenAndSettle(window, {SampleTrace(kResNet)});
    const auto run = window.document()->currentRun();
    QVERIFY(run != nullptr);
    const int layers = run->view().num_layers();
    const int blocks = static_cast<int>(LayerBlocks(*run).size());
    QCOMPARE(layers, 62);
    QCOMPARE(blocks, 7);
    RegimesView* regimes = window.regimesView();
    LevelMapView* map = window.levelMapView();

    // Off: one per layer everywhere.
    QCOMPARE(regimes->layerList()->count(), layers);
    QCOMPARE(Series(regimes->normsPlot()), layers);
    QCOMPARE(Series(regimes->ratiosPlot()), layers);
    window.tabs()->setCurrentWidget(map);
    QApplication::processEvents();
    QCOMPARE(MapRows(map->plot()), layers);

    // On, from the Regimes tab: one per block everywhere.
    window.tabs()->setCurrentWidget(regimes);
    QApplication::processEvents();
    regimes->groupCheck()->setChecked(true);
    QVERIFY(window.document()->groupByBlock());
    QCOMPARE(regimes->layerList()->count(), blocks);
    QCOMPARE(regimes->layerList()->item(2)->text(), QString("layer1 (12 layers)"));
    QCOMPARE(Series(regimes->normsPlot()), blocks);
    QCOMPARE(Series(regimes->ratiosPlot()), blocks);
    QCOMPARE(regimes->ratiosPlot()->graph(2)->name(), QString("layer1"));
    // Still every layer drawn: a block stands for its layers.
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), layers);
    QVERIFY(map->groupCheck()->isChecked());
    window.tabs()->setCurrentWidget(map);
    QApplication::processEvents();
    QCOMPARE(MapRows(map->plot()), blocks);
    // A block's cell says it is one, and how many of its layers are low.
    map->plot()->replot();
    const QPoint cell(static_cast<int>(map->plot()->xAxis->coordToPixel(0)),
                      static_cast<int>(map->plot()->yAxis->coordToPixel(2)));
    const QString tip = map->tooltipAt(cell);
    QVERIFY2(tip.contains("group layer1: 12 layers") && tip.contains("of 12 layers at the low level"), qPrintable(tip));

    // Off again, from the level map's box: back to layers in every view.
    map->groupCheck()->setChecked(false);
    QCOMPARE(MapRows(map->plot()), layers);
    QVERIFY(!regimes->groupCheck()->isChecked());
    QCOMPARE(regimes->layerList()->count(), layers);
    QCOMPARE(Series(regimes->normsPlot()), layers);
    QCOMPARE(Series(regimes->ratiosPlot()), layers);
  }

  void blocksKeepTheFilterAndEachLayersChoice() {
    MainWindow window;
    OpenAndSettle(window, {SampleTrace(kResNet)});
    RegimesView* regimes = window.regimesView();
    const auto run = window.document()->currentRun();
    regimes->groupCheck()->setChecked(true);
    // Blocks with a matching layer stay listed; the plots draw only the
    // matching layers of each.
    regimes->filterEdit()->setText("conv");
    const auto convs = LayersMatching(*run, "conv");
    QCOMPARE(regimes->shownLayers(), convs);
    QCOMPARE(VisibleItems(regimes->layerList()), static_cast<int>(LayerBlocks(*run, convs).size()));
    QCOMPARE(Series(regimes->normsPlot()), static_cast<int>(LayerBlocks(*run, convs).size()));
    QCOMPARE(Series(regimes->ratiosPlot()), static_cast<int>(LayerBlocks(*run, convs).size()));
    regimes->filterEdit()->clear();
    // Unchecking a block unchecks its layers, and they stay unchecked when
    // the list goes back to layers.
    QListWidgetItem* layer4 = regimes->layerList()->findItems("layer4", Qt::MatchStartsWith).value(0);
    QVERIFY(layer4 != nullptr);
    layer4->setCheckState(Qt::Unchecked);
    const int in_layer4 = static_cast<int>(LayerBlocks(*run).at(5).layers.size());
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), 62 - in_layer4);
    QCOMPARE(Series(regimes->normsPlot()), 6);
    regimes->groupCheck()->setChecked(false);
    QCOMPARE(static_cast<int>(regimes->shownLayers().size()), 62 - in_layer4);
    QCOMPARE(Series(regimes->normsPlot()), 62 - in_layer4);
    QCOMPARE(Series(regimes->ratiosPlot()), 62 - in_layer4);
  }

  // With ACCORDION_SCREENSHOT_DIR set: the ResNet-18 run grouped by block,
  // Regimes and Level map at 1600×1000 and 1280×720, saved there to look at.
  void screenshots() {
    const QString shots = qEnvironmentVariable("ACCORDION_SCREENSHOT_DIR");
    if (shots.isEmpty()) QSKIP("ACCORDION_SCREENSHOT_DIR is not set");
    QVERIFY(QDir().mkpath(shots));
    MainWindow window;
    window.show();
    OpenAndSettle(window, {SampleTrace(kResNet)});
    window.document()->setGroupByBlock(true);
    for (const QSize size : {QSize(1600, 1000), QSize(1280, 720)}) {
      const QString suffix = size.width() == 1600 ? QString() : QString("-%1x%2").arg(size.width()).arg(size.height());
      window.resize(size);
      for (QWidget* tab : {static_cast<QWidget*>(window.regimesView()), static_cast<QWidget*>(window.levelMapView())}) {
        window.tabs()->setCurrentWidget(tab);
        window.document()->waitForIdle();
        for (int round = 0; round < 5; ++round) QApplication::processEvents();
        const QString name = tab == window.regimesView() ? "gui-regimes-grouped" : "gui-level-map-grouped";
        QVERIFY(window.grab().save(shots + "/" + name + suffix + ".png"));
      }
    }
  }
};

QTEST_MAIN(LayerGroupsTest)
#include "layer_groups_test.moc"
