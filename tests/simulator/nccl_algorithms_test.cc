// NCCL's algorithms (nccl-ring, nccl-tree) and the hierarchical all-reduce
// in SimGrid, against their alpha-beta formulas and against the ring. Every
// simulation runs in a child process.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "simulator/alpha_beta_model.h"
#include "simulator/child_process.h"
#include "simulator/collectives.h"
#include "tests/simulator/sim_test_support.h"

namespace accordion::sim {
namespace {

using test_support::ExactStar;
using test_support::SimulateCollective;

constexpr CollectiveOp kAllReduce = CollectiveOp::kAllReduce;
constexpr double kGbps = 10, kLinkUs = 5;
const AlphaBetaModel kStar(2 * kLinkUs * 1e-6, kGbps * 1e9 / 8);  // two links per route

double Simulate(int n, AllReduceAlgorithm a, double bytes, Fidelity f, const CollectiveOptions& o) {
  return SimulateCollective(ExactStar(n, kGbps, kLinkUs), n, kAllReduce, a, static_cast<int64_t>(bytes), f, o);
}

// The acceptance test for the new algorithms: on a star no two flows
// share a link, and SimGrid (CM02, no TCP window, no cross-traffic) gives the
// formula at 2, 8 and 64 ranks, simulating every message or each distinct
// round once.
TEST(NcclAlgorithmsOnExactStar, MatchTheirFormulas) {
  struct Case {
    AllReduceAlgorithm algorithm;
    CollectiveOptions options;
    double bytes;
  };
  for (int n : {2, 8, 64}) {
    const int g = n == 2 ? 2 : (n == 8 ? 4 : 8);
    const std::vector<Case> cases = {
        {AllReduceAlgorithm::kNcclRing, CollectiveOptions(), 1e6},
        {AllReduceAlgorithm::kNcclRing, CollectiveOptions(), 6.4e7},
        {AllReduceAlgorithm::kNcclRing, CollectiveOptions().channels(4).chunk_bytes(65536), 6.4e7},
        {AllReduceAlgorithm::kNcclTree, CollectiveOptions(), 1e6},
        {AllReduceAlgorithm::kNcclTree, CollectiveOptions(), 6.4e7},
        {AllReduceAlgorithm::kNcclTree, CollectiveOptions().channels(4).chunk_bytes(131072), 6.4e7},
        {AllReduceAlgorithm::kHierarchical, CollectiveOptions().ranks_per_node(g), 1e6},
        {AllReduceAlgorithm::kHierarchical, CollectiveOptions().ranks_per_node(g), 6.4e7},
    };
    for (const Case& c : cases) {
      double formula = 0;
      switch (c.algorithm) {
        case AllReduceAlgorithm::kNcclRing:
          formula = kStar.NcclRingAllReduce(c.bytes, n, c.options);
          break;
        case AllReduceAlgorithm::kNcclTree:
          formula = kStar.NcclTreeAllReduce(c.bytes, n, c.options);
          break;
        default:
          formula = kStar.HierarchicalAllReduce(c.bytes, n, c.options.ranks_per_node());
      }
      for (Fidelity f : {Fidelity::kFull, Fidelity::kRounds}) {
        EXPECT_NEAR(Simulate(n, c.algorithm, c.bytes, f, c.options) / formula, 1.0, 0.02)
            << ToString(c.algorithm) << " (" << c.options.Describe(c.algorithm) << "), " << n << " ranks, " << c.bytes
            << " bytes, " << ToString(f);
      }
    }
  }
}

// Chunks pipeline through the ring's steps: the bandwidth term stays the
// ring's, and every chunk beyond the first adds one alpha.
TEST(NcclRingOnExactStar, PipeliningAddsOneAlphaPerChunk) {
  const int n = 8;
  const double alpha = 2 * kLinkUs * 1e-6, s = 8.0 * 2 * 1024 * 1024;  // 1 MiB per channel and step
  const double bandwidth = 2.0 * (n - 1) / n * s / (kGbps * 1e9 / 8);
  double previous = 0;
  for (int chunks : {1, 4, 64}) {
    const auto o = CollectiveOptions().chunk_bytes((int64_t{1} << 20) / chunks);
    const double latency = Simulate(n, AllReduceAlgorithm::kNcclRing, s, Fidelity::kFull, o) - bandwidth;
    EXPECT_NEAR(latency, (2 * (n - 1) + chunks - 1) * alpha, 0.01 * latency) << chunks << " chunks";
    EXPECT_GT(latency, previous);
    previous = latency;
  }
}

// The double tree's latency is 2 log2 N alphas, the ring's 2(N-1); its
// bandwidth term is a little above 2 S/B, the ring's a little below. So the
// tree wins small buffers on many ranks and loses large ones: one crossover.
TEST(NcclTreeOnExactStar, BeatsTheRingOnSmallBuffersOnly) {
  const int n = 64;
  std::vector<double> tree_over_ring;
  std::ostringstream seen;
  for (double bytes = 4096; bytes <= 7e7; bytes *= 4) {
    const CollectiveOptions o;
    const double tree = Simulate(n, AllReduceAlgorithm::kNcclTree, bytes, Fidelity::kFull, o);
    const double ring = Simulate(n, AllReduceAlgorithm::kRing, bytes, Fidelity::kFull, o);
    tree_over_ring.push_back(tree / ring);
    seen << bytes << ": " << tree / ring << "  ";
  }
  EXPECT_LT(tree_over_ring.front(), 0.6) << seen.str();
  EXPECT_GT(tree_over_ring.back(), 1.0) << seen.str();
  int crossings = 0;
  for (size_t i = 1; i < tree_over_ring.size(); ++i) {
    crossings += (tree_over_ring[i - 1] < 1) != (tree_over_ring[i] < 1) ? 1 : 0;
  }
  EXPECT_EQ(crossings, 1) << seen.str();
  // 1 KB: latency only, 12 alphas against 126.
  const double tiny = Simulate(n, AllReduceAlgorithm::kNcclTree, 1000, Fidelity::kFull, CollectiveOptions()) /
                      Simulate(n, AllReduceAlgorithm::kRing, 1000, Fidelity::kFull, CollectiveOptions());
  EXPECT_LT(tiny, 0.15);
}

// Nodes of 8 devices (600 Gb/s, 1 us) behind one 10 Gb/s NIC each (5 us),
// the exact network setting; and the alpha-beta model of it: across nodes
// a device link, NIC, NIC, device link; inside, two device links.
constexpr int kNodeRanks = 8;
PlatformSpec SlowNicNodes() {
  return HierarchicalPlatformOptions()
      .gpus_per_node(kNodeRanks)
      .intra_bandwidth_gbps(600)
      .intra_latency_us(1)
      .bandwidth_gbps(10)
      .latency_us(5)
      .network(NetworkOptions::Exact());
}
AlphaBetaModel SlowNicNodesModel() { return AlphaBetaModel(12e-6, 10e9 / 8).nodes(kNodeRanks, 2e-6, 600e9 / 8); }

// Nodes of 8 behind one slow NIC each: the hierarchical all-reduce crosses
// the NICs in 2(M-1) steps instead of 2(N-1), each node's 8 rings sharing
// its NIC. Faster than the flat ring by the factor the formulas give.
TEST(HierarchicalOnNodes, BeatsTheFlatRingByTheFormulasFactor) {
  const int n = 64, g = kNodeRanks;
  const PlatformSpec nodes = SlowNicNodes();
  const AlphaBetaModel model = SlowNicNodesModel();
  const auto o = CollectiveOptions().ranks_per_node(g);
  for (double bytes : {1e6, 6.4e7}) {
    const auto b = static_cast<int64_t>(bytes);
    const double ring = SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kRing, b, Fidelity::kFull);
    const double hier =
        SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kHierarchical, b, Fidelity::kFull, o);
    const double predicted = model.RingAllReduce(bytes, n) / model.HierarchicalAllReduce(bytes, n, g);
    EXPECT_NEAR((ring / hier) / predicted, 1.0, 0.03) << bytes << ": simulated x" << ring / hier;
    if (bytes == 1e6) {
      EXPECT_GT(ring / hier, 1.5);
    }
  }
}

