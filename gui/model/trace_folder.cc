#include "gui/model/trace_folder.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>
#include <exception>

#include "gui/model/run_data.h"

namespace accordion::gui {

namespace {

// Events come in bursts (a trainer creates the trace, its -wal and -shm at
// once): one scan for the burst.
constexpr int kDebounceMs = 100;

}  // namespace

bool IsTraceFileName(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == "trace" || suffix == "db" || suffix == "sqlite";
}

TraceFolder::TraceFolder(const QString& root, QObject* parent)
    : QObject(parent),
      root_(QFileInfo(root).absoluteFilePath()),
      watcher_(new QFileSystemWatcher(this)),
      debounce_(new QTimer(this)),
      poll_(new QTimer(this)) {
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &TraceFolder::rescan);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { debounce_->start(); });
  poll_->setInterval(kPollMs);
  connect(poll_, &QTimer::timeout, this, &TraceFolder::poll);
  poll_->start();
  // Queued: whoever made the folder connects to tracesFound first.
  QTimer::singleShot(0, this, &TraceFolder::rescan);
}

void TraceFolder::walk(const QString& dir, int depth, QStringList* found) {
  if (!watcher_->directories().contains(dir)) watcher_->addPath(dir);
  const QFileInfoList entries = QDir(dir).entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
  for (const QFileInfo& entry : entries) {
    const QString path = entry.absoluteFilePath();
    if (entry.isDir()) {
      // Not through links (a loop, or someone else's tree) and not into
      // hidden directories (.git, .cache).
      if (depth < kMaxDepth && !entry.isSymLink() && !entry.fileName().startsWith('.')) walk(path, depth + 1, found);
      continue;
    }
    if (reported_set_.contains(path) || !IsTraceFileName(path)) continue;
    if (readsAsTrace(path)) found->append(path);
  }
}

bool TraceFolder::readsAsTrace(const QString& path) {
  const QFileInfo file(path);
  const QFileInfo wal(path + "-wal");
  const Stamp stamp{file.size(), file.lastModified(), wal.exists() ? wal.size() : -1};
  const auto known = pending_.find(path);
  if (known != pending_.end() && known->second == stamp) return false;  // unchanged since it did not read
  try {
    ReadTraceProgress(path.toStdString());
  } catch (const std::exception&) {
    pending_[path] = stamp;
    return false;
  }
  pending_.erase(path);
  return true;
}

void TraceFolder::poll() {
  if (++polls_ % kWalkPolls == 0) {
    rescan();
    return;
  }
  QStringList found;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const QString path = it->first;
    ++it;  // readsAsTrace erases a file that now reads
    if (!QFileInfo::exists(path)) {
      pending_.erase(path);
    } else if (readsAsTrace(path)) {
      found << path;
    }
  }
  if (found.isEmpty()) return;
  found.sort();
  for (const QString& path : found) reported_set_.insert(path);
  reported_ += found;
  emit tracesFound(found, false);
}

void TraceFolder::rescan() {
  QStringList found;
  if (QFileInfo(root_).isDir()) walk(root_, 0, &found);
  // Files that went away are no longer waited for.
  for (auto it = pending_.begin(); it != pending_.end();) {
    it = QFileInfo::exists(it->first) ? std::next(it) : pending_.erase(it);
  }
  const bool initial = !scanned_once_;
  scanned_once_ = true;
  if (found.isEmpty() && !initial) return;
  found.sort();
  for (const QString& path : found) reported_set_.insert(path);
  reported_ += found;
  emit tracesFound(found, initial);
}

}  // namespace accordion::gui
