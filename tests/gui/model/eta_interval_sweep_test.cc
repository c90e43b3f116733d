// The η × interval sweep against the controller run directly: each cell's
// floats, critical epochs and α–β time must equal what AccordionController
// and the what-if estimate give at that η and interval, exactly; and the
// edges - an interval longer than the run, a run whose norms are all zero,
// one with no layers, a dense run, a run that cannot be replayed - and the
// document's background job that serves the Sweep tab.
#include <QSignalSpy>
#include <QTest>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "analysis/schedule.h"
#include "gui/model/eta_interval_sweep.h"
#include "gui/model/explorer_document.h"
#include "gui/model/headlines.h"
#include "gui/model/what_if.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::SampleTrace;

namespace {

const char* kPowerSgd = "fmnist-mlp-powersgd-accordion.trace";

// What the controller itself decides on `run`'s recorded norms and LRs at
// (eta, interval), PowerSGD rank 2 / rank 1, counted by hand: floats per
// worker over the run and epochs where a layer whose two levels send
// different floats runs the low level. No schedule or analysis code in between.
struct Direct {
  double floats = 0;
  int low_level_epochs = 0;
};

Direct RunControllerDirectly(const RunData& run, double eta, int interval) {
  const TraceView& v = run.view();
  const CommunicationScheme scheme = RecordedScheme(v.run, Scheme::kPowerSgd);
  AccordionController controller(v.num_layers(),
                                 AccordionOptions().eta(eta).interval(interval).level_low(2).level_high(1));
  const int64_t steps = StepsPerEpoch(v.run.train_samples, v.run.batch_size, v.run.world_size);
  Direct d;
  for (int e = 0; e < v.num_epochs(); ++e) {
    double epoch_floats = 0;
    bool low = false;
    for (int l = 0; l < v.num_layers(); ++l) {
      const std::vector<int64_t>& shape = v.layers[l].shape;
      epoch_floats += FloatsPerStep(scheme, shape, controller.levels()[l]) * static_cast<double>(steps);
      low = low || (controller.levels()[l] == 2 && FloatsPerStep(scheme, shape, 2) != FloatsPerStep(scheme, shape, 1));
    }
    d.floats += epoch_floats;
    d.low_level_epochs += low;
    const double lr_next = e + 1 < v.num_epochs() ? v.epochs[e + 1].lr : v.epochs[e].lr;
    controller.EndEpoch(v.grad_norms[e], v.epochs[e].lr, lr_next);
  }
  return d;
}

QString Q(const std::string& s) { return QString::fromStdString(s); }

// QCOMPARE compares doubles within 1e-12: these must be equal.
#define EXPECT_EXACT(actual, expected)                                                          \
  QVERIFY2((actual) == (expected), qPrintable(QString("%1 is %2, expected %3")                  \
                                                  .arg(#actual)                                 \
                                                  .arg(static_cast<double>(actual), 0, 'g', 17) \
                                                  .arg(static_cast<double>(expected), 0, 'g', 17)))

ScheduleSettings At(double eta, int interval) {
  ScheduleSettings s;
  s.eta = eta;
  s.interval = interval;
  return s;
}

WhatIfSettings EightWorkers() {
  WhatIfSettings w;
  w.workers = 8;
  w.bandwidth_gbps = 1;
  return w;
}

}  // namespace

class EtaIntervalSweepTest : public QObject {
  Q_OBJECT

