#include "simulator/collectives.h"

#include <map>
#include <tuple>

#include "common/errors.h"

namespace accordion::sim {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

const char* ToString(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::kRing:
      return "ring";
    case AllReduceAlgorithm::kHalvingDoubling:
      return "halving-doubling";
    case AllReduceAlgorithm::kTree:
      return "tree";
  }
  return "?";
}

std::optional<AllReduceAlgorithm> ParseAllReduceAlgorithm(const std::string& name) {
  for (auto a :
       {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kHalvingDoubling, AllReduceAlgorithm::kTree}) {
    if (name == ToString(a)) return a;
  }
  return std::nullopt;
}

bool Round::operator<(const Round& o) const {
  return std::make_tuple(static_cast<int>(kind), distance, bytes) <
         std::make_tuple(static_cast<int>(o.kind), o.distance, o.bytes);
}

int FloorPowerOfTwo(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int CeilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

Peers PeersOf(const Round& round, int rank, int world) {
  Peers p;
  const int d = round.distance;
  switch (round.kind) {
    case RoundKind::kShift:
      if (world > 1) {
        p.send_to = (rank + 1) % world;
        p.recv_from = (rank + world - 1) % world;
      }
      break;
    case RoundKind::kExchange: {
      // Only the power-of-two core exchanges; its size is FloorPowerOfTwo(world).
      const int core = FloorPowerOfTwo(world);
      if (rank < core) p.send_to = p.recv_from = rank ^ d;
      break;
    }
    case RoundKind::kFoldIn:
      if (rank >= d) p.send_to = rank - d;
      if (rank + d < world) p.recv_from = rank + d;
      break;
    case RoundKind::kFoldOut:
      if (rank + d < world) p.send_to = rank + d;
      if (rank >= d) p.recv_from = rank - d;
      break;
    case RoundKind::kTreeReduce:
      if (rank % (2 * d) == d) p.send_to = rank - d;
      if (rank % (2 * d) == 0 && rank + d < world) p.recv_from = rank + d;
      break;
    case RoundKind::kTreeBroadcast:
      if (rank % (2 * d) == 0 && rank + d < world) p.send_to = rank + d;
      if (rank % (2 * d) == d) p.recv_from = rank - d;
      break;
  }
  return p;
}

std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world) {
  if (world < 1) throw InputError("a collective needs at least one rank");
  if (bytes < 0) throw InputError("a collective cannot carry a negative number of bytes");
  std::vector<Round> rounds;
  if (world == 1 || bytes == 0) return rounds;
  const int steps = CeilLog2(world);
  auto tree_broadcast = [&] {
    for (int k = steps - 1; k >= 0; --k) rounds.push_back({RoundKind::kTreeBroadcast, 1 << k, bytes});
  };
  switch (op) {
    case CollectiveOp::kAllGather:
      rounds.assign(world - 1, Round{RoundKind::kShift, 1, bytes});
      return rounds;
    case CollectiveOp::kBroadcast:
      tree_broadcast();
      return rounds;
    case CollectiveOp::kAllReduce:
      break;
  }
  switch (algorithm) {
    case AllReduceAlgorithm::kRing:
      // Equal chunks, the last padded: what ring implementations send.
      rounds.assign(2 * (world - 1), Round{RoundKind::kShift, 1, CeilDiv(bytes, world)});
      break;
    case AllReduceAlgorithm::kHalvingDoubling: {
      const int core = FloorPowerOfTwo(world);
      const int extra = world - core;
      if (extra > 0) rounds.push_back({RoundKind::kFoldIn, core, bytes});
      int log_core = 0;
      while ((1 << log_core) < core) ++log_core;
      // As MPICH (and SMPI's rab-rdb): recursive halving from distance 1,
      // pairs (2i, 2i+1) first, so the largest halves travel between
      // neighbouring ranks - on a node, where ranks are placed in order -
      // and only the small ones cross the slower links; doubling mirrors it.
      for (int k = 0; k < log_core; ++k) {
        rounds.push_back({RoundKind::kExchange, 1 << k, CeilDiv(bytes, int64_t{2} << k)});
      }
      for (int k = log_core - 1; k >= 0; --k) {
        rounds.push_back({RoundKind::kExchange, 1 << k, CeilDiv(bytes, int64_t{2} << k)});
      }
      if (extra > 0) rounds.push_back({RoundKind::kFoldOut, core, bytes});
      break;
    }
    case AllReduceAlgorithm::kTree:
      for (int k = 0; k < steps; ++k) rounds.push_back({RoundKind::kTreeReduce, 1 << k, bytes});
      tree_broadcast();
      break;
  }
  return rounds;
}

double WireBytesPerRank(const std::vector<Round>& rounds, int world) {
  std::map<Round, int> multiplicity;
  for (const Round& r : rounds) ++multiplicity[r];
  double total = 0;
  for (const auto& [round, count] : multiplicity) {
    int senders = 0;
    for (int rank = 0; rank < world; ++rank) senders += PeersOf(round, rank, world).send_to >= 0 ? 1 : 0;
    total += static_cast<double>(count) * senders * static_cast<double>(round.bytes);
  }
  return total / world;
}

}  // namespace accordion::sim
