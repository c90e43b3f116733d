#include "tests/gui/gui_test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <memory>
#include <vector>

#include "analysis/communication_accounting.h"
#include "tests/support/trace_sql.h"

namespace accordion::gui::test_support {

using accordion::test_support::ExecuteSql;

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

QString WritePolicyTrace(const QString& dir, const QString& file, Scheme scheme) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = 12;
  o.world_size = 2;
  o.scheme = scheme;
  o.policy = Policy::kAccordion;
  o.interval = 2;
  o.warmup_epochs = 0;
  o.decay_epochs = {4, 8};
  o.train_samples = 6000;
  if (scheme == Scheme::kBatch) {
    o.batch_size = 128;
    o.level_low = 128;
    o.level_high = 512;
  } else {
    o.batch_size = 128;
    o.level_low = 4;
    o.level_high = 1;
  }
  const QString path = WriteSynthetic(dir, file, o);
  const std::string p = path.toStdString();
  ExecuteSql(p,
             "UPDATE epoch_layers SET grad_mean_norm = 1.0 / (1.0 + epoch), grad_std = 1.0;"
             "UPDATE run SET msdr_factor = 1.5;");
  if (scheme != Scheme::kBatch) {
    std::string sql;
    for (int epoch = 0; epoch < o.epochs; epoch += o.interval) {
      for (int layer = 0; layer < 6; ++layer) {
        for (const int rank : {1, 2, 4}) {
          // The MLP's odd tensors are biases: sent dense, no error.
          const double error = layer % 2 == 1 ? 0 : 0.6 / rank;
          sql += "INSERT INTO error_profile(epoch, layer_id, level, rel_error) VALUES (" + std::to_string(epoch) +
                 ", " + std::to_string(layer) + ", " + std::to_string(rank) + ", " + std::to_string(error) + ");";
        }
      }
    }
    ExecuteSql(p, sql);
  }
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