 private slots:
  void cellsEqualTheControllerAndTheEstimate() {
    const RunData run = LoadRunData(SampleTrace(kPowerSgd).toStdString());
    const WhatIfSettings w = EightWorkers();
    const EtaIntervalSweep sweep = SweepEtaInterval(
        run, At(0.5, 10), w, EtaIntervalSweepOptions().etas({0.1, 0.3, 0.5, 0.9}).intervals({1, 2, 5, 10}));
    QVERIFY(sweep.schedulable);
    QVERIFY(sweep.has_time);
    QCOMPARE(sweep.cells.size(), size_t{16});
    QCOMPARE(sweep.epochs, run.view().num_epochs());
    for (const auto& [eta, interval] : std::vector<std::pair<double, int>>{{0.1, 1}, {0.3, 2}, {0.5, 10}, {0.9, 5}}) {
      const SweepCell* cell = sweep.find(eta, interval);
      QVERIFY(cell != nullptr);
      const Direct direct = RunControllerDirectly(run, eta, interval);
      EXPECT_EXACT(cell->floats, direct.floats);
      QCOMPARE(cell->low_level_epochs, direct.low_level_epochs);
      const WhatIfProjection p = ProjectWhatIf(run, At(eta, interval), w, sim::TimingSource::kAnalytic);
      EXPECT_EXACT(cell->time_s, p.result.accordion.total.time_s);
      EXPECT_EXACT(sweep.low_time_s, p.result.static_low.total.time_s);
      EXPECT_EXACT(sweep.high_time_s, p.result.static_high.total.time_s);
      EXPECT_EXACT(sweep.dense_time_s, p.dense.total.time_s);
    }
    // The grid is not flat on this run: η changes what is saved.
    QVERIFY(sweep.find(0.1, 2)->floats > sweep.find(0.9, 2)->floats);
    // The baselines, counted by hand.
    const TraceView& v = run.view();
    const int64_t steps = StepsPerEpoch(v.run.train_samples, v.run.batch_size, v.run.world_size);
    double low = 0, high = 0, dense = 0;
    for (int e = 0; e < v.num_epochs(); ++e) {
      double el = 0, eh = 0, ed = 0;
      for (const LayerInfo& layer : v.layers) {
        el += FloatsPerStep(Scheme::kPowerSgd, layer.shape, 2) * static_cast<double>(steps);
        eh += FloatsPerStep(Scheme::kPowerSgd, layer.shape, 1) * static_cast<double>(steps);
        ed += FloatsPerStep(Scheme::kDense, layer.shape, 0) * static_cast<double>(steps);
      }
      low += el;
      high += eh;
      dense += ed;
    }
    EXPECT_EXACT(sweep.low_floats, low);
    EXPECT_EXACT(sweep.high_floats, high);
    EXPECT_EXACT(sweep.dense_floats, dense);
    const SweepCell& c = *sweep.find(0.5, 10);
    QCOMPARE(sweep.Saved(c, SweepMetric::kFloats), 1 - c.floats / low);
    QCOMPARE(sweep.Saved(c, SweepMetric::kTime), 1 - c.time_s / sweep.low_time_s);
  }

  void anIntervalLongerThanTheRunKeepsEveryEpochCritical() {
    const RunData run = LoadRunData(SampleTrace(kPowerSgd).toStdString());
    QCOMPARE(run.view().num_epochs(), 30);
    const EtaIntervalSweep sweep = SweepEtaInterval(run, At(0.5, 10), EightWorkers(),
                                                    EtaIntervalSweepOptions().etas({0.5, 0.9}).intervals({29, 30, 45}));
    QVERIFY(sweep.schedulable);
    for (int interval : {29, 30, 45}) {
      for (double eta : {0.5, 0.9}) {
        const SweepCell& c = *sweep.find(eta, interval);
        const Direct direct = RunControllerDirectly(run, eta, interval);
        EXPECT_EXACT(c.floats, direct.floats);
        QCOMPARE(c.low_level_epochs, direct.low_level_epochs);
        // No check ever compares two norms: static low's floats.
        QCOMPARE(c.low_level_epochs, 30);
        EXPECT_EXACT(c.floats, sweep.low_floats);
        QCOMPARE(sweep.Saved(c, SweepMetric::kFloats), 0.0);
      }
    }
  }

  void aRunWhoseNormsAreAllZeroIsCriticalThroughout() {
    RunData run = LoadRunData(SampleTrace(kPowerSgd).toStdString());
    for (auto& row : run.input.view.grad_norms) std::fill(row.begin(), row.end(), 0.0);
    const EtaIntervalSweep sweep = SweepEtaInterval(run, At(0.5, 10), EightWorkers(),
                                                    EtaIntervalSweepOptions().etas({0.1, 0.9}).intervals({1, 5}));
    QVERIFY(sweep.schedulable);
    for (const SweepCell& c : sweep.cells) {
      EXPECT_EXACT(c.floats, RunControllerDirectly(run, c.eta, c.interval).floats);
      EXPECT_EXACT(c.floats, sweep.low_floats);  // a zero previous norm is critical
      QCOMPARE(c.low_level_epochs, 30);
    }
  }

  void aRunWithNoLayersHasNoCells() {
    RunData run = LoadRunData(SampleTrace(kPowerSgd).toStdString());
    run.input.view.layers.clear();
    for (auto* table : {&run.input.view.grad_norms, &run.input.view.levels}) {
      for (auto& row : *table) row.clear();
    }
    for (auto& row : run.input.view.critical) row.clear();
    for (auto& row : run.input.view.ratios) row.clear();
    run.replayable = false;
    run.replay_problem = "no layers";
    const EtaIntervalSweep sweep =
        SweepEtaInterval(run, At(0.5, 10), EightWorkers(), EtaIntervalSweepOptions().etas({0.5}).intervals({10}));
    // The controller's own refusal, in one line; no cells, no sentence.
    QVERIFY(!sweep.schedulable);
    QVERIFY(sweep.cells.empty());
    QCOMPARE(QString::fromStdString(sweep.problem), QString("the controller needs at least one layer"));
    QVERIFY(!sweep.has_time);
    QCOMPARE(Q(EtaIntervalHeadline(sweep, SweepMetric::kFloats, 0.5, 10)), QString());
  }

