#include "tests/gui/gui_test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <memory>
#include <vector>

namespace accordion::gui::test_support {

QString SampleTrace(const QString& name) { return QString(ACCORDION_SOURCE_DIR) + "/traces/samples/" + name; }

QString ScratchDir(const QString& tag) {
  // Kept alive until exit, then removed with everything in it.
  static std::vector<std::unique_ptr<QTemporaryDir>> dirs;
  dirs.push_back(std::make_unique<QTemporaryDir>(QDir::tempPath() + "/accordion-gui-" + tag + "-XXXXXX"));
  return dirs.back()->path();
}

QString WriteSynthetic(const QString& dir, const QString& file, const synthetic::SyntheticTraceOptions& options) {
  const QString path = dir + "/" + file;
  synthetic::WriteSyntheticTrace(path.toStdString(), options);
  return path;
}

QString WriteTruncatedTrace(const QString& dir, const QString& file) {
  const QString source = SampleTrace("fmnist-mlp-dense.trace");
  QFile in(source);
  if (!in.open(QIODevice::ReadOnly)) return {};
  const QByteArray head = in.read(6000);
  const QString path = dir + "/" + file;
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly)) return {};
  out.write(head);
  return path;
}

}  // namespace accordion::gui::test_support
