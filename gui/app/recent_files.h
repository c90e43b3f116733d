// RecentFiles: the File > Open Recent list, kept in QSettings - newest
// first, at most ten, files that no longer exist dropped.
#ifndef ACCORDION_GUI_APP_RECENT_FILES_H_
#define ACCORDION_GUI_APP_RECENT_FILES_H_

#include <QStringList>

namespace accordion::gui {

class RecentFiles {
 public:
  static constexpr int kMax = 10;

  // The stored list without missing files.
  static QStringList load();
  // Moves `path` (made absolute) to the front.
  static void add(const QString& path);
  static void remove(const QString& path);
  static void clear();
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_RECENT_FILES_H_
