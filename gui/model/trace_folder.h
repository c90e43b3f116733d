// TraceFolder: a directory opened the way TensorBoard opens a log folder -
// every trace under it, a few levels deep, and each new one as it appears.
//
// A trace file exists before it is one: SQLite creates it empty and the
// trainer writes its tables a moment later, partly into the -wal file
// beside it (which changes no directory). So a new file is looked at again
// at every scan until it reads as a trace (ReadTraceProgress), and only then
// reported; a trace with no finished epoch yet is reported too (the document
// waits for its first epoch and shows it as live). A file that never reads
// as a trace (another program's database) is never reported, and read again
// only when it changes.
//
// Thread safety: an object of the GUI thread.
#ifndef ACCORDION_GUI_MODEL_TRACE_FOLDER_H_
#define ACCORDION_GUI_MODEL_TRACE_FOLDER_H_

#include <QDateTime>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <map>

class QFileSystemWatcher;
class QTimer;

namespace accordion::gui {

class TraceFolder : public QObject {
  Q_OBJECT

 public:
  // Directories below the root that are searched: runs/<experiment>/<seed>/
  // fits with room to spare, and a home directory opened by mistake is not
  // walked to the bottom.
  static constexpr int kMaxDepth = 4;
  // Files named like traces that do not read as one yet are looked at this
  // often (they grow in place, which changes no directory); the whole tree
  // is walked every kWalkPolls polls besides the watcher's events, for file
  // systems that send none (NFS) - not every second, for a big tree opened
  // by mistake.
  static constexpr int kPollMs = 1000;
  static constexpr int kWalkPolls = 5;

  // Scans `root` at once (traces already there are reported by the first
  // tracesFound, queued, so a caller can connect first) and keeps watching.
  explicit TraceFolder(const QString& root, QObject* parent = nullptr);

  QString root() const { return root_; }
  // Every trace reported so far, in the order reported.
  QStringList traces() const { return reported_; }
  // Files named like traces that do not read as one (yet).
  int pendingCount() const { return static_cast<int>(pending_.size()); }

  // Looks now; reports traces not reported before.
  void rescan();

 signals:
  // New traces, sorted by path within one scan; `initial`: the first scan's.
  void tracesFound(const QStringList& paths, bool initial);

 private:
  // What a pending file looked like when last read: read again once it changes.
  struct Stamp {
    qint64 size = -1;
    QDateTime modified;
    qint64 wal_size = -1;
    bool operator==(const Stamp& o) const { return size == o.size && modified == o.modified && wal_size == o.wal_size; }
  };

  void walk(const QString& dir, int depth, QStringList* found);
  void poll();
  bool readsAsTrace(const QString& path);

  QString root_;
  QFileSystemWatcher* watcher_;
  QTimer* debounce_;
  QTimer* poll_;
  QStringList reported_;
  QSet<QString> reported_set_;
  std::map<QString, Stamp> pending_;
  bool scanned_once_ = false;
  int polls_ = 0;
};

// Whether `path` is named like a trace: .trace, .db or .sqlite, as File > Open
// offers them.
bool IsTraceFileName(const QString& path);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_TRACE_FOLDER_H_
