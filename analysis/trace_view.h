// TraceView: the slice of a trace that schedule analysis needs, in memory -
// the run, its layers, and per epoch the LR and each layer's gradient norm.
//
// Thread safety: a TraceView is a plain value, safe to share read-only.
// LoadTraceView(reader) uses the reader (one thread each, trace_reader.h);
// LoadTraceView(path) opens its own. RecordedScheme is pure.
#ifndef ACCORDION_ANALYSIS_TRACE_VIEW_H_
#define ACCORDION_ANALYSIS_TRACE_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/communication_accounting.h"
#include "traces/records.h"

namespace accordion {

class TraceReader;

struct TraceView {
  RunInfo run;
  std::vector<LayerInfo> layers;
  std::vector<EpochRecord> epochs;              // 0..E-1
  std::vector<std::vector<double>> grad_norms;  // [epoch][layer]
  std::vector<std::vector<double>> levels;      // [epoch][layer], as recorded
  // [epoch][layer], as the run recorded them: the layer's regime during the
  // epoch, and the ratio its check computed at the end of the epoch.
  std::vector<std::vector<bool>> critical;
  std::vector<std::vector<std::optional<double>>> ratios;
  // [epoch][layer]: what AdaQS reads (EpochLayerRecord); kNotRecorded where
  // the trace holds none (schema v3, synthetic traces).
  std::vector<std::vector<double>> grad_mean_norms;
  std::vector<std::vector<double>> grad_stds;
  // [epoch]: the schedule's LR before any batch factor (EpochRecord). Files
  // older than schema v4 lack it: the batch scheme's is lr x level_low /
  // batch (the linear scaling accordion-train applies), the others' lr.
  std::vector<double> schedule_lr;
  // The per-layer error profile at the regime checks (schema v4), ordered
  // by (epoch, layer, level); empty when the trace holds none.
  std::vector<ErrorProfileRecord> error_profile;

  int num_epochs() const { return static_cast<int>(epochs.size()); }
  int num_layers() const { return static_cast<int>(layers.size()); }
};

// Loads and cross-checks the epoch tables (throws TraceError). A trace with
// no finished epoch is an InputError: there is nothing to analyse.
TraceView LoadTraceView(TraceReader& reader);
TraceView LoadTraceView(const std::string& path);

// `scheme` as `run` configured it: with the TopK choices its config_json
// records ("topk_dense_vectors": true, "topk_error_feedback": "off") when
// the run used `scheme`; with the defaults for another scheme and where the
// configuration does not say (traces from before the choices existed).
CommunicationScheme RecordedScheme(const RunInfo& run, Scheme scheme);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_TRACE_VIEW_H_
