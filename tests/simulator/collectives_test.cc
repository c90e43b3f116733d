// Collective round schedules and the alpha-beta model, without SimGrid.
#include "simulator/collectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "simulator/alpha_beta_model.h"
#include "tests/simulator/sim_test_support.h"

namespace accordion::sim {
namespace {

constexpr AllReduceAlgorithm kAlgorithms[] = {AllReduceAlgorithm::kRing,     AllReduceAlgorithm::kHalvingDoubling,
                                              AllReduceAlgorithm::kTree,     AllReduceAlgorithm::kNcclRing,
                                              AllReduceAlgorithm::kNcclTree, AllReduceAlgorithm::kHierarchical};

TEST(CollectiveRounds, RingAllReduceIsTwoNMinusOneRoundsOfAChunk) {
  const auto rounds = CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 1000, 8);
  ASSERT_EQ(rounds.size(), 14u);
  for (const Round& r : rounds) {
    EXPECT_EQ(r.kind, RoundKind::kShift);
    EXPECT_EQ(r.bytes, 125);
  }
  // A buffer that does not split evenly is padded to equal chunks.
  EXPECT_EQ(CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 1001, 8)[0].bytes, 126);
}

TEST(CollectiveRounds, RingAllGatherSendsThePerRankPayloadNMinusOneTimes) {
  // All-gather has one schedule, the ring, whatever all-reduce algorithm is named.
  for (AllReduceAlgorithm a : kAlgorithms) {
    const auto rounds = CollectiveRounds(CollectiveOp::kAllGather, a, 4096, 5);
    ASSERT_EQ(rounds.size(), 4u) << ToString(a);
    for (const Round& r : rounds) {
      EXPECT_EQ(r.kind, RoundKind::kShift) << ToString(a);
      EXPECT_EQ(r.bytes, 4096) << ToString(a);
    }
  }
}

TEST(CollectiveRounds, NothingToDoForOneRankOrNoBytes) {
  for (AllReduceAlgorithm a : kAlgorithms) {
    EXPECT_TRUE(CollectiveRounds(CollectiveOp::kAllReduce, a, 1 << 20, 1).empty());
    EXPECT_TRUE(CollectiveRounds(CollectiveOp::kAllReduce, a, 0, 16).empty());
  }
}

// Every message sent in a round is received in that round by its target,
// and nobody receives what nobody sent.
void ExpectSendsAndReceivesPairUp(const std::vector<Round>& rounds, int world, const std::string& what) {
  for (const Round& round : rounds) {
    std::multiset<std::pair<int, int>> sent, received;  // (from, to)
    for (int r = 0; r < world; ++r) {
      const Peers p = PeersOf(round, r, world);
      for (int i = 0; i < p.sends; ++i) {
        ASSERT_GE(p.send_to[i], 0) << what;
        ASSERT_LT(p.send_to[i], world) << what;
        ASSERT_NE(p.send_to[i], r) << what;
        sent.insert({r, p.send_to[i]});
      }
      for (int i = 0; i < p.receives; ++i) received.insert({p.recv_from[i], r});
    }
    EXPECT_EQ(sent, received) << what << " world " << world;
  }
}

TEST(CollectiveRounds, SendsAndReceivesPairUpInEveryRound) {
  for (int world : {2, 3, 5, 6, 8, 12, 16, 31}) {
    for (AllReduceAlgorithm a : kAlgorithms) {
      for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kBroadcast}) {
        ExpectSendsAndReceivesPairUp(CollectiveRounds(op, a, 1 << 16, world), world, ToString(a));
      }
    }
  }
}

