#include "trainer/distributed_sampler.h"

#include <algorithm>
#include <random>

#include "analysis/communication_accounting.h"
#include "common/errors.h"

namespace accordion {

DistributedSampler::DistributedSampler(int64_t num_samples, int64_t global_batch, int world_size, int rank,
                                       uint64_t seed)
    : num_samples_(num_samples),
      rank_batch_(global_batch / std::max(1, world_size)),
      world_size_(world_size),
      rank_(rank),
      seed_(seed) {
  if (num_samples < 1 || world_size < 1 || rank < 0 || rank >= world_size || global_batch < 1 ||
      global_batch % world_size != 0) {
    throw InputError(
        "sampler: need samples >= 1, 0 <= rank < world size and a global batch "
        "that splits evenly over the ranks");
  }
  per_rank_ = (num_samples + world_size - 1) / world_size;
  steps_ = StepsPerEpoch(num_samples, global_batch, world_size);
  SetEpoch(0);
}

void DistributedSampler::SetEpoch(int epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(num_samples_));
  for (int64_t i = 0; i < num_samples_; ++i) perm[static_cast<size_t>(i)] = i;
  // Our own Fisher-Yates over mt19937_64 (fully specified by the standard):
  // std::shuffle's algorithm is the library's choice, and the order must be
  // the same wherever a run is resumed.
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch) + 1);
  for (int64_t i = num_samples_ - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  order_.resize(static_cast<size_t>(per_rank_ * world_size_));
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = perm[i % perm.size()];
}

std::vector<int64_t> DistributedSampler::Batch(int64_t step) const {
  if (step < 0 || step >= steps_) throw InputError("sampler: step out of range");
  const int64_t taken = step * rank_batch_;  // per rank, before this step
  const int64_t count = std::min(rank_batch_, per_rank_ - taken);
  const int64_t begin = taken * world_size_ + rank_ * count;
  return std::vector<int64_t>(order_.begin() + begin, order_.begin() + begin + count);
}

}  // namespace accordion
