#include "analysis/regime_detectors.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/accordion_controller.h"
#include "common/errors.h"

namespace accordion {

namespace {

// Labels epochs (prev, at] from consecutive measurements (epoch, value).
RegimeSeries LabelBetween(const std::vector<std::pair<int, double>>& points, int num_epochs, double threshold) {
  RegimeSeries s;
  s.critical.assign(num_epochs, std::nullopt);
  s.ratio.assign(num_epochs, std::nullopt);
  if (num_epochs > 0) s.critical[0] = true;  // no baseline: careful, as the controller
  for (size_t k = 1; k < points.size(); ++k) {
    const auto [prev_epoch, prev] = points[k - 1];
    const auto [epoch, value] = points[k];
    std::optional<double> ratio;
    bool critical = true;  // a zero baseline counts as critical
    if (prev != 0) {
      ratio = std::fabs(prev - value) / std::fabs(prev);
      critical = *ratio >= threshold;
    }
    for (int e = prev_epoch + 1; e <= epoch && e < num_epochs; ++e) {
      s.critical[e] = critical;
      s.ratio[e] = ratio;
    }
  }
  return s;
}

const char* Label(const std::optional<bool>& c) {
  if (!c) return "-";
  return *c ? "critical" : "stable";
}

std::string Number(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), format, *v);
  return buf;
}

}  // namespace

RegimeSeries DetectFromGradientNorms(const TraceView& view, double eta, int interval) {
  if (interval < 1) throw InputError("interval must be at least 1 epoch");
  std::vector<std::pair<int, double>> points;
  for (int e = 0; e < view.num_epochs(); e += interval) {
    points.emplace_back(e, WholeModelNorm(view.grad_norms[e]));
  }
  return LabelBetween(points, view.num_epochs(), eta);
}

RegimeSeries DetectFromHessian(const std::vector<HessianRecord>& hessian, int num_epochs, double threshold) {
  std::map<int, double> by_epoch;
  for (const HessianRecord& h : hessian) {
    if (h.block.empty() && h.epoch < num_epochs) by_epoch[h.epoch] = h.eigenvalue;
  }
  return LabelBetween({by_epoch.begin(), by_epoch.end()}, num_epochs, threshold);
}

RegimeAgreement CompareRegimes(const RegimeSeries& first, const RegimeSeries& second) {
  RegimeAgreement a;
  const size_t n = std::min(first.critical.size(), second.critical.size());
  for (size_t e = 0; e < n; ++e) {
    if (!first.critical[e] || !second.critical[e]) continue;
    ++a.compared;
    const bool x = *first.critical[e], y = *second.critical[e];
    if (x && y) ++a.both_critical;
    if (!x && !y) ++a.both_stable;
    if (x && !y) ++a.only_first;
    if (!x && y) ++a.only_second;
  }
  return a;
}

void WriteRegimeComparison(const TraceView& view, const std::vector<HessianRecord>& hessian, const RegimeSeries& norm,
                           const RegimeSeries& eigen, std::ostream& out) {
  std::map<int, double> eig;
  for (const HessianRecord& h : hessian) {
    if (h.block.empty()) eig[h.epoch] = h.eigenvalue;
  }
  char line[160];
  std::snprintf(line, sizeof(line), "%5s %9s %12s %9s %-9s %12s %9s %-9s\n", "epoch", "lr", "model_norm", "change",
                "norm", "eigenvalue", "change", "hessian");
  out << line;
  for (int e = 0; e < view.num_epochs(); ++e) {
    const auto it = eig.find(e);
    const std::optional<double> lambda = it == eig.end() ? std::nullopt : std::optional<double>(it->second);
    std::snprintf(line, sizeof(line), "%5d %9.4g %12.5g %9s %-9s %12s %9s %-9s\n", e, view.epochs[e].lr,
                  WholeModelNorm(view.grad_norms[e]), Number(norm.ratio[e], "%.3f").c_str(), Label(norm.critical[e]),
                  Number(lambda, "%.5g").c_str(), Number(eigen.ratio[e], "%.3f").c_str(), Label(eigen.critical[e]));
    out << line;
  }
  const RegimeAgreement a = CompareRegimes(norm, eigen);
  out << "\nEpochs both detectors labelled: " << a.compared << "; both critical " << a.both_critical << ", both stable "
      << a.both_stable << ", critical by gradient norm only " << a.only_first << ", by Hessian eigenvalue only "
      << a.only_second << ".\n";
  std::snprintf(line, sizeof(line), "Agreement %.1f %%, Jaccard index of the critical epochs %.2f.\n",
                100.0 * a.agreement(), a.jaccard());
  out << line;
}

}  // namespace accordion
