// HessianEigenEstimator: the top eigenvalue of the loss's Hessian, by power
// iteration on Hessian-vector products - the second regime detector (sharp
// curvature early in training and after LR decays) the analysis compares
// with Accordion's gradient norms.
//
//   g = dL/dw with a graph (create_graph), once;
//   H v = d(g . v)/dw by double backward, once per iteration;
//   v <- H v / |H v|, lambda = v . H v, until lambda changes by less than
//   `tolerance` relative to the previous one or `max_iterations` are spent.
// Power iteration finds the eigenvalue largest in magnitude (normally the
// top, positive one), as PyHessian does.
//
// Distributed: each rank builds its loss on its shard of the fixed batch,
// scaled so the shards' losses add up to the whole batch's mean; the
// products are summed by all-reduce, so every rank holds the same v and
// lambda, takes the same number of iterations and none idles past a timeout.
// Per block: the same on the block's diagonal part of the Hessian (v is zero
// outside the block).
#ifndef ACCORDION_TRAINER_HESSIAN_H_
#define ACCORDION_TRAINER_HESSIAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "trainer/communicator.h"
#include "trainer/hessian_options.h"

namespace accordion {

struct HessianEstimate {
  std::string block;  // "" for the whole model
  double eigenvalue = 0;
  int iterations = 0;      // Hessian-vector products computed
  bool converged = false;  // the tolerance was met before the cap
  double seconds = 0;
};

// A named group of parameters (e.g. a top-level module's weights and biases).
struct ParameterBlock {
  std::string name;
  std::vector<torch::Tensor> parameters;
};

// Blocks of `named` parameters by their name's first component
// ("layer1.0.conv1.weight" -> "layer1"), in first-appearance order.
std::vector<ParameterBlock> TopLevelBlocks(const std::vector<std::pair<std::string, torch::Tensor>>& named);

class HessianEigenEstimator {
 public:
  // `comm` sums the products over ranks; null for a single process.
  explicit HessianEigenEstimator(const HessianOptions& options, Communicator* comm = nullptr);

  // Top eigenvalue of the Hessian of `loss` with respect to `parameters`.
  // `loss` must still hold its graph; it is kept (retain_graph) so the same
  // loss can serve several blocks. Collective when a communicator is given.
  HessianEstimate Estimate(const torch::Tensor& loss, const std::vector<torch::Tensor>& parameters,
                           const std::string& block = "") const;

  // The whole module's estimate (block ""), then, with `per_block`, one per
  // TopLevelBlocks block. The module is put in eval mode first - BatchNorm
  // uses its running statistics and leaves them alone, dropout is off - and
  // `loss` is built once; the module's mode is restored afterwards. The
  // whole-model estimate's seconds include building the loss.
  std::vector<HessianEstimate> EstimateModule(torch::nn::Module& module, const std::function<torch::Tensor()>& loss,
                                              bool per_block) const;

 private:
  // H v summed over ranks; `grads` hold the graph of dL/dw.
  std::vector<torch::Tensor> Product(const std::vector<torch::Tensor>& grads,
                                     const std::vector<torch::Tensor>& parameters,
                                     const std::vector<torch::Tensor>& v) const;

  HessianOptions options_;
  Communicator* comm_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_HESSIAN_H_
