// Collective algorithms as sequences of rounds: in each round every rank
// sends a few messages and receives a few, and starts its next round once
// they are all done. The SimGrid actors (network_simulation.h) turn rounds
// into real flows between hosts; the analytic model (alpha_beta_model.h)
// prices them with the alpha-beta formulas. One description, two
// interpretations.
//
//   ring all-reduce      reduce-scatter + all-gather: 2(N-1) rounds of S/N
//                        to the right neighbour
//   ring all-gather      N-1 rounds of the per-rank payload s
//   halving-doubling     Rabenseifner: recursive-halving reduce-scatter then
//                        recursive-doubling all-gather over the largest power
//                        of two p <= N; the N-p extra ranks first fold their
//                        data into a partner and get the result back at the end
//   tree                 binomial-tree reduce to rank 0, then binomial broadcast
//
// NCCL's algorithms (docs/simulator.md, "NCCL's algorithms"), with the
// settings of CollectiveOptions: C channels, chunks of at most k bytes.
//
//   nccl-ring     The ring, its buffer split over C channels (concurrent
//                 flows to the same neighbour: on one NIC they share it),
//                 each ring step's S/(NC) sent as n = ceil(S/(NCk)) chunks of
//                 c = S/(NCn), a chunk forwarded by the next rank once it has
//                 all of it. Chunk j of step s moves in wave s + j, so the
//                 2(N-1) steps drain in 2(N-1) + n - 1 waves; in a wave a
//                 channel carries the chunks of every step in flight (at most
//                 min(n, 2(N-1))) as one message to the right neighbour, and
//                 every message pays alpha once. On an uncontended network
//                   T = (2(N-1) + n - 1) alpha + 2(N-1)/N S/B.
//                 The textbook pipeline (2(N-1) + n - 1)(alpha + c/B) would
//                 let a link carry one chunk per wave; a ring's link carries
//                 every step's chunks, so its bandwidth term stays the ring's
//                 and only the latency grows with the chunks (n = 1: the ring).
//   nccl-tree     NCCL's double binary tree (ncclGetDtree): two complementary
//                 in-order binary trees, most ranks a leaf in one and inner
//                 in the other, each reducing half the buffer to its root and
//                 broadcasting it back, over max(1, C/2) flows per tree, in
//                 n chunks per flow (of at most k; NCCL shrinks them for
//                 small buffers: NcclTreeChunkBytes). A rank at depth d of
//                 a tree of depth D sends chunk j up in wave j + D - d and
//                 down in wave j + d: 2(n + D - 1) waves, a wave moving one
//                 chunk per tree (two on the busiest rank's link but in the
//                 last wave up and the first down). For N = 2^D >= 4,
//                   T = 2(n + D - 1) alpha + (4(n + D) - 6) S/(2n) / B:
//                 the bandwidth term nears 2 S/B with many chunks (the
//                 ring's is 2(N-1)/N S/B); with one chunk
//                   T = 2 log2(N) alpha + (2 log2(N) - 1) S/B.
//                 With g = ranks_per_node > 1, as NCCL builds them (graph/
//                 connect.cc): the two trees span the nodes, and inside each
//                 node the ranks form a chain below the node's first rank,
//                 which alone talks to the parent and child nodes; both
//                 trees share the chain. A node's NIC then carries a tree
//                 edge or two per tree, not one per rank.
//   hierarchical  Ranks on nodes of g consecutive ranks (ranks_per_node):
//                 ring reduce-scatter inside each node (g-1 rounds of S/g),
//                 ring all-reduce of the node's 1/g shard across the N/g = M
//                 nodes among ranks with the same local index (2(M-1) rounds
//                 of S/N, the g rings of a node sharing its NIC), ring
//                 all-gather inside the node:
//                   T = 2(g-1)(a_node + S/(g B_node)) + 2(M-1)(alpha + g S/(N B)).
//                 g = 1 is the ring.
//
// Broadcast and all-gather take no algorithm: binomial tree and ring.
//
// Thread-safe: plain values and pure functions of their arguments.
#ifndef ACCORDION_SIMULATOR_COLLECTIVES_H_
#define ACCORDION_SIMULATOR_COLLECTIVES_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/options.h"
#include "traces/records.h"