// Reduce then broadcast over a binomial tree: every rank but 0 sends its
// data up exactly once and gets the result exactly once.
TEST(CollectiveRounds, TreeReachesEveryRankOnceEachWay) {
  for (int world : {2, 7, 8, 13}) {
    std::map<int, int> sent, received;
    for (const Round& round : CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kTree, 64, world)) {
      for (int r = 0; r < world; ++r) {
        const Peers p = PeersOf(round, r, world);
        if (round.kind == RoundKind::kTreeReduce && p.sends > 0) ++sent[r];
        if (round.kind == RoundKind::kTreeBroadcast && p.receives > 0) ++received[r];
      }
    }
    for (int r = 1; r < world; ++r) {
      EXPECT_EQ(sent[r], 1) << world << " " << r;
      EXPECT_EQ(received[r], 1) << world << " " << r;
    }
    EXPECT_EQ(sent.count(0), 0u);
  }
}

TEST(CollectiveRounds, HalvingDoublingFoldsTheRanksBeyondAPowerOfTwo) {
  const auto pow2 = CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 8);
  EXPECT_EQ(pow2.size(), 6u);  // 2 log2 8
  EXPECT_EQ(pow2.front().bytes, 1 << 19);
  EXPECT_EQ(pow2[2].bytes, 1 << 17);
  EXPECT_EQ(pow2.back().bytes, 1 << 19);
  const auto odd = CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 11);
  ASSERT_EQ(odd.size(), 8u);
  EXPECT_EQ(odd.front().kind, RoundKind::kFoldIn);
  EXPECT_EQ(odd.back().kind, RoundKind::kFoldOut);
  EXPECT_EQ(PeersOf(odd.front(), 9, 11).send_to[0], 1);
  EXPECT_EQ(PeersOf(odd[1], 9, 11).sends, 0);  // idle while the core exchanges
}

// Bytes rank `rank` sends to ranks on other nodes of `per_node` ranks.
double BytesLeavingTheNode(const std::vector<Round>& rounds, int rank, int world, int per_node) {
  double bytes = 0;
  for (const Round& r : rounds) {
    const Peers p = PeersOf(r, rank, world);
    for (int i = 0; i < p.sends; ++i) {
      if (p.send_to[i] / per_node != rank / per_node) bytes += static_cast<double>(r.bytes) * r.flows;
    }
  }
  return bytes;
}

TEST(CollectiveRounds, HalvingDoublingKeepsTheLargeHalvesOnTheNode) {
  // MPICH's order: distance 1 first, pairs (2i, 2i+1). With 8 ranks a node,
  // 64 ranks send 7/64 of the buffer off the node per phase (the exchanges
  // at distance 8, 16, 32 carry S/16, S/32, S/64), not 7/8 of it.
  const int64_t s = int64_t{1} << 26;
  const auto rounds = CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, s, 64);
  EXPECT_EQ(rounds.front().distance, 1);
  EXPECT_EQ(rounds.front().bytes, s / 2);
  EXPECT_EQ(PeersOf(rounds.front(), 6, 64).send_to[0], 7);
  EXPECT_EQ(rounds.back().distance, 1);
  EXPECT_EQ(rounds.back().bytes, s / 2);
  for (int rank : {0, 13, 63}) {
    EXPECT_DOUBLE_EQ(BytesLeavingTheNode(rounds, rank, 64, 8), 2.0 * 7.0 / 64.0 * static_cast<double>(s)) << rank;
  }
}

TEST(WireBytesPerRank, MatchesTheTextbookVolumes) {
  const double s = 8 * 3 * 5 * 7;  // divides evenly among these worlds
  for (int n : {2, 3, 5, 7, 8}) {
    const double ring = WireBytesPerRank(
        CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, static_cast<int64_t>(s), n), n);
    EXPECT_DOUBLE_EQ(ring, 2.0 * (n - 1) / n * s) << n;
    const double gather = WireBytesPerRank(
        CollectiveRounds(CollectiveOp::kAllGather, AllReduceAlgorithm::kRing, static_cast<int64_t>(s), n), n);
    EXPECT_DOUBLE_EQ(gather, (n - 1) * s) << n;
  }
  // Halving-doubling on a power of two moves the same volume as a ring.
  EXPECT_DOUBLE_EQ(
      WireBytesPerRank(CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 16),
                       16),
      2.0 * 15 / 16 * (1 << 20));
}

