#include "simulator/alpha_beta_model.h"

#include <cmath>

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

double AlphaBetaModel::alpha(double message_bytes) const {
  return SegmentOf(message_bytes).latency_s;
}
double AlphaBetaModel::bandwidth(double message_bytes) const {
  return SegmentOf(message_bytes).bandwidth_Bps;
}

double AlphaBetaModel::Time(const std::vector<Round>& rounds) const {
  double t = 0;
  for (const Round& r : rounds) {
    const auto m = static_cast<double>(r.bytes);
    t += alpha(m) + m / bandwidth(m);
  }
  return t;
}

double AlphaBetaModel::Time(CollectiveOp op, AllReduceAlgorithm algorithm, double bytes, int world) const {
  return Time(CollectiveRounds(op, algorithm, static_cast<int64_t>(std::ceil(bytes)), world));
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

}  // namespace accordion::sim
