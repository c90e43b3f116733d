// accordion-report end to end: what a report holds, and that a user's
// files are never damaged - earlier reports, traces, other directories.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QtTest>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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
    const Result r = RunReport(QStringList{Accordion(), Static1(), "--out", out} + kQuick);
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
    QCOMPARE(html.count("<img "), 9);
    QVERIFY(html.contains("src=\"data:image/png;base64,"));
    QVERIFY(!html.contains("http://") && !html.contains("https://"));
    QVERIFY(html.contains("fmnist-mlp-powersgd-static-1.trace"));
    QVERIFY(html.contains("α–β estimate"));
    QVERIFY(html.contains("Accordion (rank 2 / rank 1)"));  // a results table row
    // Accordion's own "against it" cell is empty: aligned as the numbers are.
    QVERIFY(html.contains("<td class=\"num\">—</td></tr>"));
    QVERIFY(OnlyEntries(parent, {"report"}));
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