// The model sums its rounds; the sum must be the closed-form formula.
TEST(AlphaBetaModel, RoundSumsAreTheClosedForms) {
  const AlphaBetaModel m(7e-6, 3.125e9);
  for (int n : {2, 3, 4, 6, 8, 16, 24, 64, 100}) {
    const double s = 64.0 * 9 * 25 * 7 * 11 * 13 * 1024;  // splits evenly for the worlds above
    EXPECT_NEAR(m.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, s, n), m.RingAllReduce(s, n),
                1e-12 * m.RingAllReduce(s, n))
        << n;
    EXPECT_NEAR(m.Time(CollectiveOp::kAllGather, AllReduceAlgorithm::kRing, s, n), m.RingAllGather(s, n),
                1e-12 * m.RingAllGather(s, n))
        << n;
    EXPECT_NEAR(m.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, s, n),
                m.HalvingDoublingAllReduce(s, n), 1e-9 * m.HalvingDoublingAllReduce(s, n))
        << n;
    EXPECT_NEAR(m.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kTree, s, n), m.TreeAllReduce(s, n),
                1e-12 * m.TreeAllReduce(s, n))
        << n;
  }
  // Numbers, not only consistency: 4 ranks, 1 GB, 5 us, 10 Gb/s.
  EXPECT_NEAR(AlphaBetaModel(5e-6, 1.25e9).RingAllReduce(1e9, 4), 6 * 5e-6 + 1.5 * 0.8, 1e-12);
}

TEST(AlphaBetaModel, SegmentsPickLatencyAndBandwidthByMessageSize) {
  const AlphaBetaModel m({{0, 50e-6, 1e8}, {65536, 20e-6, 1e9}});
  EXPECT_EQ(m.alpha(1000), 50e-6);
  EXPECT_EQ(m.bandwidth(65535), 1e8);
  EXPECT_EQ(m.alpha(65536), 20e-6);
  EXPECT_EQ(m.bandwidth(1e9), 1e9);
  // An 8-rank ring of 256 KiB sends 32 KiB messages: the small segment.
  EXPECT_NEAR(m.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 262144, 8), 14 * (50e-6 + 32768 / 1e8),
              1e-12);
}

// --- NCCL's algorithms and the hierarchical all-reduce ---------------------

constexpr CollectiveOp kAllReduce = CollectiveOp::kAllReduce;

int64_t SumOfBytes(const std::vector<Round>& rounds) {
  int64_t sum = 0;
  for (const Round& r : rounds) sum += r.bytes;
  return sum;
}

TEST(NcclRing, ChunksOfEveryStepInFlightMoveInWaves) {
  // 8 ranks, 2 channels, 64 KiB chunks, 5 chunks per channel and step.
  const int n = 8, channels = 2, chunks = 5;
  const int64_t chunk = 65536, s = int64_t{n} * channels * chunks * chunk;
  const auto o = CollectiveOptions().channels(channels).chunk_bytes(chunk);
  const auto rounds = CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclRing, s, n, o);
  ASSERT_EQ(rounds.size(), 2u * (n - 1) + chunks - 1);  // 2(N-1) steps drain in 2(N-1) + n - 1 waves
  const std::vector<int64_t> in_flight = {1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 3, 2, 1};
  for (size_t w = 0; w < rounds.size(); ++w) {
    EXPECT_EQ(rounds[w].kind, RoundKind::kShift);
    EXPECT_EQ(rounds[w].flows, channels);
    EXPECT_EQ(rounds[w].busiest, channels);
    EXPECT_EQ(rounds[w].bytes, in_flight[w] * chunk) << "wave " << w;
  }
  // Every chunk of every step once: the ring's volume.
  EXPECT_EQ(SumOfBytes(rounds) * channels, 2 * (n - 1) * (s / n));
}

