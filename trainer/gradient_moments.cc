#include "trainer/gradient_moments.h"

#include "trainer/torch_pch.h"

namespace accordion {

void AccumulateSquaredNorms(const std::vector<torch::Tensor>& views, const torch::Tensor& ids, double weight,
                            torch::Tensor& moments) {
  // One fused norm over the bucket's layers, squared in float64.
  const torch::Tensor norms = torch::stack(at::_foreach_norm(views, 2)).to(torch::kFloat64);
  moments.index_add_(0, ids, norms.square_(), weight);
}

}  // namespace accordion
