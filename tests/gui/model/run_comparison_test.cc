// ComparisonCaveat: silent for like-for-like runs, and naming exactly what
// differs (model, dataset, workers) for runs that are not.
#include <QTest>
#include <memory>

#include "gui/model/run_comparison.h"

using namespace accordion::gui;

namespace {

std::shared_ptr<const RunData> Run(const std::string& model, const std::string& dataset, int workers) {
  auto run = std::make_shared<RunData>();
  run->summary.model = model;
  run->summary.dataset = dataset;
  run->summary.workers = workers;
  return run;
}

}  // namespace

class RunComparisonTest : public QObject {
  Q_OBJECT

 private slots:
  void likeForLikeRunsGetNoCaveat() {
    QCOMPARE(ComparisonCaveat({}), std::string());
    QCOMPARE(ComparisonCaveat({Run("mlp", "fashion-mnist", 2)}), std::string());
    // Seeds and settings of one experiment: what Compare is for.
    QCOMPARE(ComparisonCaveat({Run("mlp", "fashion-mnist", 2), Run("mlp", "fashion-mnist", 2)}), std::string());
  }

  void namesWhatDiffers() {
    QCOMPARE(ComparisonCaveat({Run("mlp", "fashion-mnist", 2), Run("resnet18", "fashion-mnist", 2)}),
             std::string("Not like for like: these runs differ in model (mlp, resnet18)."));
    QCOMPARE(ComparisonCaveat({Run("mlp", "fashion-mnist", 2), Run("mlp", "fashion-mnist", 8)}),
             std::string("Not like for like: these runs differ in workers (2, 8)."));
    QCOMPARE(
        ComparisonCaveat({Run("mlp", "fashion-mnist", 2), Run("resnet18", "cifar10", 1), Run("vgg19bn", "cifar10", 1)}),
        std::string("Not like for like: these runs differ in model (mlp, resnet18, vgg19bn), dataset "
                    "(fashion-mnist, cifar10) and workers (2, 1)."));
  }
};

QTEST_GUILESS_MAIN(RunComparisonTest)
#include "run_comparison_test.moc"
