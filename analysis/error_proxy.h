// The error proxy: how far a schedule's gradients are from the uncompressed
// ones, read from the per-layer error profile a run recorded at its regime
// checks (ErrorProfileRecord) - the mean relative compression error of the
// layers at the levels the schedule chose.
//
// An epoch reads the profile of the last check at or before it (epochs
// before the first check read the first). A level between two profiled
// candidates (AdaQS's TopK 20 %) takes the straight line between their
// errors; one below them the lowest candidate's. A level at which the layer
// travels whole is exact, error 0: TopK keeping every entry, a PowerSGD
// rank too large for a factorisation to pay off (the layer is sent dense).
// One above the profiled candidates but not exact takes the straight line
// from the highest candidate to 0 at that exact level, and says so
// (beyond_profile). A proxy of accuracy, not a prediction of it:
// docs/policies.md says what it does not capture.
//
// Thread-safe: pure functions of their arguments.
#ifndef ACCORDION_ANALYSIS_ERROR_PROXY_H_
#define ACCORDION_ANALYSIS_ERROR_PROXY_H_

#include <optional>
#include <vector>

#include "analysis/schedule.h"
#include "analysis/trace_view.h"

namespace accordion {

// The profiled candidate levels of one check of one layer, ascending.
struct LayerErrorCurve {
  std::vector<double> levels;
  std::vector<double> errors;
};

// Layer `layer`'s relative error at `level` in `epoch`; empty when the
// trace has no profile.
std::optional<double> ProfiledError(const TraceView& view, int epoch, int layer, double level);

// The lowest level at which `shape` travels whole under `scheme` (error 0):
// 1 for TopK; for PowerSGD the lowest rank that no longer compresses it
// (PowerSgdCompresses), 1 for a layer it never compresses.
double ExactLevel(Scheme scheme, const std::vector<int64_t>& shape);

struct ErrorProxy {
  double mean = 0;  // over every epoch and layer
  // Over the epochs the run's whole-model regime held critical
  // (epochs.critical), every layer; empty when none was.
  std::optional<double> critical_mean;
  int critical_epochs = 0;
  // Some level lay above the profiled candidates without being exact: its
  // error is interpolated towards the exact level, not measured.
  bool beyond_profile = false;
};

// Empty when the trace has no error profile, or the scheme has no
// compression error (dense, batch).
std::optional<ErrorProxy> ErrorProxyOf(const TraceView& view, const Schedule& schedule);

// The epochs at which the trace profiled its errors.
std::vector<int> ProfiledEpochs(const TraceView& view);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_ERROR_PROXY_H_
