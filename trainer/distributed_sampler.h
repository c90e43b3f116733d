// DistributedSampler: which training samples each rank uses at each step.
//
// Every epoch the sample ids are shuffled from (seed, epoch) alone - so a
// resumed run sees the same order - and padded by wrapping around to
// ceil(N / W) per rank, as in PyTorch's DistributedSampler. Unlike PyTorch's
// strided split, step k hands out the k-th slice of the global order, cut in
// W contiguous pieces: the union of the ranks' batches at step k is exactly
// the batch a one-process run with the same global batch uses at step k.
// That is what makes W-process training comparable to 1-process training.
#ifndef ACCORDION_TRAINER_DISTRIBUTED_SAMPLER_H_
#define ACCORDION_TRAINER_DISTRIBUTED_SAMPLER_H_

#include <cstdint>
#include <vector>

namespace accordion {

class DistributedSampler {
 public:
  // `global_batch` must be a multiple of `world_size`.
  DistributedSampler(int64_t num_samples, int64_t global_batch, int world_size, int rank, uint64_t seed);

  // Reshuffles for `epoch`.
  void SetEpoch(int epoch);

  // analysis' StepsPerEpoch(num_samples, global_batch, world_size).
  int64_t steps_per_epoch() const { return steps_; }
  // This rank's sample ids at `step` of the current epoch (the last step may
  // be shorter than global_batch / world_size).
  std::vector<int64_t> Batch(int64_t step) const;

 private:
  int64_t num_samples_;
  int64_t rank_batch_;
  int world_size_;
  int rank_;
  uint64_t seed_;
  int64_t per_rank_;  // ceil(num_samples / world_size)
  int64_t steps_;
  std::vector<int64_t> order_;  // padded global order, per_rank_ * world_size ids
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DISTRIBUTED_SAMPLER_H_
