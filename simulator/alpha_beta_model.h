// AlphaBetaModel: the analytic price of a collective, alpha (latency per
// message) plus bytes over beta (bandwidth), summed over its rounds. A round
// whose busiest rank sends or receives k messages of m bytes side by side
// (NCCL's channels, both trees of the double tree) costs alpha + k m / B:
// they share that rank's link.
//
//   ring all-reduce      2(N-1) alpha + 2(N-1)/N * S / B
//   ring all-gather      (N-1) alpha + (N-1)/N * S_total / B,  S_total = N s
//   halving-doubling     2 log2(p) alpha + 2(p-1)/p * S / B  (+ 2(alpha + S/B)
//                        when N is not a power of two p)
//   tree (binomial)      2 ceil(log2 N) (alpha + S / B)
//   broadcast (binomial) ceil(log2 N) (alpha + S / B)
//   nccl-ring, nccl-tree, hierarchical: collectives.h derives them
//
// nodes() describes ranks grouped on nodes (the hierarchical platform):
// messages inside a node cost that node's alpha and B per rank, messages
// leaving it share the node's NIC, priced with the model's alpha and B.
//
// It ignores contention, TCP and everything else SimGrid models: it is the
// fast mode (--timing analytic) and the yardstick the simulation is checked
// against. Calibrated platforms give alpha and B per message size.
//
// Thread safety: a value: nodes() changes it; the const methods keep no state
// and may run in several threads at once.
#ifndef ACCORDION_SIMULATOR_ALPHA_BETA_MODEL_H_
#define ACCORDION_SIMULATOR_ALPHA_BETA_MODEL_H_

#include <vector>

#include "simulator/collectives.h"
#include "simulator/platform.h"

namespace accordion::sim {

class AlphaBetaModel {
 public:
  // One latency and bandwidth for every message size.
  AlphaBetaModel(double alpha_s, double bandwidth_Bps);
  // Calibrated: the segment a message's size falls in decides (segments
  // sorted by min_message_bytes, the first starting at 0).
  explicit AlphaBetaModel(std::vector<MessageSegment> segments);

  // Nodes of `ranks_per_node` consecutive ranks, each rank on its own link
  // of (alpha_s, bandwidth_Bps) to the node, the node on one NIC (the
  // model's alpha and B) to the others. Without it, every rank has its own.
  AlphaBetaModel& nodes(int ranks_per_node, double alpha_s, double bandwidth_Bps);

  double alpha(double message_bytes) const;
  double bandwidth(double message_bytes) const;

  // Seconds one collective takes, from its rounds. `world` is needed with
  // nodes() (a round's price then depends on who sits where); without, it
  // may be left out and every round costs alpha + busiest * m / B.
  double Time(const std::vector<Round>& rounds, int world = 0) const;
  double Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world) const;
  double Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world,
              const CollectiveOptions& options) const;

  // The closed forms above, for one alpha and B (the first segment's).
  double RingAllReduce(double bytes, int world) const;
  double RingAllGather(double bytes_per_rank, int world) const;
  double HalvingDoublingAllReduce(double bytes, int world) const;
  double TreeAllReduce(double bytes, int world) const;
  // collectives.h's: nccl-ring for any N; nccl-tree for N a power of two
  // (other N: the sum over its rounds); hierarchical with this model's
  // nodes() holding `ranks_per_node` ranks, or on a platform without nodes.
  double NcclRingAllReduce(double bytes, int world, const CollectiveOptions& options) const;
  double NcclTreeAllReduce(double bytes, int world, const CollectiveOptions& options) const;
  double HierarchicalAllReduce(double bytes, int world, int ranks_per_node) const;

 private:
  const MessageSegment& SegmentOf(double message_bytes) const;
  double RoundTime(const Round& round, int world) const;
  std::vector<MessageSegment> segments_;
  int node_ranks_ = 1;
  double node_alpha_s_ = 0;
  double node_bandwidth_Bps_ = 0;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_ALPHA_BETA_MODEL_H_
