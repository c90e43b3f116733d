// Collective round schedules and the alpha-beta model, without SimGrid.
#include "simulator/collectives.h"

#include <gtest/gtest.h>

#include <map>

#include "simulator/alpha_beta_model.h"

namespace accordion::sim {
namespace {

constexpr AllReduceAlgorithm kAlgorithms[] = {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kHalvingDoubling,
                                              AllReduceAlgorithm::kTree};

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
  const auto rounds = CollectiveRounds(CollectiveOp::kAllGather, AllReduceAlgorithm::kTree, 4096, 5);
  ASSERT_EQ(rounds.size(), 4u);
  for (const Round& r : rounds) EXPECT_EQ(r.bytes, 4096);
}

TEST(CollectiveRounds, NothingToDoForOneRankOrNoBytes) {
  for (AllReduceAlgorithm a : kAlgorithms) {
    EXPECT_TRUE(CollectiveRounds(CollectiveOp::kAllReduce, a, 1 << 20, 1).empty());
    EXPECT_TRUE(CollectiveRounds(CollectiveOp::kAllReduce, a, 0, 16).empty());
  }
}

// Every message sent in a round is received in that round by its target,
// and nobody receives what nobody sent.
TEST(CollectiveRounds, SendsAndReceivesPairUpInEveryRound) {
  for (int world : {2, 3, 5, 6, 8, 12, 16, 31}) {
    for (AllReduceAlgorithm a : kAlgorithms) {
      for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kBroadcast}) {
        for (const Round& round : CollectiveRounds(op, a, 1 << 16, world)) {
          std::map<int, int> expected_from;
          for (int r = 0; r < world; ++r) {
            const Peers p = PeersOf(round, r, world);
            if (p.send_to >= 0) {
              ASSERT_LT(p.send_to, world);
              ASSERT_NE(p.send_to, r);
              expected_from[p.send_to] = r;
            }
          }
          for (int r = 0; r < world; ++r) {
            const Peers p = PeersOf(round, r, world);
            if (expected_from.count(r)) {
              EXPECT_EQ(p.recv_from, expected_from[r]) << ToString(a) << " world " << world << " rank " << r;
            } else {
              EXPECT_EQ(p.recv_from, -1) << ToString(a) << " world " << world << " rank " << r;
            }
          }
        }
      }
    }
  }
}

// Reduce then broadcast over a binomial tree: every rank but 0 sends its
// data up exactly once and gets the result exactly once.
TEST(CollectiveRounds, TreeReachesEveryRankOnceEachWay) {
  for (int world : {2, 7, 8, 13}) {
    std::map<int, int> sent, received;
    for (const Round& round :
         CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kTree, 64, world)) {
      for (int r = 0; r < world; ++r) {
        const Peers p = PeersOf(round, r, world);
        if (round.kind == RoundKind::kTreeReduce && p.send_to >= 0) ++sent[r];
        if (round.kind == RoundKind::kTreeBroadcast && p.recv_from >= 0) ++received[r];
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
  const auto pow2 =
      CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 8);
  EXPECT_EQ(pow2.size(), 6u);  // 2 log2 8
  EXPECT_EQ(pow2.front().bytes, 1 << 19);
  EXPECT_EQ(pow2[2].bytes, 1 << 17);
  EXPECT_EQ(pow2.back().bytes, 1 << 19);
  const auto odd =
      CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 11);
  ASSERT_EQ(odd.size(), 8u);
  EXPECT_EQ(odd.front().kind, RoundKind::kFoldIn);
  EXPECT_EQ(odd.back().kind, RoundKind::kFoldOut);
  EXPECT_EQ(PeersOf(odd.front(), 9, 11).send_to, 1);
  EXPECT_EQ(PeersOf(odd[1], 9, 11).send_to, -1);  // idle while the core exchanges
}

// Bytes rank `rank` sends to ranks on other nodes of `per_node` ranks.
double BytesLeavingTheNode(const std::vector<Round>& rounds, int rank, int world, int per_node) {
  double bytes = 0;
  for (const Round& r : rounds) {
    const int to = PeersOf(r, rank, world).send_to;
    if (to >= 0 && to / per_node != rank / per_node) bytes += static_cast<double>(r.bytes);
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
  EXPECT_EQ(PeersOf(rounds.front(), 6, 64).send_to, 7);
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
      WireBytesPerRank(
          CollectiveRounds(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, 1 << 20, 16), 16),
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
  EXPECT_NEAR(m.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 262144, 8),
              14 * (50e-6 + 32768 / 1e8), 1e-12);
}

}  // namespace
}  // namespace accordion::sim
