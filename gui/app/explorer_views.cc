#include "gui/app/explorer_views.h"

#include <QtGlobal>

#include "gui/app/compare_view.h"
#include "gui/app/level_map_view.h"
#include "gui/app/policies_view.h"
#include "gui/app/regimes_view.h"
#include "gui/app/sweep_view.h"
#include "gui/app/timeline_view.h"
#include "gui/app/what_if_view.h"

namespace accordion::gui {

namespace {

template <class View>
QWidget* Make(ExplorerDocument* document, QWidget* parent) {
  return new View(document, parent);
}

}  // namespace

const std::vector<ExplorerView>& ExplorerViews() {
  static const std::vector<ExplorerView> views = {
      {"regimes", QT_TRANSLATE_NOOP("MainWindow", "Regimes"),
       QT_TRANSLATE_NOOP("MainWindow", "Gradient-norm change per layer and the critical regimes it finds"),
       &Make<RegimesView>},
      {"level-map", QT_TRANSLATE_NOOP("MainWindow", "Level map"),
       QT_TRANSLATE_NOOP("MainWindow", "The level each layer gets in each epoch"), &Make<LevelMapView>},
      {"what-if", QT_TRANSLATE_NOOP("MainWindow", "What-if"),
       QT_TRANSLATE_NOOP("MainWindow", "Time to train on another cluster: α–β estimate or SimGrid replay"),
       &Make<WhatIfView>},
      {"compare", QT_TRANSLATE_NOOP("MainWindow", "Compare"),
       QT_TRANSLATE_NOOP("MainWindow", "Accuracy against epochs and floats sent; the paper's results table"),
       &Make<CompareView>},
      {"timeline", QT_TRANSLATE_NOOP("MainWindow", "Timeline"),
       QT_TRANSLATE_NOOP("MainWindow", "One iteration, measured and simulated, as a timeline"), &Make<TimelineView>},
      {"sweep", QT_TRANSLATE_NOOP("MainWindow", "Sweep"),
       QT_TRANSLATE_NOOP("MainWindow", "What Accordion saves at every η and check interval: which η to use"),
       &Make<SweepView>},
      {"policies", QT_TRANSLATE_NOOP("MainWindow", "Policies"),
       QT_TRANSLATE_NOOP("MainWindow",
                         "Accordion against AdaQS or Smith et al.: floats, error proxy and time to train"),
       &Make<PoliciesView>},
  };
  return views;
}

QStringList ExplorerViewKeys() {
  QStringList keys;
  for (const ExplorerView& view : ExplorerViews()) keys << QString::fromLatin1(view.key);
  return keys;
}

QString ExplorerViewKeyList() {
  QStringList keys = ExplorerViewKeys();
  const QString last = keys.takeLast();
  return keys.join(QStringLiteral(", ")) + QStringLiteral(" or ") + last;
}

}  // namespace accordion::gui
