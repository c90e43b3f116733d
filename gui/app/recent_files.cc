#include "gui/app/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace accordion::gui {

namespace {

const char kKey[] = "recentFiles";

void Store(const QStringList& files) { QSettings().setValue(kKey, files); }

}  // namespace

QStringList RecentFiles::load() {
  const QStringList stored = QSettings().value(kKey).toStringList();
  QStringList kept;
  for (const QString& file : stored) {
    if (QFileInfo::exists(file) && !kept.contains(file)) kept << file;
  }
  while (kept.size() > kMax) kept.removeLast();
  if (kept != stored) Store(kept);
  return kept;
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList files = load();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMax) files.removeLast();
  Store(files);
}

void RecentFiles::remove(const QString& path) {
  QStringList files = QSettings().value(kKey).toStringList();
  files.removeAll(QFileInfo(path).absoluteFilePath());
  Store(files);
}

void RecentFiles::clear() { Store({}); }

}  // namespace accordion::gui