namespace accordion::sim {

enum class AllReduceAlgorithm { kRing, kHalvingDoubling, kTree, kNcclRing, kNcclTree, kHierarchical };
const char* ToString(AllReduceAlgorithm algorithm);
std::optional<AllReduceAlgorithm> ParseAllReduceAlgorithm(const std::string& name);
// Every algorithm's name, for flags and help texts.
std::vector<std::string> AllReduceAlgorithmNames();

// The settings of NCCL's algorithms and of the hierarchical all-reduce.
//
//   CollectiveOptions().chunk_bytes(512 * 1024).channels(4).ranks_per_node(8)
class CollectiveOptions {
 public:
  // NCCL's connection buffer (NCCL_BUFFSIZE, 4 MiB) is NCCL_STEPS = 8 slots
  // of 512 KiB, and with the Simple protocol a receiver forwards a slot once
  // it is full: the piece a hop must wait for.
  static constexpr int64_t kDefaultChunkBytes = 512 * 1024;
  // One channel per tree of the double tree, two rings: what NCCL opens on
  // a node with one NIC.
  static constexpr int kDefaultChannels = 2;
  static constexpr int kMaxChannels = 64;  // NCCL's MAXCHANNELS

  // Which settings an algorithm reads: NCCL's chunks and channels
  // (nccl-ring, nccl-tree), ranks per node (hierarchical, nccl-tree).
  // Flags, reports and descriptions follow these.
  static bool UsesChunks(AllReduceAlgorithm algorithm);
  static bool UsesNodes(AllReduceAlgorithm algorithm);

  void Validate() const;  // throws InputError naming the first problem
  // "4 channels, 512 KiB chunks" or "8 ranks per node", as the algorithm uses them.
  std::string Describe(AllReduceAlgorithm algorithm) const;
  // The ranks per node CollectiveRounds uses: ranks_per_node, 1 when not set.
  int NodeRanks() const { return ranks_per_node_ > 0 ? ranks_per_node_ : 1; }

