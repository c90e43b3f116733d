// The top-eigenvalue estimator on losses whose Hessian is known exactly:
// quadratics 1/2 w'Aw with A built from chosen eigenvalues, and least squares
// (Hessian X'X / n), with BatchNorm in eval mode, per block, and over two
// real Gloo ranks.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/trainer/gloo_ranks.h"
#include "trainer/hessian.h"

namespace accordion {
namespace {

// A symmetric 5x5 matrix with eigenvalues 6, 2.5, 1, -0.5, 0.1 in a random basis.
torch::Tensor KnownMatrix() {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const torch::Tensor q = std::get<0>(torch::linalg_qr(torch::randn({5, 5}, gen, torch::kFloat64)));
  const torch::Tensor eigenvalues = torch::tensor({6.0, 2.5, 1.0, -0.5, 0.1}, torch::kFloat64);
  return q.mm(torch::diag(eigenvalues)).mm(q.t());
}

// 1/2 w'Aw + b'w with w split over two parameter tensors (3 and 2 entries),
// at a point that is not the minimum: the Hessian is A wherever we are.
struct Quadratic {
  torch::Tensor a = KnownMatrix().to(torch::kFloat32);
  std::vector<torch::Tensor> params = {torch::tensor({0.3f, -1.0f, 2.0f}).requires_grad_(true),
                                       torch::tensor({0.5f, 0.7f}).requires_grad_(true)};
  torch::Tensor Loss() const {
    const torch::Tensor w = torch::cat(params);
    return 0.5 * w.dot(a.mv(w)) + torch::tensor({1.f, 2.f, 3.f, 4.f, 5.f}).dot(w);
  }
};

// The eigenvalue of largest magnitude (what power iteration finds).
double TopEigenvalue(const torch::Tensor& symmetric) {
  const torch::Tensor e = torch::linalg_eigvalsh(symmetric.to(torch::kFloat64), "L");
  return e[e.abs().argmax()].item<double>();
}

TEST(HessianEigenEstimator, FindsTheTopEigenvalueOfAQuadratic) {
  const Quadratic q;
  const HessianEstimate loose = HessianEigenEstimator(HessianOptions()).Estimate(q.Loss(), q.params);
  EXPECT_TRUE(loose.converged);
  EXPECT_LE(loose.iterations, 100);
  EXPECT_NEAR(loose.eigenvalue, 6.0, 6.0 * 2e-3);
  EXPECT_EQ(loose.block, "");
  EXPECT_GT(loose.seconds, 0);
  const HessianEstimate tight =
      HessianEigenEstimator(HessianOptions().tolerance(1e-9).max_iterations(500)).Estimate(q.Loss(), q.params);
  EXPECT_NEAR(tight.eigenvalue, 6.0, 1e-4);
  EXPECT_GT(tight.iterations, loose.iterations);
  // The cap holds; without convergence the estimate says so.
  const HessianEstimate capped =
      HessianEigenEstimator(HessianOptions().tolerance(1e-12).max_iterations(3)).Estimate(q.Loss(), q.params);
  EXPECT_EQ(capped.iterations, 3);
  EXPECT_FALSE(capped.converged);
  EXPECT_THROW(HessianEigenEstimator(HessianOptions().max_iterations(0)), InputError);
}

TEST(HessianEigenEstimator, BlocksSeeTheirDiagonalPartOfTheHessian) {
  const Quadratic q;
  const torch::Tensor loss = q.Loss();
  const HessianEigenEstimator estimator(HessianOptions().tolerance(1e-9).max_iterations(500));
  const HessianEstimate first = estimator.Estimate(loss, {q.params[0]}, "first");
  const HessianEstimate second = estimator.Estimate(loss, {q.params[1]}, "second");
  EXPECT_EQ(first.block, "first");
  EXPECT_NEAR(first.eigenvalue, TopEigenvalue(q.a.narrow(0, 0, 3).narrow(1, 0, 3)), 1e-4);
  EXPECT_NEAR(second.eigenvalue, TopEigenvalue(q.a.narrow(0, 3, 2).narrow(1, 3, 2)), 1e-4);
}

TEST(HessianEigenEstimator, TopLevelBlocksGroupParametersByTheirModule) {
  const torch::Tensor t = torch::zeros({1});
  const std::vector<ParameterBlock> blocks = TopLevelBlocks({{"fc1.weight", t},
                                                             {"fc1.bias", t},
                                                             {"layer1.0.conv1.weight", t},
                                                             {"layer1.1.bn.bias", t},
                                                             {"linear.weight", t}});
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].name, "fc1");
  EXPECT_EQ(blocks[0].parameters.size(), 2u);
  EXPECT_EQ(blocks[1].name, "layer1");
  EXPECT_EQ(blocks[1].parameters.size(), 2u);
  EXPECT_EQ(blocks[2].name, "linear");
}

