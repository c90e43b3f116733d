#include "analysis/communication_plan.h"

#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "traces/scheme_description.h"

namespace accordion {

std::vector<GradientBucket> AssignBuckets(const std::vector<LayerInfo>& layers, int64_t bucket_bytes) {
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

std::vector<PlannedCollective> PlanStep(const CommunicationScheme& scheme, const std::vector<LayerInfo>& layers,
                                        const std::vector<GradientBucket>& buckets, const std::vector<double>& levels) {
  if (levels.size() != layers.size()) {
    throw InputError("a step plan needs one level per layer");
  }
  const SchemeDescription& description = DescriptionOf(scheme.scheme());
  std::vector<PlannedCollective> plan;
  // Those issued after backward (PowerSGD's Q), appended at the end.
  std::vector<PlannedCollective> after_backward;
  for (int b = 0; b < static_cast<int>(buckets.size()); ++b) {
    std::vector<int> dense, compressed;  // in bucket order
    for (int l : buckets[b].layers) {
      if (TravelsCompressed(scheme, layers[l].shape, levels[l])) {
        compressed.push_back(l);
      } else {
        dense.push_back(l);
      }
    }
    int previous = -1;  // index in `plan` of this bucket's latest collective
    for (CollectiveKind kind : description.bucket_collectives) {
      const CollectiveDescription& d = DescriptionOf(kind);
      PlannedCollective c{kind, d.op, d.tag, b, 0, kind == CollectiveKind::kDense ? dense : compressed};
      // Exact: every kind's floats are whole 16-bit halves (a cast's 2 bytes per entry).
      for (int l : c.layers) c.bytes += static_cast<int64_t>(4 * CollectiveFloats(kind, layers[l].shape, levels[l]));
      if (c.bytes == 0) continue;
      if (d.after_backward) {
        c.after = previous;
        c.after_backward = true;
        after_backward.push_back(std::move(c));
      } else {
        previous = static_cast<int>(plan.size());
        plan.push_back(std::move(c));
      }
    }
  }
  for (PlannedCollective& c : after_backward) plan.push_back(std::move(c));
  return plan;
}

}  // namespace accordion
