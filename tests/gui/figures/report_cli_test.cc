// accordion-report end to end: what a report holds, and that a user's
// files are never damaged - earlier reports, traces, other directories.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QProcess>
#include <QtTest>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "gui/model/policy_table.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion::gui;

namespace {

struct Result {
  int code = -1;
  QString out;
  QString err;
};

Result RunReport(const QStringList& args) {
  QProcess p;
  p.start(QString(ACCORDION_BIN_DIR) + "/accordion-report", args);
  Result r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out";
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

QByteArray Hash(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

bool OneErrorLine(const Result& r) {
  const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
  return lines.size() == 1 && lines[0].startsWith("accordion-report: error: ");
}

QString ReadIndex(const QString& out) {
  QFile index(out + "/index.html");
  if (!index.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(index.readAll());
}

QString Accordion() { return test_support::SampleTrace("fmnist-mlp-powersgd-accordion.trace"); }
QString Static1() { return test_support::SampleTrace("fmnist-mlp-powersgd-static-1.trace"); }

// Small and quick: a 4-worker cluster, the analytic model.
const QStringList kQuick = {"--workers", "4", "--bandwidth-gbps", "1", "--interval", "2"};

// Nothing but `names` in `dir` (no staging directories left behind).
bool OnlyEntries(const QString& dir, QStringList names) {
  QStringList got = QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
  got.sort();
  names.sort();
  return got == names;
}

}  // namespace

class ReportCliTest : public QObject {
  Q_OBJECT

 private slots:
  void writesACompleteReport() {
    const QString parent = test_support::ScratchDir("report");
    const QString out = parent + "/report";
    // Static rank 1 pinned as the results table's baseline.
    const Result r = RunReport(QStringList{Accordion(), Static1(), "--out", out, "--baseline", Static1()} + kQuick);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.trimmed(), QDir(out).filePath("index.html"));
    for (const char* stem : {"regimes", "ratios", "level-map", "projection", "sweep", "epoch-breakdown", "timeline",
                             "accuracy-epoch", "accuracy-floats"}) {
      for (const char* suffix : {".png", ".pdf", ".csv"}) {
        const QString file = out + "/" + stem + suffix;
        QVERIFY2(QFileInfo(file).size() > 100, qPrintable(file));
      }
    }
    for (const char* file : {"index.html", ".accordion-report", "results.csv", "schedule.csv", "runs.csv"}) {
      QVERIFY2(QFileInfo::exists(out + "/" + file), file);
    }
    QFile pdf(out + "/regimes.pdf");
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QCOMPARE(pdf.read(4), QByteArray("%PDF"));
    QFile index(out + "/index.html");
    QVERIFY(index.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(index.readAll());
    // The nine figures and the policies' times.
    QCOMPARE(html.count("<img "), 10);
    QVERIFY(html.contains("src=\"data:image/png;base64,"));
    QVERIFY(!html.contains("http://") && !html.contains("https://"));
    QVERIFY(html.contains("fmnist-mlp-powersgd-static-1.trace"));
    QVERIFY(html.contains("α–β estimate"));
    QVERIFY(html.contains("Accordion (rank 2 / rank 1)"));  // a results table row
    QVERIFY(html.contains("<th>vs rank 1</th>"));
    QVERIFY(html.contains("<td>rank 1 (baseline)</td>"));
    // Accordion's own "against it" cell is empty: aligned as the numbers are.
    QVERIFY(html.contains("<td class=\"num\">—</td></tr>"));
    // A schema v3 trace has no gradient moments: the Policies section says
    // AdaQS cannot be derived, and compares the others.
    QVERIFY(html.contains("<h2 id=\"policies\">Policies: Accordion against AdaQS</h2>"));
    QVERIFY(html.contains("policy adaqs reads each layer's gradient mean norm"));
    QVERIFY(html.contains("<td><b>Accordion rank 2 / rank 1</b></td>"));
    QVERIFY(!html.contains("<td>AdaQS"));
    QVERIFY(OnlyEntries(parent, {"report"}));
  }

  // The Policies section of a schema v4 trace: every policy's row, with
  // the numbers `accordion-sim compare-policies` gives for the flags the
  // section names, to the last digit; the batch scheme's Smith et al.; no
  // section for a scheme without levels.
  void writesThePoliciesSection() {
    const QString parent = test_support::ScratchDir("report-policies");
    const QString trace = test_support::WritePolicyTrace(parent, "powersgd-v4.trace", accordion::Scheme::kPowerSgd);
    const QString out = parent + "/report";
    const Result r = RunReport(QStringList{trace, "--out", out} + kQuick);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QString html = ReadIndex(out);
    QVERIFY(html.contains("<a href=\"#policies\">Policies</a>"));
    QVERIFY(html.contains("<h2 id=\"policies\">Policies: Accordion against AdaQS</h2>"));
    const int section = static_cast<int>(html.indexOf("<h2 id=\"policies\">"));
    const QString policies = html.mid(section, html.indexOf("<h2 id=\"figures\">") - section);
    QVERIFY(policies.contains("<th>floats / worker at 4 workers</th>"));
    QVERIFY(policies.contains("<th>speedup vs static low</th>"));
    for (const char* name : {"<td>static rank 4</td>", "<td>static rank 1</td>",
                             "<td><b>Accordion rank 4 / rank 1</b></td>", "<td>AdaQS rank 1 → rank 4</td>"}) {
      QVERIFY2(policies.contains(QString::fromUtf8(name)), name);
    }
    QVERIFY(policies.contains("<img "));  // the projected times as bars
    for (const char* file : {"policies.csv", "policy-times.png", "policy-times.pdf", "policy-times.csv"}) {
      QVERIFY2(QFileInfo(out + "/" + file).size() > 100, file);
    }

    // The command the section names gives the same table.
    const QRegularExpressionMatch command =
        QRegularExpression("<code>accordion-sim compare-policies ([^<]+)</code>").match(policies);
    QVERIFY(command.hasMatch());
    QStringList args = QProcess::splitCommand(command.captured(1));
    QCOMPARE(args.first(), trace);
    QVERIFY(args.contains("--workers") && args.contains("--timing"));
    QProcess sim;
    sim.start(QString(ACCORDION_BIN_DIR) + "/accordion-sim",
              QStringList{"compare-policies"} + args + QStringList{"--format", "json"});
    QVERIFY(sim.waitForFinished(120000));
    QVERIFY2(sim.exitCode() == 0, sim.readAllStandardError().constData());
    const QJsonArray rows = QJsonDocument::fromJson(sim.readAllStandardOutput()).object()["policies"].toArray();
    QCOMPARE(rows.size(), 4);
    QFile csv(out + "/policies.csv");
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 8);  // the header, four policies, dense and the two casts
    const double static_low_s = rows[0].toObject()["projected_s"].toDouble();
    for (int i = 0; i < 4; ++i) {
      const QJsonObject row = rows[i].toObject();
      const QString line = lines[i + 1];
      QVERIFY2(line.startsWith(row["policy"].toString() + ","), qPrintable(line));
      // ...,floats,saving,error,critical error,changes,projected_s,projected_low_s,projected_high_s
      const QStringList f = line.split(',');
      const double projected = row["projected_s"].toDouble();
      QVERIFY(projected > 0);
      QVERIFY2(qAbs(f[f.size() - 3].toDouble() / projected - 1) < 1e-12, qPrintable(line));
      QVERIFY2(f[f.size() - 2].toDouble() <= projected && f.last().toDouble() >= projected, qPrintable(line));
      QVERIFY2(qAbs(f[f.size() - 8].toDouble() / row["floats_per_worker"].toDouble() - 1) < 1e-12, qPrintable(line));
      QCOMPARE(f[f.size() - 4].toInt(), row["level_changes"].toInt());
      // The table's cells are those numbers, as the tab writes them.
      const QString cell = QString::fromStdString(accordion::gui::PolicySecondsText(projected));
      const QString speedup = QString::fromStdString(accordion::gui::PolicyRatioText(static_low_s / projected));
      QVERIFY2(policies.contains("<td class=\"num\">" + cell + "</td><td class=\"num\">" + speedup +
                                 "</td><td class=\"num\">"),
               qPrintable(cell + " " + speedup));
    }
    QCOMPARE(rows[3].toObject()["policy"].toString(), QString("adaqs"));
    // Static low against itself, and dense against itself: 1.00× (speedup, vs dense).
    const QString one = QString::fromStdString(accordion::gui::PolicyRatioText(1));
    QVERIFY(policies.contains(QRegularExpression("<tr><td>static rank 4</td>.*<td class=\"num\">" + one +
                                                 "</td><td class=\"num\">[0-9.]+×</td>")));
    QVERIFY(policies.contains(QRegularExpression("<tr><td>dense</td>.*<td class=\"num\">" + one + "</td>")));
    QVERIFY(policies.contains("<td>dense</td>") && policies.contains("<td>bf16 cast</td>"));
    QVERIFY2(policies.contains("<p class=\"verdict\"><b>Fastest on this cluster: "), "report: the verdict");

    // The batch scheme: Smith et al.; its error columns left out.
    const QString batch = test_support::WritePolicyTrace(parent, "batch-v4.trace", accordion::Scheme::kBatch);
    QVERIFY2(RunReport(QStringList{batch, "--out", parent + "/batch"} + kQuick).code == 0, "batch");
    const QString batch_html = ReadIndex(parent + "/batch");
    QVERIFY(batch_html.contains("<h2 id=\"policies\">Policies: Accordion against Smith et al.</h2>"));
    QVERIFY(batch_html.contains("<td>Smith et al. batch 128 → batch 512</td>"));
    QVERIFY(!batch_html.contains("<th>error (critical)</th>"));

    // Dense: no level to choose, no section.
    const QString dense = test_support::SampleTrace("fmnist-mlp-dense.trace");
    QVERIFY2(RunReport(QStringList{dense, "--out", parent + "/dense"} + kQuick).code == 0, "dense");
    const QString dense_html = ReadIndex(parent + "/dense");
    QVERIFY(!dense_html.isEmpty());
    QVERIFY(!dense_html.contains("id=\"policies\""));
    QVERIFY(!QFileInfo::exists(parent + "/dense/policies.csv"));
  }

  // A topology's parameters that the GUI offers are flags here too, and
  // reach the projection and the command line the report shows.
  void topologyParametersReachTheReport() {
    const QString parent = test_support::ScratchDir("report-topology");
    const QString out = parent + "/report";
    const Result r = RunReport(
        QStringList{Accordion(), "--out", out, "--topology", "hierarchical", "--gpus-per-node", "2"} + kQuick);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QFile index(out + "/index.html");
    QVERIFY(index.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(index.readAll());
    QVERIFY(html.contains("<td>GPUs per node</td><td class=\"num\">2</td>"));
    QVERIFY(html.contains("--topology hierarchical") && html.contains("--gpus-per-node 2"));
  }

  // The link rate the trace was recorded at: unknown unless given, and then
  // in the settings and the command line the report shows.
  void recordedBandwidthReachesTheReport() {
    const QString parent = test_support::ScratchDir("report-recorded");
    for (const bool known : {false, true}) {
      const QString out = parent + (known ? "/known" : "/unknown");
      const QStringList recorded = known ? QStringList{"--recorded-bandwidth-gbps", "2.5"} : QStringList{};
      const Result r = RunReport(QStringList{Accordion(), "--out", out} + kQuick + recorded);
      QVERIFY2(r.code == 0, qPrintable(r.err));
      QFile index(out + "/index.html");
      QVERIFY(index.open(QIODevice::ReadOnly));
      const QString html = QString::fromUtf8(index.readAll());
      QCOMPARE(html.contains("<td>trace recorded at</td><td class=\"num\">2.5 Gb/s</td>"), known);
      QCOMPARE(html.contains("--recorded-bandwidth-gbps 2.5"), known);
      QCOMPARE(html.contains("<td>trace recorded at</td><td>unknown"), !known);
    }
  }

  void refusesToReplaceWithoutOverwrite() {
    const QString parent = test_support::ScratchDir("report-twice");
    const QString out = parent + "/report";
    QCOMPARE(RunReport(QStringList{Accordion(), "--out", out} + kQuick).code, 0);
    const QByteArray before = Hash(out + "/index.html");
    const Result again = RunReport(QStringList{Static1(), "--out", out} + kQuick);
    QCOMPARE(again.code, 2);
    QVERIFY2(OneErrorLine(again), qPrintable(again.err));
    QVERIFY(again.err.contains("--overwrite"));
    QCOMPARE(Hash(out + "/index.html"), before);
    QVERIFY(OnlyEntries(parent, {"report"}));

    const Result replaced = RunReport(QStringList{Static1(), "--out", out, "--overwrite"} + kQuick);
    QVERIFY2(replaced.code == 0, qPrintable(replaced.err));
    QVERIFY(Hash(out + "/index.html") != before);
    QVERIFY(OnlyEntries(parent, {"report"}));
  }

  void overwriteLeavesOtherDirectoriesAlone() {
    const QString parent = test_support::ScratchDir("report-mine");
    const QString out = parent + "/thesis";
    QVERIFY(QDir().mkpath(out));
    QFile mine(out + "/chapter1.tex");
    QVERIFY(mine.open(QIODevice::WriteOnly));
    mine.write("my work\n");
    mine.close();
    const Result r = RunReport(QStringList{Accordion(), "--out", out, "--overwrite"} + kQuick);
    QCOMPARE(r.code, 2);
    QVERIFY2(OneErrorLine(r), qPrintable(r.err));
    QVERIFY(OnlyEntries(out, {"chapter1.tex"}));
    QVERIFY(OnlyEntries(parent, {"thesis"}));
  }

  // A note the user put into an earlier report keeps it from being
  // replaced: --overwrite deletes only what accordion-report wrote.
  void overwriteKeepsAUsersFileInAnEarlierReport() {
    const QString parent = test_support::ScratchDir("report-note");
    const QString out = parent + "/report";
    QCOMPARE(RunReport(QStringList{Accordion(), "--out", out} + kQuick).code, 0);
    QFile note(out + "/figures-notes.txt");
    QVERIFY(note.open(QIODevice::WriteOnly));
    note.write("what I saw\n");
    note.close();
    const QByteArray before = Hash(out + "/index.html");
    const Result r = RunReport(QStringList{Static1(), "--out", out, "--overwrite"} + kQuick);
    QCOMPARE(r.code, 2);
    QVERIFY2(OneErrorLine(r), qPrintable(r.err));
    QVERIFY2(r.err.contains("figures-notes.txt"), qPrintable(r.err));
    QCOMPARE(Hash(out + "/figures-notes.txt"), QCryptographicHash::hash("what I saw\n", QCryptographicHash::Sha256));
    QCOMPARE(Hash(out + "/index.html"), before);
    QVERIFY(OnlyEntries(parent, {"report"}));
    // Once the note is moved out, the earlier report is replaced.
    QVERIFY(QFile::remove(out + "/figures-notes.txt"));
    const Result again = RunReport(QStringList{Static1(), "--out", out, "--overwrite"} + kQuick);
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QVERIFY(Hash(out + "/index.html") != before);
  }

  // A live run's --checkpoint-dir (its lock held, as accordion-train holds
  // it) takes no report, inside it nor in its place: the report used to be
  // written into it.
  void aLiveRunsCheckpointDirectoryTakesNoReport() {
    const QString ckpt = test_support::ScratchDir("report-live") + "/ckpt";
    QVERIFY(QDir().mkpath(ckpt));
    const int lock = ::open(QFile::encodeName(ckpt + "/.accordion.lock").constData(), O_RDWR | O_CREAT, 0644);
    QVERIFY(lock >= 0 && ::flock(lock, LOCK_EX | LOCK_NB) == 0);
    for (const QString& out : {ckpt + "/report", ckpt}) {
      const Result r = RunReport(QStringList{Accordion(), "--out", out, "--overwrite"} + kQuick);
      QCOMPARE(r.code, 2);
      QVERIFY2(OneErrorLine(r), qPrintable(r.err));
      QVERIFY2(r.err.contains("is in use by a running accordion-train"), qPrintable(r.err));
    }
    QVERIFY(OnlyEntries(ckpt, {".accordion.lock"}));
    ::close(lock);
  }

  // --out a link to a directory: the report is replaced where it points,
  // the link stays, and the target's other files are the user's.
  void aLinkedOutIsReplacedWhereItPoints() {
    const QString parent = test_support::ScratchDir("report-link");
    const QString target = parent + "/reports/latest";
    QVERIFY(QDir().mkpath(parent + "/reports"));
    QCOMPARE(RunReport(QStringList{Accordion(), "--out", target} + kQuick).code, 0);
    QVERIFY(QFile::link(target, parent + "/link"));
    const QByteArray before = Hash(target + "/index.html");
    const Result r = RunReport(QStringList{Static1(), "--out", parent + "/link", "--overwrite"} + kQuick);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFileInfo(parent + "/link").isSymLink());
    QVERIFY(Hash(target + "/index.html") != before);
    QVERIFY(OnlyEntries(parent + "/reports", {"latest"}));
    // With a file of the user's in the target, nothing is replaced.
    QFile mine(target + "/mine.txt");
    QVERIFY(mine.open(QIODevice::WriteOnly));
    mine.write("mine\n");
    mine.close();
    const QByteArray now = Hash(target + "/index.html");
    const Result refused = RunReport(QStringList{Accordion(), "--out", parent + "/link", "--overwrite"} + kQuick);
    QCOMPARE(refused.code, 2);
    QVERIFY2(OneErrorLine(refused), qPrintable(refused.err));
    QVERIFY(QFileInfo(target + "/mine.txt").isFile());
    QCOMPARE(Hash(target + "/index.html"), now);
  }

  void badTraceWritesNothing() {
    const QString parent = test_support::ScratchDir("report-bad");
    const QString bad = test_support::WriteTruncatedTrace(parent, "cut.trace");
    const QString out = parent + "/report";
    // A good trace first: every trace is checked before anything is written.
    const Result r = RunReport(QStringList{Accordion(), bad, "--out", out} + kQuick);
    QCOMPARE(r.code, 2);
    QVERIFY2(OneErrorLine(r), qPrintable(r.err));
    QVERIFY(r.err.contains("cut.trace"));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY(OnlyEntries(parent, {"cut.trace"}));
  }

  void outMustNotBeATrace() {
    const QString parent = test_support::ScratchDir("report-self");
    const QString trace = parent + "/run.trace";
    QVERIFY(QFile::copy(Accordion(), trace));
    const QByteArray before = Hash(trace);
    for (bool overwrite : {false, true}) {
      QStringList args{trace, "--out", trace};
      if (overwrite) args << "--overwrite";
      const Result r = RunReport(args + kQuick);
      QCOMPARE(r.code, 2);
      QVERIFY2(OneErrorLine(r), qPrintable(r.err));
      QCOMPARE(Hash(trace), before);
    }
    QVERIFY(OnlyEntries(parent, {"run.trace"}));
  }

  void badInputIsOneLine() {
    const QString parent = test_support::ScratchDir("report-input");
    const QString out = parent + "/report";
    const std::vector<QStringList> cases = {
        {parent + "/missing.trace", "--out", out},
        {Accordion()},  // no --out
        {Accordion(), "--out", out, "--eta", "-1"},
        {Accordion(), "--out", out, "--topology", "moebius"},
        {Accordion(), "--out", out, "--gpus-per-node", "0"},
        {Accordion(), "--out", out, "--low", "0.5"},    // not a PowerSGD rank
        {Accordion(), "--out", out, "--low", "1e308"},  // not an integer at all
        {Accordion(), "--out", out, "--high", "-1e308"},
        {Accordion(), "--out", out, "--bogus"},
        {Accordion(), "--out", out, "--baseline", Static1()},  // not one of the traces
    };
    for (const QStringList& args : cases) {
      const Result r = RunReport(args);
      QVERIFY2(r.code == 2, qPrintable(args.join(' ') + ": " + QString::number(r.code) + " " + r.err));
      QVERIFY2(OneErrorLine(r), qPrintable(args.join(' ') + ": " + r.err));
      QVERIFY(!QFileInfo::exists(out));
    }
    QVERIFY(OnlyEntries(parent, {}));
  }

  // A file-size limit (as a full disk fails a write) mid-report: exit 4, the
  // machine's failure, one line, and nothing left beside --out - neither a
  // report that looks complete nor its hidden staging directory, nor the claim.
  void aFullDiskIsExitFourAndLeavesNothing() {
    const QString parent = test_support::ScratchDir("report-full");
    const QString out = parent + "/report";
    QProcess p;
    p.start("/bin/sh", {"-c", "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"",
                        QString(ACCORDION_BIN_DIR) + "/accordion-report", Accordion(), "--out", out});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 4);
    QVERIFY2(err.split('\n', Qt::SkipEmptyParts).size() == 1 && err.startsWith("accordion-report: error: "),
             qPrintable(err));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY2(OnlyEntries(parent, {}), qPrintable(QDir(parent).entryList(QDir::AllEntries | QDir::Hidden).join(' ')));
  }

  void helpAndVersion() {
    const Result help = RunReport({"--help"});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.contains("--overwrite"));
    const Result version = RunReport({"--version"});
    QCOMPARE(version.code, 0);
    QVERIFY(version.out.startsWith("accordion-report "));
  }
};

QTEST_MAIN(ReportCliTest)
#include "report_cli_test.moc"
