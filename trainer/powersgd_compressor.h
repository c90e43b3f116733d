// PowerSgdCompressor: rank-r gradient compression with error feedback
// (Vogels et al., NeurIPS 2019), for the layers a bucket sends low-rank.
//
// For a layer viewed as an n x m matrix G (n = out channels, m = the rest):
//   M = G + E            E: this rank's error-feedback memory
//   P = M Q              Q (m x r): warm-started from the previous step
//   P <- sum over ranks, then Gram-Schmidt orthonormalised
//   Q = M^T P, Q <- sum over ranks / world size
//   G' = P Q^T           the averaged, decompressed gradient
//   E = M - G'           what this rank still owes
// The caller moves P and Q between ranks; this class owns E and Q per layer.
// A fresh Q is random from a seed every rank shares, so all ranks agree.
#ifndef ACCORDION_TRAINER_POWERSGD_COMPRESSOR_H_
#define ACCORDION_TRAINER_POWERSGD_COMPRESSOR_H_

#include <cstdint>
#include <map>

#include <torch/types.h>

#include "common/options.h"

namespace torch::serialize {
class InputArchive;
class OutputArchive;
}  // namespace torch::serialize

namespace accordion {

class PowerSgdOptions {
  /// Rank of layers SetRank has not been told about. Default: 2.
  ACCORDION_ARG(int, rank) = 2;
  /// Added to column norms in Gram-Schmidt, so a zero column stays finite. Default: 1e-8.
  ACCORDION_ARG(double, epsilon) = 1e-8;
  /// Seed of the random Q every rank draws identically. Default: 0.
  ACCORDION_ARG(uint64_t, seed) = 0;
  /// Where memories and Qs live: the gradients' device. Default: torch::kCPU.
  ACCORDION_ARG(torch::Device, device) = torch::kCPU;
};

// Orthonormalises the columns of `matrix` (n x r) in place, left to right.
void GramSchmidt(torch::Tensor matrix, double epsilon);

class PowerSgdCompressor {
 public:
  explicit PowerSgdCompressor(const PowerSgdOptions& options) : options_(options) {}

  // Gives `layer` (an n x m matrix) rank r from `epoch` on. A warm Q keeps
  // its first min(r_old, r) columns; new columns are fresh random ones drawn
  // from (seed, layer, epoch). Ranks above min(n, m) are clamped to it.
  void SetRank(int layer, int64_t rows, int64_t cols, int rank, int epoch);
  int64_t rank_of(int layer) const;
  // The layer's warm Q (m x r); undefined before SetRank.
  torch::Tensor q(int layer) const;

  // Step 1: M = grad + E (E itself is left as it was until Commit), P = M Q
  // into `p` (n x r).
  void ComputeP(int layer, const torch::Tensor& grad, torch::Tensor p);
  // Step 2, after P was summed over ranks: orthonormalise `p` in place and
  // write Q = M^T P into `q` (m x r).
  void ComputeQ(int layer, torch::Tensor p, torch::Tensor q);
  // Step 3, after Q was summed: Q /= world_size; `grad` (n x m) receives
  // P Q^T, and M - P Q^T is staged as the next E.
  void Decompress(int layer, const torch::Tensor& p, torch::Tensor q, int world_size, torch::Tensor grad);
  // Step 4: the step counts - the staged E becomes the memory and `q` (the
  // averaged Q Decompress left) the warm Q. A step that is not committed (its
  // gradients were not finite, and the optimizer skips it) leaves E and Q as
  // they were before it.
  void Commit(int layer, const torch::Tensor& q);
  // Multiplies every memory by `factor`: the loss scale changed, and E is
  // kept in the gradients' units.
  void ScaleMemories(double factor);

  // The layer stops being sent low-rank: its memory (zeros if none) must be
  // sent with the dense gradient. The warm Q is kept for a later return.
  torch::Tensor TakeMemory(int layer);

  // Every layer's memory and Q, for checkpoints.
  void Save(torch::serialize::OutputArchive& archive) const;
  void Load(torch::serialize::InputArchive& archive);

 private:
  struct LayerState {
    torch::Tensor memory;  // n x m, E as of the last committed step
    torch::Tensor staged;  // n x m; M from ComputeP, then the next E from Decompress
    torch::Tensor q;       // m x r, warm across steps
  };
  LayerState& State(int layer);

  PowerSgdOptions options_;
  std::map<int, LayerState> layers_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_POWERSGD_COMPRESSOR_H_