  /// nccl-ring, nccl-tree: the largest chunk a hop forwards, bytes.
  /// Default: kDefaultChunkBytes.
  ACCORDION_ARG(int64_t, chunk_bytes) = kDefaultChunkBytes;
  /// nccl-ring, nccl-tree: concurrent rings or tree flows. Default: kDefaultChannels.
  ACCORDION_ARG(int, channels) = kDefaultChannels;
  /// hierarchical, nccl-tree: ranks per node (consecutive ranks share one).
  /// 0: not set, which CollectiveRounds takes as 1 (the plain ring, trees
  /// over ranks); the command line sets it to the platform's gpus_per_node
  /// on hierarchical platforms. Default: 0.
  ACCORDION_ARG(int, ranks_per_node) = 0;
};

// The algorithm with the settings it uses, for reports:
// "nccl-ring all-reduce (4 channels, 512 KiB chunks)", "ring all-reduce".
std::string DescribeAllReduce(AllReduceAlgorithm algorithm, const CollectiveOptions& options);
// The same as JSON: {"algorithm": "nccl-ring", "chunk_bytes": 524288,
// "channels": 4}, {"algorithm": "hierarchical", "ranks_per_node": 8}.
nlohmann::json AllReduceJson(AllReduceAlgorithm algorithm, const CollectiveOptions& options);

// Who talks to whom in a round is a function of the rank, the world size and
// a few numbers; that keeps a 1024-rank ring to 2046 small values, and its
// distinct rounds (what `rounds` fidelity simulates) to one.
enum class RoundKind {
  kShift,           // r -> r + 1 (mod N)
  kExchange,        // r <-> r xor distance, within the largest power-of-two core
  kFoldIn,          // r >= distance sends to r - distance
  kFoldOut,         // r < N - distance sends to r + distance
  kTreeReduce,      // r with r % (2d) == d sends to r - d
  kTreeBroadcast,   // r with r % (2d) == 0 sends to r + d
  kNodeShift,       // r -> the next rank of its node of `distance` ranks (a ring inside the node)
  kNodeStride,      // r -> r + distance (mod N): a ring among the ranks with one local index
  kDoubleTreeUp,    // in both trees, ranks at depths [first_depth, last_depth] send to their parent
  kDoubleTreeDown,  // in both trees, ranks at depths [first_depth, last_depth] send to their children
                    // (the double tree's rounds: `distance` is the ranks per node)
};

struct Round {
  RoundKind kind = RoundKind::kShift;
  int distance = 1;
  int64_t bytes = 0;                    // every message of the round carries this many
  int flows = 1;                        // messages to each peer, side by side (NCCL's channels)
  int first_depth = 0, last_depth = 0;  // the double tree's: who takes part
  // The most messages one rank sends, or receives, in this round (flows
  // included): CollectiveRounds fills it in, the alpha-beta model prices the
  // round as alpha + busiest * bytes / B.
  int busiest = 1;
  bool operator==(const Round& o) const;
  bool operator<(const Round& o) const;
};

// Whom one rank sends to and receives from in a round, `round.flows`
// messages each. A peer may appear twice (it is a neighbour in both trees).
struct Peers {
  // A double-tree rank: up to three children in each tree (a node's first
  // rank: its chain and two child nodes).
  static constexpr int kMax = 6;
  int send_to[kMax] = {-1, -1, -1, -1, -1, -1};
  int sends = 0;
  int recv_from[kMax] = {-1, -1, -1, -1, -1, -1};
  int receives = 0;
};
Peers PeersOf(const Round& round, int rank, int world);

// The rounds of one collective. `bytes` is what the trace and the step plan
// call a collective's bytes: the buffer being reduced for all-reduce and
// broadcast, the payload one rank contributes for all-gather. `algorithm`
// is all-reduce's: all-gather always runs as a ring of world - 1 shifts and
// broadcast as a binomial tree. Without options, CollectiveOptions()'s
// defaults. Throws InputError for bad settings (a hierarchical all-reduce
// over part of a node, say).
std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world);
std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world,
                                    const CollectiveOptions& options);

// Bytes one rank puts on the wire for the collective, averaged over ranks.
double WireBytesPerRank(const std::vector<Round>& rounds, int world);

// NCCL's double binary tree: rank's parent (-1 at the root), children (-1:
// none) and depth (the root's is 0) in tree 0 or 1. With ranks_per_node g
// > 1 the trees span the nodes of g consecutive ranks (the last node may
// have fewer), and a node's ranks form a chain below its first one, which
// alone links to the parent and child nodes (NCCL_TOPO_PATTERN_TREE).
struct TreePosition {
  int parent = -1;
  int children[3] = {-1, -1, -1};
  int depth = 0;
};
TreePosition DoubleTreePosition(int tree, int rank, int world, int ranks_per_node = 1);

// The chunk nccl-tree sends: NCCL (enqueue.cc, tree with the Simple
// protocol) halves the chunk while a channel would carry fewer than 8 chunks
// per tree level (down to 128 KiB), 4 (64 KiB) or 1 (32 KiB), so that small
// buffers still fill the pipeline. Never above chunk_bytes.
int64_t NcclTreeChunkBytes(int64_t bytes_per_flow, int depth, int64_t chunk_bytes);

// Largest power of two not above n (n >= 1).
int FloorPowerOfTwo(int n);
int CeilLog2(int n);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COLLECTIVES_H_