// NCCL builds its double tree over nodes, a chain of GPUs inside each
// (graph/connect.cc). On nodes of 8 behind one NIC each, a node's NIC then
// carries one tree edge up and at most two down per tree; trees over ranks
// put several of a node's ranks' edges on it at once.
TEST(NcclTreeOnNodes, RelievesTheNicsOfTreesOverRanks) {
  const int n = 64;
  const PlatformSpec nodes = SlowNicNodes();
  const AlphaBetaModel model = SlowNicNodesModel();
  const auto per_node = CollectiveOptions().ranks_per_node(kNodeRanks);
  const auto per_rank = CollectiveOptions().ranks_per_node(1);
  const int64_t bytes = 64'000'000;
  const double on_nodes =
      SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kNcclTree, bytes, Fidelity::kFull, per_node);
  const double over_ranks =
      SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kNcclTree, bytes, Fidelity::kFull, per_rank);
  const double ring = SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kRing, bytes, Fidelity::kFull);
  EXPECT_NEAR(on_nodes / model.Time(kAllReduce, AllReduceAlgorithm::kNcclTree, 6.4e7, n, per_node), 1.0, 0.03);
  EXPECT_LT(on_nodes, 0.75 * over_ranks) << "nodes " << on_nodes << " s, ranks " << over_ranks << " s";
  EXPECT_LT(on_nodes, 1.15 * ring) << "nodes " << on_nodes << " s, ring " << ring << " s";
  // Rounds fidelity simulates each distinct wave once and agrees.
  const double rounds =
      SimulateCollective(nodes, n, kAllReduce, AllReduceAlgorithm::kNcclTree, bytes, Fidelity::kRounds, per_node);
  EXPECT_NEAR(rounds / on_nodes, 1.0, 0.03);
}

