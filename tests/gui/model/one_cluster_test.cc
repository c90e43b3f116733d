// One cluster for one question (issue 48): the committed probed trace,
// asked "what would 64 workers at 25 Gb/s take" with only those two flags
// (the explorer: only those two fields set), gets the same network and the
// same projected times from `accordion-sim replay`, `sweep`,
// `compare-policies` and `advise`, from `accordion-report` and from the
// explorer's What-if and Policies tabs. The test compares defaults, not
// flags: every other setting is each tool's own default, and an
// unspecified latency is the trace's probe's in all of them
// (docs/simulator.md, "Anchored replay").
#include <QFile>
#include <QRegularExpression>
#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gui/model/explorer_document.h"
#include "gui/model/headlines.h"
#include "gui/model/policy_table.h"
#include "tests/gui/gui_test_support.h"
#include "tests/support/run_command.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::ScratchDir;
using accordion::test_support::CommandResult;
using accordion::test_support::RunCommand;

namespace {

const std::string kBin = ACCORDION_BIN_DIR;
const std::string kTrace =
    std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/policies/seed-1/fmnist-mlp-powersgd-accordion.trace";
// The question, and nothing else.
const std::string kQuestion = " --workers 64 --bandwidth-gbps 25";

nlohmann::json RunJson(const std::string& command) {
  const CommandResult r = RunCommand(command);
  if (r.exit_code != 0) {
    qWarning("%s: exit %d: %s", command.c_str(), r.exit_code, r.err.c_str());
    return {};
  }
  return nlohmann::json::parse(r.out);
}

std::string Sim(const std::string& command, const std::string& extra = "") {
  return kBin + "/accordion-sim " + command + " '" + kTrace + "'" + kQuestion + extra + " --format json";
}

// Equal to a part in a million: the same replay, whichever tool ran it.
bool Same(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); }

}  // namespace

class OneClusterTest : public QObject {
  Q_OBJECT

