// Collective algorithms as sequences of rounds: in each round every rank
// sends at most one message and receives at most one. The SimGrid actors
// (collective_simulator.h) turn rounds into real flows between hosts; the
// analytic model (alpha_beta_model.h) prices them with the alpha-beta
// formulas. One description, two interpretations.
//
//   ring all-reduce      reduce-scatter + all-gather: 2(N-1) rounds of S/N
//                        to the right neighbour
//   ring all-gather      N-1 rounds of the per-rank payload s
//   halving-doubling     Rabenseifner: recursive-halving reduce-scatter then
//                        recursive-doubling all-gather over the largest power
//                        of two p <= N; the N-p extra ranks first fold their
//                        data into a partner and get the result back at the end
//   tree                 binomial-tree reduce to rank 0, then binomial broadcast
#ifndef ACCORDION_SIMULATOR_COLLECTIVES_H_
#define ACCORDION_SIMULATOR_COLLECTIVES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion::sim {

enum class AllReduceAlgorithm { kRing, kHalvingDoubling, kTree };
const char* ToString(AllReduceAlgorithm algorithm);
std::optional<AllReduceAlgorithm> ParseAllReduceAlgorithm(const std::string& name);

// Who talks to whom in a round is a function of the rank, the world size and
// two numbers; that keeps a 1024-rank ring to 2046 small values.
enum class RoundKind {
  kShift,          // r -> r + 1 (mod N)
  kExchange,       // r <-> r xor distance, within the largest power-of-two core
  kFoldIn,         // r >= distance sends to r - distance
  kFoldOut,        // r < N - distance sends to r + distance
  kTreeReduce,     // r with r % (2d) == d sends to r - d
  kTreeBroadcast,  // r with r % (2d) == 0 sends to r + d
};

struct Round {
  RoundKind kind = RoundKind::kShift;
  int distance = 1;
  int64_t bytes = 0;  // every message of the round carries this many
  bool operator==(const Round& o) const {
    return kind == o.kind && distance == o.distance && bytes == o.bytes;
  }
  bool operator<(const Round& o) const;
};

struct Peers {
  int send_to = -1;    // -1: sends nothing this round
  int recv_from = -1;  // -1: receives nothing
};
Peers PeersOf(const Round& round, int rank, int world);

// The rounds of one collective. `bytes` is what the trace and the step plan
// call a collective's bytes: the buffer being reduced for all-reduce and
// broadcast, the payload one rank contributes for all-gather.
std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world);

// Bytes one rank puts on the wire for the collective, averaged over ranks.
double WireBytesPerRank(const std::vector<Round>& rounds, int world);

// Largest power of two not above n (n >= 1).
int FloorPowerOfTwo(int n);
int CeilLog2(int n);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_COLLECTIVES_H_
