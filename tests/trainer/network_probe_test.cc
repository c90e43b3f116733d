// The network probe a run makes at start, over two real Gloo ranks on
// loopback: what it times, that every rank returns the same records (they
// decide together when to stop), and that its budget bounds it.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "tests/trainer/gloo_ranks.h"
#include "trainer/network_probe.h"

namespace accordion {
namespace {

// Each rank's records, by rank.
std::map<int, std::vector<NetworkProbeRecord>> ProbeOnTwoRanks(const NetworkProbeOptions& options) {
  std::map<int, std::vector<NetworkProbeRecord>> by_rank;
  std::mutex mu;
  test_support::OnTwoRanks([&](Communicator& comm) {
    std::vector<NetworkProbeRecord> records = ProbeNetwork(comm, torch::kCPU, options);
    std::lock_guard<std::mutex> lock(mu);
    by_rank[comm.rank()] = std::move(records);
  });
  return by_rank;
}

TEST(NetworkProbe, TimesBothOpsAtEverySizeAndEveryRankAgrees) {
  const auto by_rank = ProbeOnTwoRanks(NetworkProbeOptions().max_bytes(64 << 10).repeats(3).budget_s(60));
  ASSERT_EQ(by_rank.size(), 2u);
  const std::vector<NetworkProbeRecord>& probe = by_rank.at(0);
  // 4, 16 and 64 KiB, each op, three repeats.
  ASSERT_EQ(probe.size(), 3u * 2 * 3);
  std::set<std::pair<CollectiveOp, int64_t>> shapes;
  for (const NetworkProbeRecord& r : probe) {
    shapes.insert({r.op, r.bytes});
    EXPECT_GE(r.repeat, 0);
    EXPECT_LT(r.repeat, 3);
    EXPECT_GT(r.seconds, 0);
  }
  // The all-gather's bytes are one rank's share of the swept size.
  EXPECT_EQ(shapes, (std::set<std::pair<CollectiveOp, int64_t>>{{CollectiveOp::kAllReduce, 4096},
                                                                {CollectiveOp::kAllReduce, 16384},
                                                                {CollectiveOp::kAllReduce, 65536},
                                                                {CollectiveOp::kAllGather, 2048},
                                                                {CollectiveOp::kAllGather, 8192},
                                                                {CollectiveOp::kAllGather, 32768}}));
  // The slowest rank's time: both ranks hold the same numbers.
  const std::vector<NetworkProbeRecord>& other = by_rank.at(1);
  ASSERT_EQ(other.size(), probe.size());
  for (size_t i = 0; i < probe.size(); ++i) EXPECT_EQ(other[i].seconds, probe[i].seconds);
}

TEST(NetworkProbe, TheBudgetStopsItAfterItsFewestSizes) {
  const auto by_rank = ProbeOnTwoRanks(NetworkProbeOptions().budget_s(0).min_sizes(2).repeats(2));
  std::set<int64_t> sizes;
  for (const NetworkProbeRecord& r : by_rank.at(0)) {
    if (r.op == CollectiveOp::kAllReduce) sizes.insert(r.bytes);
  }
  EXPECT_EQ(sizes, (std::set<int64_t>{4096, 16384}));
  EXPECT_EQ(by_rank.at(1).size(), by_rank.at(0).size());
}

TEST(NetworkProbe, OneRankHasNoNetworkToProbe) {
  // A lone rank never calls into a group: nothing to time, nothing recorded.
  struct Alone : Communicator {
    int rank() const override { return 0; }
    int world_size() const override { return 1; }
    std::string backend() const override { return "none"; }
    std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor) override { throw std::logic_error("called"); }
    std::unique_ptr<CollectiveWork> AllGather(torch::Tensor, torch::Tensor) override {
      throw std::logic_error("called");
    }
    std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor, int) override { throw std::logic_error("called"); }
    void Barrier() override { throw std::logic_error("called"); }
  } alone;
  EXPECT_TRUE(ProbeNetwork(alone, torch::kCPU).empty());
}

}  // namespace
}  // namespace accordion
