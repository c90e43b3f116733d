#include "tests/gui/gui_test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <memory>
#include <vector>

#include "analysis/communication_accounting.h"

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

std::unique_ptr<TraceWriter> StartRunningTrace(const QString& path) {
  RunInfo info = synthetic::MlpRun("synthetic", 1000, 64, 5);
  info.synthetic = true;
  info.world_size = 2;
  info.backend = "synthetic";
  info.device = "none";
  info.scheme = Scheme::kPowerSgd;
  info.policy = Policy::kAccordion;
  info.level_low = 2;
  info.level_high = 1;
  std::vector<LayerInfo> layers = synthetic::MlpLayers();
  AnnotateLayers(info.scheme, info.level_low, info.level_high, layers);
  return TraceWriter::Create(path.toStdString(), info, layers, /*overwrite=*/false);
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
