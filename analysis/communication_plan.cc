#include "analysis/communication_plan.h"

#include "analysis/communication_accounting.h"
#include "common/errors.h"

namespace accordion {

std::vector<GradientBucket> AssignBuckets(const std::vector<LayerInfo>& layers,
                                          int64_t bucket_bytes) {
  if (bucket_bytes < 1) throw InputError("bucket size must be at least one byte");
  std::vector<GradientBucket> buckets;
  GradientBucket current;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    current.layers.push_back(l);
    current.dense_bytes += 4 * layers[l].numel;
    if (current.dense_bytes >= bucket_bytes) {
      buckets.push_back(std::move(current));
      current = GradientBucket();
    }
  }
  if (!current.layers.empty()) buckets.push_back(std::move(current));
  return buckets;
}

namespace {

// A bucket's tensors in bucket order: those sent dense (with their bytes)
// and those `compressed` picks.
struct BucketSplit {
  std::vector<int> dense, compressed;
  int64_t dense_bytes = 0;
};

template <typename Compressed>
BucketSplit SplitBucket(const GradientBucket& bucket, const std::vector<LayerInfo>& layers, Compressed compressed) {
  BucketSplit split;
  for (int l : bucket.layers) {
    if (compressed(l)) {
      split.compressed.push_back(l);
    } else {
      split.dense.push_back(l);
      split.dense_bytes += 4 * layers[l].numel;
    }
  }
  return split;
}

}  // namespace

std::vector<PlannedCollective> PlanStep(const CommunicationScheme& scheme, const std::vector<LayerInfo>& layers,
                                        const std::vector<GradientBucket>& buckets,
                                        const std::vector<double>& levels) {
  if (levels.size() != layers.size()) {
    throw InputError("a step plan needs one level per layer");
  }
  std::vector<PlannedCollective> plan;
  auto emit = [&plan](CollectiveOp op, const char* tag, int bucket, int64_t bytes,
                      std::vector<int> carried) {
    if (bytes > 0) plan.push_back({op, tag, bucket, bytes, std::move(carried)});
  };
  // PowerSGD's Q all-reduces, held back until after backward.
  std::vector<PlannedCollective> after_backward;
  for (int b = 0; b < static_cast<int>(buckets.size()); ++b) {
    const GradientBucket& bucket = buckets[b];
    switch (scheme.scheme()) {
      case Scheme::kDense:
      case Scheme::kBatch:
        emit(CollectiveOp::kAllReduce, "dense", b, bucket.dense_bytes, bucket.layers);
        break;
      case Scheme::kPowerSgd: {
        const BucketSplit split = SplitBucket(bucket, layers, [&](int l) {
          return PowerSgdCompresses(layers[l].shape, static_cast<int64_t>(levels[l]));
        });
        int64_t p = 0, q = 0;
        for (int l : split.compressed) {
          const auto rank = static_cast<int64_t>(levels[l]);
          const MatrixView m = MatrixViewOf(layers[l].shape);
          p += 4 * m.rows * rank;
          q += 4 * m.cols * rank;
        }
        emit(CollectiveOp::kAllReduce, "dense", b, split.dense_bytes, split.dense);
        emit(CollectiveOp::kAllReduce, "powersgd-p", b, p, split.compressed);
        if (q > 0) {
          PlannedCollective c{CollectiveOp::kAllReduce, "powersgd-q", b, q, split.compressed};
          c.after = static_cast<int>(plan.size()) - 1;  // this bucket's P
          c.after_backward = true;
          after_backward.push_back(std::move(c));
        }
        break;
      }
      case Scheme::kTopK: {
        const BucketSplit split =
            SplitBucket(bucket, layers, [&](int l) { return TopKSparsifies(scheme, layers[l].shape); });
        int64_t words = 0;
        for (int l : split.compressed) words += 2 * TopKCount(layers[l].numel, levels[l]);
        emit(CollectiveOp::kAllReduce, "dense", b, split.dense_bytes, split.dense);
        emit(CollectiveOp::kAllGather, "topk", b, 4 * words, split.compressed);
        break;
      }
    }
  }
  for (PlannedCollective& c : after_backward) plan.push_back(std::move(c));
  return plan;
}

}  // namespace accordion
