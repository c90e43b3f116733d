#include "analysis/error_proxy.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "analysis/communication_accounting.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

// The curve of (check, layer): the profile's rows are ordered by (epoch,
// layer, level), so it is one contiguous run of them.
LayerErrorCurve CurveAt(const TraceView& view, int check, int layer) {
  LayerErrorCurve curve;
  const auto first = std::lower_bound(view.error_profile.begin(), view.error_profile.end(), std::pair{check, layer},
                                      [](const ErrorProfileRecord& r, const std::pair<int, int>& key) {
                                        return std::pair{r.epoch, r.layer_id} < key;
                                      });
  for (auto it = first; it != view.error_profile.end() && it->epoch == check && it->layer_id == layer; ++it) {
    curve.levels.push_back(it->level);
    curve.errors.push_back(it->rel_error);
  }
  return curve;
}

// `exact`: the level from which the layer travels whole (ExactLevel).
// `beyond`: set when `level` lies between the last candidate and `exact`.
double Interpolate(const LayerErrorCurve& curve, double level, double exact, bool* beyond = nullptr) {
  const std::vector<double>& x = curve.levels;
  if (level >= exact) return 0;
  if (level <= x.front()) return curve.errors.front();
  if (level > x.back()) {
    if (beyond != nullptr) *beyond = true;
    if (exact <= x.back()) return curve.errors.back();
    return curve.errors.back() * (exact - level) / (exact - x.back());
  }
  if (level == x.back()) return curve.errors.back();
  const size_t hi = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), level) - x.begin());
  const size_t lo = hi - 1;
  const double t = (level - x[lo]) / (x[hi] - x[lo]);
  return curve.errors[lo] + t * (curve.errors[hi] - curve.errors[lo]);
}

// The last check at or before `epoch`, else the first; `checks` not empty.
int CheckFor(const std::vector<int>& checks, int epoch) {
  const auto it = std::upper_bound(checks.begin(), checks.end(), epoch);
  return it == checks.begin() ? checks.front() : *std::prev(it);
}

}  // namespace

double ExactLevel(Scheme scheme, const std::vector<int64_t>& shape) {
  // Only a low-rank compressor stops compressing above some level.
  if (DescriptionOf(scheme).compressor != Compressor::kLowRank) return 1.0;
  if (!PowerSgdCompresses(shape, 1)) return 1.0;
  // Compression pays off below a rank and not from it on: find that rank.
  int64_t lo = 1, hi = 2;
  while (PowerSgdCompresses(shape, hi)) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (PowerSgdCompresses(shape, mid) ? lo : hi) = mid;
  }
  return static_cast<double>(hi);
}

std::vector<int> ProfiledEpochs(const TraceView& view) {
  std::set<int> epochs;
  for (const ErrorProfileRecord& r : view.error_profile) epochs.insert(r.epoch);
  return {epochs.begin(), epochs.end()};
}

std::optional<double> ProfiledError(const TraceView& view, int epoch, int layer, double level) {
  const std::vector<int> checks = ProfiledEpochs(view);
  if (checks.empty()) return std::nullopt;
  const LayerErrorCurve curve = CurveAt(view, CheckFor(checks, epoch), layer);
  if (curve.levels.empty()) return std::nullopt;
  return Interpolate(curve, level, ExactLevel(view.run.scheme, view.layers[static_cast<size_t>(layer)].shape));
}

std::optional<ErrorProxy> ErrorProxyOf(const TraceView& view, const Schedule& schedule) {
  const Scheme scheme = schedule.scheme.scheme();
  if (!InSet(DescriptionOf(scheme), SchemeSet::kCompressing)) return std::nullopt;
  if (view.error_profile.empty() || scheme != view.run.scheme) return std::nullopt;
  const std::vector<int> checks = ProfiledEpochs(view);
  ErrorProxy proxy;
  double sum = 0, critical_sum = 0;
  int64_t count = 0, critical_count = 0;
  std::map<int, std::vector<LayerErrorCurve>> by_check;
  std::vector<double> exact;
  for (const LayerInfo& l : view.layers) exact.push_back(ExactLevel(scheme, l.shape));
  for (int e = 0; e < schedule.num_epochs(); ++e) {
    const int check = CheckFor(checks, e);
    std::vector<LayerErrorCurve>& curves = by_check[check];
    if (curves.empty()) {
      for (int l = 0; l < view.num_layers(); ++l) curves.push_back(CurveAt(view, check, l));
    }
    const bool critical = e < view.num_epochs() && view.epochs[static_cast<size_t>(e)].critical;
    if (critical) ++proxy.critical_epochs;
    for (int l = 0; l < view.num_layers(); ++l) {
      const LayerErrorCurve& curve = curves[static_cast<size_t>(l)];
      if (curve.levels.empty()) continue;
      const double error =
          Interpolate(curve, schedule.levels[e][l], exact[static_cast<size_t>(l)], &proxy.beyond_profile);
      sum += error;
      ++count;
      if (critical) {
        critical_sum += error;
        ++critical_count;
      }
    }
  }
  if (count == 0) return std::nullopt;
  proxy.mean = sum / static_cast<double>(count);
  if (critical_count > 0) proxy.critical_mean = critical_sum / static_cast<double>(critical_count);
  return proxy;
}

}  // namespace accordion
