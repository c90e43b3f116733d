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
#include <string>

namespace accordion::gui {

// True when `path` may be written; false with `error` set to one line.
bool CheckExportPath(const QString& path, QString* error);

// An export's claim (ClaimOutput in common/output_file.h), held from its
// check until it is written: a second writer of the same path - another
// window, a tool - is refused meanwhile. Released when it goes out of scope.
class ExportClaim {
 public:
  // Checks `path` as CheckExportPath does and claims it; ok() is false, with
  // `error` set, when it may not be written or another process holds it.
  ExportClaim(const QString& path, QString* error);
  ~ExportClaim();
  ExportClaim(const ExportClaim&) = delete;
  ExportClaim& operator=(const ExportClaim&) = delete;
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_APP_EXPORT_CHECK_H_
