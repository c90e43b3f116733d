// The largest platforms a replay takes (platform.h's kMaxHosts): SimGrid runs
// as many actors as ranks, and its solver recurses as deep as the links that
// a round's flows connect. Slow: seconds, and over a GB of memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "simulator/alpha_beta_model.h"
#include "simulator/network_simulation.h"
#include "tests/simulator/sim_test_support.h"

namespace accordion::sim {
namespace {

// 65,536 ranks died of "Failed to protect stack" (a guard page per actor
// past vm.max_map_count), and past that of a stack overflow in the solver:
// LV08's cross-traffic chains every link of the ring into one system.
TEST(Scale, RingAllReduceOver65536RanksOfTheDefaultStar) {
  constexpr int kRanks = 65536;
  constexpr int64_t kBytes = 100000000;
  const PlatformSpec star = StarPlatformOptions().bandwidth_gbps(25).latency_us(5);
  const double simulated = test_support::SimulateCollective(star, kRanks, CollectiveOp::kAllReduce,
                                                            AllReduceAlgorithm::kRing, kBytes, Fidelity::kRounds);
  const double formula = AlphaBetaModel(10e-6, 25e9 / 8).RingAllReduce(static_cast<double>(kBytes), kRanks);
  ASSERT_TRUE(std::isfinite(simulated));
  // LV08 multiplies latencies by 13.01, and 2(N-1) latencies dominate here.
  EXPECT_GT(simulated / formula, 1.0);
  EXPECT_LT(simulated / formula, 13.1);
}

}  // namespace
}  // namespace accordion::sim
