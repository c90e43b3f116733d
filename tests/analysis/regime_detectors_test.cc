#include "analysis/regime_detectors.h"

#include <gtest/gtest.h>

#include <sstream>

namespace accordion {
namespace {

TraceView ViewWithModelNorms(const std::vector<double>& norms) {
  TraceView v;
  v.epochs.resize(norms.size());
  for (size_t e = 0; e < norms.size(); ++e) {
    v.epochs[e].epoch = static_cast<int>(e);
    v.epochs[e].lr = 0.1;
    v.grad_norms.push_back({norms[e]});  // one layer: the model norm is the layer norm
  }
  return v;
}

TEST(RegimeDetectors, GradientNormsLabelTheEpochsBetweenChecks) {
  //                           0   1   2  3  4    5    6
  const TraceView v = ViewWithModelNorms({8, 9, 4, 1, 3.5, 1, 3});
  const RegimeSeries s = DetectFromGradientNorms(v, 0.5, 2);
  ASSERT_EQ(s.critical.size(), 7u);
  EXPECT_TRUE(*s.critical[0]);
  // Check at 2 against 0: |8 - 4| / 8 = 0.5 -> epochs 1, 2 critical.
  EXPECT_TRUE(*s.critical[1]);
  EXPECT_TRUE(*s.critical[2]);
  EXPECT_DOUBLE_EQ(*s.ratio[2], 0.5);
  // Check at 4 against 2: |4 - 3.5| / 4 = 0.125 -> epochs 3, 4 stable.
  EXPECT_FALSE(*s.critical[3]);
  EXPECT_FALSE(*s.critical[4]);
  // Check at 6 against 4: |3.5 - 3| / 3.5 < 0.5 -> stable; epoch 1's spike to 9 is never seen.
  EXPECT_FALSE(*s.critical[6]);
}

TEST(RegimeDetectors, HessianLabelsBetweenMeasurementsAndLeavesTheTailOpen) {
  const std::vector<HessianRecord> h = {
      {0, "", 10, 20, 1}, {3, "", 30, 20, 1}, {6, "", 31, 20, 1}, {3, "layer1", 99, 5, 1}};
  const RegimeSeries s = DetectFromHessian(h, 9, 0.5);
  EXPECT_TRUE(*s.critical[0]);
  for (int e = 1; e <= 3; ++e) EXPECT_TRUE(*s.critical[e]) << e;   // 10 -> 30: +200 %
  for (int e = 4; e <= 6; ++e) EXPECT_FALSE(*s.critical[e]) << e;  // 30 -> 31
  EXPECT_FALSE(s.critical[7].has_value());                         // after the last measurement
  EXPECT_NEAR(*s.ratio[5], 1.0 / 30, 1e-12);
}

TEST(RegimeDetectors, AgreementCountsOnlyEpochsBothLabelled) {
  RegimeSeries a, b;
  a.critical = {true, true, false, false, std::nullopt};
  b.critical = {true, false, false, true, true};
  const RegimeAgreement r = CompareRegimes(a, b);
  EXPECT_EQ(r.compared, 4);
  EXPECT_EQ(r.both_critical, 1);
  EXPECT_EQ(r.both_stable, 1);
  EXPECT_EQ(r.only_first, 1);
  EXPECT_EQ(r.only_second, 1);
  EXPECT_DOUBLE_EQ(r.agreement(), 0.5);
  EXPECT_DOUBLE_EQ(r.jaccard(), 1.0 / 3);
}

TEST(RegimeDetectors, ComparisonTableHasARowPerEpochAndASummary) {
  const TraceView v = ViewWithModelNorms({8, 9, 4, 1, 3.5});
  const std::vector<HessianRecord> h = {{0, "", 10, 20, 1}, {2, "", 4, 20, 1}, {4, "", 4.1, 20, 1}};
  std::stringstream out;
  WriteRegimeComparison(v, h, DetectFromGradientNorms(v, 0.5, 2), DetectFromHessian(h, 5, 0.5), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("Epochs both detectors labelled: 5; both critical 3, both stable 2"), std::string::npos) << text;
  EXPECT_NE(text.find("Agreement 100.0 %"), std::string::npos) << text;
}

}  // namespace
}  // namespace accordion