// The alpha-beta model with nodes prices every algorithm on the hierarchical
// platform as SimGrid runs it: the device links inside a node, each node's
// NIC shared by the flows leaving it.
TEST(AlphaBetaWithNodes, MatchesSimGridOnTheHierarchicalPlatform) {
  const int n = 32, g = 8;
  const PlatformSpec nodes =
      HierarchicalPlatformOptions().gpus_per_node(g).intra_bandwidth_gbps(600).bandwidth_gbps(25).network(
          NetworkOptions::Exact());
  const AlphaBetaModel model = AlphaBetaModel(12e-6, 25e9 / 8).nodes(g, 2e-6, 600e9 / 8);
  const auto o = CollectiveOptions().ranks_per_node(g);
  for (AllReduceAlgorithm a : {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kNcclRing, AllReduceAlgorithm::kNcclTree,
                               AllReduceAlgorithm::kHierarchical}) {
    const double simulated = SimulateCollective(nodes, n, kAllReduce, a, 1 << 24, Fidelity::kFull, o);
    EXPECT_NEAR(simulated / model.Time(kAllReduce, a, 1 << 24, n, o), 1.0, 0.03) << ToString(a);
  }
}

// Rounds fidelity keeps 1024 ranks cheap: a 1 GB nccl-ring is one distinct
// round, a double tree a few dozen, whatever the number of chunks.
TEST(NcclAlgorithmsAt1024Ranks, SimulateFewDistinctRounds) {
  const int n = 1024;
  for (AllReduceAlgorithm a : {AllReduceAlgorithm::kNcclRing, AllReduceAlgorithm::kNcclTree}) {
    const std::string out = RunInChildProcess([a] {
      NetworkSimulation sim(ExactStar(n, kGbps, kLinkUs), n);
      const double t = sim.RunCollective(kAllReduce, a, 1'000'000'000, Fidelity::kRounds);
      std::ostringstream s;
      s.precision(17);
      s << t << " " << sim.rounds_simulated();
      return s.str();
    });
    std::istringstream in(out);
    double seconds = 0;
    int distinct = 0;
    in >> seconds >> distinct;
    const double formula = a == AllReduceAlgorithm::kNcclRing ? kStar.NcclRingAllReduce(1e9, n, CollectiveOptions())
                                                              : kStar.NcclTreeAllReduce(1e9, n, CollectiveOptions());
    EXPECT_NEAR(seconds / formula, 1.0, 0.01) << ToString(a);
    EXPECT_LE(distinct, a == AllReduceAlgorithm::kNcclRing ? 1 : 4 * 10 + 2) << ToString(a);
  }
}

}  // namespace
}  // namespace accordion::sim
