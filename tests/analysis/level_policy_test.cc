// Pins AdaQS and Smith et al. to hand-computed sequences, as the Accordion
// controller is pinned to Algorithm 1, and checks that the offline
// derivation feeds them what a trace recorded.
#include "analysis/level_policy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/error_proxy.h"
#include "analysis/policy_comparison.h"
#include "analysis/schedule.h"
#include "analysis/trace_view.h"
#include "common/errors.h"
#include "tests/support/synthetic_trace.h"

namespace accordion {
namespace {

EpochSignals Moments(double mean_norm, double std, double lr = 0.1, double lr_next = 0.1) {
  EpochSignals s;
  s.norms = {mean_norm * 10};
  s.mean_norms = {mean_norm};
  s.stds = {std};
  s.lr = lr;
  s.lr_next = lr_next;
  return s;
}

TEST(AdaqsPolicy, HalvesTheCompressionEachTimeTheMsdrHalves) {
  // PowerSGD from rank 1 up to rank 8, checks every 2 epochs, factor 2.
  auto p =
      MakeAdaqsPolicy(1, AdaqsOptions().factor(2).interval(2).level_low(8).level_high(1).scheme(Scheme::kPowerSgd));
  EXPECT_EQ(p->kind(), Policy::kAdaqs);
  EXPECT_EQ(p->levels()[0], 1);
  // MSDR per epoch (mean / std): 8 (check: the reference), 1 (no check),
  // 5 (check: 5 > 8/2, stays), 3 (no check), 4 (check: 4 <= 8/2 -> rank 2,
  // reference 4), 1 (no check), 2.5 (check: 2.5 > 2), 1.9 (no check),
  // 2 (check: 2 <= 4/2 -> rank 4), 0.1, 0.9 (check: <= 1 -> rank 8), then
  // 0.3 (check: <= 0.45, but rank 8 is the cap).
  const double msdr[] = {8, 1, 5, 3, 4, 1, 2.5, 1.9, 2, 0.1, 0.9, 0.2, 0.3};
  const double want_next[] = {1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 8, 8, 8};
  const bool want_switch[] = {false, false, false, false, true, true, false, false, true, true, true, true, true};
  for (int e = 0; e < 13; ++e) {
    const AccordionDecision d = p->EndEpoch(Moments(msdr[e] * 0.5, 0.5));
    EXPECT_EQ(d.epoch, e);
    EXPECT_EQ(d.checked, e % 2 == 0) << "epoch " << e;
    EXPECT_EQ(d.levels_next[0], want_next[e]) << "epoch " << e;
    EXPECT_EQ(d.critical_next[0], want_switch[e]) << "epoch " << e;
  }
  EXPECT_EQ(p->next_epoch(), 13);
}

TEST(AdaqsPolicy, RecordsTheMsdrRatioAgainstItsReference) {
  auto p = MakeAdaqsPolicy(1, AdaqsOptions().interval(1).level_low(0.99).level_high(0.1).scheme(Scheme::kTopK));
  // MSDR 3, then halving every epoch: each check switches.
  AccordionDecision d = p->EndEpoch(Moments(6, 2));
  EXPECT_FALSE(d.ratios[0].has_value());
  // TopK fractions double too: 0.1 -> 0.2 -> 0.4 -> 0.8 -> 0.99 (the cap).
  const double want[] = {0.2, 0.4, 0.8, 0.99, 0.99};
  for (int e = 1; e <= 5; ++e) {
    d = p->EndEpoch(Moments(6 / std::pow(2.0, e), 2));
    ASSERT_TRUE(d.ratios[0].has_value());
    EXPECT_DOUBLE_EQ(*d.ratios[0], 0.5) << "epoch " << e;
    EXPECT_DOUBLE_EQ(p->levels()[0], want[e - 1]) << "epoch " << e;
  }
}

TEST(AdaqsPolicy, AGradientWithoutSpreadSaysNothing) {
  auto p = MakeAdaqsPolicy(1, AdaqsOptions().interval(1).level_low(4).level_high(1));
  p->EndEpoch(Moments(4, 1));
  const AccordionDecision d = p->EndEpoch(Moments(0.1, 0));  // std 0: one step per epoch
  EXPECT_FALSE(d.ratios[0].has_value());
  EXPECT_EQ(p->levels()[0], 1);
}

TEST(AdaqsPolicy, RefusesMissingMomentsAndBadOptions) {
  auto p = MakeAdaqsPolicy(1, AdaqsOptions().interval(1).level_low(2).level_high(1));
  EpochSignals s;
  s.norms = {1};
  s.lr = s.lr_next = 0.1;
  EXPECT_THROW(p->EndEpoch(s), InputError);
  EXPECT_THROW(AdaqsOptions().factor(1).Validate(), InputError);
  EXPECT_THROW(AdaqsOptions().level_low(1).level_high(2).Validate(), InputError);
  EXPECT_THROW(AdaqsOptions().scheme(Scheme::kBatch).Validate(), InputError);
  EXPECT_THROW(AdaqsOptions().scheme(Scheme::kTopK).level_low(2).level_high(0.1).Validate(), InputError);
}

TEST(AdaqsPolicy, SavedStateContinuesTheSameSequence) {
  const AdaqsOptions options = AdaqsOptions().interval(1).level_low(8).level_high(1);
  auto a = MakeAdaqsPolicy(1, options);
  auto b = MakeAdaqsPolicy(1, options);
  const double msdr[] = {10, 4, 9, 1.5, 1.4, 0.7, 0.2};
  for (int e = 0; e < 3; ++e) a->EndEpoch(Moments(msdr[e], 1));
  b->Restore(a->Save());
  for (int e = 3; e < 7; ++e) {
    const AccordionDecision da = a->EndEpoch(Moments(msdr[e], 1));
    const AccordionDecision db = b->EndEpoch(Moments(msdr[e], 1));
    EXPECT_EQ(da.levels_next, db.levels_next) << "epoch " << e;
    EXPECT_EQ(da.epoch, db.epoch);
  }
  EXPECT_EQ(a->levels()[0], 8);
  PolicyState bad = a->Save();
  bad["levels"] = {1, 2};
  EXPECT_THROW(b->Restore(bad), InputError);
}

TEST(SmithPolicy, GrowsTheBatchByTheDecayFactorWhereTheLrWouldDecay) {
  // Batch 128 up to 1024; the schedule decays by 0.2 after epochs 2 and 5,
  // then by 0.5 after epoch 7 (past the cap: the LR decays instead).
  auto p = MakeSmithPolicy(SmithOptions().level_low(128).level_high(1024));
  const double lr[] = {0.5, 0.5, 0.5, 0.1, 0.1, 0.1, 0.02, 0.02, 0.01, 0.01};
  const double want_next[] = {128, 128, 640, 640, 640, 1024, 1024, 1024, 1024};
  for (int e = 0; e < 9; ++e) {
    EpochSignals s;
    s.norms = {1};
    s.lr = lr[e];
    s.lr_next = lr[e + 1];
    const AccordionDecision d = p->EndEpoch(s);
    EXPECT_EQ(d.lr_decay, lr[e + 1] < lr[e]) << "epoch " << e;
    EXPECT_EQ(d.levels_next[0], want_next[e]) << "epoch " << e;
    EXPECT_FALSE(d.critical_next[0]);
  }
}

TEST(SmithPolicy, RoundsToWholeLowBatchesAndRestores) {
  EXPECT_EQ(SmithNextBatch(128, 0.1, 0.03, 128, 4096), 384);  // x3.33 -> 3 low batches
  EXPECT_EQ(SmithNextBatch(128, 0.1, 0.1 / 1.2, 128, 4096), 128);
  EXPECT_EQ(SmithNextBatch(512, 0.1, 0.0, 128, 1024), 1024);
  EXPECT_EQ(AdaqsNextLevel(4, 8), 8);
  EXPECT_EQ(AdaqsNextLevel(0.3, 0.5), 0.5);
  auto p = MakeSmithPolicy(SmithOptions().level_low(64).level_high(256));
  PolicyState s = p->Save();
  s["levels"] = {512};
  EXPECT_THROW(p->Restore(s), InputError);
  s["levels"] = {128};
  p->Restore(s);
  EXPECT_EQ(p->levels()[0], 128);
  EXPECT_THROW(SmithOptions().level_low(256).level_high(128).Validate(), InputError);
  // A cap that is no whole number of low batches: accordion-train would refuse the batch.
  try {
    SmithOptions().level_low(128).level_high(1000).Validate();
    FAIL() << "batch 1000 over low batches of 128 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("must be a whole number of low batches (128)"), std::string::npos) << e.what();
  }
}

TEST(AccordionPolicy, IsTheControllerBehindTheInterface) {
  const AccordionOptions o = AccordionOptions().interval(2).eta(0.5).level_low(2).level_high(1);
  auto p = MakeAccordionPolicy(2, o);
  AccordionController c(2, o);
  const std::vector<std::vector<double>> norms = {{10, 1}, {9, 1}, {9, 3}, {9, 3}, {8, 3}};
  for (size_t e = 0; e < norms.size(); ++e) {
    EpochSignals s;
    s.norms = norms[e];
    s.lr = 0.1;
    s.lr_next = e == 3 ? 0.01 : 0.1;
    const AccordionDecision a = p->EndEpoch(s);
    const AccordionDecision b = c.EndEpoch(norms[e], 0.1, s.lr_next);
    EXPECT_EQ(a.levels_next, b.levels_next) << "epoch " << e;
    EXPECT_EQ(a.critical_next, b.critical_next) << "epoch " << e;
  }
  auto q = MakeAccordionPolicy(2, o);
  q->Restore(p->Save());
  EXPECT_EQ(q->levels(), p->levels());
  EXPECT_EQ(q->next_epoch(), 5);
}

// A PowerSGD trace in memory: its MSDR falls to 0.45x every 2 epochs, its schedule
// LR decays after epoch 5, and it profiled its errors at epochs 0 and 4.
TraceView MomentsView(bool with_moments) {
  TraceView v;
  v.run.scheme = Scheme::kPowerSgd;
  v.run.train_samples = 1000;
  v.run.batch_size = 100;
  v.run.world_size = 2;
  v.run.level_low = 4;
  v.run.level_high = 1;
  v.layers = synthetic::MlpLayers();
  const int E = 8, L = static_cast<int>(v.layers.size());
  v.epochs.resize(E);
  v.grad_norms.assign(E, std::vector<double>(L, 1.0));
  v.grad_mean_norms.assign(E, std::vector<double>(L, kNotRecorded));
  v.grad_stds.assign(E, std::vector<double>(L, kNotRecorded));
  for (int e = 0; e < E; ++e) {
    v.epochs[e].epoch = e;
    v.epochs[e].lr = e <= 5 ? 0.1 : 0.01;
    v.epochs[e].critical = e < 2;
    v.schedule_lr.push_back(v.epochs[e].lr);
    if (!with_moments) continue;
    for (int l = 0; l < L; ++l) {
      v.grad_mean_norms[e][l] = std::pow(0.45, e / 2);  // whole model: sqrt(L) x this
      v.grad_stds[e][l] = 1;
    }
  }
  for (int check : {0, 4}) {
    for (int l = 0; l < L; ++l) {
      // rank 1, 2, 4, 8: errors 0.8, 0.6, 0.2, 0.1 (0.4, 0.3, 0.1, 0.05 at epoch 4);
      // 0 for the biases, which travel dense, as the profiler records them.
      const double scale = v.layers[static_cast<size_t>(l)].shape.size() < 2 ? 0.0 : check == 0 ? 1.0 : 0.5;
      const double errors[] = {0.8, 0.6, 0.2, 0.1};
      const double levels[] = {1, 2, 4, 8};
      for (int i = 0; i < 4; ++i) v.error_profile.push_back({check, l, levels[i], errors[i] * scale});
    }
  }
  return v;
}

TEST(DerivePolicySchedule, AdaqsReadsTheRecordedMomentsOfTheWholeModel) {
  const TraceView v = MomentsView(true);
  const Schedule s = DerivePolicySchedule(v, Scheme::kPowerSgd,
                                          PolicySettings()
                                              .policy(Policy::kAdaqs)
                                              .msdr_factor(2)
                                              .accordion(AccordionOptions().interval(2).level_low(4).level_high(1)));
  // Checks at 0 (reference), 2 (halved: rank 2 from epoch 3), 4 (halved:
  // rank 4 from 5), 6 (halved, at the cap).
  const double want[] = {1, 1, 1, 2, 2, 4, 4, 4};
  for (int e = 0; e < 8; ++e) {
    for (int l = 0; l < v.num_layers(); ++l) EXPECT_EQ(s.levels[e][l], want[e]) << "epoch " << e;
  }
  EXPECT_TRUE(s.lr_decay[5]);
}

TEST(DerivePolicySchedule, SaysWhichStatisticIsMissing) {
  const TraceView v = MomentsView(false);
  try {
    DerivePolicySchedule(v, Scheme::kPowerSgd, PolicySettings().policy(Policy::kAdaqs));
    FAIL() << "no moments: must throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("grad_mean_norm"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DerivePolicySchedule(v, Scheme::kPowerSgd, PolicySettings().policy(Policy::kSmith)), InputError);
  // Accordion needs only the norms.
  EXPECT_NO_THROW(DerivePolicySchedule(v, Scheme::kPowerSgd, PolicySettings().policy(Policy::kAccordion)));
}

TEST(ErrorProxy, ReadsTheLastCheckAndInterpolatesBetweenCandidates) {
  const TraceView v = MomentsView(true);
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 0, 0, 2), 0.6);
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 3, 0, 2), 0.6);  // still epoch 0's check
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 4, 0, 2), 0.3);
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 7, 2, 3), 0.2);  // halfway between 0.3 and 0.1
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 7, 1, 3), 0.0);  // a bias: dense, exact
  // fc1 (256 x 784) travels dense from rank 97 on: exact. Between the last
  // candidate (8, 0.1) and there, the straight line to 0.
  EXPECT_EQ(ExactLevel(Scheme::kPowerSgd, {256, 784}), 97);
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 0, 0, 97), 0.0);
  EXPECT_DOUBLE_EQ(*ProfiledError(v, 0, 0, 65536), 0.0);
  EXPECT_NEAR(*ProfiledError(v, 0, 0, 16), 0.1 * (97 - 16) / (97 - 8), 1e-12);
  const Schedule rank2 = StaticSchedule(v, Scheme::kPowerSgd, 2);
  const std::optional<ErrorProxy> p = ErrorProxyOf(v, rank2);
  ASSERT_TRUE(p.has_value());
  // Weights at 0.6 in epochs 0-3, 0.3 in 4-7, biases at 0; the critical
  // epochs are 0 and 1.
  EXPECT_DOUBLE_EQ(p->mean, 0.225);
  EXPECT_DOUBLE_EQ(*p->critical_mean, 0.3);
  EXPECT_EQ(p->critical_epochs, 2);
  EXPECT_FALSE(ErrorProxyOf(v, StaticSchedule(v, Scheme::kTopK, 0.1)).has_value());
  EXPECT_FALSE(p->beyond_profile);
  // Rank 65536 sends every layer dense: no error at all, measured or not.
  const std::optional<ErrorProxy> dense = ErrorProxyOf(v, StaticSchedule(v, Scheme::kPowerSgd, 65536));
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(dense->mean, 0);
  EXPECT_EQ(*dense->critical_mean, 0);
  EXPECT_FALSE(dense->beyond_profile);
  EXPECT_TRUE(ErrorProxyOf(v, StaticSchedule(v, Scheme::kPowerSgd, 16))->beyond_profile);
}