TEST(NcclRing, OneChunkPerStepIsTheRingOverChannels) {
  const auto ring = CollectiveRounds(kAllReduce, AllReduceAlgorithm::kRing, 1 << 20, 16);
  const auto nccl =
      CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclRing, 1 << 20, 16, CollectiveOptions().channels(4));
  ASSERT_EQ(nccl.size(), ring.size());
  for (const Round& r : nccl) {
    EXPECT_EQ(r.bytes * r.flows, ring[0].bytes);
    EXPECT_EQ(r.flows, 4);
  }
}

TEST(NcclRing, KeepsA1024RankRingToFewDistinctRounds) {
  const auto one =
      CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclRing, 1'000'000'000, 1024, CollectiveOptions());
  EXPECT_EQ(one.size(), 2046u);
  EXPECT_EQ(std::set<Round>(one.begin(), one.end()).size(), 1u);
  // Three chunks per step: waves carry 1, 2 or 3 of them.
  const auto three = CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclRing, 3'000'000'000, 1024,
                                      CollectiveOptions().chunk_bytes(512 * 1024));
  EXPECT_EQ(three.size(), 2046u + 2);
  EXPECT_EQ(std::set<Round>(three.begin(), three.end()).size(), 3u);
}

// NCCL's figure in graph/trees.cc, 12 ranks: tree 0 is 0-8, 8-{4,10},
// 4-{2,6}, 2-{1,3}, 6-{5,7}, 10-{9,11}; tree 1 its mirror, rooted at 11.
TEST(DoubleTree, IsNcclsDoubleBinaryTree) {
  auto children = [](int tree, int rank) {
    const TreePosition t = DoubleTreePosition(tree, rank, 12);
    std::set<int> c;
    for (int x : t.children) {
      if (x >= 0) c.insert(x);
    }
    return c;
  };
  EXPECT_EQ(children(0, 0), (std::set<int>{8}));
  EXPECT_EQ(children(0, 8), (std::set<int>{4, 10}));
  EXPECT_EQ(children(0, 4), (std::set<int>{2, 6}));
  EXPECT_EQ(children(0, 2), (std::set<int>{1, 3}));
  EXPECT_EQ(children(0, 10), (std::set<int>{9, 11}));
  EXPECT_EQ(children(1, 11), (std::set<int>{3}));
  EXPECT_EQ(children(1, 3), (std::set<int>{1, 7}));
  EXPECT_EQ(children(1, 7), (std::set<int>{5, 9}));
  EXPECT_EQ(DoubleTreePosition(0, 1, 12).depth, 4);
  // Odd sizes shift tree 0 by one rank instead: 13 ranks, tree 1 rooted at 1.
  EXPECT_EQ(DoubleTreePosition(1, 1, 13).parent, -1);
  EXPECT_EQ(DoubleTreePosition(1, 9, 13).parent, 1);
}

TEST(DoubleTree, BothTreesSpanTheRanksAndAreComplementary) {
  for (int world = 2; world <= 70; ++world) {
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0, depth = 0;
      for (int r = 0; r < world; ++r) {
        const TreePosition t = DoubleTreePosition(tree, r, world);
        depth = std::max(depth, t.depth);
        if (t.parent < 0) {
          ++roots;
          continue;
        }
        const TreePosition up = DoubleTreePosition(tree, t.parent, world);
        EXPECT_TRUE(up.children[0] == r || up.children[1] == r) << world << " " << tree << " " << r;
        EXPECT_EQ(up.depth + 1, t.depth);
      }
      EXPECT_EQ(roots, 1) << world;
      EXPECT_EQ(depth, CeilLog2(world)) << world;
    }
    // Each rank forwards data in at most one tree (even sizes): the
    // double tree's point, every link busy with one tree's inner traffic.
    if (world % 2 == 0) {
      for (int r = 0; r < world; ++r) {
        int inner = 0;
        for (int tree = 0; tree < 2; ++tree) {
          const TreePosition t = DoubleTreePosition(tree, r, world);
          inner += (t.children[0] >= 0 || t.children[1] >= 0) ? 1 : 0;
        }
        EXPECT_LE(inner, 1) << world << " rank " << r;
      }
    }
  }
}

