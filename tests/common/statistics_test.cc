// Quantile: numpy's default (linear between the nearest order statistics),
// whatever the order the values come in.
#include "common/statistics.h"

#include <gtest/gtest.h>

namespace accordion {
namespace {

TEST(Quantile, IsLinearBetweenTheNearestOrderStatistics) {
  const std::vector<double> v = {4, 1, 3, 2, 5};  // sorted: 1 2 3 4 5
  EXPECT_DOUBLE_EQ(Quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(v, 1), 5);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), Median(v));
  EXPECT_DOUBLE_EQ(Quantile(v, 0.05), 1.2);  // 0.05 * 4 = 0.2 of the way from 1 to 2
  EXPECT_DOUBLE_EQ(Quantile(v, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.05), 7);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(Quantile(v, 2), 5);  // clamped
}

}  // namespace
}  // namespace accordion
