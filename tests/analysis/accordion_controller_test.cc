// Pins AccordionController to the paper's Algorithm 1 and the reference
// code's conventions on hand-made norm sequences.
#include "analysis/accordion_controller.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"

namespace accordion {
namespace {

constexpr double kLow = 2;   // rank 2: low compression, used when critical
constexpr double kHigh = 1;  // rank 1: high compression

AccordionOptions Opts(int interval, double eta = 0.5) {
  return AccordionOptions().interval(interval).eta(eta).level_low(kLow).level_high(kHigh);
}

// Feeds one epoch at a constant LR and returns the decision.
AccordionDecision Feed(AccordionController& c, std::vector<double> norms, double lr = 0.1, double lr_next = 0.1) {
  return c.EndEpoch(norms, lr, lr_next);
}

TEST(AccordionController, EpochZeroIsCriticalAndStaysSoUntilTheFirstComparison) {
  AccordionController c(1, Opts(3));
  EXPECT_TRUE(c.critical()[0]);
  EXPECT_EQ(c.levels()[0], kLow);
  // Epoch 0 is a check without a baseline: critical for epochs 1..3.
  AccordionDecision d = Feed(c, {10});
  EXPECT_TRUE(d.checked);
  EXPECT_FALSE(d.ratios[0].has_value());
  EXPECT_TRUE(d.critical_next[0]);
  // Epochs 1 and 2 are not checks even though the norm collapses.
  for (int e = 1; e <= 2; ++e) {
    d = Feed(c, {0.01});
    EXPECT_FALSE(d.checked) << "epoch " << e;
    EXPECT_TRUE(d.critical_next[0]);
  }
  // Epoch 3 compares with epoch 0: |10 - 9.9| / 10 = 0.01 < 0.5.
  d = Feed(c, {9.9});
  EXPECT_TRUE(d.checked);
  ASSERT_TRUE(d.ratios[0].has_value());
  EXPECT_NEAR(*d.ratios[0], 0.01, 1e-12);
  EXPECT_FALSE(d.critical_next[0]);
  EXPECT_EQ(c.levels()[0], kHigh);
  EXPECT_EQ(c.next_epoch(), 4);
}

TEST(AccordionController, ComparesWithTheNormIntervalEpochsBackNotTheLastEpoch) {
  AccordionController c(1, Opts(3));
  Feed(c, {10});  // epoch 0
  Feed(c, {1});   // epoch 1
  Feed(c, {1});   // epoch 2
  // Against epoch 2 the change would be 8x; against epoch 0 it is 10 %.
  const AccordionDecision d = Feed(c, {9});
  ASSERT_TRUE(d.ratios[0].has_value());
  EXPECT_NEAR(*d.ratios[0], 0.1, 1e-12);
  EXPECT_FALSE(d.critical_next[0]);
}

TEST(AccordionController, RatioAtExactlyEtaIsCritical) {
  AccordionController c(1, Opts(1, 0.5));
  Feed(c, {8});
  const AccordionDecision d = Feed(c, {4});  // |8 - 4| / 8 = 0.5
  EXPECT_DOUBLE_EQ(*d.ratios[0], 0.5);
  EXPECT_TRUE(d.critical_next[0]);
  const AccordionDecision below = Feed(c, {2.0000001});  // |4 - 2.0000001| / 4 < 0.5
  EXPECT_FALSE(below.critical_next[0]);
}

TEST(AccordionController, GrowingNormsAreCriticalToo) {
  AccordionController c(1, Opts(1));
  Feed(c, {1});
  const AccordionDecision d = Feed(c, {1.6});  // +60 %
  EXPECT_NEAR(*d.ratios[0], 0.6, 1e-12);
  EXPECT_TRUE(d.critical_next[0]);
}

TEST(AccordionController, DecisionsHoldBetweenChecks) {
  AccordionController c(1, Opts(2));
  Feed(c, {10});                                // e0: check, no baseline
  Feed(c, {10});                                // e1
  EXPECT_FALSE(Feed(c, {9}).critical_next[0]);  // e2: 10 % -> high
  EXPECT_EQ(c.levels()[0], kHigh);
  EXPECT_FALSE(Feed(c, {1}).critical_next[0]);  // e3: no check, stays high
  EXPECT_EQ(c.levels()[0], kHigh);
  EXPECT_TRUE(Feed(c, {2}).critical_next[0]);     // e4: |9 - 2| / 9 -> low
  EXPECT_TRUE(Feed(c, {2}).critical_next[0]);     // e5: no check, stays low
  EXPECT_FALSE(Feed(c, {2.1}).critical_next[0]);  // e6: 5 % -> high
}

TEST(AccordionController, LrDecayHoldsEveryLayerCriticalForAnIntervalThenChecksResume) {
  AccordionController c(2, Opts(4));
  for (int e = 0; e <= 3; ++e) Feed(c, {5, 5});
  AccordionDecision d = Feed(c, {5, 5});  // e4: stable -> high
  EXPECT_EQ(c.levels(), (std::vector<double>{kHigh, kHigh}));
  d = Feed(c, {5, 5}, 0.1, 0.01);  // e5: not a check, but the LR decays from e6
  EXPECT_FALSE(d.checked);
  EXPECT_TRUE(d.lr_decay);
  EXPECT_EQ(c.levels(), (std::vector<double>{kLow, kLow}));
  Feed(c, {5, 5}, 0.01, 0.01);  // e6
  Feed(c, {5, 5}, 0.01, 0.01);  // e7
  EXPECT_EQ(c.levels(), (std::vector<double>{kLow, kLow}));
  // e8's check finds layer 0 stable, but e9 is still inside the hold (e6-e9).
  d = Feed(c, {5, 1}, 0.01, 0.01);
  EXPECT_TRUE(d.checked);
  EXPECT_NEAR(*d.ratios[0], 0.0, 1e-12);
  EXPECT_EQ(c.levels(), (std::vector<double>{kLow, kLow}));
  Feed(c, {5, 1}, 0.01, 0.01);  // e9: ends the hold; e8's verdicts take over
  EXPECT_EQ(c.levels(), (std::vector<double>{kHigh, kLow}));
  // e12: the next check, against e8's norms.
  for (int e = 10; e <= 11; ++e) Feed(c, {5, 1}, 0.01, 0.01);
  d = Feed(c, {5, 1}, 0.01, 0.01);
  EXPECT_EQ(c.levels(), (std::vector<double>{kHigh, kHigh}));
}

// The paper's own alignment: decays at 150 and 250 with interval 10 take
// effect on check epochs. The check at the end of epoch 150 must not send a
// layer back to high compression after one epoch.
TEST(AccordionController, LrDecayOnACheckEpochStaysCriticalForTheWholeInterval) {
  const int interval = 10;
  AccordionController c(1, Opts(interval));
  double lr = 0.1;
  for (int e = 0; e < 150; ++e) {
    const double next = e + 1 == 150 ? 0.01 : lr;
    Feed(c, {5}, lr, next);
    lr = next;
  }
  // Epochs 150..159 run at the low level, although every check sees norm 5.
  for (int e = 150; e < 160; ++e) {
    EXPECT_TRUE(c.critical()[0]) << "epoch " << e;
    EXPECT_EQ(c.levels()[0], kLow) << "epoch " << e;
    const AccordionDecision d = Feed(c, {5}, lr, lr);
    if (e == 150) {
      EXPECT_TRUE(d.checked);
      EXPECT_TRUE(d.critical_next[0]);  // the check at 150 is overruled by the hold
    }
  }
  // The hold is over: the verdict of the check at 150 (stable) takes over.
  EXPECT_FALSE(c.critical()[0]);
  EXPECT_EQ(c.levels()[0], kHigh);
}

// The reproduction's alignment: decay at 20, interval 2 - the first decayed
// epoch (20) is a check epoch; a decay taking effect at 21 is not.
TEST(AccordionController, LrDecayOnAndOffACheckEpochHoldsAtLeastAnInterval) {
  for (const int first_decayed : {20, 21}) {
    AccordionController c(2, Opts(2));
    double lr = 0.05;
    int low_epochs = 0;
    for (int e = 0; e < 30; ++e) {
      if (e >= first_decayed && c.levels() == std::vector<double>{kLow, kLow}) ++low_epochs;
      const double next = e + 1 == first_decayed ? 0.005 : lr;
      Feed(c, {5, 5}, lr, next);  // stable norms: only the decay can make a layer critical
      lr = next;
    }
    EXPECT_EQ(low_epochs, 2) << "decay from epoch " << first_decayed;
  }
}

TEST(AccordionController, LrDecayOnACheckEpochOverridesAStableRatio) {
  AccordionController c(1, Opts(1));
  Feed(c, {5});
  const AccordionDecision d = Feed(c, {5}, 0.1, 0.05);
  EXPECT_NEAR(*d.ratios[0], 0.0, 1e-12);
  EXPECT_TRUE(d.critical_next[0]);
}

TEST(AccordionController, WarmupLrIncreaseIsNotADecay) {
  AccordionController c(1, Opts(1));
  Feed(c, {5}, 0.02, 0.04);
  const AccordionDecision d = Feed(c, {5}, 0.04, 0.06);
  EXPECT_FALSE(d.lr_decay);
  EXPECT_FALSE(d.critical_next[0]);
}

TEST(AccordionController, RoundingNoiseInTheLrIsNotADecay) {
  AccordionController c(1, Opts(2));
  const double warm = 0.1 * 3 / 3;  // 0.10000000000000002
  ASSERT_GT(warm, 0.1);
  EXPECT_FALSE(Feed(c, {5}, warm, 0.1).lr_decay);
  EXPECT_TRUE(Feed(c, {5}, 0.1, 0.0999).lr_decay);
}

TEST(AccordionController, ZeroPreviousNormIsCriticalWithoutARatio) {
  AccordionController c(2, Opts(1));
  Feed(c, {0, 3});
  const AccordionDecision d = Feed(c, {0, 3});
  EXPECT_FALSE(d.ratios[0].has_value());  // no division by zero
  EXPECT_TRUE(d.critical_next[0]);
  ASSERT_TRUE(d.ratios[1].has_value());
  EXPECT_FALSE(d.critical_next[1]);
}

TEST(AccordionController, LayersAreDecidedIndependently) {
  AccordionController c(3, Opts(1));
  Feed(c, {1, 1, 1});
  const AccordionDecision d = Feed(c, {0.2, 1.05, 3});
  EXPECT_EQ(d.critical_next, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(d.levels_next, (std::vector<double>{kLow, kHigh, kLow}));
}

TEST(AccordionController, ChecksRunAtMultiplesOfTheInterval) {
  AccordionController c(1, Opts(5));
  for (int e = 0; e < 21; ++e) {
    const AccordionDecision d = Feed(c, {1});
    EXPECT_EQ(d.checked, e % 5 == 0) << "epoch " << e;
    EXPECT_EQ(d.epoch, e);
  }
}

TEST(AccordionController, WholeModelBatchOnlyGrows) {
  const auto opts = AccordionOptions().interval(1).level_low(512).level_high(4096).mode(ControllerMode::kWholeModel);
  AccordionController c(1, opts);
  EXPECT_EQ(c.levels()[0], 512);
  Feed(c, {10});
  EXPECT_EQ(c.levels()[0], 512);
  Feed(c, {10});  // stable -> large batch
  EXPECT_EQ(c.levels()[0], 4096);
  // A sharp change and an LR decay are still detected as critical ...
  AccordionDecision d = Feed(c, {1}, 0.1, 0.01);
  EXPECT_TRUE(d.critical_next[0]);
  // ... but the batch never shrinks back.
  EXPECT_EQ(d.levels_next[0], 4096);
  EXPECT_EQ(c.levels()[0], 4096);
  d = Feed(c, {10});
  EXPECT_EQ(c.levels()[0], 4096);
}

TEST(AccordionController, WholeModelRejectsSeveralGroupsAndShrinkingBatches) {
  const auto opts = AccordionOptions().level_low(512).level_high(4096).mode(ControllerMode::kWholeModel);
  EXPECT_THROW(AccordionController(3, opts), InputError);
  EXPECT_THROW(AccordionController(1, AccordionOptions(opts).level_low(4096).level_high(512)), InputError);
}

TEST(AccordionController, RejectsBadOptionsAndInputs) {
  EXPECT_THROW(AccordionController(1, Opts(0)), InputError);
  EXPECT_THROW(AccordionController(1, Opts(1, 0.0)), InputError);
  EXPECT_THROW(AccordionController(1, Opts(1, -1)), InputError);
  EXPECT_THROW(AccordionController(0, Opts(1)), InputError);
  AccordionController c(2, Opts(1));
  EXPECT_THROW(Feed(c, {1}), InputError);
  EXPECT_THROW(Feed(c, {1, -1}), InputError);
  EXPECT_THROW(Feed(c, {1, std::nan("")}), InputError);
  EXPECT_EQ(c.next_epoch(), 0);  // a refused epoch changes nothing
}

TEST(AccordionController, RestoredStateContinuesExactly) {
  const std::vector<std::vector<double>> norms = {{9, 4}, {8, 4}, {7, 4}, {3, 4.1}, {3, 1}, {3, 1}, {1, 1}, {1, 1}};
  AccordionController a(2, Opts(2));
  AccordionController b(2, Opts(2));
  for (int e = 0; e < 3; ++e) Feed(a, norms[e]);
  b.Restore(a.state());
  for (int e = 3; e < 8; ++e) {
    const AccordionDecision da = Feed(a, norms[e]);
    const AccordionDecision db = Feed(b, norms[e]);
    EXPECT_EQ(da.critical_next, db.critical_next);
    EXPECT_EQ(da.levels_next, db.levels_next);
    EXPECT_EQ(da.ratios, db.ratios);
  }
  AccordionState bad = a.state();
  bad.levels.push_back(1);
  EXPECT_THROW(b.Restore(bad), InputError);
}

TEST(AccordionController, RestoredStateKeepsAPostDecayHold) {
  AccordionController a(1, Opts(4));
  for (int e = 0; e < 5; ++e) Feed(a, {5});
  Feed(a, {5}, 0.1, 0.01);  // e5: decay; held critical through e9
  AccordionController b(1, Opts(4));
  b.Restore(a.state());
  for (int e = 6; e < 14; ++e) {
    const AccordionDecision da = Feed(a, {5}, 0.01, 0.01);
    const AccordionDecision db = Feed(b, {5}, 0.01, 0.01);
    EXPECT_EQ(da.critical_next, db.critical_next) << "epoch " << e;
  }
  AccordionState bad = a.state();
  bad.critical_through = -2;
  EXPECT_THROW(b.Restore(bad), InputError);
}

TEST(WholeModelNorm, IsTheNormOfTheConcatenatedGradient) {
  EXPECT_DOUBLE_EQ(WholeModelNorm({3, 4}), 5.0);
  EXPECT_DOUBLE_EQ(WholeModelNorm({}), 0.0);
}

}  // namespace
}  // namespace accordion
