// The divergence agreement (trainer/divergence.h): every rank learns the
// earliest non-finite step of any rank from one all-reduce of slots, over
// two real Gloo ranks.
#include "trainer/divergence.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "tests/trainer/gloo_ranks.h"

namespace accordion {
namespace {

TEST(Divergence, TheEarliestBadStepWinsAndATieNamesTheLowerRank) {
  EXPECT_EQ(DescribeDivergence(0, 10, {0, 0, 0}), "");
  // Slots hold step + 1: rank 1 went bad at step 4, rank 2 at step 2.
  EXPECT_EQ(DescribeDivergence(2, 10, {0, 5, 3}), "epoch 3, step 3 of 10 (the loss of rank 2 is not finite)");
  EXPECT_EQ(DescribeDivergence(0, 10, {7, 7}), "epoch 1, step 7 of 10 (the loss of rank 0 is not finite)");
}

TEST(Divergence, EveryRankAgreesOnWhereAnyRankDiverged) {
  std::mutex mutex;
  std::vector<std::string> none(2), one(2);
  test_support::OnTwoRanks([&](Communicator& comm) {
    const std::string healthy = AgreeOnDivergence(comm, 0, 20, -1);
    // Only rank 1's loss became NaN, at step 7: rank 0 must stop there too.
    const std::string diverged = AgreeOnDivergence(comm, 4, 20, comm.rank() == 1 ? 7 : -1);
    std::lock_guard<std::mutex> lock(mutex);
    none[static_cast<size_t>(comm.rank())] = healthy;
    one[static_cast<size_t>(comm.rank())] = diverged;
  });
  EXPECT_EQ(none, (std::vector<std::string>{"", ""}));
  const std::string expected = "epoch 5, step 8 of 20 (the loss of rank 1 is not finite)";
  EXPECT_EQ(one, (std::vector<std::string>{expected, expected}));
}

}  // namespace
}  // namespace accordion