// With nodes, as NCCL builds its trees (graph/connect.cc): the double tree
// spans the nodes, a node's ranks form a chain below its first rank, and only
// first ranks link nodes. The last node may be partial.
TEST(DoubleTree, OnNodesSpansTheNodesWithAChainInside) {
  for (const auto& [world, g] : std::vector<std::pair<int, int>>{{16, 4}, {64, 8}, {20, 8}, {6, 8}, {24, 3}}) {
    const int nodes = (world + g - 1) / g;
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0, depth = 0;
      for (int r = 0; r < world; ++r) {
        const TreePosition t = DoubleTreePosition(tree, r, world, g);
        depth = std::max(depth, t.depth);
        if (r % g != 0) {
          EXPECT_EQ(t.parent, r - 1) << world << "/" << g << " tree " << tree << " rank " << r;
        } else if (t.parent >= 0) {
          EXPECT_EQ(t.parent % g, 0) << "a first rank's parent is another node's first rank";
          EXPECT_EQ(t.parent / g, DoubleTreePosition(tree, r / g, nodes).parent);
        }
        for (int child : t.children) {
          if (child < 0) continue;
          EXPECT_TRUE(child / g == r / g || (child % g == 0 && r % g == 0)) << "only first ranks link nodes";
          const TreePosition down = DoubleTreePosition(tree, child, world, g);
          EXPECT_EQ(down.parent, r);
          EXPECT_EQ(down.depth, t.depth + 1);
        }
        roots += t.parent < 0 ? 1 : 0;
      }
      EXPECT_EQ(roots, 1) << world << "/" << g;
      // The nodes' tree, then the longest chain below its deepest node.
      int node_depth = 0;
      for (int n = 0; n < nodes; ++n) node_depth = std::max(node_depth, DoubleTreePosition(tree, n, nodes).depth);
      EXPECT_LE(depth, node_depth + g - 1) << world << "/" << g;
      EXPECT_GE(depth, std::min(g, world) - 1) << world << "/" << g;
    }
    // The rounds: every message is paired, every rank sends each chunk up
    // once per tree it is not the root of, and only first ranks cross nodes.
    const auto o = CollectiveOptions().chunk_bytes(32768).ranks_per_node(g);
    const auto rounds = CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclTree, 2 * 32768 * 5, world, o);
    ExpectSendsAndReceivesPairUp(rounds, world, "nccl-tree on nodes");
    std::map<int, int> up;
    for (const Round& round : rounds) {
      for (int r = 0; r < world; ++r) {
        const Peers p = PeersOf(round, r, world);
        for (int i = 0; i < p.sends; ++i) {
          if (p.send_to[i] / g != r / g) {
            EXPECT_TRUE(r % g == 0 && p.send_to[i] % g == 0) << world << "/" << g;
          }
        }
        if (round.kind == RoundKind::kDoubleTreeUp) up[r] += p.sends;
      }
    }
    for (int r = 0; r < world; ++r) {
      int trees = 0;
      for (int tree = 0; tree < 2; ++tree) trees += DoubleTreePosition(tree, r, world, g).parent >= 0 ? 1 : 0;
      EXPECT_EQ(up[r], 5 * trees) << world << "/" << g << " rank " << r;
    }
  }
  // One rank per node is the tree over ranks.
  for (int r = 0; r < 12; ++r) {
    EXPECT_EQ(DoubleTreePosition(1, r, 12, 1).parent, DoubleTreePosition(1, r, 12).parent);
  }
  EXPECT_EQ(CollectiveOptions().ranks_per_node(8).Describe(AllReduceAlgorithm::kNcclTree),
            "2 channels, 512 KiB chunks, 8 ranks per node");
  EXPECT_EQ(CollectiveOptions().Describe(AllReduceAlgorithm::kNcclTree), "2 channels, 512 KiB chunks");
}