TEST(ComparePolicies, TabulatesEveryPolicyThatFitsAgainstStaticLow) {
  const TraceView v = MomentsView(true);
  const PolicySettings settings =
      PolicySettings().msdr_factor(2).accordion(AccordionOptions().interval(2).eta(0.5).level_low(4).level_high(1));
  const PolicyComparison c = ComparePolicies(v, Scheme::kPowerSgd, settings);
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].name, "static-low");
  EXPECT_EQ(c.rows[2].name, "accordion");
  EXPECT_EQ(c.rows[3].name, "adaqs");
  EXPECT_EQ(c.rows[3].label, "AdaQS rank 1 -> rank 4");
  // AdaQS sends less than static low and more than static high.
  EXPECT_LT(c.rows[3].cost.total_floats, c.rows[0].cost.total_floats);
  EXPECT_GT(c.rows[3].cost.total_floats, c.rows[1].cost.total_floats);
  EXPECT_GT(c.rows[3].error->mean, c.rows[0].error->mean);
  EXPECT_EQ(c.rows[3].level_changes, 2);
  // Without moments the default table notes AdaQS; asking for it fails.
  const TraceView bare = MomentsView(false);
  const PolicyComparison d = ComparePolicies(bare, Scheme::kPowerSgd, settings);
  EXPECT_EQ(d.rows.size(), 3u);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_THROW(ComparePolicies(bare, Scheme::kPowerSgd, settings, {Policy::kAdaqs}), InputError);
  EXPECT_THROW(ComparePolicies(v, Scheme::kPowerSgd, settings, {Policy::kSmith}), InputError);
}

