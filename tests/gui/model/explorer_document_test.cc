// ExplorerDocument without pixels: opening traces, re-deriving regimes on
// every setting, the what-if projections against accordion-sim itself,
// stale answers dropped, cancel, bad files and live traces.
#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <sqlite3.h>
#include <chrono>
#include <nlohmann/json.hpp>

#include "analysis/communication_accounting.h"
#include "analysis/schedule.h"
#include "traces/trace_writer.h"
#include "gui/model/explorer_document.h"
#include "gui/model/what_if.h"
#include "tests/gui/gui_test_support.h"
#include "tests/support/run_command.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::SampleTrace;

namespace {

const char* kPowerSgd = "fmnist-mlp-powersgd-accordion.trace";

// `accordion-sim replay` on `trace` with `flags`, as JSON.
nlohmann::json SimReplayJson(const QString& trace, const std::string& flags) {
  const auto r = accordion::test_support::RunCommand(std::string(ACCORDION_BIN_DIR) + "/accordion-sim replay '" +
                                                     trace.toStdString() + "' " + flags + " --format json");
  if (r.exit_code != 0) qWarning("accordion-sim: %s", r.err.c_str());
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

double RelativeDifference(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

// Per epoch: any layer critical in the controller's own schedule.
// Epochs the controller holds a layer critical whose traffic that changes:
// PowerSGD rank 2 and rank 1 send a 1-D tensor alike (dense).
std::vector<bool> ControllerCriticalEpochs(const RunData& run, double eta, int interval) {
  const Schedule s = DeriveAccordionSchedule(run.view(), Scheme::kPowerSgd,
                                             AccordionOptions().eta(eta).interval(interval).level_low(2).level_high(1));
  std::vector<bool> out;
  for (const auto& row : s.critical) {
    bool any = false;
    for (size_t l = 0; l < row.size(); ++l) any = any || (row[l] && run.view().layers[l].shape.size() >= 2);
    out.push_back(any);
  }
  return out;
}

std::vector<bool> Covered(const std::vector<Band>& bands, int epochs) {
  std::vector<bool> out(epochs, false);
  for (const Band& b : bands) {
    for (int e = b.first; e <= b.last; ++e) out[e] = true;
  }
  return out;
}

}  // namespace

class ExplorerDocumentTest : public QObject {
  Q_OBJECT

 private slots:
  void opensSampleTracesAndSummarisesThem() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd), SampleTrace("fmnist-mlp-dense.trace")});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 2);
    QCOMPARE(QString::fromStdString(doc.currentRun()->summary.name), QString(kPowerSgd));
    const int dense = doc.indexOfPath(SampleTrace("fmnist-mlp-dense.trace"));
    QVERIFY(dense >= 0);
    const RunSummary& s = doc.run(dense)->summary;
    QCOMPARE(QString::fromStdString(s.scheme), QString("dense"));
    QCOMPARE(QString::fromStdString(s.levels), QString("dense"));
    QCOMPARE(s.epochs, 30);
    QVERIFY(s.final_test_acc > 0.8 && s.final_test_acc < 1.0);
    QVERIFY(s.floats_sent > 0);
    QVERIFY(doc.run(dense)->replayable);
    QVERIFY(doc.run(dense)->measured_iteration.has_value());
    QCOMPARE(QString::fromStdString(doc.currentRun()->summary.levels), QString("rank 2 / rank 1"));
    // Until the user sets them, eta and interval are the current run's own.
    QCOMPARE(doc.scheduleSettings().interval, doc.currentRun()->view().run.interval);
    QCOMPARE(doc.scheduleSettings().eta, doc.currentRun()->view().run.eta);
    // Opening the same file again replaces it rather than adding a copy.
    doc.open({SampleTrace("fmnist-mlp-dense.trace")});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 2);
  }

  void runsKeepTheOrderTheyWereOpenedIn() {
    const QStringList names = {"fmnist-mlp-topk-static-0.1.trace", "fmnist-mlp-dense.trace",
                               "fmnist-mlp-batch-accordion.trace", "fmnist-mlp-powersgd-static-1.trace"};
    for (int attempt = 0; attempt < 3; ++attempt) {
      ExplorerDocument doc;
      QStringList paths;
      for (const QString& n : names) paths << SampleTrace(n);
      doc.open(paths);
      doc.waitForLoads();
      QCOMPARE(doc.runCount(), 4);
      for (int i = 0; i < 4; ++i) QCOMPARE(QString::fromStdString(doc.run(i)->summary.name), names[i]);
      QCOMPARE(doc.currentIndex(), 0);
    }
  }

  void runsWithTheSameFileNameShowTheirFolder() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd), SampleTrace(QString("seeds/seed-2/") + kPowerSgd)});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 2);
    QCOMPARE(QString::fromStdString(doc.run(0)->summary.name), QString("samples/") + kPowerSgd);
    QCOMPARE(QString::fromStdString(doc.run(1)->summary.name), QString("seed-2/") + kPowerSgd);
    doc.closeRun(1);
    QCOMPARE(QString::fromStdString(doc.run(0)->summary.name), QString(kPowerSgd));
  }

  void bandsFollowTheControllerAtEverySetting() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    const RunData& run = *doc.currentRun();
    QSignalSpy redrawn(&doc, &ExplorerDocument::regimesChanged);
    for (const auto& [eta, interval] : std::vector<std::pair<double, int>>{{0.4, 2}, {0.3, 5}, {0.05, 1}, {0.9, 3}}) {
      ScheduleSettings s = doc.scheduleSettings();
      s.eta = eta;
      s.interval = interval;
      doc.setScheduleSettings(s);
      QVERIFY(doc.regimes()->schedulable);
      QCOMPARE(Covered(doc.regimes()->model_bands, 30), ControllerCriticalEpochs(run, eta, interval));
      QCOMPARE(doc.regimes()->options.eta(), eta);
    }
    QCOMPARE(redrawn.count(), 4);
    // A low threshold keeps more epochs critical and sends more floats.
    ScheduleSettings s = doc.scheduleSettings();
    s.eta = 0.05;
    s.interval = 2;
    doc.setScheduleSettings(s);
    const double floats_low_eta = doc.regimes()->accordion_floats();
    s.eta = 0.9;
    doc.setScheduleSettings(s);
    QVERIFY(doc.regimes()->accordion_floats() < floats_low_eta);
    QVERIFY(doc.regimes()->accordion_floats() >= doc.regimes()->high_floats());
    QVERIFY(doc.regimes()->low_floats() > doc.regimes()->high_floats());
    // The LR decays after epoch 19 in every sample.
    QCOMPARE(doc.regimes()->lr_decay_epochs, std::vector<int>{19});
  }

  // Settings explored on one run never leak into another: each opens with
  // its recorded ones, and finds its own explored ones again.
  void eachRunKeepsItsOwnSettings() {
    ExplorerDocument doc;
    const QString vgg = SampleTrace("gpu/vgg19bn-powersgd-accordion.trace");
    doc.open({SampleTrace(kPowerSgd), vgg});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 2);
    const int mlp = doc.indexOfPath(SampleTrace(kPowerSgd));
    const int other = doc.indexOfPath(vgg);
    doc.setCurrentRun(mlp);
    QVERIFY(doc.settingsAsRecorded());
    const ScheduleSettings mlp_recorded = doc.scheduleSettings();
    QCOMPARE(mlp_recorded.eta, doc.currentRun()->view().run.eta);
    ScheduleSettings explored = mlp_recorded;
    explored.scheme = Scheme::kTopK;
    explored.eta = 0.3;
    doc.setScheduleSettings(explored);
    QVERIFY(!doc.settingsAsRecorded());
    QCOMPARE(doc.regimes()->resolved.scheme, Scheme::kTopK);

    doc.setCurrentRun(other);
    QVERIFY(doc.settingsAsRecorded());
    QVERIFY(!doc.scheduleSettings().scheme.has_value());
    QCOMPARE(doc.scheduleSettings().eta, doc.currentRun()->view().run.eta);
    QCOMPARE(doc.scheduleSettings().interval, doc.currentRun()->view().run.interval);
    QCOMPARE(doc.regimes()->resolved.scheme, Scheme::kPowerSgd);

    doc.setCurrentRun(mlp);
    QVERIFY(doc.scheduleSettings() == explored);
    doc.resetToRecorded();
    QVERIFY(doc.scheduleSettings() == mlp_recorded);
    QVERIFY(doc.settingsAsRecorded());
    // Explored again, closed and opened again: recorded.
    doc.setScheduleSettings(explored);
    doc.closeRun(doc.indexOfPath(SampleTrace(kPowerSgd)));
    QVERIFY(doc.settingsAsRecorded());  // the VGG run, current now, as recorded
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    QCOMPARE(doc.currentIndex(), doc.indexOfPath(SampleTrace(kPowerSgd)));
    QVERIFY(doc.scheduleSettings() == mlp_recorded);
  }

  // PowerSGD's MLP sample: the check at epoch 6 finds only biases critical,
  // which PowerSGD sends dense at rank 2 and rank 1 alike - epochs 7-10 send
  // what static high sends. They are no regime (no band) but "critical, no
  // effect"; the level map and `accordion-analyze schedule` agree.
  void bandsShadeOnlyWhatChangesTheTraffic() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    const auto a = doc.regimes();
    QVERIFY(a->schedulable);
    const std::vector<bool> shaded = Covered(a->model_bands, 30);
    const std::vector<bool> no_effect = Covered(a->no_effect_bands, 30);
    for (int e = 7; e <= 10; ++e) {
      QVERIFY2(!shaded[e], qPrintable(QString("epoch %1 shaded").arg(e)));
      QVERIFY2(no_effect[e], qPrintable(QString("epoch %1 not marked 'no effect'").arg(e)));
    }
    QVERIFY(shaded[0] && shaded[20]);
    // Every shaded epoch has a weight matrix at the low level; every
    // "no effect" one none.
    const Schedule& s = a->comparison.accordion;
    for (int e = 0; e < 30; ++e) {
      bool matrix_low = false, any_critical = false;
      for (int l = 0; l < doc.currentRun()->view().num_layers(); ++l) {
        any_critical = any_critical || s.critical[e][l];
        matrix_low = matrix_low || (s.critical[e][l] && doc.currentRun()->view().layers[l].shape.size() >= 2);
      }
      QCOMPARE(shaded[e], matrix_low);
      QCOMPARE(no_effect[e], any_critical && !matrix_low);
    }
    // The recorded strip follows the same rule.
    const std::vector<bool> recorded = Covered(a->recorded_model_bands, 30);
    for (int e = 7; e <= 10; ++e) QVERIFY(!recorded[e]);
  }

  // The batch sample: the LR decay after epoch 19 makes the next epochs
  // critical again, but the batch only grows and stays at 1024 there. The
  // Regimes tab shades the small-batch epochs only, as the Level map shows
  // them; the critical ones at 1024 are "critical, no effect".
  void aBatchRunShadesTheSmallBatchEpochsNotEveryCriticalOne() {
    ExplorerDocument doc;
    doc.open({SampleTrace("fmnist-mlp-batch-accordion.trace")});
    doc.waitForLoads();
    const auto a = doc.regimes();
    QVERIFY(a->schedulable);
    const Schedule& s = a->comparison.accordion;
    const std::vector<bool> shaded = Covered(a->model_bands, 30);
    const std::vector<bool> no_effect = Covered(a->no_effect_bands, 30);
    int critical_at_large_batch = 0;
    for (int e = 0; e < 30; ++e) {
      const bool small = s.levels[e][0] != s.level_high;
      const bool critical = s.critical[e][0];
      QCOMPARE(shaded[e], small);
      QCOMPARE(no_effect[e], critical && !small);
      critical_at_large_batch += critical && !small ? 1 : 0;
    }
    QVERIFY2(critical_at_large_batch > 0, "the LR decay's critical epochs at batch 1024 are the case tested");
    QVERIFY(shaded[0] && !shaded[20] && no_effect[20]);
    // The What-if's epoch breakdown shades the same epochs the same way (it
    // used to find no effect from the projection's bytes: none at 20–22,
    // where the batch stays at 1024).
    const WhatIfProjection p =
        ProjectWhatIf(*doc.currentRun(), doc.scheduleSettings(), doc.whatIfSettings(), sim::TimingSource::kAnalytic);
    QVERIFY(p.low_level_bands == a->model_bands);
    QVERIFY(p.no_effect_bands == a->no_effect_bands);
  }

  void aDenseTraceIsExploredAsAnotherScheme() {
    ExplorerDocument doc;
    doc.open({SampleTrace("fmnist-mlp-dense.trace")});
    doc.waitForLoads();
    QVERIFY(!doc.regimes()->schedulable);
    QVERIFY(!doc.regimes()->problem.empty());
    ScheduleSettings s;
    s.scheme = Scheme::kTopK;
    s.interval = 2;
    doc.setScheduleSettings(s);
    QVERIFY(doc.regimes()->schedulable);
    QCOMPARE(doc.regimes()->resolved.level_low, 0.99);
    QCOMPARE(doc.regimes()->resolved.level_high, 0.1);
    QVERIFY(doc.regimes()->low_floats() > 5 * doc.regimes()->high_floats());
    // A level that is not one of the scheme's is reported, not thrown.
    s.level_high = 3.0;
    doc.setScheduleSettings(s);
    QVERIFY(!doc.regimes()->schedulable);
    QVERIFY(QString::fromStdString(doc.regimes()->problem).contains("high level"));
  }

  // Unknown and known recorded bandwidth alike: the command line the GUI
  // shows gives the GUI's numbers.
  void estimateEqualsAccordionSimAnalytic() {
    for (const std::optional<double> recorded : {std::optional<double>(), std::optional<double>(1.0)}) {
      ExplorerDocument doc;
      doc.open({SampleTrace(kPowerSgd)});
      doc.waitForLoads();
      ScheduleSettings s;
      s.eta = 0.3;
      s.interval = 5;
      doc.setScheduleSettings(s);
      WhatIfSettings w;
      w.workers = 64;
      w.bandwidth_gbps = 25;
      w.latency_us = 5;
      w.topology = sim::Topology::kFatTree;
      w.recorded_bandwidth_gbps = recorded;
      doc.setWhatIfSettings(w);
      doc.waitForIdle();
      QVERIFY(doc.estimate());
      const sim::ReplayResult& r = doc.estimate()->result;
      QCOMPARE(r.workers, 64);
      const nlohmann::json cli = SimReplayJson(SampleTrace(kPowerSgd), CliFlagsOf(s, w, sim::TimingSource::kAnalytic));
      QVERIFY(!cli.is_null());
      for (const auto& [name, mine] :
           {std::pair{"accordion", &r.accordion}, {"static-low", &r.static_low}, {"static-high", &r.static_high}}) {
        const double theirs = cli["schedules"][name]["total"]["time_s"].get<double>();
        QVERIFY2(RelativeDifference(mine->total.time_s, theirs) < 1e-9, name);
      }
      QCOMPARE(QString::fromStdString(cli["notes"].dump()).contains("against their time on this platform at 1 Gb/s"),
               recorded.has_value());
      // Dense is the same cluster with every layer dense.
      const nlohmann::json dense =
          SimReplayJson(SampleTrace(kPowerSgd), CliFlagsOf(s, w, sim::TimingSource::kAnalytic) + " --scheme dense");
      QVERIFY(RelativeDifference(doc.estimate()->dense.total.time_s,
                                 dense["schedules"]["static-low"]["total"]["time_s"].get<double>()) < 1e-9);
      QVERIFY(doc.sweep());
      QCOMPARE(int(doc.sweep()->size()), 25);
    }
  }

  // The link rate the trace was recorded at: unknown by default; set, it
  // reaches the replay's options and the command line, and changes the
  // projection (the host costs come from each collective, not the intercept).
  void recordedBandwidthReachesTheReplayAndTheCommandLine() {
    const ScheduleSettings s;
    WhatIfSettings w;
    QVERIFY(!ReplayOptionsOf(s, w, sim::TimingSource::kAnalytic).recorded_bandwidth_gbps());
    QVERIFY(CliFlagsOf(s, w, sim::TimingSource::kAnalytic).find("--recorded-bandwidth-gbps") == std::string::npos);
    WhatIfSettings known = w;
    known.recorded_bandwidth_gbps = 2.5;
    QVERIFY(known != w);
    QCOMPARE(ReplayOptionsOf(s, known, sim::TimingSource::kAnalytic).recorded_bandwidth_gbps(), std::optional(2.5));
    QVERIFY(CliFlagsOf(s, known, sim::TimingSource::kAnalytic).find(" --recorded-bandwidth-gbps 2.5") !=
            std::string::npos);

    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    w.workers = 4;
    w.bandwidth_gbps = 1;
    doc.setWhatIfSettings(w);
    doc.waitForIdle();
    const double unknown_s = doc.estimate()->result.accordion.total.time_s;
    known = w;
    known.recorded_bandwidth_gbps = 1;
    doc.setWhatIfSettings(known);
    doc.waitForIdle();
    QVERIFY(RelativeDifference(doc.estimate()->result.accordion.total.time_s, unknown_s) > 1e-6);
  }

  void simulationEqualsAccordionSimAndReplacesTheEstimate() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    WhatIfSettings w;
    w.workers = 4;
    w.bandwidth_gbps = 1;
    w.recorded_bandwidth_gbps = 1;
    doc.setWhatIfSettings(w);
    doc.waitForIdle();
    QCOMPARE(doc.projection()->timing, sim::TimingSource::kAnalytic);
    QSignalSpy progress(&doc, &ExplorerDocument::simulationProgress);
    doc.startSimulation();
    QVERIFY(doc.simulationRunning());
    doc.waitForIdle();
    QVERIFY(!doc.simulationRunning());
    QVERIFY(doc.simulation());
    QVERIFY(progress.count() > 0);
    QCOMPARE(doc.projection()->timing, sim::TimingSource::kSimulate);
    const nlohmann::json cli =
        SimReplayJson(SampleTrace(kPowerSgd), CliFlagsOf(doc.scheduleSettings(), w, sim::TimingSource::kSimulate));
    QVERIFY(RelativeDifference(doc.simulation()->result.accordion.total.time_s,
                               cli["schedules"]["accordion"]["total"]["time_s"].get<double>()) < 1e-9);
    // Changing a setting drops the replay: it described other settings.
    w.workers = 8;
    doc.setWhatIfSettings(w);
    QVERIFY(!doc.simulation());
    doc.waitForIdle();
    QCOMPARE(doc.projection()->result.workers, 8);
  }

  void staleEstimatesAreDropped() {
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    QSignalSpy changed(&doc, &ExplorerDocument::estimateChanged);
    WhatIfSettings w;
    for (int workers : {2, 4, 8, 16, 32, 48}) {
      w.workers = workers;
      doc.setWhatIfSettings(w);
    }
    doc.waitForIdle();
    QCOMPARE(doc.estimate()->result.workers, 48);
    // Six requests in a row: the ones overtaken were never delivered.
    QVERIFY(changed.count() < 6);
    for (const auto& args : changed) Q_UNUSED(args);
  }

  void cancelStopsTheReplayPromptly() {
    // A replay of several seconds: 64 ranks on a physical ring, a check every
    // epoch at a low threshold, so many distinct iteration patterns.
    synthetic::SyntheticTraceOptions o;
    o.epochs = 60;
    o.decay_epochs = {40};
    const QString path = accordion::gui::test_support::WriteSynthetic(
        accordion::gui::test_support::ScratchDir("cancel"), "r18.trace", o);
    ExplorerDocument doc;
    doc.open({path});
    doc.waitForLoads();
    ScheduleSettings s;
    s.eta = 0.05;
    s.interval = 1;
    doc.setScheduleSettings(s);
    WhatIfSettings w;
    w.workers = 64;
    w.topology = sim::Topology::kRing;
    doc.setWhatIfSettings(w);
    doc.waitForIdle();
    QSignalSpy finished(&doc, &ExplorerDocument::simulationFinished);
    QSignalSpy progress(&doc, &ExplorerDocument::simulationProgress);
    doc.startSimulation();
    QTRY_VERIFY(progress.count() > 0);
    QVERIFY(doc.simulationRunning());
    const auto t0 = std::chrono::steady_clock::now();
    doc.cancelSimulation();
    QVERIFY(!doc.simulationRunning());
    QCOMPARE(finished.count(), 1);
    doc.waitForIdle();
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY2(waited < 1.0, qPrintable(QString::number(waited)));
    QVERIFY(!doc.simulation());
    QCOMPARE(finished.count(), 1);
  }

  // What `accordion-analyze validate` refuses, the explorer does not show:
  // layer rows of an epoch the epochs table does not hold.
  void aTraceValidateRefusesIsNotOpened() {
    const QString dir = accordion::gui::test_support::ScratchDir("past");
    const QString path =
        accordion::gui::test_support::WriteSynthetic(dir, "past.trace", synthetic::SyntheticTraceOptions());
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.toStdString().c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db,
                          "DELETE FROM epochs WHERE epoch = (SELECT MAX(epoch) FROM epochs); "
                          "UPDATE run SET status = 'failed'",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    ExplorerDocument doc;
    QSignalSpy failed(&doc, &ExplorerDocument::openFailed);
    doc.open({path});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 0);
    QCOMPARE(failed.count(), 1);
    const QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains("the epochs table ends at"), qPrintable(message));
    QVERIFY(!message.contains('\n'));
  }

  void badFilesReportTheReadersReason() {
    ExplorerDocument doc;
    QSignalSpy failed(&doc, &ExplorerDocument::openFailed);
    const QString dir = accordion::gui::test_support::ScratchDir("bad");
    const QString truncated = accordion::gui::test_support::WriteTruncatedTrace(dir, "cut.trace");
    QFile text(dir + "/notes.trace");
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("these are my notes, not a trace\n");
    text.close();
    // Missing, directory and all: a mistyped path (a missing file in a
    // directory that exists is waited for, see waitsForATraceNotWrittenYet).
    doc.open({truncated, dir + "/no-such-dir/missing.trace", dir + "/notes.trace"});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 0);
    QCOMPARE(failed.count(), 3);
    for (const auto& args : failed) {
      const QString message = args.at(1).toString();
      QVERIFY(!message.isEmpty());
      QVERIFY(!message.contains('\n'));
    }
    // A good file afterwards opens as usual.
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 1);
  }

  void followsALiveTraceAsItGrows() {
    const QString dir = accordion::gui::test_support::ScratchDir("live");
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 6;
    o.final_status = RunStatus::kRunning;
    const QString path = accordion::gui::test_support::WriteSynthetic(dir, "live.trace", o);
    ExplorerDocument doc;
    doc.open({path});
    doc.waitForLoads();
    QVERIFY(doc.currentRun()->live());
    QCOMPARE(doc.currentRun()->view().num_epochs(), 6);
    QSignalSpy updated(&doc, &ExplorerDocument::liveRunUpdated);
    // The trainer commits more epochs: here, a longer trace takes the file's place.
    o.epochs = 11;
    accordion::gui::test_support::WriteSynthetic(dir, "next.trace", o);
    QVERIFY(std::rename((dir + "/next.trace").toLocal8Bit().data(), path.toLocal8Bit().data()) == 0);
    doc.pollLiveRuns();
    QTRY_COMPARE(doc.currentRun()->view().num_epochs(), 11);
    QCOMPARE(updated.count(), 1);
    QCOMPARE(int(doc.regimes()->comparison.accordion.levels.size()), 11);
  }

  void waitsForTheFirstEpochOfARunJustStarted() {
    const QString dir = accordion::gui::test_support::ScratchDir("first-epoch");
    // What the trainer has written before its first epoch ends: the run and
    // its layers, status running.
    const QString path = dir + "/starting.trace";
    auto writer = accordion::gui::test_support::StartRunningTrace(path);
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.final_status = RunStatus::kRunning;
    ExplorerDocument doc;
    QSignalSpy failed(&doc, &ExplorerDocument::openFailed);
    QSignalSpy waiting(&doc, &ExplorerDocument::waitingForFirstEpoch);
    doc.open({path});
    doc.waitForLoads();
    QCOMPARE(failed.count(), 0);
    QCOMPARE(waiting.count(), 1);
    QCOMPARE(doc.runCount(), 0);
    QCOMPARE(doc.waitingPaths().size(), 1);
    doc.pollLiveRuns();  // still nothing: no dialog, no run
    doc.waitForLoads();
    QCOMPARE(failed.count(), 0);
    QCOMPARE(doc.runCount(), 0);
    // The first epochs land (a longer trace takes the file's place).
    writer.reset();
    o.epochs = 2;
    accordion::gui::test_support::WriteSynthetic(dir, "next.trace", o);
    QVERIFY(std::rename((dir + "/next.trace").toLocal8Bit().data(), path.toLocal8Bit().data()) == 0);
    doc.pollLiveRuns();
    QTRY_COMPARE(doc.runCount(), 1);
    QCOMPARE(doc.currentIndex(), 0);
    QCOMPARE(doc.currentRun()->view().num_epochs(), 2);
    QVERIFY(doc.waitingPaths().isEmpty());
    QCOMPARE(failed.count(), 0);
  }

  // Opened before the trainer created it: no error, the path is waited for,
  // and the run opens once the file is there with an epoch.
  void waitsForATraceNotWrittenYet() {
    const QString dir = accordion::gui::test_support::ScratchDir("not-yet");
    const QString path = dir + "/later.trace";
    ExplorerDocument doc;
    QSignalSpy failed(&doc, &ExplorerDocument::openFailed);
    QSignalSpy waiting(&doc, &ExplorerDocument::waitingForFirstEpoch);
    doc.open({path});
    doc.waitForLoads();
    QCOMPARE(failed.count(), 0);
    QCOMPARE(waiting.count(), 1);
    QCOMPARE(doc.waitingPaths(), QStringList{path});
    doc.pollLiveRuns();  // still nothing there: no error, still waiting
    doc.waitForLoads();
    QCOMPARE(failed.count(), 0);
    QCOMPARE(doc.runCount(), 0);
    QCOMPARE(doc.waitingPaths().size(), 1);
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 2;
    o.final_status = RunStatus::kRunning;
    accordion::gui::test_support::WriteSynthetic(dir, "later.trace", o);
    // The document's own timer finds it (no pollLiveRuns here).
    QTRY_COMPARE_WITH_TIMEOUT(doc.runCount(), 1, 10000);
    QCOMPARE(doc.currentIndex(), 0);
    QCOMPARE(doc.currentRun()->view().num_epochs(), 2);
    QVERIFY(doc.waitingPaths().isEmpty());
    QCOMPARE(failed.count(), 0);
  }

  // A platform file (JSON or SimGrid XML) replaces the topology, links and
  // network model the controls hold, in the replay's platform and on the
  // command line; cleared, the controls' topology is back.
  void aPlatformFileReplacesTheClusterControls() {
    const ScheduleSettings s;
    WhatIfSettings w;
    w.topology = sim::Topology::kFatTree;
    w.platform_file = ACCORDION_SOURCE_DIR "/examples/simulator/platforms/two-racks.xml";
    const std::string file_flags = CliFlagsOf(s, w, sim::TimingSource::kAnalytic);
    QVERIFY(file_flags.find(" --platform '" + w.platform_file + "'") != std::string::npos);
    for (const char* flag : {"--topology", "--bandwidth-gbps", "--latency-us", "--hosts-per-leaf", "--network-model"}) {
      QVERIFY2(file_flags.find(flag) == std::string::npos, flag);
    }
    QCOMPARE(PlatformOf(w).source, sim::PlatformSource::kXmlFile);
    QCOMPARE(PlatformOf(w).xml_path, w.platform_file);

    WhatIfSettings controls = w;
    controls.platform_file.clear();
    QVERIFY(controls != w);
    const std::string control_flags = CliFlagsOf(s, controls, sim::TimingSource::kAnalytic);
    QVERIFY(control_flags.find("--platform") == std::string::npos);
    QVERIFY(control_flags.find(" --topology fat-tree ") != std::string::npos);
    // The model automatic (as accordion-sim without the flag) unless chosen.
    QVERIFY(control_flags.find("--network-model") == std::string::npos);
    controls.network_model = "LV08";
    QVERIFY(CliFlagsOf(s, controls, sim::TimingSource::kAnalytic).find(" --network-model LV08") != std::string::npos);
    QCOMPARE(PlatformOf(controls).source, sim::PlatformSource::kBuiltIn);
    QCOMPARE(PlatformOf(controls).topology, sim::Topology::kFatTree);
  }

  // (Where compression stops paying is SweepHeadline's now, tested with its
  // wording in gui_headlines_test.)
  void sweepBandwidthsAreLogSpaced() {
    const std::vector<double> bw = LogSpaced(0.1, 1000, 5);
    QCOMPARE(int(bw.size()), 5);
    QVERIFY(std::abs(bw[2] - 10) < 1e-9);
  }

  void layersFilterAndGroup() {
    QCOMPARE(QString::fromStdString(LayerGroup("layer1.0.conv1.weight")), QString("layer1"));
    QCOMPARE(QString::fromStdString(LayerGroup("fc")), QString("fc"));
    ExplorerDocument doc;
    doc.open({SampleTrace(kPowerSgd)});
    doc.waitForLoads();
    const RunData& run = *doc.currentRun();
    QCOMPARE(int(LayersMatching(run, "").size()), run.view().num_layers());
    for (int l : LayersMatching(run, "WEIGHT")) {
      QVERIFY(QString::fromStdString(run.view().layers[l].name).contains("weight"));
    }
    QVERIFY(LayersMatching(run, "no-such-layer").empty());
  }
};

QTEST_GUILESS_MAIN(ExplorerDocumentTest)
#include "explorer_document_test.moc"
