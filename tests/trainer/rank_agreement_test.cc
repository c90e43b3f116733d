// What the DDP hook says when its ranks disagree: the settings they were
// attached with, and the point each rank has reached.
#include "trainer/rank_agreement.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace accordion {
namespace {

PhaseReport Step(int64_t epoch, int64_t step) {
  PhaseReport r;
  r.phase = RankPhase::kStep;
  r.epoch = epoch;
  r.step = step;
  return r;
}

PhaseReport EndEpoch(int64_t epoch, int64_t steps, double lr = 0.1, double next_lr = 0.1) {
  PhaseReport r = Step(epoch, steps);
  r.phase = RankPhase::kEndEpoch;
  r.lr = lr;
  r.next_lr = next_lr;
  return r;
}

PhaseReport Close(int64_t epochs) {
  PhaseReport r = Step(epochs, 0);
  r.phase = RankPhase::kClose;
  return r;
}

TEST(PhaseDisagreement, RanksAtTheSamePointAgree) {
  EXPECT_EQ(PhaseDisagreement({Step(2, 5), Step(2, 5), Step(2, 5)}), "");
  EXPECT_EQ(PhaseDisagreement({EndEpoch(1, 7), EndEpoch(1, 7)}), "");
  EXPECT_EQ(PhaseDisagreement({Close(3), Close(3)}), "");
}

TEST(PhaseDisagreement, ARankWithOneStepMoreIsNamedWithItsCount) {
  const std::string said = PhaseDisagreement({EndEpoch(2, 10), Step(2, 10)});
  EXPECT_EQ(said,
            "ranks disagree: rank 0 ends epoch 2 after 10 step(s); rank 1 starts a step after 10 step(s) of epoch 2; "
            "every rank must take the same number of steps in an epoch (an uneven data loader? "
            "DistributedSampler(..., drop_last=True) gives each rank the same count) and call end_epoch after the "
            "same step");
}

TEST(PhaseDisagreement, ARankThatClosesEarlyGetsTheCloseHint) {
  const std::string said = PhaseDisagreement({EndEpoch(2, 4), Close(2), Close(2)});
  EXPECT_NE(said.find("rank 0 ends epoch 2 after 4 step(s)"), std::string::npos) << said;
  EXPECT_NE(said.find("ranks 1 and 2 closes the hook after 2 epoch(s)"), std::string::npos) << said;
  EXPECT_NE(said.find("close() at the same point"), std::string::npos) << said;
}

TEST(PhaseDisagreement, EpochsThatDifferGetTheEndEpochHint) {
  const std::string said = PhaseDisagreement({Step(3, 0), Step(2, 4)});
  EXPECT_NE(said.find("every rank must call end_epoch after each epoch"), std::string::npos) << said;
}

TEST(PhaseDisagreement, LearningRatesMustAgreeAtTheEndOfAnEpoch) {
  EXPECT_EQ(PhaseDisagreement({EndEpoch(1, 3, 0.1, 0.01), EndEpoch(1, 3, 0.1, 0.1)}),
            "ranks disagree at the end of epoch 1: next_lr is 0.01 on rank 0 but 0.1 on rank 1; every rank must "
            "pass end_epoch the same lr and next_lr");
}

TEST(PhaseDisagreement, RanksWithAProblemOfTheirOwnAreLeftToProblemsOfRanks) {
  PhaseReport bad = Step(0, 9);
  bad.problem = true;
  EXPECT_EQ(PhaseDisagreement({Step(0, 1), bad}), "");
}

TEST(PhaseReport, TravelsAsDoubles) {
  const PhaseReport r = FromDoubles(ToDoubles(EndEpoch(12, 345, 0.25, 0.025)));
  EXPECT_EQ(r.phase, RankPhase::kEndEpoch);
  EXPECT_EQ(r.epoch, 12);
  EXPECT_EQ(r.step, 345);
  EXPECT_DOUBLE_EQ(r.next_lr, 0.025);
  EXPECT_THROW(FromDoubles({1, 2}), std::invalid_argument);
  EXPECT_THROW(FromDoubles({7, 0, 0, 0, 0, 0}), std::invalid_argument);
}

TEST(ProblemsOfRanks, OneProblemEverywhereIsSaidOnce) {
  EXPECT_EQ(ProblemsOfRanks({"", ""}), "");
  EXPECT_EQ(ProblemsOfRanks({"low must be 1 or more", "low must be 1 or more"}), "low must be 1 or more");
  EXPECT_EQ(ProblemsOfRanks({"", "lr must be finite"}), "rank 1: lr must be finite");
  EXPECT_EQ(ProblemsOfRanks({"a", "b", "a"}), "ranks 0 and 2: a; rank 1: b");
}

TEST(SettingsDisagreement, NamesEachSettingThatDiffersWithItsValues) {
  EXPECT_EQ(SettingsDisagreement({R"({"eta":0.5,"scheme":"topk"})", R"({"eta":0.5,"scheme":"topk"})"}), "");
  EXPECT_EQ(SettingsDisagreement({R"({"eta":0.5,"interval":10,"scheme":"topk"})",
                                  R"({"eta":0.3,"interval":10,"scheme":"topk"})",
                                  R"({"eta":0.5,"interval":2,"scheme":"powersgd"})"}),
            "eta is 0.5 on ranks 0 and 2 but 0.3 on rank 1; interval is 10 on ranks 0 and 1 but 2 on rank 2; "
            "scheme is topk on ranks 0 and 1 but powersgd on rank 2");
}

TEST(SettingsDisagreement, ASettingOnlySomeRanksGaveIsNamed) {
  EXPECT_EQ(SettingsDisagreement({R"({"seed":1})", R"({})"}), "seed is 1 on rank 0 but not given on rank 1");
}

TEST(SettingsDisagreement, ParametersAreDescribedByTheirFirstDifference) {
  EXPECT_EQ(SettingsDisagreement({R"({"parameters":["a [2, 3]","b [3]"]})", R"({"parameters":["a [2, 3]","c [3]"]})"}),
            "the models differ (parameter 1 is 'b [3]' on rank 0 but 'c [3]' on rank 1)");
  EXPECT_EQ(SettingsDisagreement({R"({"parameters":["a [2]","b [3]"]})", R"({"parameters":["a [2]"]})"}),
            "the number of parameters that require a gradient is 2 on rank 0 but 1 on rank 1 (parameter 1 is "
            "'b [3]' on rank 0 but absent on rank 1)");
  EXPECT_THROW(SettingsDisagreement({"[1]"}), std::invalid_argument);
}

TEST(DescribeRanks, ListsRangesAndLongLists) {
  EXPECT_EQ(DescribeRanks({3}), "rank 3");
  EXPECT_EQ(DescribeRanks({1, 2, 3, 4}), "ranks 1-4");
  EXPECT_EQ(DescribeRanks({1, 3}), "ranks 1 and 3");
  EXPECT_EQ(DescribeRanks({0, 2, 4, 6, 8, 10, 12, 14, 16, 18}), "ranks 0, 2, 4, 6, 8, 10 and 4 more");
}

}  // namespace
}  // namespace accordion