 private slots:
  void everyToolAnswersTheSameQuestionAlike() {
    // accordion-sim replay: the recorded network's latency and model, in
    // words people read.
    const nlohmann::json replay = RunJson(Sim("replay"));
    QVERIFY(!replay.is_null());
    const std::string platform = replay["platform"].get<std::string>();
    QCOMPARE(QString::fromStdString(platform),
             QString("star of 64 hosts, 25 Gb/s, 126.6 µs per link, CM02 (TCP-gamma 0, cross-traffic off)"));
    const auto time_of = [](const nlohmann::json& r, const char* name) {
      return r["schedules"][name]["total"]["time_s"].get<double>();
    };
    const double accordion = time_of(replay, "accordion");
    const double low = time_of(replay, "static-low");

    // The α–β estimate (the explorer's and the report's first answer) is
    // the simulation's under the recorded network's exact setting.
    const nlohmann::json analytic = RunJson(Sim("replay", " --timing analytic"));
    QVERIFY(!analytic.is_null());
    QCOMPARE(QString::fromStdString(analytic["platform"].get<std::string>()), QString::fromStdString(platform));
    const double accordion_ab = time_of(analytic, "accordion");
    QVERIFY2(std::fabs(accordion_ab / accordion - 1) < 0.005,
             qPrintable(QString("alpha-beta %1 s, SimGrid %2 s").arg(accordion_ab).arg(accordion)));

    // sweep: one point, the same latency and times.
    const nlohmann::json sweep = RunJson(Sim("sweep"));
    QVERIFY(!sweep.is_null());
    QCOMPARE(static_cast<int>(sweep.size()), 1);
    QCOMPARE(QString::number(sweep[0]["latency_us"].get<double>(), 'g', 4), QString("126.6"));
    QVERIFY(Same(sweep[0]["accordion_s"].get<double>(), accordion));
    QVERIFY(Same(sweep[0]["static_low_s"].get<double>(), low));

    // compare-policies and advise: the same words, the same times.
    const nlohmann::json compare = RunJson(Sim("compare-policies"));
    QVERIFY(!compare.is_null());
    QCOMPARE(QString::fromStdString(compare["platform"].get<std::string>()), QString::fromStdString(platform));
    bool saw_accordion = false;
    for (const nlohmann::json& row : compare["policies"]) {
      if (row["policy"] == "accordion") {
        saw_accordion = true;
        QVERIFY(Same(row["projected_s"].get<double>(), accordion));
      }
      if (row["policy"] == "static-low") QVERIFY(Same(row["projected_s"].get<double>(), low));
    }
    QVERIFY(saw_accordion);
    const nlohmann::json advise = RunJson(Sim("advise"));
    QVERIFY(!advise.is_null());
    QCOMPARE(QString::fromStdString(advise["platform"].get<std::string>()), QString::fromStdString(platform));
    QVERIFY(Same(advise["reference_projected_s"].get<double>(), low));

    // accordion-report: the replay's words, and the headline from the α–β
    // times (its first answer).
    const nlohmann::json dense = RunJson(Sim("replay", " --timing analytic --scheme dense"));
    QVERIFY(!dense.is_null());
    const QString out = ScratchDir("one-cluster-report") + "/report";
    const CommandResult report =
        RunCommand(kBin + "/accordion-report '" + kTrace + "' --out '" + out.toStdString() + "'" + kQuestion);
    QVERIFY2(report.exit_code == 0, report.err.c_str());
    QFile index(out + "/index.html");
    QVERIFY2(index.open(QIODevice::ReadOnly), qPrintable(out));
    const QString html = QString::fromUtf8(index.readAll());
    QVERIFY2(html.contains(QString::fromStdString(platform).toHtmlEscaped()), "report: the network's words");
    QVERIFY2(html.contains("126.6 µs per link (the trace&#x27;s recorded network)") ||
                 html.contains("126.6 µs per link (the trace's recorded network)"),
             "report: the latency and where it came from");
    const QString headline =
        QString::fromStdString(ProjectionHeadline(accordion_ab, time_of(dense, "static-low"),
                                                  time_of(analytic, "static-low"), time_of(analytic, "static-high")))
            .toHtmlEscaped();
    QVERIFY2(html.contains(headline), qPrintable(headline));
    // No fitted number printed to twelve digits anywhere a person reads it.
    QVERIFY2(!html.contains(QRegularExpression("126\\.6\\d{3,}")), "report: 126.6 us, rounded");

    // The explorer: the two fields set, every other control at its default.
    ExplorerDocument doc;
    doc.open({QString::fromStdString(kTrace)});
    doc.waitForLoads();
    WhatIfSettings w;
    w.workers = 64;
    w.bandwidth_gbps = 25;
    QVERIFY(!w.latency_us.has_value());
    doc.setWhatIfSettings(w);
    doc.waitForIdle();
    QVERIFY(doc.estimate() != nullptr);
    QCOMPARE(QString::fromStdString(doc.estimate()->result.platform), QString::fromStdString(platform));
    QVERIFY(Same(doc.estimate()->result.accordion.total.time_s, accordion_ab));
    QVERIFY(Same(doc.estimate()->dense.total.time_s, time_of(dense, "static-low")));
    doc.requestPolicies();
    doc.waitForIdle();
    QVERIFY(doc.policies() != nullptr);
    QVERIFY(doc.policies()->projected());
    QCOMPARE(QString::fromStdString(doc.policies()->replay->platform), QString::fromStdString(platform));
    bool tab_has_accordion = false;
    for (const PolicyRow& row : doc.policies()->comparison.rows) {
      if (row.name != "accordion") continue;
      tab_has_accordion = true;
      QVERIFY(row.projected_s && Same(*row.projected_s, accordion_ab));
    }
    QVERIFY(tab_has_accordion);
  }
};

QTEST_MAIN(OneClusterTest)
#include "one_cluster_test.moc"
