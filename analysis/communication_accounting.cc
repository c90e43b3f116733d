#include "analysis/communication_accounting.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/errors.h"

namespace accordion {

namespace {

int64_t Numel(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

}  // namespace

MatrixView MatrixViewOf(const std::vector<int64_t>& shape) {
  MatrixView v;
  if (shape.empty()) return v;
  v.rows = shape[0];
  v.cols = Numel(shape) / std::max<int64_t>(1, shape[0]);
  return v;
}

bool PowerSgdCompresses(const std::vector<int64_t>& shape, int64_t rank) {
  if (shape.size() < 2) return false;
  const MatrixView m = MatrixViewOf(shape);
  return 2 * (m.rows + m.cols) * rank < m.rows * m.cols;
}

bool TopKSparsifies(const CommunicationScheme& scheme, const std::vector<int64_t>& shape) {
  return !scheme.topk_dense_vectors() || shape.size() >= 2;
}

int64_t TopKCount(int64_t numel, double fraction) {
  // 0.07 * 100 is 7.000000000000001 in doubles: forgive rounding before ceil.
  const double exact = fraction * static_cast<double>(numel);
  const auto k = static_cast<int64_t>(std::ceil(exact - 1e-9 * std::max(1.0, exact)));
  return std::clamp<int64_t>(k, 1, numel);
}

bool TravelsCompressed(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level) {
  switch (DescriptionOf(scheme.scheme()).compressor) {
    case Compressor::kNone:
      return false;
    case Compressor::kLowRank:
      return PowerSgdCompresses(shape, static_cast<int64_t>(level));
    case Compressor::kSparse:
      return TopKSparsifies(scheme, shape);
    case Compressor::kCast16:
      return true;
  }
  return false;
}

double CollectiveFloats(CollectiveKind kind, const std::vector<int64_t>& shape, double level) {
  switch (kind) {
    case CollectiveKind::kDense:
      return static_cast<double>(Numel(shape));
    case CollectiveKind::kPowerSgdP:
      return static_cast<double>(MatrixViewOf(shape).rows * static_cast<int64_t>(level));
    case CollectiveKind::kPowerSgdQ:
      return static_cast<double>(MatrixViewOf(shape).cols * static_cast<int64_t>(level));
    case CollectiveKind::kTopK:
      return static_cast<double>(2 * TopKCount(Numel(shape), level));
    case CollectiveKind::kCast16:
      return static_cast<double>(Numel(shape)) / 2;  // 16-bit values, in 4-byte words: an odd tensor ends on a half
  }
  return 0;
}

double FloatsPerStep(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level) {
  if (!TravelsCompressed(scheme, shape, level)) return static_cast<double>(Numel(shape));
  double floats = 0;
  for (CollectiveKind kind : DescriptionOf(scheme.scheme()).bucket_collectives) {
    if (kind != CollectiveKind::kDense) floats += CollectiveFloats(kind, shape, level);
  }
  return floats;
}

bool IsCompressed(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level) {
  return FloatsPerStep(scheme, shape, level) < static_cast<double>(Numel(shape));
}

int64_t StepsPerEpoch(int64_t train_samples, int64_t global_batch, int world_size) {
  if (train_samples < 1 || global_batch < 1 || world_size < 1) {
    throw InputError("steps per epoch need positive samples, batch and world size");
  }
  const int64_t per_rank_samples = (train_samples + world_size - 1) / world_size;
  const int64_t per_rank_batch = std::max<int64_t>(1, global_batch / world_size);
  return (per_rank_samples + per_rank_batch - 1) / per_rank_batch;
}

void AnnotateLayers(const CommunicationScheme& scheme, double level_low, double level_high,
                    std::vector<LayerInfo>& layers) {
  for (LayerInfo& l : layers) {
    l.floats_dense = static_cast<double>(l.numel);
    l.floats_low = FloatsPerStep(scheme, l.shape, level_low);
    l.floats_high = FloatsPerStep(scheme, l.shape, level_high);
    l.compressible = IsCompressed(scheme, l.shape, level_high);
  }
}

}  // namespace accordion