// A schema v1 sample: no moments, no profile, no schedule_lr - which the
// view derives from the recorded (batch-scaled) LR, so Smith et al. can be
// re-derived from any batch trace.
TEST(TraceViewOfOldTraces, DerivesTheScheduleLrAndKnowsNoMoments) {
  const TraceView v =
      LoadTraceView(std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-batch-accordion.trace");
  ASSERT_EQ(v.num_epochs(), 30);
  for (int e = 0; e < v.num_epochs(); ++e) {
    EXPECT_DOUBLE_EQ(v.schedule_lr[e], v.epochs[e].lr * 128 / double(v.epochs[e].batch_size)) << "epoch " << e;
    EXPECT_FALSE(Recorded(v.grad_mean_norms[e][0]));
  }
  EXPECT_NEAR(v.schedule_lr[19], 0.05, 1e-12);
  EXPECT_NEAR(v.schedule_lr[20], 0.005, 1e-12);
  EXPECT_TRUE(v.error_profile.empty());
  const Schedule smith = DerivePolicySchedule(
      v, Scheme::kBatch,
      PolicySettings().policy(Policy::kSmith).accordion(AccordionOptions().level_low(128).level_high(1024)));
  EXPECT_EQ(smith.levels[19][0], 128);
  EXPECT_EQ(smith.levels[20][0], 1024);  // x10 at the decay, capped at 8x
  EXPECT_FALSE(MissingSignal(v, Policy::kAdaqs).empty());
}

}  // namespace
}  // namespace accordion