TEST(NcclTree, EveryRankSendsEachChunkUpAndGetsItBackOncePerTree) {
  const auto o = CollectiveOptions().chunk_bytes(32768).channels(2);
  for (int world : {2, 3, 5, 8, 12, 16, 31}) {
    const int64_t s = int64_t{2} * 32768 * 7;  // 7 chunks per tree
    const auto rounds = CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclTree, s, world, o);
    ExpectSendsAndReceivesPairUp(rounds, world, "nccl-tree");
    EXPECT_EQ(rounds.size(), 2u * (7 + CeilLog2(world) - 1)) << world;
    std::map<int, int> up, down;
    for (const Round& round : rounds) {
      for (int r = 0; r < world; ++r) {
        const Peers p = PeersOf(round, r, world);
        if (round.kind == RoundKind::kDoubleTreeUp) up[r] += p.sends;
        if (round.kind == RoundKind::kDoubleTreeDown) down[r] += p.receives;
      }
    }
    for (int r = 0; r < world; ++r) {
      int trees = 0;
      for (int tree = 0; tree < 2; ++tree) trees += DoubleTreePosition(tree, r, world).parent >= 0 ? 1 : 0;
      EXPECT_EQ(up[r], 7 * trees) << world << " rank " << r;
      EXPECT_EQ(down[r], 7 * trees) << world << " rank " << r;
    }
  }
}

