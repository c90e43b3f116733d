// TopKCompressor: sparsification, with error feedback by default (Aji &
// Heafield 2017).
//
// For a layer's flattened gradient g: a = g + e (e: this rank's residual);
// the k entries of largest |a| are sent as k values and k int32 indices;
// e = a with those entries zeroed, so nothing is lost, only delayed.
// Without error feedback (the Accordion reference code's effective
// behaviour) a = g and what is not sent is dropped: no residual is kept.
// After an all-gather every rank scatter-adds all ranks' entries and
// divides by the world size. This class owns the residuals.
#ifndef ACCORDION_TRAINER_TOPK_COMPRESSOR_H_
#define ACCORDION_TRAINER_TOPK_COMPRESSOR_H_

#include <cstdint>
#include <map>

#include <torch/types.h>

namespace torch::serialize {
class InputArchive;
class OutputArchive;
}  // namespace torch::serialize

namespace accordion {

class TopKCompressor {
 public:
  explicit TopKCompressor(bool error_feedback = true) : error_feedback_(error_feedback) {}

  // Packs the k largest entries of grad + residual into `packed` (2k
  // float32 words: k values, then k int32 indices bit for bit) and stages
  // the rest as the next residual, which Commit keeps; without error
  // feedback, of grad alone, and the rest is dropped.
  void Compress(int layer, const torch::Tensor& grad, int64_t k, torch::Tensor packed);
  // The step counts: the staged residual replaces the layer's. A step not
  // committed (not finite; the optimizer skips it) leaves the residual as it was.
  void Commit(int layer);
  // Multiplies every residual by `factor` (the loss scale changed).
  void ScaleResiduals(double factor);

  // `gathered` ([world, 2k], every rank's packed words for this layer):
  // writes the sum of all ranks' entries divided by world into `grad`.
  static void Decompress(const torch::Tensor& gathered, torch::Tensor grad);

  // The layer's residual (undefined before its first Compress, and always
  // without error feedback).
  torch::Tensor residual(int layer) const;

  void Save(torch::serialize::OutputArchive& archive) const;
  void Load(torch::serialize::InputArchive& archive);

 private:
  bool error_feedback_;
  std::map<int, torch::Tensor> residuals_;  // flat, numel entries; as of the last committed step
  std::map<int, torch::Tensor> staged_;     // Compress's next residuals
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TOPK_COMPRESSOR_H_