// Least squares through an optional BatchNorm: L = 1/(2n) |X W' - y|^2, whose
// Hessian in W is X'X / n (X: what reaches the linear layer).
struct Regression : torch::nn::Module {
  explicit Regression(bool with_norm) {
    if (with_norm) norm = register_module("norm", torch::nn::BatchNorm1d(torch::nn::BatchNormOptions(4).affine(false)));
    linear = register_module("linear", torch::nn::Linear(torch::nn::LinearOptions(4, 1).bias(false)));
  }
  torch::Tensor Loss(const torch::Tensor& x, const torch::Tensor& y, double total) {
    const torch::Tensor in = norm ? norm(x) : x;
    return 0.5 * (linear(in).squeeze(1) - y).pow(2).sum() / total;
  }
  torch::nn::BatchNorm1d norm{nullptr};
  torch::nn::Linear linear{nullptr};
};

struct RegressionData {
  torch::Tensor x, y;
  RegressionData() {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(8);
    // Columns of different scales and a shifted mean: batch statistics are
    // far from BatchNorm's initial running ones (mean 0, variance 1).
    x = torch::randn({32, 4}, gen) * torch::tensor({3.0f, 1.0f, 0.5f, 2.0f}) + 1.5;
    y = torch::randn({32}, gen);
  }
  double TopEigenvalue() const { return accordion::TopEigenvalue(x.t().mm(x) / x.size(0)); }
};

TEST(HessianEigenEstimator, BatchNormInEvalModeDoesNotChangeTheAnswer) {
  const RegressionData d;
  const HessianEigenEstimator estimator(HessianOptions().tolerance(1e-8).max_iterations(300));
  Regression plain(false);
  const auto without = estimator.EstimateModule(
      plain, [&] { return plain.Loss(d.x, d.y, 32); }, false);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_NEAR(without[0].eigenvalue, d.TopEigenvalue(), 1e-3 * d.TopEigenvalue());

  // A BatchNorm at its initial running statistics is (nearly) the identity
  // in eval mode: x / sqrt(1 + eps). In training mode it would normalise by
  // the batch's statistics and the Hessian would be another one.
  Regression normed(true);
  normed.train();
  const auto with = estimator.EstimateModule(
      normed, [&] { return normed.Loss(d.x, d.y, 32); }, false);
  EXPECT_NEAR(with[0].eigenvalue, d.TopEigenvalue() / (1 + 1e-5), 1e-3 * d.TopEigenvalue());
  EXPECT_TRUE(normed.is_training()) << "the module's mode is restored";
  EXPECT_TRUE(torch::equal(normed.norm->running_mean, torch::zeros({4}))) << "running statistics untouched";
  EXPECT_TRUE(torch::equal(normed.norm->running_var, torch::ones({4})));
  normed.train();
  const torch::Tensor normalised = normed.norm(d.x);
  const double train_mode = accordion::TopEigenvalue(normalised.t().mm(normalised) / 32);
  EXPECT_GT(std::fabs(train_mode - d.TopEigenvalue()), 0.5 * d.TopEigenvalue())
      << "the test would not notice training-mode BatchNorm";
}

TEST(HessianEigenEstimator, PerBlockEstimatesFollowTheWholeModel) {
  const RegressionData d;
  Regression model(true);
  const auto all = HessianEigenEstimator(HessianOptions().tolerance(1e-8).max_iterations(300))
                       .EstimateModule(
                           model, [&] { return model.Loss(d.x, d.y, 32); }, true);
  // The whole model, then its one block with parameters ("linear"; the
  // BatchNorm without affine has none).
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].block, "linear");
  EXPECT_NEAR(all[1].eigenvalue, all[0].eigenvalue, 1e-6 * all[0].eigenvalue);
}

TEST(HessianEigenEstimator, RanksAddTheirShardsProductsAndAgree) {
  const RegressionData d;
  const HessianOptions options = HessianOptions().tolerance(1e-6).max_iterations(200).seed(5);
  Regression single(false);
  const HessianEstimate whole = HessianEigenEstimator(options).EstimateModule(
      single, [&] { return single.Loss(d.x, d.y, 32); }, false)[0];
  std::vector<HessianEstimate> per_rank(2);
  test_support::OnTwoRanks([&](Communicator& comm) {
    // Any weights will do: the loss is quadratic, its Hessian the same everywhere.
    Regression model(false);
    // Rank 0 takes 20 samples, rank 1 the other 12: the shards need not be even.
    const int64_t begin = comm.rank() == 0 ? 0 : 20, count = comm.rank() == 0 ? 20 : 12;
    per_rank[static_cast<size_t>(comm.rank())] =
        HessianEigenEstimator(options, &comm)
            .EstimateModule(
                model, [&] { return model.Loss(d.x.narrow(0, begin, count), d.y.narrow(0, begin, count), 32); },
                false)[0];
  });
  EXPECT_EQ(per_rank[0].eigenvalue, per_rank[1].eigenvalue) << "every rank holds the same v and lambda";
  EXPECT_EQ(per_rank[0].iterations, per_rank[1].iterations);
  EXPECT_NEAR(per_rank[0].eigenvalue, whole.eigenvalue, 1e-4 * whole.eigenvalue);
  EXPECT_NEAR(whole.eigenvalue, d.TopEigenvalue(), 1e-3 * d.TopEigenvalue());
}

}  // namespace
}  // namespace accordion
