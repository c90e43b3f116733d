// CheckExportPath: whether the GUI may write an export (a figure, its CSV, a
// Perfetto timeline, a screenshot) at a path the user chose. The save dialog
// has asked before replacing a file, so an existing export may be replaced;
// never a trace (an SQLite database, open here or not: no export is one), a
// file another process is writing, anything inside a live run's checkpoint
// directory, a FIFO, a device or a directory (CheckOutput in
// common/output_file.h, with the same one-line reasons as the tools').
//
// Thread safety: a free function over the file system; call it from any thread.
#ifndef ACCORDION_GUI_APP_EXPORT_CHECK_H_
#define ACCORDION_GUI_APP_EXPORT_CHECK_H_

#include <QString>

namespace accordion::gui {

// True when `path` may be written; false with `error` set to one line.
bool CheckExportPath(const QString& path, QString* error);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_EXPORT_CHECK_H_
