#include "simulator/collectives.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "common/errors.h"

namespace accordion::sim {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr AllReduceAlgorithm kAllAlgorithms[] = {AllReduceAlgorithm::kRing,     AllReduceAlgorithm::kHalvingDoubling,
                                                 AllReduceAlgorithm::kTree,     AllReduceAlgorithm::kNcclRing,
                                                 AllReduceAlgorithm::kNcclTree, AllReduceAlgorithm::kHierarchical};

std::string Bytes(int64_t b) {
  if (b % (1024 * 1024) == 0) return std::to_string(b / (1024 * 1024)) + " MiB";
  if (b % 1024 == 0) return std::to_string(b / 1024) + " KiB";
  return std::to_string(b) + " bytes";
}

// NCCL's ncclGetBtree: an in-order binary tree rooted at rank 0, whose one
// child is the largest power of two below N; a rank's lowest set bit says its
// height. Parent and children only (depth is DoubleTreePosition's).
TreePosition BinaryTree(int rank, int world) {
  TreePosition t;
  int bit = 1;
  while (bit < world && !(bit & rank)) bit <<= 1;
  if (rank == 0) {
    t.children[1] = world > 1 ? bit >> 1 : -1;
    return t;
  }
  t.parent = (rank ^ bit) | (bit << 1);
  if (t.parent >= world) t.parent = rank ^ bit;
  int low = bit >> 1;
  if (low == 0) return t;
  t.children[0] = rank - low;
  while (low > 0 && rank + low >= world) low >>= 1;
  t.children[1] = low > 0 ? rank + low : -1;
  return t;
}

// Tree 1 of ncclGetDtree: tree 0 mirrored (N even) or shifted by one rank
// (N odd), so that a leaf of one tree is an inner rank of the other.
TreePosition SecondTree(int rank, int world) {
  const bool mirror = world % 2 == 0;
  auto to = [&](int r) { return mirror ? world - 1 - r : (r + world - 1) % world; };
  auto from = [&](int r) { return r < 0 ? -1 : (mirror ? world - 1 - r : (r + 1) % world); };
  const TreePosition t = BinaryTree(to(rank), world);
  TreePosition out;
  out.parent = from(t.parent);
  out.children[0] = from(t.children[0]);
  out.children[1] = from(t.children[1]);
  return out;
}

TreePosition TreeLinks(int tree, int rank, int world) {
  return tree == 0 ? BinaryTree(rank, world) : SecondTree(rank, world);
}

// Parent and children with nodes of g ranks (connect.cc's connectTrees):
// the trees over the nodes join the nodes' first ranks, and each node's
// ranks hang below its first one as a chain.
TreePosition NodeTreeLinks(int tree, int rank, int world, int g) {
  if (g <= 1) return TreeLinks(tree, rank, world);
  const int nodes = (world + g - 1) / g;
  const int node = rank / g, local = rank % g;
  const int node_size = std::min(g, world - node * g);
  TreePosition t;
  if (local > 0) {
    t.parent = rank - 1;
    if (local + 1 < node_size) t.children[0] = rank + 1;
    return t;
  }
  const TreePosition across = TreeLinks(tree, node, nodes);
  if (across.parent >= 0) t.parent = across.parent * g;
  int k = 0;
  if (node_size > 1) t.children[k++] = rank + 1;
  for (int child : {across.children[0], across.children[1]}) {
    if (child >= 0) t.children[k++] = child * g;
  }
  return t;
}

int DoubleTreeDepth(int world, int ranks_per_node) {
  int depth = 0;
  for (int r = 0; r < world; ++r) depth = std::max(depth, DoubleTreePosition(0, r, world, ranks_per_node).depth);
  return depth;
}

// The most messages any rank sends or receives in `round`.
int Busiest(const Round& round, int world) {
  std::vector<int> in(world, 0);
  int most = 0;
  for (int r = 0; r < world; ++r) {
    const Peers p = PeersOf(round, r, world);
    most = std::max(most, p.sends);
    for (int i = 0; i < p.sends; ++i) ++in[p.send_to[i]];
  }
  for (int count : in) most = std::max(most, count);
  return most * round.flows;
}

void Ring(std::vector<Round>& rounds, int64_t bytes, int world) {
  // Equal chunks, the last padded: what ring implementations send.
  rounds.insert(rounds.end(), 2 * (world - 1), Round{RoundKind::kShift, 1, CeilDiv(bytes, world)});
}

// NCCL's ring: chunk j of step s in wave s + j, a channel's chunks of one
// wave in one message (they ride one connection).
void NcclRing(std::vector<Round>& rounds, int64_t bytes, int world, const CollectiveOptions& o) {
  const int steps = 2 * (world - 1);
  const int64_t per_step = CeilDiv(bytes, int64_t{world} * o.channels());
  const int64_t chunks = CeilDiv(per_step, o.chunk_bytes());
  const int64_t chunk = CeilDiv(per_step, chunks);
  for (int64_t wave = 0; wave < steps + chunks - 1; ++wave) {
    const int64_t in_flight = std::min({wave + 1, chunks, int64_t{steps}, steps + chunks - 1 - wave});
    Round r{RoundKind::kShift, 1, in_flight * chunk};
    r.flows = o.channels();
    r.busiest = o.channels();
    rounds.push_back(r);
  }
}

void NcclTree(std::vector<Round>& rounds, int64_t bytes, int world, const CollectiveOptions& o) {
  const int per_node = std::min(o.NodeRanks(), world);
  const int depth = DoubleTreeDepth(world, per_node);
  const int flows = std::max(1, o.channels() / 2);
  const int64_t per_flow = CeilDiv(bytes, int64_t{2} * flows);
  const int64_t chunks = CeilDiv(per_flow, NcclTreeChunkBytes(per_flow, depth, o.chunk_bytes()));
  const int64_t chunk = CeilDiv(per_flow, chunks);
  // Waves with the same depths taking part are the same round: a pipeline's
  // steady state is one round, however many chunks it has.
  std::map<std::pair<int, int>, int> busiest[2];
  auto wave = [&](RoundKind kind, int64_t first, int64_t last) {
    Round r{kind, per_node, chunk};
    r.flows = flows;
    r.first_depth = static_cast<int>(first);
    r.last_depth = static_cast<int>(last);
    auto& known = busiest[kind == RoundKind::kDoubleTreeUp ? 0 : 1];
    auto it = known.find({r.first_depth, r.last_depth});
    if (it == known.end()) {
      it = known.emplace(std::make_pair(r.first_depth, r.last_depth), Busiest(r, world)).first;
    }
    r.busiest = it->second;
    rounds.push_back(r);
  };
  // Up: depth d sends chunk j in wave j + depth - d (d >= 1).
  for (int64_t t = 0; t < chunks + depth - 1; ++t) {
    wave(RoundKind::kDoubleTreeUp, std::max<int64_t>(1, depth - t), std::min<int64_t>(depth, chunks - 1 + depth - t));
  }
  // Down: depth d sends chunk j in wave j + d (d <= depth - 1).
  for (int64_t t = 0; t < chunks + depth - 1; ++t) {
    wave(RoundKind::kDoubleTreeDown, std::max<int64_t>(0, t - chunks + 1), std::min<int64_t>(depth - 1, t));
  }
}

void Hierarchical(std::vector<Round>& rounds, int64_t bytes, int world, const CollectiveOptions& o) {
  const int per_node = std::min(o.NodeRanks(), world);
  if (world % per_node != 0) {
    throw InputError("a hierarchical all-reduce needs whole nodes: " + std::to_string(world) +
                     " ranks are not a multiple of " + std::to_string(per_node) + " ranks per node");
  }
  if (per_node == 1) return Ring(rounds, bytes, world);
  const int nodes = world / per_node;
  const int64_t shard = CeilDiv(bytes, per_node);
  rounds.insert(rounds.end(), per_node - 1, Round{RoundKind::kNodeShift, per_node, shard});
  if (nodes > 1) {
    rounds.insert(rounds.end(), 2 * (nodes - 1), Round{RoundKind::kNodeStride, per_node, CeilDiv(shard, nodes)});
  }
  rounds.insert(rounds.end(), per_node - 1, Round{RoundKind::kNodeShift, per_node, shard});
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
    case AllReduceAlgorithm::kNcclRing:
      return "nccl-ring";
    case AllReduceAlgorithm::kNcclTree:
      return "nccl-tree";
    case AllReduceAlgorithm::kHierarchical:
      return "hierarchical";
  }
  return "?";
}

