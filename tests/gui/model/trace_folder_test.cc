// TraceFolder: a log folder opened as TensorBoard opens one - every trace
// under it to the depth limit, nothing that is not a trace, and a trace
// written after opening reported within a bounded wait, also when its file
// turns up empty first.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTest>

#include "gui/model/trace_folder.h"
#include "tests/gui/gui_test_support.h"

using namespace accordion;
using namespace accordion::gui;
using accordion::gui::test_support::ScratchDir;
using accordion::gui::test_support::WriteSynthetic;

namespace {

// What a person opening a folder waits for at most before a new trace shows.
constexpr int kBoundMs = 5000;

synthetic::SyntheticTraceOptions SmallRun() {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 4;
  o.decay_epochs = {};
  return o;
}

bool WriteBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

}  // namespace

class TraceFolderTest : public QObject {
  Q_OBJECT

 private slots:
  void listsEveryTraceUnderItToTheDepthLimit() {
    const QString root = ScratchDir("folder-list");
    QVERIFY(QDir(root).mkpath("sub/deeper"));
    QVERIFY(QDir(root).mkpath("1/2/3/4/5"));
    QVERIFY(QDir(root).mkpath(".hidden"));
    const QString top = WriteSynthetic(root, "top.trace", SmallRun());
    const QString nested = WriteSynthetic(root + "/sub/deeper", "nested.trace", SmallRun());
    const QString at_limit = WriteSynthetic(root + "/1/2/3/4", "at-limit.trace", SmallRun());
    WriteSynthetic(root + "/1/2/3/4/5", "too-deep.trace", SmallRun());
    WriteSynthetic(root + "/.hidden", "hidden.trace", SmallRun());
    QVERIFY(WriteBytes(root + "/notes.txt", "not a trace"));
    QVERIFY(WriteBytes(root + "/other.db", "another program's database"));
    QVERIFY(QFile::copy(top, root + "/sub/copy.trace.bak"));

    TraceFolder folder(root);
    QSignalSpy found(&folder, &TraceFolder::tracesFound);
    QTRY_COMPARE(found.count(), 1);
    QStringList expected{top, nested, at_limit};
    expected.sort();
    QCOMPARE(found.at(0).at(0).toStringList(), expected);
    QCOMPARE(found.at(0).at(1).toBool(), true);  // the first scan
    QCOMPARE(folder.traces(), expected);
    // The foreign .db is read once, then left alone until it changes.
    QCOMPARE(folder.pendingCount(), 1);
    // Nothing new: later scans report nothing.
    folder.rescan();
    QCOMPARE(found.count(), 1);
  }

  void reportsATraceWrittenAfterOpeningWithinABoundedWait() {
    const QString root = ScratchDir("folder-new");
    TraceFolder folder(root);
    QSignalSpy found(&folder, &TraceFolder::tracesFound);
    QTRY_COMPARE(found.count(), 1);  // the first scan: nothing
    QVERIFY(found.at(0).at(0).toStringList().isEmpty());

    // A run's folder made after opening, its trace written into it.
    QVERIFY(QDir(root).mkpath("run-7"));
    QElapsedTimer clock;
    clock.start();
    const QString path = WriteSynthetic(root + "/run-7", "late.trace", SmallRun());
    QTRY_VERIFY_WITH_TIMEOUT(folder.traces().contains(path), kBoundMs);
    qInfo("new trace reported %lld ms after its writer started", static_cast<long long>(clock.elapsed()));
    QCOMPARE(found.last().at(0).toStringList(), QStringList{path});
    QCOMPARE(found.last().at(1).toBool(), false);
  }

  void waitsForAFileThatIsNotATraceYet() {
    const QString root = ScratchDir("folder-half");
    TraceFolder folder(root);
    QSignalSpy found(&folder, &TraceFolder::tracesFound);
    QTRY_COMPARE(found.count(), 1);
    // The file exists before its tables do (SQLite creates it empty).
    const QString path = root + "/starting.trace";
    QVERIFY(WriteBytes(path, QByteArray()));
    folder.rescan();
    QVERIFY(!folder.traces().contains(path));
    QCOMPARE(folder.pendingCount(), 1);
    // Then the trainer writes it: reported, by the watcher or the poll.
    WriteSynthetic(root, "starting.trace", SmallRun());
    QTRY_VERIFY_WITH_TIMEOUT(folder.traces().contains(path), kBoundMs);
    QCOMPARE(folder.pendingCount(), 0);
  }

  void traceFileNames() {
    QVERIFY(IsTraceFileName("/a/run.trace"));
    QVERIFY(IsTraceFileName("run.DB"));
    QVERIFY(IsTraceFileName("run.sqlite"));
    QVERIFY(!IsTraceFileName("run.trace-wal"));
    QVERIFY(!IsTraceFileName("run.trace-shm"));
    QVERIFY(!IsTraceFileName("run.csv"));
  }
};

QTEST_GUILESS_MAIN(TraceFolderTest)
#include "trace_folder_test.moc"
