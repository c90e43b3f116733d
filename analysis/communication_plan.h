// The collectives one optimizer step issues, per scheme and levels: the
// single description the trainer executes and the simulator models.
//
// Gradients are grouped into DDP-style buckets: tensors in reverse
// registration order (the order backward produces them), closing a bucket
// once it holds `bucket_bytes` of dense gradient. A bucket's collectives start
// when its last tensor's gradient is ready. Per bucket:
//   dense, batch: one all-reduce of the whole bucket                 "dense"
//   PowerSGD:     one all-reduce of the tensors it does not compress  "dense"
//                 (1-D, or too small at their rank), then one all-reduce of
//                 the bucket's P factors (sum n*r)                    "powersgd-p"
//                 and one of its Q factors (sum m*r)                  "powersgd-q"
//   TopK:         one all-reduce of the tensors it does not sparsify
//                 (1-D ones with topk_dense_vectors; TopKSparsifies)  "dense"
//                 then one all-gather of values and int32 indices (2k
//                 words per tensor)                                   "topk"
// Collectives with no payload are omitted. Bytes are 4 per float or index.
// The per-scheme lists and the tags come from traces/scheme_description.h.
//
// Issue order and dependencies are part of the description, because they
// decide what hides behind backward: every bucket's dense and P (or TopK)
// collectives are issued during backward, as the bucket becomes ready, in
// bucket order; the Q all-reduces come last, after backward has ended, one
// per bucket in bucket order, each once its bucket's P all-reduce has
// completed (Q = G^T P needs the summed P) and its Q factors are computed.
// The trainer (trainer/gradient_exchange.cc) issues exactly this sequence -
// its tests compare the recorded order with this plan - and the simulator
// replays it.
//
// Thread-safe: AssignBuckets and PlanStep are pure functions of their
// arguments.
#ifndef ACCORDION_ANALYSIS_COMMUNICATION_PLAN_H_
#define ACCORDION_ANALYSIS_COMMUNICATION_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/communication_accounting.h"
#include "traces/records.h"

namespace accordion {

inline constexpr int64_t kDefaultBucketBytes = 25 * 1024 * 1024;  // DDP's default

struct GradientBucket {
  std::vector<int> layers;  // in the order their gradients become ready
  int64_t dense_bytes = 0;
};

// Buckets over `layers` (ids 0..L-1 in registration order).
std::vector<GradientBucket> AssignBuckets(const std::vector<LayerInfo>& layers,
                                          int64_t bucket_bytes = kDefaultBucketBytes);

struct PlannedCollective {
  CollectiveKind kind = CollectiveKind::kDense;  // what it carries: decide by this
  CollectiveOp op = CollectiveOp::kAllReduce;    // the kind's
  std::string tag;                               // the kind's, as traces name it
  int bucket = 0;
  int64_t bytes = 0;            // payload one rank contributes
  std::vector<int> layers;      // the tensors it carries
  int after = -1;               // index in the plan of a collective whose result it needs
  bool after_backward = false;  // issued only once backward has ended
};

// The step's collectives in issue order. `levels` has one level per layer.
std::vector<PlannedCollective> PlanStep(const CommunicationScheme& scheme, const std::vector<LayerInfo>& layers,
                                        const std::vector<GradientBucket>& buckets, const std::vector<double>& levels);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_COMMUNICATION_PLAN_H_
