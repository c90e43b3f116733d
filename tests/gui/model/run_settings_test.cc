// Every reader states a run's own settings: for traces recorded at a
// non-default eta and interval, `accordion-analyze schedule` and `regimes`,
// `accordion-sim replay` and `sweep`, `accordion-report` and the explorer's
// document all say the trace's eta and interval unless told otherwise, and
// the schedule they re-derive is the one the run had, epoch by epoch. And a
// metric a run did not record (the Python hook given no test accuracy)
// shows as "—", never "0.00 %".
#include <QFile>
#include <QFileInfo>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gui/model/explorer_document.h"
#include "gui/model/headlines.h"
#include "tests/gui/gui_test_support.h"
#include "tests/support/run_command.h"
#include "tests/support/trace_sql.h"
#include "traces/trace_reader.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::ScratchDir;
using accordion::gui::test_support::WriteSynthetic;
using accordion::test_support::CommandResult;
using accordion::test_support::RunCommand;

namespace {

const std::string kBin = ACCORDION_BIN_DIR;

std::string Quote(const QString& path) { return "'" + path.toStdString() + "'"; }

// The tool's stdout; a failure is the test's, with the tool's stderr.
std::string Run(const std::string& command) {
  const CommandResult r = RunCommand(command);
  if (r.exit_code != 0) {
    qWarning("%s: exit %d: %s", command.c_str(), r.exit_code, r.err.c_str());
    return {};
  }
  return r.out;
}

nlohmann::json RunJson(const std::string& command) {
  const std::string out = Run(command);
  return out.empty() ? nlohmann::json() : nlohmann::json::parse(out);
}

// The trainer: ACCORDION_TRAIN, else this build's (absent where LibTorch is).
QString Trainer() { return qEnvironmentVariable("ACCORDION_TRAIN", QString(ACCORDION_BIN_DIR) + "/accordion-train"); }

// A real 2-worker run at eta 0.3, a check every 2 epochs; empty when there
// is no trainer to record it.
QString TrainerTrace() {
  static const QString path = [] {
    if (!QFileInfo(Trainer()).isExecutable()) return QString();
    const QString trace = ScratchDir("settings-train") + "/train.trace";
    const CommandResult r =
        RunCommand(Quote(Trainer()) +
                   " --dataset synthetic --nproc 2 --model mlp --epochs 8 --scheme powersgd --policy accordion"
                   " --low 2 --high 1 --eta 0.3 --interval 2 --no-network-probe --trace " +
                   Quote(trace));
    if (r.exit_code != 0) qWarning("accordion-train: %s", r.err.c_str());
    return r.exit_code == 0 ? trace : QString("train failed");
  }();
  return path;
}

// SYNTHETIC traces whose levels come from the controller at the trace's
// own settings (tests/support/synthetic_trace.cc).
QString SyntheticTrace() {
  static const QString path = [] {
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 16;
    o.world_size = 2;
    o.batch_size = 128;
    o.train_samples = 6000;
    o.eta = 0.3;
    o.interval = 2;
    o.decay_epochs = {9};
    return WriteSynthetic(ScratchDir("settings-synthetic"), "eta-0.3-interval-2.trace", o);
  }();
  return path;
}

// As the Python hook writes a run whose script gave no test metrics, checked
// every epoch.
QString PythonHookTrace() {
  static const QString path = [] {
    synthetic::SyntheticTraceOptions o;
    o.model = "mlp";
    o.epochs = 12;
    o.world_size = 2;
    o.batch_size = 128;
    o.train_samples = 6000;
    o.eta = 0.4;
    o.interval = 1;
    o.decay_epochs = {7};
    o.writer = kWriterPythonHook;
    o.record_test_metrics = false;
    return WriteSynthetic(ScratchDir("settings-hook"), "hook-interval-1.trace", o);
  }();
  return path;
}

QString TraceOf(const QString& which) {
  if (which == "trainer") return TrainerTrace();
  if (which.startsWith("samples/")) return accordion::gui::test_support::SampleTrace(which.mid(8));
  if (which == "synthetic") return SyntheticTrace();
  return PythonHookTrace();
}

// "0.3" as the tools print it.
QString Number(double v) { return QString::number(v, 'g', 6); }

}  // namespace

class RunSettingsTest : public QObject {
  Q_OBJECT

