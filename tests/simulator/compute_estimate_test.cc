// One compute estimate per batch across levels unless the levels change it
// beyond the steps' own spread: the rule on made-up steps, and what it does
// to replays of recorded traces.
#include "simulator/compute_estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "simulator/replay_engine.h"
#include "simulator/whole_gradient.h"

namespace accordion::sim {
namespace {

std::string Sample(const std::string& name) { return std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/" + name; }

// `n` steps of `levels` whose compute (forward + backward) alternates
// mean - sd, mean + sd, with a gap and a tail the sharing must keep.
StepProfile Steps(std::vector<double> levels, double batch, double mean_s, double sd_s, int n) {
  StepProfile p;
  p.levels = std::move(levels);
  p.per_worker_batch = batch;
  for (int i = 0; i < n; ++i) {
    StepSample s;
    const double compute = mean_s + (i % 2 == 0 ? -sd_s : sd_s);
    s.forward_s = compute / 4;
    s.backward_s = compute * 3 / 4;
    s.grad_ready_s.push_back(s.backward_s / 2);
    s.grad_ready_s.push_back(s.backward_s);
    s.gap_s["powersgd-q/0"] = 0.001;
    s.tail_s = 0.002;
    StepSample rank = s;
    s.per_rank.push_back(rank);
    p.samples.push_back(s);
  }
  p.steps = n;
  p.forward_s = mean_s / 4;
  p.backward_s = mean_s * 3 / 4;
  p.grad_ready_s.push_back(p.backward_s / 2);
  p.grad_ready_s.push_back(p.backward_s);
  return p;
}

double MeanCompute(const StepProfile& p) {
  double sum = 0;
  for (const StepSample& s : p.samples) sum += s.forward_s + s.backward_s;
  return sum / static_cast<double>(p.samples.size());
}

TEST(ComputeEstimate, LevelsWithinTheStepsSpreadShareOneEstimate) {
  // 10 and 11 ms, each step 3 ms from its mean: the difference is within
  // what two means of 20 noisy steps differ by anyway.
  const std::vector<StepProfile> profiles = {Steps({2, 2}, 64, 0.010, 0.003, 20), Steps({1, 1}, 64, 0.011, 0.003, 20)};
  const std::vector<BatchCompute> estimates = EstimateCompute(profiles);
  ASSERT_EQ(estimates.size(), 1u);
  const BatchCompute& b = estimates[0];
  EXPECT_TRUE(b.compute.shared);
  EXPECT_NEAR(b.compute.mean_s, 0.0105, 1e-12);
  EXPECT_LT(b.compute.effect, 0.1);
  EXPECT_NE(b.Describe(Scheme::kPowerSgd).find("compute one estimate for 2 sets of levels: 10.5 ms a step"),
            std::string::npos)
      << b.Describe(Scheme::kPowerSgd);

  const std::vector<StepProfile> shared = ShareCompute(profiles, estimates);
  for (size_t i = 0; i < shared.size(); ++i) {
    EXPECT_NEAR(MeanCompute(shared[i]), 0.0105, 1e-12);
    EXPECT_NEAR(shared[i].forward_s + shared[i].backward_s, 0.0105, 1e-12);
    // Only compute moves: each rank's view with it, the level's own
    // compression gap and tail stay as measured.
    const StepSample& s = shared[i].samples[0];
    EXPECT_DOUBLE_EQ(s.per_rank[0].backward_s, s.backward_s);
    EXPECT_DOUBLE_EQ(s.grad_ready_s[1], s.backward_s);
    EXPECT_DOUBLE_EQ(s.gap_s.at("powersgd-q/0"), 0.001);
    EXPECT_DOUBLE_EQ(s.tail_s, 0.002);
  }
}

TEST(ComputeEstimate, LevelsThatChangeComputeBeyondTheSpreadKeepTheirOwn) {
  // 10 and 16 ms, each step 2 ms from its mean: f about 3 / 2.
  const std::vector<StepProfile> profiles = {Steps({0.99}, 64, 0.016, 0.002, 20), Steps({0.1}, 64, 0.010, 0.002, 20)};
  const std::vector<BatchCompute> estimates = EstimateCompute(profiles);
  ASSERT_EQ(estimates.size(), 1u);
  EXPECT_FALSE(estimates[0].compute.shared);
  EXPECT_GT(estimates[0].compute.effect, 1.2);
  const std::string said = estimates[0].Describe(Scheme::kTopK);
  EXPECT_NE(said.find("per level"), std::string::npos) << said;
  EXPECT_NE(said.find("TopK 99%: 16 ms; TopK 10%: 10 ms"), std::string::npos) << said;
  const std::vector<StepProfile> kept = ShareCompute(profiles, estimates);
  EXPECT_NEAR(MeanCompute(kept[0]), 0.016, 1e-12);
  EXPECT_NEAR(MeanCompute(kept[1]), 0.010, 1e-12);
}

TEST(ComputeEstimate, BatchesAreNeverPooledAndASingleStepCannotShowItsSpread) {
  const std::vector<StepProfile> profiles = {Steps({128}, 64, 0.005, 0.001, 10), Steps({1024}, 512, 0.030, 0.001, 10)};
  const std::vector<BatchCompute> estimates = EstimateCompute(profiles);
  ASSERT_EQ(estimates.size(), 2u);
  EXPECT_EQ(estimates[0].per_worker_batch, 64);
  EXPECT_EQ(estimates[1].per_worker_batch, 512);
  EXPECT_NEAR(estimates[1].compute.mean_s, 0.030, 1e-12);

  // One step per level: no spread to judge a difference by, so it stands.
  const std::vector<BatchCompute> lone = EstimateCompute({Steps({2}, 64, 0.010, 0, 1), Steps({1}, 64, 0.0101, 0, 1)});
  EXPECT_FALSE(lone[0].compute.shared);
}

TEST(ComputeEstimate, ReplaysPriceEverySchedulesComputeOnceAndCheckAgainstWhatEachEpochMeasured) {
  // seed-1's rank 1 steps measured more compute than its rank 2 steps: the
  // later epochs ran on a busier host, not a costlier rank.
  const ReplayInput in = LoadReplayInput(Sample("policies/seed-1/fmnist-mlp-powersgd-accordion.trace"));
  ASSERT_EQ(in.compute.size(), 1u);
  EXPECT_TRUE(in.compute[0].compute.shared && in.compute[0].compression.shared)
      << in.compute[0].Describe(Scheme::kPowerSgd);
  const ReplayOptions options = ReplayOptions().timing(TimingSource::kAnalytic);
  const ReplayResult shared = ReplayEngine(options).Run(in);
  const ReplayResult own = ReplayEngine(ReplayOptions(options).share_compute(false)).Run(in);
  auto per_step = [](const ScheduleProjection& p) { return p.total.compute_s / static_cast<double>(p.total.steps); };
  // Each static schedule computes the batch's estimate of compute and of
  // compression inside backward (each rank's view: the trace's own network
  // and workers), whatever its level.
  const BatchCompute& b = in.compute[0];
  const double estimate = b.compute.rank_mean_s + b.compression.rank_mean_s;
  EXPECT_NEAR(per_step(shared.static_low), estimate, 1e-9 * estimate);
  EXPECT_NEAR(per_step(shared.static_high), estimate, 1e-9 * estimate);
  EXPECT_NEAR(per_step(shared.accordion), estimate, 1e-9 * estimate);
  // As measured, each schedule's compute was its own levels' steps'.
  EXPECT_GT(std::abs(per_step(own.static_low) - per_step(own.static_high)), 1e-5);
  ASSERT_TRUE(shared.check && own.check);
  EXPECT_DOUBLE_EQ(shared.check->simulated_iteration_s, own.check->simulated_iteration_s);
  ASSERT_EQ(shared.compute.size(), 1u);
  EXPECT_TRUE(shared.compute[0].compute.shared);
  EXPECT_FALSE(own.compute[0].compute.shared);
}

TEST(ComputeEstimate, TopKsSelectionChangesBackwardBeyondTheSpreadAndKeepsItsOwn) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-topk-accordion.trace"));
  ASSERT_EQ(in.compute.size(), 1u);
  EXPECT_FALSE(in.compute[0].compute.shared) << in.compute[0].Describe(Scheme::kTopK);
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(in);
  auto per_step = [](const ScheduleProjection& p) { return p.total.compute_s / static_cast<double>(p.total.steps); };
  // Selecting 99 % of a gradient (static low compression) costs more than selecting 10 %.
  EXPECT_GT(per_step(r.static_low), per_step(r.static_high) * 1.1);
}

TEST(ComputeEstimate, ABatchTracesDenseComputesWhatItsStaticRunAtTheSameBatchDoes) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-batch-accordion.trace"));
  ASSERT_EQ(in.view.run.batch_size, 128);
  const ReplayOptions options = ReplayOptions().timing(TimingSource::kAnalytic);
  const ReplayResult r = ReplayEngine(options).Run(in);
  ASSERT_EQ(r.static_low.epochs.front().global_batch, 128);
  const ScheduleProjection dense = ProjectWholeGradient(in, options, Scheme::kDense);
  EXPECT_NEAR(dense.total.compute_s, r.static_low.total.compute_s, 1e-9 * r.static_low.total.compute_s);
}

}  // namespace
}  // namespace accordion::sim