  void aRunThatCannotBeReplayedStillHasFloats() {
    RunData run = LoadRunData(SampleTrace(kPowerSgd).toStdString());
    run.replayable = false;
    run.replay_problem = "the trace has no iteration samples";
    const EtaIntervalSweep sweep =
        SweepEtaInterval(run, At(0.5, 10), EightWorkers(), EtaIntervalSweepOptions().etas({0.5}).intervals({2}));
    QVERIFY(sweep.schedulable);
    QVERIFY(!sweep.has_time);
    QCOMPARE(QString::fromStdString(sweep.time_problem), QString("the trace has no iteration samples"));
    EXPECT_EXACT(sweep.cells[0].floats, RunControllerDirectly(run, 0.5, 2).floats);
    QVERIFY(std::isnan(sweep.cells[0].time_s));
    QVERIFY(std::isnan(sweep.Saved(sweep.cells[0], SweepMetric::kTime)));
  }

  void aDenseRunHasNoCells() {
    const RunData run = LoadRunData(SampleTrace("fmnist-mlp-dense.trace").toStdString());
    const EtaIntervalSweep sweep = SweepEtaInterval(run, At(0.5, 10), EightWorkers());
    QVERIFY(!sweep.schedulable);
    QVERIFY(sweep.cells.empty());
    QVERIFY2(QString::fromStdString(sweep.problem).contains("no levels"), sweep.problem.c_str());
    // Explored as PowerSGD it has them.
    ScheduleSettings as_powersgd = At(0.5, 10);
    as_powersgd.scheme = Scheme::kPowerSgd;
    QVERIFY(
        SweepEtaInterval(run, as_powersgd, EightWorkers(), EtaIntervalSweepOptions().project_time(false)).schedulable);
  }

  void theGridHoldsTheRecordedSetting() {
    RunInfo info;
    info.eta = 0.45;
    info.interval = 4;
    const EtaIntervalSweepOptions o = SweepOptionsFor(info);
    QCOMPARE(o.etas(), (std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9}));
    QCOMPARE(o.intervals(), (std::vector<int>{1, 2, 3, 4, 5, 10, 15, 20}));
    info.eta = 0.5;
    info.interval = 10;
    QCOMPARE(SweepOptionsFor(info).etas().size(), size_t{9});
    QCOMPARE(SweepOptionsFor(info).intervals().size(), size_t{7});
  }

  void theDocumentComputesItOnRequestAndKeepsItAcrossEta() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    doc.setWhatIfSettings(EightWorkers());
    doc.waitForIdle();
    QVERIFY(!doc.etaIntervalSweep());  // not asked for: not computed
    QSignalSpy landed(&doc, &ExplorerDocument::etaIntervalSweepChanged);
    doc.requestEtaIntervalSweep();
    QVERIFY(doc.etaIntervalSweepRunning());
    doc.waitForIdle();
    QCOMPARE(landed.count(), 1);
    const auto sweep = doc.etaIntervalSweep();
    QVERIFY(sweep && sweep->schedulable && sweep->has_time);
    QCOMPARE(sweep->cells.size(), size_t{9 * 7});
    const RunInfo& info = doc.currentRun()->view().run;
    QVERIFY(sweep->find(info.eta, info.interval) != nullptr);
    EXPECT_EXACT(sweep->find(0.3, 5)->floats, RunControllerDirectly(*doc.currentRun(), 0.3, 5).floats);

    // η and the interval are the cells': changing them keeps the sweep.
    ScheduleSettings s = doc.scheduleSettings();
    s.eta = 0.3;
    s.interval = 5;
    doc.setScheduleSettings(s);
    doc.requestEtaIntervalSweep();
    QVERIFY(!doc.etaIntervalSweepRunning());
    QCOMPARE(doc.etaIntervalSweep(), sweep);
    doc.waitForIdle();
    QCOMPARE(landed.count(), 1);

    // Another cluster is another sweep: the old one is no longer served.
    WhatIfSettings w = EightWorkers();
    w.bandwidth_gbps = 10;
    doc.setWhatIfSettings(w);
    QVERIFY(!doc.etaIntervalSweep());
    doc.requestEtaIntervalSweep();
    // Asked again at once for yet another: only the last one lands.
    w.bandwidth_gbps = 100;
    doc.setWhatIfSettings(w);
    doc.requestEtaIntervalSweep();
    doc.waitForIdle();
    const auto last = doc.etaIntervalSweep();
    QVERIFY(last && last != sweep);
    const WhatIfProjection p = ProjectWhatIf(*doc.currentRun(), At(0.3, 5), w, sim::TimingSource::kAnalytic);
    EXPECT_EXACT(last->find(0.3, 5)->time_s, p.result.accordion.total.time_s);
  }
};

QTEST_GUILESS_MAIN(EtaIntervalSweepTest)
#include "eta_interval_sweep_test.moc"
