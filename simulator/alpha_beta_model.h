// AlphaBetaModel: the analytic price of a collective, alpha (latency per
// message) plus bytes over beta (bandwidth), summed over its rounds.
//
//   ring all-reduce      2(N-1) alpha + 2(N-1)/N * S / B
//   ring all-gather      (N-1) alpha + (N-1)/N * S_total / B,  S_total = N s
//   halving-doubling     2 log2(p) alpha + 2(p-1)/p * S / B  (+ 2(alpha + S/B)
//                        when N is not a power of two p)
//   tree (binomial)      2 ceil(log2 N) (alpha + S / B)
//   broadcast (binomial) ceil(log2 N) (alpha + S / B)
//
// It ignores contention, TCP and everything else SimGrid models: it is the
// fast mode (--model analytic) and the yardstick the simulation is checked
// against. Calibrated platforms give alpha and B per message size.
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

  double alpha(double message_bytes) const;
  double bandwidth(double message_bytes) const;

  // Seconds one collective takes, from its rounds.
  double Time(const std::vector<Round>& rounds) const;
  double Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world) const;

  // The closed forms above, for one alpha and B (the first segment's).
  double RingAllReduce(double bytes, int world) const;
  double RingAllGather(double bytes_per_rank, int world) const;
  double HalvingDoublingAllReduce(double bytes, int world) const;
  double TreeAllReduce(double bytes, int world) const;

 private:
  const MessageSegment& SegmentOf(double message_bytes) const;
  std::vector<MessageSegment> segments_;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_ALPHA_BETA_MODEL_H_
