#include "analysis/trace_view.h"

#include <nlohmann/json.hpp>

#include "analysis/run_settings.h"
#include "common/errors.h"
#include "traces/scheme_description.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"

namespace accordion {

TraceView LoadTraceView(TraceReader& reader) {
  TraceView v;
  v.run = reader.run();
  v.layers = reader.layers();
  v.epochs = reader.Epochs();
  const int num_epochs = static_cast<int>(v.epochs.size());
  for (int e = 0; e < num_epochs; ++e) {
    if (v.epochs[e].epoch != e) {
      throw TraceError(TraceErrorCode::kInconsistent,
                       reader.path() + ": epochs: epoch " + std::to_string(e) + " is missing");
    }
  }
  if (num_epochs == 0) throw InputError(reader.path() + ": the trace has no finished epoch yet");
  const int num_layers = v.num_layers();
  v.grad_norms.assign(num_epochs, std::vector<double>(num_layers, -1.0));
  v.levels.assign(num_epochs, std::vector<double>(num_layers, 0.0));
  v.critical.assign(num_epochs, std::vector<bool>(num_layers, false));
  v.ratios.assign(num_epochs, std::vector<std::optional<double>>(num_layers));
  v.grad_mean_norms.assign(num_epochs, std::vector<double>(num_layers, kNotRecorded));
  v.grad_stds.assign(num_epochs, std::vector<double>(num_layers, kNotRecorded));
  for (const EpochLayerRecord& r : reader.EpochLayers()) {
    if (r.epoch >= num_epochs) {
      throw TraceError(TraceErrorCode::kOutOfRange, reader.path() + ": epoch_layers row for epoch " +
                                                        std::to_string(r.epoch) + " beyond the recorded epochs");
    }
    v.grad_norms[r.epoch][r.layer_id] = r.grad_norm;
    v.levels[r.epoch][r.layer_id] = r.level;
    v.critical[r.epoch][r.layer_id] = r.critical;
    v.ratios[r.epoch][r.layer_id] = r.ratio;
    v.grad_mean_norms[r.epoch][r.layer_id] = r.grad_mean_norm;
    v.grad_stds[r.epoch][r.layer_id] = r.grad_std;
  }
  for (int e = 0; e < num_epochs; ++e) {
    for (int l = 0; l < num_layers; ++l) {
      if (v.grad_norms[e][l] < 0) {
        throw TraceError(TraceErrorCode::kInconsistent,
                         reader.path() + ": epoch " + std::to_string(e) + " has no row for layer " + std::to_string(l));
      }
    }
  }
  const bool batch = InSet(DescriptionOf(v.run.scheme), SchemeSet::kBatchLevels);
  for (const EpochRecord& e : v.epochs) {
    double lr = e.schedule_lr;
    if (!Recorded(lr)) lr = batch && e.batch_size > 0 ? e.lr * v.run.level_low / double(e.batch_size) : e.lr;
    v.schedule_lr.push_back(lr);
  }
  for (const ErrorProfileRecord& r : reader.ErrorProfile()) {
    if (r.epoch >= num_epochs) continue;  // a check of an epoch the file did not finish
    v.error_profile.push_back(r);
  }
  return v;
}

TraceView LoadTraceView(const std::string& path) {
  auto reader = TraceReader::Open(path);
  return LoadTraceView(*reader);
}

CommunicationScheme RecordedScheme(const RunInfo& run, Scheme scheme) {
  if (scheme != run.scheme) return CommunicationScheme(scheme);
  // Through the run settings' table, which reads every form a writer used
  // (the hook recorded topk_error_feedback as a boolean before November
  // 2026, which read as "on" here whatever it said).
  const RunSettings recorded = SettingsFromConfig(run.config_json);
  return CommunicationScheme(scheme)
      .topk_dense_vectors(recorded.scheme.topk_dense_vectors())
      .topk_error_feedback(recorded.scheme.topk_error_feedback());
}

}  // namespace accordion
