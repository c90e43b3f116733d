#include "gui/app/export_check.h"

#include <QFile>
#include <exception>
#include <string>

#include "common/input_file.h"
#include "common/output_file.h"

namespace accordion::gui {

namespace {

bool Check(const QString& path, QString* error, bool claim) {
  const std::string file = QFile::encodeName(path).toStdString();
  if (IsSqliteDatabase(file)) {
    *error = QStringLiteral("%1 is a trace (an SQLite database); an export never replaces one").arg(path);
    return false;
  }
  try {
    CheckOutput(file, OutputOptions().flag("export").overwrite(true).streams(false).claim(claim));
  } catch (const std::exception& e) {
    *error = QString::fromUtf8(e.what());
    return false;
  }
  return true;
}

}  // namespace

bool CheckExportPath(const QString& path, QString* error) { return Check(path, error, false); }

ExportClaim::ExportClaim(const QString& path, QString* error)
    : path_(QFile::encodeName(path).toStdString()), ok_(Check(path, error, true)) {}

ExportClaim::~ExportClaim() {
  if (ok_) ReleaseOutput(path_);
}

}  // namespace accordion::gui
