#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "trainer/distributed_sampler.h"

namespace accordion {
namespace {

std::vector<int64_t> Union(std::vector<DistributedSampler>& ranks, int64_t step) {
  std::vector<int64_t> all;
  for (const DistributedSampler& s : ranks) {
    const std::vector<int64_t> b = s.Batch(step);
    all.insert(all.end(), b.begin(), b.end());
  }
  return all;
}

std::vector<DistributedSampler> Ranks(int64_t n, int64_t batch, int world, uint64_t seed, int epoch) {
  std::vector<DistributedSampler> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back(n, batch, world, r, seed);
    ranks.back().SetEpoch(epoch);
  }
  return ranks;
}

TEST(DistributedSampler, RanksTogetherTakeTheOneProcessGlobalBatch) {
  for (int world : {2, 4}) {
    for (int epoch : {0, 3}) {
      auto one = Ranks(960, 64, 1, 7, epoch);
      auto many = Ranks(960, 64, world, 7, epoch);
      ASSERT_EQ(one[0].steps_per_epoch(), many[0].steps_per_epoch());
      for (int64_t step = 0; step < one[0].steps_per_epoch(); ++step) {
        EXPECT_EQ(Union(many, step), one[0].Batch(step)) << "world " << world << " step " << step;
      }
    }
  }
}

TEST(DistributedSampler, StepsMatchTheAccountingAndEveryRankIsPadded) {
  for (const auto& [n, batch, world] : {std::tuple{1000, 64, 2}, {1001, 60, 3}, {50, 8, 4}, {7, 4, 4}}) {
    auto ranks = Ranks(n, batch, world, 1, 0);
    EXPECT_EQ(ranks[0].steps_per_epoch(), StepsPerEpoch(n, batch, world));
    const int64_t per_rank = (n + world - 1) / world;
    std::multiset<int64_t> seen;
    for (const DistributedSampler& s : ranks) {
      int64_t count = 0;
      for (int64_t step = 0; step < s.steps_per_epoch(); ++step) {
        for (int64_t id : s.Batch(step)) {
          ASSERT_GE(id, 0);
          ASSERT_LT(id, n);
          seen.insert(id);
          ++count;
        }
      }
      EXPECT_EQ(count, per_rank) << "n " << n << " world " << world;
    }
    // Every sample is used; padding repeats as few as needed.
    for (int64_t id = 0; id < n; ++id) EXPECT_GE(seen.count(id), 1u);
    EXPECT_EQ(static_cast<int64_t>(seen.size()), per_rank * world);
  }
}

TEST(DistributedSampler, ShufflesPerEpochDeterministically) {
  auto a = Ranks(500, 50, 2, 3, 1), b = Ranks(500, 50, 2, 3, 1), c = Ranks(500, 50, 2, 3, 2);
  auto d = Ranks(500, 50, 2, 4, 1);
  EXPECT_EQ(a[1].Batch(2), b[1].Batch(2));
  EXPECT_NE(a[1].Batch(2), c[1].Batch(2));
  EXPECT_NE(a[1].Batch(2), d[1].Batch(2));
}

TEST(DistributedSampler, RefusesABatchThatDoesNotSplit) {
  EXPECT_THROW(DistributedSampler(100, 10, 3, 0, 1), InputError);
  EXPECT_THROW(DistributedSampler(100, 10, 2, 2, 1), InputError);
}

}  // namespace
}  // namespace accordion
