#include "simulator/alpha_beta_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "common/errors.h"

namespace accordion::sim {

AlphaBetaModel::AlphaBetaModel(double alpha_s, double bandwidth_Bps)
    : AlphaBetaModel(std::vector<MessageSegment>{{0, alpha_s, bandwidth_Bps}}) {}

AlphaBetaModel::AlphaBetaModel(std::vector<MessageSegment> segments) : segments_(std::move(segments)) {
  if (segments_.empty()) throw InputError("an alpha-beta model needs at least one segment");
  for (const MessageSegment& s : segments_) {
    if (!(s.bandwidth_Bps > 0) || !(s.latency_s >= 0)) {
      throw InputError("an alpha-beta model needs a positive bandwidth and a non-negative latency");
    }
  }
}

const MessageSegment& AlphaBetaModel::SegmentOf(double message_bytes) const {
  size_t k = 0;
  while (k + 1 < segments_.size() && message_bytes >= segments_[k + 1].min_message_bytes) ++k;
  return segments_[k];
}

double AlphaBetaModel::alpha(double message_bytes) const { return SegmentOf(message_bytes).latency_s; }
double AlphaBetaModel::bandwidth(double message_bytes) const { return SegmentOf(message_bytes).bandwidth_Bps; }

AlphaBetaModel& AlphaBetaModel::nodes(int ranks_per_node, double alpha_s, double bandwidth_Bps) {
  if (ranks_per_node < 1 || !(bandwidth_Bps > 0) || !(alpha_s >= 0)) {
    throw InputError("nodes need at least one rank, a positive bandwidth and a non-negative latency");
  }
  node_ranks_ = ranks_per_node;
  node_alpha_s_ = alpha_s;
  node_bandwidth_Bps_ = bandwidth_Bps;
  return *this;
}

double AlphaBetaModel::RoundTime(const Round& round, int world) const {
  const auto m = static_cast<double>(round.bytes);
  if (node_ranks_ == 1) return alpha(m) + round.busiest * m / bandwidth(m);
  if (world < 1) throw std::logic_error("an alpha-beta model with nodes needs the world size");
  // Messages per rank inside its node, and per node through its NIC, each way.
  std::vector<int> rank_out(world), rank_in(world), nic_out(world), nic_in(world);
  for (int r = 0; r < world; ++r) {
    const Peers p = PeersOf(round, r, world);
    for (int i = 0; i < p.sends; ++i) {
      const int to = p.send_to[i];
      if (to / node_ranks_ == r / node_ranks_) {
        rank_out[r] += round.flows;
        rank_in[to] += round.flows;
      } else {
        nic_out[r / node_ranks_] += round.flows;
        nic_in[to / node_ranks_] += round.flows;
      }
    }
  }
  auto most = [](const std::vector<int>& a, const std::vector<int>& b) {
    return std::max(*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end()));
  };
  const int inside = most(rank_out, rank_in), across = most(nic_out, nic_in);
  double t = 0;
  if (inside > 0) t = node_alpha_s_ + inside * m / node_bandwidth_Bps_;
  if (across > 0) t = std::max(t, alpha(m) + across * m / bandwidth(m));
  return t;
}

double AlphaBetaModel::Time(const std::vector<Round>& rounds, int world) const {
  // A collective repeats few distinct rounds (a ring: one); price each once.
  std::map<Round, double> price;
  double t = 0;
  for (const Round& r : rounds) {
    auto it = price.find(r);
    if (it == price.end()) it = price.emplace(r, RoundTime(r, world)).first;
    t += it->second;
  }
  return t;
}

double AlphaBetaModel::Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world) const {
  return Time(op, algorithm, bytes, world, CollectiveOptions());
}

double AlphaBetaModel::Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world,
                            const CollectiveOptions& options) const {
  return Time(CollectiveRounds(op, algorithm, static_cast<int64_t>(std::ceil(bytes)), world, options), world);
}

