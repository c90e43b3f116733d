// RunPlanner, the decisions of AccordionRun (the driver accordion-train and
// the DDP hook share): its plans are the deciding policy's, per layer or, for
// the batch scheme and the whole-model policies, one for the whole model.
#include "trainer/run_planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"

namespace accordion {
namespace {

RunSettings Options(Scheme scheme, double low, double high, Policy policy = Policy::kAccordion) {
  RunSettings s;
  s.scheme = scheme;
  s.policy = policy;
  s.level_low = low;
  s.level_high = high;
  s.eta = 0.5;
  s.interval = 1;
  return s;
}

// The named policy's state, as a checkpoint stores it.
PolicyState StateOf(RunPlanner& run, const std::string& name) {
  for (const auto& [n, policy] : run.Policies()) {
    if (n == name) return policy->Save();
  }
  return {};
}

// Norms whose first layer settles after epoch 1 while the second keeps
// halving: the first leaves its critical regime, the second stays in it.
std::vector<std::vector<double>> Norms() { return {{10, 8}, {10.5, 4}, {10.6, 2}, {10.6, 1}}; }

TEST(RunPlanner, PerLayerPlansAreTheControllersDecisions) {
  RunPlanner run(Options(Scheme::kPowerSgd, 2, 1), 2);
  AccordionController reference(2, AccordionOptions().eta(0.5).interval(1).level_low(2).level_high(1));
  AccordionController whole(1, AccordionOptions().eta(0.5).interval(1).level_low(2).level_high(1));
  EXPECT_FALSE(run.batch_scheme());
  for (const std::vector<double>& norms : Norms()) {
    const RunPlanner::Plan plan = run.CurrentPlan();
    EXPECT_EQ(plan.layer_levels, reference.levels());
    EXPECT_EQ(plan.critical, reference.critical());
    EXPECT_EQ(plan.model_critical, whole.critical()[0]);
    EXPECT_EQ(plan.global_batch, 0);
    EXPECT_EQ(plan.raw_gradient_weight, 1);
    const AccordionDecision decision = run.EndEpoch(norms, 0.1, 0.1);
    EXPECT_EQ(decision.levels_next, reference.EndEpoch(norms, 0.1, 0.1).levels_next);
    whole.EndEpoch({WholeModelNorm(norms)}, 0.1, 0.1);
  }
  // The settled layer left its regime; the halving one did not.
  EXPECT_EQ(run.CurrentPlan().layer_levels, (std::vector<double>{1, 2}));
}

TEST(RunPlanner, TheBatchSchemeDecidesOnceForTheWholeModel) {
  RunPlanner run(Options(Scheme::kBatch, 64, 512), 3);
  AccordionController whole(
      1, AccordionOptions().eta(0.5).interval(1).level_low(64).level_high(512).mode(ControllerMode::kWholeModel));
  EXPECT_TRUE(run.batch_scheme());
  const std::vector<std::vector<double>> norms = {{4, 3, 0}, {4.1, 3.1, 0}, {4.1, 3.1, 0}};
  for (const std::vector<double>& n : norms) {
    const RunPlanner::Plan plan = run.CurrentPlan();
    const double batch = whole.levels()[0];
    EXPECT_EQ(plan.layer_levels, std::vector<double>(3, batch));
    EXPECT_EQ(plan.global_batch, static_cast<int64_t>(batch));
    EXPECT_DOUBLE_EQ(plan.raw_gradient_weight, batch / 64);
    run.EndEpoch(n, 0.1, 0.1);
    whole.EndEpoch({WholeModelNorm(n)}, 0.1, 0.1);
  }
  // The model's norm settled: the batch grew, and the norm weight with it.
  EXPECT_EQ(run.CurrentPlan().global_batch, 512);
  EXPECT_DOUBLE_EQ(run.CurrentPlan().raw_gradient_weight, 8);
}

TEST(RunPlanner, AnLrDecayHoldsEveryLayerCritical) {
  RunPlanner run(Options(Scheme::kTopK, 0.99, 0.1), 2);
  run.EndEpoch({10, 10}, 0.1, 0.1);
  run.EndEpoch({10, 10}, 0.1, 0.1);
  EXPECT_EQ(run.CurrentPlan().layer_levels, (std::vector<double>{0.1, 0.1}));
  run.EndEpoch({10, 10}, 0.1, 0.01);
  EXPECT_EQ(run.CurrentPlan().layer_levels, (std::vector<double>{0.99, 0.99}));
  EXPECT_TRUE(run.CurrentPlan().model_critical);
}

TEST(RunPlanner, AdaqsDecidesForTheWholeModelFromItsMoments) {
  RunPlanner run(Options(Scheme::kPowerSgd, 4, 1, Policy::kAdaqs), 3);
  ASSERT_EQ(run.Policies().size(), 3u);
  EXPECT_EQ(run.Policies()[2].second->kind(), Policy::kAdaqs);
  EpochSignals s;
  s.norms = {1, 2, 3};
  s.lr = s.lr_next = 0.1;
  // Whole-model MSDR: |(3, 4, 0)| / |(1, 1, 1)| = 5 / sqrt(3), then a third of it.
  s.mean_norms = {3, 4, 0};
  s.stds = {1, 1, 1};
  run.EndEpoch(s);
  EXPECT_EQ(run.CurrentPlan().layer_levels, (std::vector<double>{1, 1, 1}));
  s.stds = {3, 3, 3};
  const AccordionDecision d = run.EndEpoch(s);  // interval 1 (Options): a check
  ASSERT_TRUE(d.ratios[0].has_value());
  EXPECT_NEAR(*d.ratios[0], 1.0 / 3, 1e-12);
  EXPECT_EQ(run.CurrentPlan().layer_levels, (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(run.CurrentPlan().critical, (std::vector<bool>{true, true, true}));
  // The Accordion controllers still ran beside it, for the record.
  EXPECT_EQ(StateOf(run, "model_controller").at("next_epoch"), std::vector<double>{2});
}

TEST(RunPlanner, SmithGrowsTheBatchInsteadOfTheLrDecay) {
  RunPlanner run(Options(Scheme::kBatch, 128, 1024, Policy::kSmith), 2);
  run.EndEpoch({1, 1}, 0.1, 0.1);
  EXPECT_EQ(run.CurrentPlan().global_batch, 128);
  run.EndEpoch({1, 1}, 0.1, 0.025);
  EXPECT_EQ(run.CurrentPlan().global_batch, 512);
  EXPECT_DOUBLE_EQ(run.CurrentPlan().raw_gradient_weight, 4);
  EXPECT_THROW(RunPlanner(Options(Scheme::kPowerSgd, 2, 1, Policy::kSmith), 2), InputError);
}

}  // namespace
}  // namespace accordion
