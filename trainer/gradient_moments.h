// AccumulateSquaredNorms: the per-step share of AdaQS's gradient moments -
// each layer's squared norm, weighted, added into a float64 accumulator -
// in a handful of device ops per bucket and no host synchronisation
// (GradientExchange runs it on every bucket it launches; the compression
// bench times it).
//
// Thread safety: a pure function of its arguments; `moments` is the
// caller's to guard.
#ifndef ACCORDION_TRAINER_GRADIENT_MOMENTS_H_
#define ACCORDION_TRAINER_GRADIENT_MOMENTS_H_

#include <vector>

#include <torch/types.h>

namespace accordion {

// moments[ids[i]] += weight * |views[i]|^2 for every i. `ids` is a long
// tensor on the views' device, `moments` float64 on it.
void AccumulateSquaredNorms(const std::vector<torch::Tensor>& views, const torch::Tensor& ids, double weight,
                            torch::Tensor& moments);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_GRADIENT_MOMENTS_H_