 private slots:
  void everyReaderStatesTheTracesEtaAndInterval_data() {
    QTest::addColumn<QString>("which");
    QTest::addColumn<double>("eta");
    QTest::addColumn<int>("interval");
    QTest::newRow("accordion-train --eta 0.3 --interval 2") << "trainer" << 0.3 << 2;
    // Recorded by accordion-train with a check every 2 epochs (schema v1 and v2).
    QTest::newRow("sample topk, interval 2") << "samples/fmnist-mlp-topk-accordion.trace" << 0.5 << 2;
    QTest::newRow("sample probed powersgd, interval 2")
        << "samples/probed/fmnist-mlp-powersgd-accordion.trace" << 0.5 << 2;
    QTest::newRow("synthetic eta 0.3 interval 2") << "synthetic" << 0.3 << 2;
    QTest::newRow("python hook eta 0.4 interval 1") << "hook" << 0.4 << 1;
  }

  void everyReaderStatesTheTracesEtaAndInterval() {
    QFETCH(QString, which);
    QFETCH(double, eta);
    QFETCH(int, interval);
    const QString trace = TraceOf(which);
    if (trace.isEmpty()) QSKIP("accordion-train is not built (set ACCORDION_TRAIN)");
    QVERIFY2(QFileInfo(trace).isFile(), qPrintable(trace));
    const std::string t = Quote(trace);
    const TraceView view = LoadTraceView(trace.toStdString());
    QCOMPARE(view.run.eta, eta);
    QCOMPARE(view.run.interval, interval);
    QVERIFY(eta != AccordionOptions().eta() || interval != AccordionOptions().interval());

    // analyze schedule: the trace's settings, and the schedule the run had.
    const nlohmann::json schedule = RunJson(kBin + "/accordion-analyze schedule " + t + " --format json");
    QVERIFY(!schedule.is_null());
    QCOMPARE(schedule["eta"].get<double>(), eta);
    QCOMPARE(schedule["interval"].get<int>(), interval);
    QCOMPARE(static_cast<int>(schedule["epochs"].size()), view.num_epochs());
    int switches = 0;
    for (int e = 0; e < view.num_epochs(); ++e) {
      const std::vector<double> derived = schedule["epochs"][e]["levels"].get<std::vector<double>>();
      QVERIFY2(derived == view.levels[e], qPrintable(QString("epoch %1").arg(e)));
      if (e > 0 && view.levels[e] != view.levels[e - 1]) ++switches;
    }
    QVERIFY2(switches > 0, "the run switched levels: the comparison compares something");
    // ... at the paper's default the schedule differs: the default was not used.
    const nlohmann::json paper =
        RunJson(kBin + "/accordion-analyze schedule " + t + " --format json --eta 0.5 --interval 10");
    QCOMPARE(paper["interval"].get<int>(), 10);
    bool differs = false;
    for (int e = 0; e < view.num_epochs(); ++e) {
      differs = differs || paper["epochs"][e]["levels"].get<std::vector<double>>() != view.levels[e];
    }
    QVERIFY(differs);

    // analyze regimes
    const QString regimes = QString::fromStdString(Run(kBin + "/accordion-analyze regimes " + t));
    const QString every =
        QString("(eta %1, %2)")
            .arg(Number(eta), interval == 1 ? "every epoch" : QString("every %1 epochs").arg(interval));
    QVERIFY2(regimes.contains(every), qPrintable(regimes.left(300)));

    // sim replay
    const nlohmann::json replay = RunJson(kBin + "/accordion-sim replay " + t + " --timing analytic --format json");
    QVERIFY(!replay.is_null());
    QCOMPARE(replay["eta"].get<double>(), eta);
    QCOMPARE(replay["interval"].get<int>(), interval);
    // An explicit flag overrides.
    const nlohmann::json flagged =
        RunJson(kBin + "/accordion-sim replay " + t + " --timing analytic --format json --eta 0.7 --interval 3");
    QCOMPARE(flagged["eta"].get<double>(), 0.7);
    QCOMPARE(flagged["interval"].get<int>(), 3);

    // sim sweep: without --eta and --interval every row is at the trace's;
    // a swept list sets its own and leaves the other at the trace's.
    const nlohmann::json sweep =
        RunJson(kBin + "/accordion-sim sweep " + t + " --timing analytic --workers 2,4 --format json");
    QCOMPARE(static_cast<int>(sweep.size()), 2);
    for (const nlohmann::json& row : sweep) {
      QCOMPARE(row["eta"].get<double>(), eta);
      QCOMPARE(row["interval"].get<int>(), interval);
    }
    const nlohmann::json etas =
        RunJson(kBin + "/accordion-sim sweep " + t + " --timing analytic --etas 0.2,0.9 --format json");
    QCOMPARE(static_cast<int>(etas.size()), 2);
    std::vector<double> swept;
    for (const nlohmann::json& row : etas) {
      swept.push_back(row["eta"].get<double>());
      QCOMPARE(row["interval"].get<int>(), interval);
    }
    std::sort(swept.begin(), swept.end());
    QCOMPARE(swept, (std::vector<double>{0.2, 0.9}));

    // accordion-report
    const QString out = ScratchDir("settings-report") + "/report";
    Run(kBin + "/accordion-report " + t + " --out " + Quote(out) + " --workers 4 --bandwidth-gbps 1");
    QFile index(out + "/index.html");
    QVERIFY2(index.open(QIODevice::ReadOnly), qPrintable(out));
    const QString html = QString::fromUtf8(index.readAll());
    QVERIFY2(html.contains(QString(">%1 (the trace's)</td>").arg(Number(eta))), "report: eta");
    QVERIFY2(html.contains(QString(">%1 epochs (the trace's)</td>").arg(interval)), "report: interval");

    // The explorer's document: opens at the run's settings, derives the
    // run's schedule, and projects with them.
    ExplorerDocument doc;
    doc.open({trace});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 1);
    QCOMPARE(doc.scheduleSettings().eta, eta);
    QCOMPARE(doc.scheduleSettings().interval, interval);
    QVERIFY(doc.settingsAsRecorded());
    doc.waitForIdle();
    QVERIFY(doc.regimes() != nullptr);
    QCOMPARE(doc.regimes()->options.eta(), eta);
    QCOMPARE(doc.regimes()->options.interval(), interval);
    QVERIFY(doc.regimes()->schedulable);
    QVERIFY(doc.regimes()->comparison.accordion.levels == view.levels);
    QVERIFY(doc.estimate() != nullptr);
    QCOMPARE(doc.estimate()->result.eta, eta);
    QCOMPARE(doc.estimate()->result.interval, interval);
  }

  // One answer in every tool (issue 37): a trace with a network probe,
  // projected to 64 workers at 25 Gb/s by the explorer's document, by
  // accordion-sim with the flags the explorer prints and by accordion-report
  // with the same settings. All three anchor on the recorded network and
  // start from it (its exact CM02, not LV08): the same times, and the same
  // words for the network.
  void everyToolProjectsAProbedTraceAlike() {
    // The sample, with the probe a 1 Gb/s, 25 us link gives 2 ranks behind
    // a token-bucket shaper whose burst takes up to 64 KiB at no cost.
    const std::vector<NetworkProbeRecord> probe = accordion::test_support::ShapedTwoRankProbe(1, 65536);
    const QString trace = ScratchDir("one-answer") + "/probed.trace";
    accordion::test_support::CopyWithNetworkProbe(
        std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-powersgd-accordion.trace", trace.toStdString(),
        probe);

    ExplorerDocument doc;
    doc.open({trace});
    doc.waitForLoads();
    WhatIfSettings w;  // the explorer's defaults: 64 workers, a 25 Gb/s star, the model automatic
    QVERIFY(w.network_model.empty());
    doc.setWhatIfSettings(w);
    doc.waitForIdle();
    QVERIFY(doc.estimate() != nullptr);
    const sim::ReplayResult& mine = doc.estimate()->result;
    QVERIFY2(mine.platform.find("CM02") != std::string::npos, mine.platform.c_str());

    const std::string flags = CliFlagsOf(doc.scheduleSettings(), w, sim::TimingSource::kAnalytic);
    QVERIFY2(flags.find("--network-model") == std::string::npos, flags.c_str());
    const nlohmann::json cli = RunJson(kBin + "/accordion-sim replay " + Quote(trace) + " " + flags + " --format json");
    QVERIFY(!cli.is_null());
    QCOMPARE(QString::fromStdString(cli["platform"].get<std::string>()), QString::fromStdString(mine.platform));
    const auto time_of = [&](const char* name) { return cli["schedules"][name]["total"]["time_s"].get<double>(); };
    QCOMPARE(time_of("accordion"), mine.accordion.total.time_s);
    QCOMPARE(time_of("static-low"), mine.static_low.total.time_s);
    QCOMPARE(time_of("static-high"), mine.static_high.total.time_s);
    const auto anchored = [](const std::vector<std::string>& notes) {
      return std::any_of(notes.begin(), notes.end(),
                         [](const std::string& n) { return n.rfind("anchored on the recorded network (", 0) == 0; });
    };
    QVERIFY(anchored(mine.notes));
    // The shaper the probe saw, on the replayed links alike.
    QVERIFY2(mine.shaper.find("64 KiB per link") != std::string::npos, mine.shaper.c_str());
    QCOMPARE(QString::fromStdString(cli["shaper"].get<std::string>()), QString::fromStdString(mine.shaper));
    QVERIFY(anchored(cli["notes"].get<std::vector<std::string>>()));
    const nlohmann::json dense =
        RunJson(kBin + "/accordion-sim replay " + Quote(trace) + " " + flags + " --format json --scheme dense");
    QVERIFY(!dense.is_null());
    QCOMPARE(dense["schedules"]["static-low"]["total"]["time_s"].get<double>(), doc.estimate()->dense.total.time_s);

    // The report, given the same settings: its headline from the same
    // times, and the replay's own words for the network.
    const QString out = ScratchDir("one-answer-report") + "/report";
    Run(kBin + "/accordion-report " + Quote(trace) + " --out " + Quote(out) +
        " --workers 64 --bandwidth-gbps 25 --topology star");
    QFile index(out + "/index.html");
    QVERIFY2(index.open(QIODevice::ReadOnly), qPrintable(out));
    const QString html = QString::fromUtf8(index.readAll());
    const QString headline =
        QString::fromStdString(ProjectionHeadline(time_of("accordion"),
                                                  dense["schedules"]["static-low"]["total"]["time_s"].get<double>(),
                                                  time_of("static-low"), time_of("static-high")))
            .toHtmlEscaped();
    QVERIFY2(html.contains(headline), qPrintable(headline));
    QVERIFY2(html.contains(QString::fromStdString(cli["platform"].get<std::string>()).toHtmlEscaped()),
             qPrintable(QString::fromStdString(cli["platform"].get<std::string>())));
    QVERIFY2(html.contains("the trace&#x27;s network probe: probe of") || html.contains("the trace's network probe"),
             "report: anchored");
    QVERIFY2(html.contains(QString::fromStdString(mine.shaper).toHtmlEscaped()), mine.shaper.c_str());
  }

  // The Python hook given no test metrics: stored as NULL, read back as
  // not recorded, shown as "—" by every display.
  void metricsNotRecordedShowAsDash() {
    const QString trace = PythonHookTrace();
    const std::string t = Quote(trace);
    {
      auto reader = TraceReader::Open(trace.toStdString());
      const std::vector<EpochRecord> epochs = reader->Epochs();
      QVERIFY(!epochs.empty());
      QVERIFY(std::isnan(epochs.back().test_acc) && std::isnan(epochs.back().test_loss));
      QVERIFY(Recorded(epochs.back().train_loss) && Recorded(epochs.back().train_acc));
    }
    QVERIFY(!Run(kBin + "/accordion-analyze validate " + t).empty());

    const QString info = QString::fromStdString(Run(kBin + "/accordion-analyze info " + t));
    QVERIFY2(info.contains("test accuracy —, test loss —"), qPrintable(info));
    QVERIFY2(!info.contains("0.00%"), qPrintable(info));
    const nlohmann::json info_json = RunJson(kBin + "/accordion-analyze info " + t + " --format json");
    QVERIFY(info_json["final_test_accuracy"].is_null());
    QVERIFY(info_json["final_test_loss"].is_null());

    const QString table = QString::fromStdString(Run(kBin + "/accordion-analyze table " + t));
    QVERIFY2(table.contains("| 1 | — |"), qPrintable(table));
    const nlohmann::json table_json = RunJson(kBin + "/accordion-analyze table " + t + " --format json");
    QVERIFY(table_json[0]["accuracy"].is_null());

    const nlohmann::json exported = RunJson(kBin + "/accordion-analyze export " + t + " --format json --out -");
    QVERIFY(exported.dump().find("\"test_acc\":null") != std::string::npos);

    const QString out = ScratchDir("not-recorded-report") + "/report";
    Run(kBin + "/accordion-report " + t + " --out " + Quote(out) + " --workers 4 --bandwidth-gbps 1");
    QFile index(out + "/index.html");
    QVERIFY(index.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(index.readAll());
    const qsizetype from = html.indexOf("id=\"runs\"");
    QVERIFY(from >= 0);
    const QString runs_table = html.mid(from, html.indexOf("</table>", from) - from);
    QVERIFY2(runs_table.contains("<td class=\"num\">—</td>"), qPrintable(runs_table));
    QVERIFY2(!runs_table.contains(" %"), qPrintable(runs_table));
    QFile runs(out + "/runs.csv");
    QVERIFY(runs.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(runs.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    const QStringList header = lines[0].split(',');
    QCOMPARE(lines[1].split(',')[header.indexOf("final_test_acc")], QString());

    ExplorerDocument doc;
    doc.open({trace});
    doc.waitForLoads();
    QCOMPARE(doc.runCount(), 1);
    QVERIFY(!Recorded(doc.run(0)->summary.final_test_acc));
  }
};

QTEST_MAIN(RunSettingsTest)
#include "run_settings_test.moc"