std::optional<AllReduceAlgorithm> ParseAllReduceAlgorithm(const std::string& name) {
  for (auto a : kAllAlgorithms) {
    if (name == ToString(a)) return a;
  }
  return std::nullopt;
}

std::vector<std::string> AllReduceAlgorithmNames() {
  std::vector<std::string> names;
  for (auto a : kAllAlgorithms) names.emplace_back(ToString(a));
  return names;
}

void CollectiveOptions::Validate() const {
  if (chunk_bytes_ < 1) throw InputError("the NCCL chunk size must be at least one byte");
  if (channels_ < 1 || channels_ > kMaxChannels) {
    throw InputError("NCCL channels must be between 1 and " + std::to_string(kMaxChannels) + ", not " +
                     std::to_string(channels_));
  }
  if (ranks_per_node_ < 0) throw InputError("ranks per node must be at least 1");
}

bool CollectiveOptions::UsesChunks(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::kNcclRing || algorithm == AllReduceAlgorithm::kNcclTree;
}

bool CollectiveOptions::UsesNodes(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::kHierarchical || algorithm == AllReduceAlgorithm::kNcclTree;
}

std::string CollectiveOptions::Describe(AllReduceAlgorithm algorithm) const {
  std::string text;
  if (UsesChunks(algorithm)) {
    text =
        std::to_string(channels_) + (channels_ == 1 ? " channel, " : " channels, ") + Bytes(chunk_bytes_) + " chunks";
  }
  // Trees over ranks are NCCL's trees on nodes of one GPU: nothing to say.
  if (UsesNodes(algorithm) && (algorithm == AllReduceAlgorithm::kHierarchical || NodeRanks() > 1)) {
    const int g = NodeRanks();
    text += (text.empty() ? "" : ", ") + std::to_string(g) + (g == 1 ? " rank per node" : " ranks per node");
  }
  return text;
}