double AlphaBetaModel::RingAllReduce(double bytes, int world) const {
  const double n = world, a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  return 2 * (n - 1) * a + 2 * (n - 1) / n * bytes / b;
}

double AlphaBetaModel::RingAllGather(double bytes_per_rank, int world) const {
  const double n = world, a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  return (n - 1) * a + (n - 1) / n * (n * bytes_per_rank) / b;
}

double AlphaBetaModel::HalvingDoublingAllReduce(double bytes, int world) const {
  const int core = FloorPowerOfTwo(world);
  const double p = core, a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  double t = 2 * std::log2(p) * a + 2 * (p - 1) / p * bytes / b;
  if (core != world) t += 2 * (a + bytes / b);
  return t;
}

double AlphaBetaModel::TreeAllReduce(double bytes, int world) const {
  const double a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  return 2 * CeilLog2(world) * (a + bytes / b);
}

double AlphaBetaModel::NcclRingAllReduce(double bytes, int world, const CollectiveOptions& options) const {
  if (world < 2 || bytes <= 0) return 0;
  const double n = world, a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  const double channels = options.channels();
  // Per channel and ring step p bytes, sent as `chunks` chunks of c.
  const double p = std::ceil(std::ceil(bytes) / (n * channels));
  const double chunks = std::ceil(p / static_cast<double>(options.chunk_bytes()));
  const double c = std::ceil(p / chunks);
  return (2 * (n - 1) + chunks - 1) * a + 2 * (n - 1) * chunks * channels * c / b;
}

double AlphaBetaModel::NcclTreeAllReduce(double bytes, int world, const CollectiveOptions& options) const {
  if (world < 2 || bytes <= 0) return 0;
  if (FloorPowerOfTwo(world) != world) {
    return Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kNcclTree, bytes, world, options);
  }
  const double a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  const int depth = CeilLog2(world);
  const double flows = std::max(1, options.channels() / 2);
  const double per_flow = std::ceil(std::ceil(bytes) / (2 * flows));
  const auto chunk = NcclTreeChunkBytes(static_cast<int64_t>(per_flow), depth, options.chunk_bytes());
  const double chunks = std::ceil(per_flow / static_cast<double>(chunk));
  const double c = std::ceil(per_flow / chunks);
  // Two ranks: each tree is one edge, a wave moves one chunk each way.
  if (world == 2) return 2 * chunks * (a + flows * c / b);
  // Every wave moves two chunks across the busiest link but the last one up
  // (only the root's child sends) and the first one down (only the root).
  return 2 * (chunks + depth - 1) * a + (4 * (chunks + depth) - 6) * flows * c / b;
}

double AlphaBetaModel::HierarchicalAllReduce(double bytes, int world, int ranks_per_node) const {
  const int g = std::min(std::max(1, ranks_per_node), world);
  if (world < 2 || bytes <= 0) return 0;
  if (world % g != 0) {
    throw InputError("a hierarchical all-reduce needs whole nodes: " + std::to_string(world) +
                     " ranks are not a multiple of " + std::to_string(g) + " ranks per node");
  }
  if (g == 1) return RingAllReduce(std::ceil(bytes), world);
  if (node_ranks_ != 1 && node_ranks_ != g) {
    return Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kHierarchical, bytes, world,
                CollectiveOptions().ranks_per_node(ranks_per_node));
  }
  const bool nodes = node_ranks_ == g;
  const double a = segments_[0].latency_s, b = segments_[0].bandwidth_Bps;
  const double a_node = nodes ? node_alpha_s_ : a, b_node = nodes ? node_bandwidth_Bps_ : b;
  const double m = static_cast<double>(world / g);
  const double shard = std::ceil(std::ceil(bytes) / g);
  const double piece = std::ceil(shard / m);
  // The g rings across nodes share each node's NIC; on a platform without
  // nodes every rank has its own.
  const double sharing = nodes ? g : 1;
  return 2 * (g - 1) * (a_node + shard / b_node) + 2 * (m - 1) * (a + sharing * piece / b);
}

}  // namespace accordion::sim
