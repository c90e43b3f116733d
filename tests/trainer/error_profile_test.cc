// The error profile against a direct computation on a saved gradient: the
// best rank-r approximation rebuilt from a full SVD, and the TopK mask
// rebuilt from torch::topk - neither is how ProfileErrors computes them.
#include "trainer/error_profile.h"

#include <gtest/gtest.h>

#include <torch/torch.h>

#include "analysis/communication_accounting.h"

namespace accordion {
namespace {

LayerInfo Layer(std::vector<int64_t> shape) {
  LayerInfo l;
  l.shape = shape;
  l.numel = 1;
  for (int64_t d : shape) l.numel *= d;
  return l;
}

double RankError(const torch::Tensor& g, int64_t rows, int64_t rank) {
  const torch::Tensor m = g.reshape({rows, -1}).to(torch::kFloat64);
  const auto [u, s, vh] = torch::linalg_svd(m, /*full_matrices=*/false);
  const int64_t r = std::min<int64_t>(rank, s.size(0));
  const torch::Tensor approx = u.narrow(1, 0, r).matmul(torch::diag(s.narrow(0, 0, r))).matmul(vh.narrow(0, 0, r));
  return ((m - approx).norm() / m.norm()).item<double>();
}

double TopKError(const torch::Tensor& g, int64_t k) {
  const torch::Tensor flat = g.reshape({-1}).to(torch::kFloat64);
  const torch::Tensor kept = torch::zeros_like(flat);
  const torch::Tensor index = std::get<1>(flat.abs().topk(k));
  kept.index_put_({index}, flat.index({index}));
  return ((flat - kept).norm() / flat.norm()).item<double>();
}

TEST(ErrorProfile, PowerSgdErrorIsTheBestRankRApproximations) {
  torch::manual_seed(5);
  // A matrix, a convolution kernel (matrix view 8 x 36) and a bias.
  const std::vector<LayerInfo> layers = {Layer({20, 30}), Layer({8, 4, 3, 3}), Layer({8})};
  // Low-rank structure plus noise, so the errors differ from level to level.
  std::vector<torch::Tensor> grads = {
      torch::randn({20, 3}).matmul(torch::randn({3, 30})) + 0.1 * torch::randn({20, 30}), torch::randn({8, 4, 3, 3}),
      torch::randn({8})};
  const CommunicationScheme scheme(Scheme::kPowerSgd);
  const std::vector<double> levels = ErrorProfileLevels(Scheme::kPowerSgd, {2, 1});
  ASSERT_EQ(levels, (std::vector<double>{1, 2, 4, 8}));
  const std::vector<ErrorProfileRecord> rows = ProfileErrors(grads, layers, scheme, levels, /*epoch=*/10);
  ASSERT_EQ(rows.size(), layers.size() * levels.size());
  for (const ErrorProfileRecord& r : rows) {
    EXPECT_EQ(r.epoch, 10);
    const LayerInfo& layer = layers[static_cast<size_t>(r.layer_id)];
    const auto rank = static_cast<int64_t>(r.level);
    const double want = TravelsCompressed(scheme, layer.shape, r.level)
                            ? RankError(grads[static_cast<size_t>(r.layer_id)], layer.shape[0], rank)
                            : 0.0;
    EXPECT_NEAR(r.rel_error, want, 1e-5) << "layer " << r.layer_id << " rank " << rank;
  }
  // The low-rank matrix: rank 4 and 8 leave only the noise; rank 1 much more.
  EXPECT_GT(rows[0].rel_error, 0.3);
  EXPECT_LT(rows[2].rel_error, 0.1);
  // The bias always travels dense.
  for (size_t i = 8; i < 12; ++i) EXPECT_EQ(rows[i].rel_error, 0.0);
}

TEST(ErrorProfile, TopKErrorIsWhatTheLargestEntriesLeave) {
  torch::manual_seed(6);
  const std::vector<LayerInfo> layers = {Layer({50, 40}), Layer({40})};
  std::vector<torch::Tensor> grads = {torch::randn({50, 40}).pow(3), torch::randn({40})};
  for (bool dense_vectors : {false, true}) {
    const CommunicationScheme scheme = CommunicationScheme(Scheme::kTopK).topk_dense_vectors(dense_vectors);
    const std::vector<double> levels = ErrorProfileLevels(Scheme::kTopK, {0.99, 0.2});
    ASSERT_EQ(levels, (std::vector<double>{0.01, 0.1, 0.2, 0.25, 0.5, 0.99}));
    const std::vector<ErrorProfileRecord> rows = ProfileErrors(grads, layers, scheme, levels, 0);
    for (const ErrorProfileRecord& r : rows) {
      const LayerInfo& layer = layers[static_cast<size_t>(r.layer_id)];
      const double want = TravelsCompressed(scheme, layer.shape, r.level)
                              ? TopKError(grads[static_cast<size_t>(r.layer_id)], TopKCount(layer.numel, r.level))
                              : 0.0;
      EXPECT_NEAR(r.rel_error, want, 1e-6) << "layer " << r.layer_id << " level " << r.level;
    }
    // More entries kept, less error.
    for (size_t i = 1; i < levels.size(); ++i) EXPECT_LT(rows[i].rel_error, rows[i - 1].rel_error);
    // The vector: sent dense with topk_dense_vectors, so no error at any level.
    if (dense_vectors) {
      for (size_t i = levels.size(); i < rows.size(); ++i) EXPECT_EQ(rows[i].rel_error, 0.0);
    } else {
      EXPECT_GT(rows[levels.size()].rel_error, 0.5);  // 1 % of 40 entries: 1 of them
    }
  }
}

TEST(ErrorProfile, AZeroGradientHasNoErrorAndDenseSchemesNoProfile) {
  const std::vector<LayerInfo> layers = {Layer({6, 6})};
  const std::vector<ErrorProfileRecord> rows =
      ProfileErrors({torch::zeros({6, 6})}, layers, CommunicationScheme(Scheme::kPowerSgd), {1, 2}, 0);
  for (const ErrorProfileRecord& r : rows) EXPECT_EQ(r.rel_error, 0.0);
  EXPECT_TRUE(ErrorProfileLevels(Scheme::kDense, {0}).empty());
  EXPECT_TRUE(ErrorProfileLevels(Scheme::kBatch, {128, 1024}).empty());
}

}  // namespace
}  // namespace accordion