std::string DescribeAllReduce(AllReduceAlgorithm algorithm, const CollectiveOptions& options) {
  const std::string settings = options.Describe(algorithm);
  return std::string(ToString(algorithm)) + " all-reduce" + (settings.empty() ? "" : " (" + settings + ")");
}

nlohmann::json AllReduceJson(AllReduceAlgorithm algorithm, const CollectiveOptions& options) {
  nlohmann::json j = {{"algorithm", ToString(algorithm)}};
  if (CollectiveOptions::UsesChunks(algorithm)) {
    j["chunk_bytes"] = options.chunk_bytes();
    j["channels"] = options.channels();
  }
  if (CollectiveOptions::UsesNodes(algorithm)) j["ranks_per_node"] = options.NodeRanks();
  return j;
}

bool Round::operator==(const Round& o) const { return !(*this < o) && !(o < *this); }

bool Round::operator<(const Round& o) const {
  return std::make_tuple(static_cast<int>(kind), distance, bytes, flows, first_depth, last_depth, busiest) <
         std::make_tuple(static_cast<int>(o.kind), o.distance, o.bytes, o.flows, o.first_depth, o.last_depth,
                         o.busiest);
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

int64_t NcclTreeChunkBytes(int64_t bytes_per_flow, int depth, int64_t chunk_bytes) {
  int64_t chunk = chunk_bytes;
  while (bytes_per_flow / chunk < 8 * depth && chunk > 131072) chunk /= 2;
  while (bytes_per_flow / chunk < 4 * depth && chunk > 65536) chunk /= 2;
  while (bytes_per_flow / chunk < depth && chunk > 32768) chunk /= 2;
  return chunk;
}

TreePosition DoubleTreePosition(int tree, int rank, int world, int ranks_per_node) {
  TreePosition t = NodeTreeLinks(tree, rank, world, ranks_per_node);
  for (int up = t.parent; up >= 0; up = NodeTreeLinks(tree, up, world, ranks_per_node).parent) ++t.depth;
  return t;
}

Peers PeersOf(const Round& round, int rank, int world) {
  Peers p;
  auto send = [&p](int to) { p.send_to[p.sends++] = to; };
  auto receive = [&p](int from) { p.recv_from[p.receives++] = from; };
  const int d = round.distance;
  switch (round.kind) {
    case RoundKind::kShift:
      if (world > 1) {
        send((rank + 1) % world);
        receive((rank + world - 1) % world);
      }
      break;
    case RoundKind::kExchange: {
      // Only the power-of-two core exchanges; its size is FloorPowerOfTwo(world).
      const int core = FloorPowerOfTwo(world);
      if (rank < core) {
        send(rank ^ d);
        receive(rank ^ d);
      }
      break;
    }
    case RoundKind::kFoldIn:
      if (rank >= d) send(rank - d);
      if (rank + d < world) receive(rank + d);
      break;
    case RoundKind::kFoldOut:
      if (rank + d < world) send(rank + d);
      if (rank >= d) receive(rank - d);
      break;
    case RoundKind::kTreeReduce:
      if (rank % (2 * d) == d) send(rank - d);
      if (rank % (2 * d) == 0 && rank + d < world) receive(rank + d);
      break;
    case RoundKind::kTreeBroadcast:
      if (rank % (2 * d) == 0 && rank + d < world) send(rank + d);
      if (rank % (2 * d) == d) receive(rank - d);
      break;
    case RoundKind::kNodeShift:
      if (d > 1) {
        const int base = rank - rank % d;
        send(base + (rank - base + 1) % d);
        receive(base + (rank - base + d - 1) % d);
      }
      break;
    case RoundKind::kNodeStride:
      if (world > d) {
        send((rank + d) % world);
        receive((rank + world - d) % world);
      }
      break;
    case RoundKind::kDoubleTreeUp:
    case RoundKind::kDoubleTreeDown: {
      const bool up = round.kind == RoundKind::kDoubleTreeUp;
      auto takes_part = [&round](int depth) { return depth >= round.first_depth && depth <= round.last_depth; };
      for (int tree = 0; tree < 2; ++tree) {
        const TreePosition t = DoubleTreePosition(tree, rank, world, d);
        if (t.parent >= 0 && takes_part(up ? t.depth : t.depth - 1)) up ? send(t.parent) : receive(t.parent);
        for (int child : t.children) {
          if (child >= 0 && takes_part(up ? t.depth + 1 : t.depth)) up ? receive(child) : send(child);
        }
      }
      break;
    }
  }
  return p;
}

std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world) {
  return CollectiveRounds(op, algorithm, bytes, world, CollectiveOptions());
}

