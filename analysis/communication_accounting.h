// How many floats a worker sends, per layer and level, for each scheme.
//
//   dense:    numel per step.
//   PowerSGD: the layer as a matrix n x m (n = shape[0], m = the rest);
//             (n + m) * r per step when 2 * (n + m) * r < n * m, else numel
//             (too small to gain: sent dense, fused with the 1-D tensors).
//   TopK:     k = max(1, ceil(fraction * numel)) values plus k int32 indices,
//             counted as 2k four-byte words per step; numel for a tensor it
//             does not sparsify (TopKSparsifies).
//   batch:    numel per step, but an epoch has fewer steps at a larger batch.
// A compressed tensor's floats per step are what it adds to its scheme's
// compressed collectives (SchemeDescription::bucket_collectives), so the
// accounting and the step plan cannot disagree.
//
// Floats count 4-byte words of payload one worker contributes, the unit of
// the paper's "Data Sent" columns; collective algorithms multiply it by
// their own factors (the simulator models those).
//
// Thread-safe: plain values and pure functions (they read the constant scheme
// table only); AnnotateLayers writes only to the `layers` it is given.
#ifndef ACCORDION_ANALYSIS_COMMUNICATION_ACCOUNTING_H_
#define ACCORDION_ANALYSIS_COMMUNICATION_ACCOUNTING_H_

#include <cstdint>
#include <vector>

#include "traces/records.h"
#include "traces/scheme_description.h"

namespace accordion {

// A scheme with the run's choices that change how it communicates. TopK
// has two. Vectors: by default it sparsifies every tensor; with
// topk_dense_vectors it sends 1-D tensors (biases, BatchNorm weights and
// biases) dense in their bucket's all-reduce, as PowerSGD sends them and as
// the reference code's TopK does. Error feedback: by default each rank keeps
// what it did not send and adds it to its next gradient; without it that is
// dropped (the reference code's effective behaviour). Only the first changes
// what is sent.
class CommunicationScheme {
 public:
  // A bare Scheme means its default choices (implicit, as torch::Device
  // takes a DeviceType); the way back is scheme(), never implicit, since it
  // drops the choices.
  CommunicationScheme(Scheme scheme = Scheme::kDense) : scheme_(scheme) {}  // NOLINT(google-explicit-constructor)

  CommunicationScheme& topk_dense_vectors(bool v) {
    topk_dense_vectors_ = v;
    return *this;
  }
  CommunicationScheme& topk_error_feedback(bool v) {
    topk_error_feedback_ = v;
    return *this;
  }

  Scheme scheme() const { return scheme_; }
  bool topk_dense_vectors() const { return topk_dense_vectors_; }
  bool topk_error_feedback() const { return topk_error_feedback_; }

 private:
  Scheme scheme_;
  bool topk_dense_vectors_ = false;
  bool topk_error_feedback_ = true;
};

// The matrix view PowerSGD takes of a tensor: rows = shape[0], cols = rest.
struct MatrixView {
  int64_t rows = 1;
  int64_t cols = 1;
};
MatrixView MatrixViewOf(const std::vector<int64_t>& shape);

// Whether PowerSGD at rank r compresses this tensor (2-D or more and small
// enough a factorisation to pay off).
bool PowerSgdCompresses(const std::vector<int64_t>& shape, int64_t rank);

// Whether TopK sends this tensor as values and indices; if not, it travels
// dense in its bucket's all-reduce. The one rule the accounting, the step
// plan, the trainer and the simulator follow: every tensor, or with
// topk_dense_vectors only those of two or more dimensions.
bool TopKSparsifies(const CommunicationScheme& scheme, const std::vector<int64_t>& shape);

// Entries TopK keeps of `numel` at `fraction`.
int64_t TopKCount(int64_t numel, double fraction);

// Whether `scheme` at `level` sends this tensor in its compressed collectives
// (PowerSgdCompresses, TopKSparsifies); if not, it travels in its bucket's
// dense all-reduce.
bool TravelsCompressed(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level);

// Floats this tensor adds to a collective of `kind` at `level` (dense: numel;
// P: n * r; Q: m * r; TopK: 2k; a 16-bit cast: numel / 2, in 4-byte words).
double CollectiveFloats(CollectiveKind kind, const std::vector<int64_t>& shape, double level);

// Floats one worker sends for this tensor in one step at `level`. For the
// batch scheme the level does not change a step's size (see StepsPerEpoch).
double FloatsPerStep(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level);

// Whether `scheme` at `level` sends this tensor smaller than dense.
bool IsCompressed(const CommunicationScheme& scheme, const std::vector<int64_t>& shape, double level);

// Optimizer steps in one epoch: each of `world_size` ranks gets
// ceil(train_samples / world_size) samples (the sampler pads), in
// ceil(that / (global_batch / world_size)) steps.
int64_t StepsPerEpoch(int64_t train_samples, int64_t global_batch, int world_size);

// Fills the layers' compressible / floats_* fields for a run's scheme and levels.
void AnnotateLayers(const CommunicationScheme& scheme, double level_low, double level_high,
                    std::vector<LayerInfo>& layers);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_COMMUNICATION_ACCOUNTING_H_
