// TraceView: the slice of a trace that schedule analysis needs, in memory -
// the run, its layers, and per epoch the LR and each layer's gradient norm.
#ifndef ACCORDION_ANALYSIS_TRACE_VIEW_H_
#define ACCORDION_ANALYSIS_TRACE_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion {

class TraceReader;

struct TraceView {
  RunInfo run;
  std::vector<LayerInfo> layers;
  std::vector<EpochRecord> epochs;             // 0..E-1
  std::vector<std::vector<double>> grad_norms;  // [epoch][layer]
  std::vector<std::vector<double>> levels;      // [epoch][layer], as recorded
  // [epoch][layer], as the run recorded them: the layer's regime during the
  // epoch, and the ratio its check computed at the end of the epoch.
  std::vector<std::vector<bool>> critical;
  std::vector<std::vector<std::optional<double>>> ratios;

  int num_epochs() const { return static_cast<int>(epochs.size()); }
  int num_layers() const { return static_cast<int>(layers.size()); }
};

// Loads and cross-checks the epoch tables (throws TraceError). A trace with
// no finished epoch is an InputError: there is nothing to analyse.
TraceView LoadTraceView(TraceReader& reader);
TraceView LoadTraceView(const std::string& path);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_TRACE_VIEW_H_