std::vector<Round> CollectiveRounds(CollectiveOp op, AllReduceAlgorithm algorithm, int64_t bytes, int world,
                                    const CollectiveOptions& options) {
  if (world < 1) throw InputError("a collective needs at least one rank");
  if (bytes < 0) throw InputError("a collective cannot carry a negative number of bytes");
  options.Validate();
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
      Ring(rounds, bytes, world);
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
    case AllReduceAlgorithm::kNcclRing:
      NcclRing(rounds, bytes, world, options);
      break;
    case AllReduceAlgorithm::kNcclTree:
      NcclTree(rounds, bytes, world, options);
      break;
    case AllReduceAlgorithm::kHierarchical:
      Hierarchical(rounds, bytes, world, options);
      break;
  }
  return rounds;
}

double WireBytesPerRank(const std::vector<Round>& rounds, int world) {
  std::map<Round, int> multiplicity;
  for (const Round& r : rounds) ++multiplicity[r];
  double total = 0;
  for (const auto& [round, count] : multiplicity) {
    int64_t messages = 0;
    for (int rank = 0; rank < world; ++rank) messages += PeersOf(round, rank, world).sends;
    total +=
        static_cast<double>(count) * static_cast<double>(messages) * round.flows * static_cast<double>(round.bytes);
  }
  return total / world;
}

}  // namespace accordion::sim