TEST(NcclTree, ShrinksItsChunksForSmallBuffersAsNcclDoes) {
  EXPECT_EQ(NcclTreeChunkBytes(int64_t{1} << 30, 6, 524288), 524288);  // plenty of chunks
  EXPECT_EQ(NcclTreeChunkBytes(500'000, 6, 524288), 65536);            // 1 MB at 64 ranks: 8 chunks, not 1
  EXPECT_EQ(NcclTreeChunkBytes(1000, 6, 524288), 32768);
  EXPECT_EQ(NcclTreeChunkBytes(1000, 6, 4096), 4096);  // never above what was asked
  // Steady-state waves are one round, however many chunks: few distinct rounds.
  const auto rounds =
      CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclTree, 1'000'000'000, 512, CollectiveOptions());
  EXPECT_LE(std::set<Round>(rounds.begin(), rounds.end()).size(), 4u * 9 + 2);
  EXPECT_GT(rounds.size(), 1000u);
}

TEST(Hierarchical, IsRingsInsideNodesAndAcrossThem) {
  const int world = 32, g = 8;
  const int64_t s = 1 << 20;
  const auto rounds =
      CollectiveRounds(kAllReduce, AllReduceAlgorithm::kHierarchical, s, world, CollectiveOptions().ranks_per_node(g));
  ASSERT_EQ(rounds.size(), 2u * (g - 1) + 2u * (world / g - 1));
  ExpectSendsAndReceivesPairUp(rounds, world, "hierarchical");
  for (size_t i = 0; i < rounds.size(); ++i) {
    const bool inside = i < g - 1 || i >= rounds.size() - (g - 1);
    EXPECT_EQ(rounds[i].kind, inside ? RoundKind::kNodeShift : RoundKind::kNodeStride) << i;
    EXPECT_EQ(rounds[i].bytes, inside ? s / g : s / world) << i;
    for (int r = 0; r < world; ++r) {
      const int to = PeersOf(rounds[i], r, world).send_to[0];
      if (inside) {
        EXPECT_EQ(to / g, r / g) << i << " " << r;
      } else {
        EXPECT_NE(to / g, r / g) << i << " " << r;
        EXPECT_EQ(to % g, r % g) << i << " " << r;
      }
    }
  }
  // One rank per node is the ring; one node is a ring inside it.
  EXPECT_EQ(CollectiveRounds(kAllReduce, AllReduceAlgorithm::kHierarchical, s, world, CollectiveOptions()),
            CollectiveRounds(kAllReduce, AllReduceAlgorithm::kRing, s, world));
  EXPECT_EQ(CollectiveRounds(kAllReduce, AllReduceAlgorithm::kHierarchical, s, 4, CollectiveOptions().ranks_per_node(8))
                .size(),
            6u);
}

TEST(Hierarchical, NeedsWholeNodes) {
  EXPECT_EQ(test_support::InputErrorOf([] {
              CollectiveRounds(kAllReduce, AllReduceAlgorithm::kHierarchical, 1 << 20, 12,
                               CollectiveOptions().ranks_per_node(8));
            }),
            "a hierarchical all-reduce needs whole nodes: 12 ranks are not a multiple of 8 ranks per node");
}

TEST(CollectiveOptions, BadSettingsAreInputErrors) {
  auto error = [](const CollectiveOptions& o) {
    return test_support::InputErrorOf(
        [&] { CollectiveRounds(kAllReduce, AllReduceAlgorithm::kNcclRing, 1 << 20, 8, o); });
  };
  EXPECT_NE(error(CollectiveOptions().channels(0)).find("channels must be between 1 and 64"), std::string::npos);
  EXPECT_NE(error(CollectiveOptions().channels(65)).find("not 65"), std::string::npos);
  EXPECT_NE(error(CollectiveOptions().chunk_bytes(0)).find("chunk size"), std::string::npos);
  EXPECT_EQ(error(CollectiveOptions()), "");
  EXPECT_EQ(CollectiveOptions().channels(4).Describe(AllReduceAlgorithm::kNcclTree), "4 channels, 512 KiB chunks");
  EXPECT_EQ(CollectiveOptions().ranks_per_node(8).Describe(AllReduceAlgorithm::kHierarchical), "8 ranks per node");
  EXPECT_EQ(CollectiveOptions().Describe(AllReduceAlgorithm::kRing), "");
}

TEST(WireBytesPerRank, EveryAllReduceMovesTheRingsVolume) {
  // Hierarchical moves the same bytes as the ring, but only 2(M-1)/N of the
  // buffer per rank leaves the node (M nodes); the ring sends 2(N-1)/N per
  // node boundary.
  const int64_t s = int64_t{1} << 26;
  for (int n : {2, 8, 64}) {
    const double ring = 2.0 * (n - 1) / n * static_cast<double>(s);
    for (AllReduceAlgorithm a :
         {AllReduceAlgorithm::kNcclRing, AllReduceAlgorithm::kNcclTree, AllReduceAlgorithm::kHierarchical}) {
      const auto o = CollectiveOptions().channels(4).chunk_bytes(65536).ranks_per_node(std::min(n, 8));
      EXPECT_DOUBLE_EQ(WireBytesPerRank(CollectiveRounds(kAllReduce, a, s, n, o), n), ring) << ToString(a) << " " << n;
    }
  }
  const auto hier =
      CollectiveRounds(kAllReduce, AllReduceAlgorithm::kHierarchical, s, 64, CollectiveOptions().ranks_per_node(8));
  for (int rank : {0, 13, 63}) {
    EXPECT_DOUBLE_EQ(BytesLeavingTheNode(hier, rank, 64, 8), 2.0 * 7 / 64 * static_cast<double>(s)) << rank;
  }
}

TEST(AlphaBetaModel, NcclRoundSumsAreTheClosedForms) {
  const AlphaBetaModel m(7e-6, 3.125e9);
  for (int n : {2, 3, 4, 8, 13, 64, 100, 512}) {
    for (double s : {1000.0, 1e6, 3.3e7, 1e9}) {
      for (const CollectiveOptions& o : {CollectiveOptions(), CollectiveOptions().channels(3).chunk_bytes(100000),
                                         CollectiveOptions().channels(1).chunk_bytes(4096)}) {
        const double ring = m.Time(kAllReduce, AllReduceAlgorithm::kNcclRing, s, n, o);
        EXPECT_NEAR(ring, m.NcclRingAllReduce(s, n, o), 1e-9 * ring) << n << " " << s;
        if (FloorPowerOfTwo(n) == n) {
          const double tree = m.Time(kAllReduce, AllReduceAlgorithm::kNcclTree, s, n, o);
          EXPECT_NEAR(tree, m.NcclTreeAllReduce(s, n, o), 1e-9 * tree) << n << " " << s;
        }
      }
    }
  }
  for (int g : {1, 2, 4, 8}) {
    const double s = 1e8;
    const double flat =
        m.Time(kAllReduce, AllReduceAlgorithm::kHierarchical, s, 64, CollectiveOptions().ranks_per_node(g));
    EXPECT_NEAR(flat, m.HierarchicalAllReduce(s, 64, g), 1e-9 * flat) << g;
    // On nodes: intra-node rounds at the node's links, the NIC shared by g.
    const AlphaBetaModel nodes = AlphaBetaModel(7e-6, 3.125e9).nodes(g, 2e-6, 75e9);
    const double on_nodes =
        nodes.Time(kAllReduce, AllReduceAlgorithm::kHierarchical, s, 64, CollectiveOptions().ranks_per_node(g));
    EXPECT_NEAR(on_nodes, nodes.HierarchicalAllReduce(s, 64, g), 1e-9 * on_nodes) << g;
  }
  // Numbers: 8 ranks of 8 per node, 100 MB; a_node 2 us over 600 Gb/s, alpha 7 us over 25 Gb/s.
  EXPECT_NEAR(AlphaBetaModel(7e-6, 3.125e9).nodes(8, 2e-6, 75e9).HierarchicalAllReduce(1e8, 64, 8),
              14 * (2e-6 + 12.5e6 / 75e9) + 14 * (7e-6 + 8 * 1562500 / 3.125e9), 1e-12);
  // The ring on nodes is held up by its node-crossing flows: the ring's formula.
  const AlphaBetaModel nodes = AlphaBetaModel(7e-6, 3.125e9).nodes(8, 2e-6, 75e9);
  EXPECT_NEAR(nodes.Time(kAllReduce, AllReduceAlgorithm::kRing, 6.4e7, 64), nodes.RingAllReduce(6.4e7, 64), 1e-12);
}

// Pipelining: the ring's bandwidth term stays 2(N-1)/N S/B; every chunk
// beyond the first adds one alpha.
TEST(AlphaBetaModel, NcclRingLatencyGrowsWithTheChunks) {
  const double alpha = 10e-6, b = 1.25e9, s = 8.0 * 2 * 1024 * 1024;  // 1 MiB per channel and step at 8 ranks
  const AlphaBetaModel m(alpha, b);
  const double bandwidth = 2.0 * 7 / 8 * s / b;
  for (int64_t chunk : {int64_t{1} << 20, int64_t{1} << 18, int64_t{1} << 14}) {
    const double chunks = static_cast<double>((int64_t{1} << 20) / chunk);
    EXPECT_NEAR(m.NcclRingAllReduce(s, 8, CollectiveOptions().chunk_bytes(chunk)) - bandwidth,
                (14 + chunks - 1) * alpha, 1e-12)
        << chunk;
  }
}

TEST(AlphaBetaModel, DoubleTreeBeatsTheRingOnlyOnSmallBuffers) {
  const AlphaBetaModel m(10e-6, 1.25e9);
  const CollectiveOptions o;
  for (int n : {64, 512}) {
    EXPECT_LT(m.NcclTreeAllReduce(1e3, n, o), 0.2 * m.RingAllReduce(1e3, n)) << n;
    EXPECT_GT(m.NcclTreeAllReduce(1e9, n, o), m.RingAllReduce(1e9, n)) << n;
  }
  // Two ranks: the double tree is two one-edge pipelines moving the ring's
  // volume; its 1000 chunks per tree pay alpha each where the ring pays 2.
  const double s = 2.0 * 524288 * 1000;
  EXPECT_NEAR(m.NcclTreeAllReduce(s, 2, o) - m.RingAllReduce(s, 2), (2 * 1000 - 2) * 10e-6, 1e-9);
}

}  // namespace
}  // namespace accordion::sim
