#include "trainer/error_profile.h"

#include <algorithm>
#include <cmath>

#include "traces/scheme_description.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

// sqrt(tail / total), clamped into [0, 1] against rounding.
double RelativeError(double tail, double total) {
  if (!(total > 0)) return 0;
  return std::clamp(std::sqrt(std::max(0.0, tail) / total), 0.0, 1.0);
}

}  // namespace

std::vector<double> ErrorProfileLevels(Scheme scheme, const std::vector<double>& run_levels) {
  std::vector<double> levels = DescriptionOf(scheme).error_profile_levels;
  if (levels.empty()) return {};
  for (double l : run_levels) {
    if (LevelProblem(scheme, l).empty()) levels.push_back(l);
  }
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  return levels;
}

std::vector<ErrorProfileRecord> ProfileErrors(const std::vector<torch::Tensor>& sums,
                                              const std::vector<LayerInfo>& layers, const CommunicationScheme& scheme,
                                              const std::vector<double>& levels, int epoch) {
  torch::NoGradGuard no_grad;
  std::vector<ErrorProfileRecord> rows;
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerInfo& layer = layers[l];
    const torch::Tensor d = sums[l].detach().reshape({-1}).to(torch::kFloat64);
    const double total = d.square().sum().item<double>();
    // What C leaves out, as a squared norm, at each level that compresses.
    std::vector<double> tails(levels.size(), 0.0);
    std::vector<bool> compressed(levels.size(), false);
    for (size_t i = 0; i < levels.size(); ++i) compressed[i] = TravelsCompressed(scheme, layer.shape, levels[i]);
    const bool any = std::find(compressed.begin(), compressed.end(), true) != compressed.end();
    if (any && total > 0) {
      // A low-rank compressor leaves out the smallest singular values, a sparse
      // one the smallest entries.
      if (DescriptionOf(scheme.scheme()).compressor == Compressor::kLowRank) {
        const MatrixView m = MatrixViewOf(layer.shape);
        const torch::Tensor s = at::linalg_svdvals(d.to(torch::kFloat32).view({m.rows, m.cols})).to(torch::kFloat64);
        // suffix[r] = sum of sigma_i^2 for i >= r.
        const torch::Tensor squares = s.square().cpu();
        const auto n = squares.size(0);
        std::vector<double> suffix(static_cast<size_t>(n) + 1, 0.0);
        for (int64_t i = n - 1; i >= 0; --i) suffix[i] = suffix[i + 1] + squares[i].item<double>();
        for (size_t i = 0; i < levels.size(); ++i) {
          const auto r = static_cast<int64_t>(levels[i]);
          if (compressed[i]) tails[i] = r < n ? suffix[static_cast<size_t>(r)] : 0.0;
        }
      } else {
        // Kept entries are the largest: the tail is what the smallest leave.
        const torch::Tensor sorted = std::get<0>(d.square().sort(/*dim=*/0, /*descending=*/true));
        const torch::Tensor kept = sorted.cumsum(0).cpu();
        for (size_t i = 0; i < levels.size(); ++i) {
          if (!compressed[i]) continue;
          const int64_t k = TopKCount(layer.numel, levels[i]);
          tails[i] = total - (k > 0 ? kept[std::min(k, layer.numel) - 1].item<double>() : 0.0);
        }
      }
    }
    for (size_t i = 0; i < levels.size(); ++i) {
      ErrorProfileRecord r;
      r.epoch = epoch;
      r.layer_id = static_cast<int>(l);
      r.level = levels[i];
      r.rel_error = compressed[i] ? RelativeError(tails[i], total) : 0.0;
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace accordion
