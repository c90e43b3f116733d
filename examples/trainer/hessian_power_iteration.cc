// How the Hessian eigenvalue estimate finds the top eigenvalue.
//
// The scenario: a loss 1/2 w'Aw whose Hessian A we built ourselves, with
// eigenvalues 6, 3, 1, -0.5 and 0.1 in a random basis, so the answer is known.
// HessianEigenEstimator (trainer/hessian.h) never sees A: it only asks
// autograd for Hessian-vector products H v by double backward, the way it
// does for a real model, and repeats v <- Hv / |Hv|. Each product shrinks
// the other directions by their eigenvalue's ratio to the top one (here at
// most 3/6), so the estimate lambda = v'Hv settles within a few iterations;
// the tolerance decides how many. Per block it answers for the block's own
// part of the Hessian (the diagonal block A_bb), not for the whole.
#include <cstdio>

#include <torch/torch.h>

#include "trainer/hessian.h"

int main() {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const torch::Tensor q = std::get<0>(torch::linalg_qr(torch::randn({5, 5}, gen, torch::kFloat64)));
  const torch::Tensor a = q.mm(torch::diag(torch::tensor({6.0, 3.0, 1.0, -0.5, 0.1}, torch::kFloat64))).mm(q.t());
  // w in two parameter tensors, as a model's layers would hold it.
  std::vector<torch::Tensor> w = {torch::ones({3}, torch::kFloat64).requires_grad_(true),
                                  torch::ones({2}, torch::kFloat64).requires_grad_(true)};
  const torch::Tensor all = torch::cat(w);
  const torch::Tensor loss = 0.5 * all.dot(a.mv(all));

  std::printf("top eigenvalue of a Hessian with eigenvalues 6, 3, 1, -0.5, 0.1\n");
  std::printf("%10s %12s %11s %10s\n", "tolerance", "estimate", "iterations", "error");
  for (double tolerance : {1e-1, 1e-3, 1e-6, 1e-9}) {
    const accordion::HessianEstimate e =
        accordion::HessianEigenEstimator(accordion::HessianOptions().tolerance(tolerance).max_iterations(200))
            .Estimate(loss, w);
    std::printf("%10.0e %12.6f %11d %10.1e\n", tolerance, e.eigenvalue, e.iterations, std::fabs(e.eigenvalue - 6));
  }
  const accordion::HessianEigenEstimator precise(accordion::HessianOptions().tolerance(1e-12).max_iterations(500));
  const torch::Tensor top_of_first_block = torch::linalg_eigvalsh(a.narrow(0, 0, 3).narrow(1, 0, 3), "L").max();
  std::printf("block of the first 3 entries: %.6f (top eigenvalue of A's 3x3 corner: %.6f)\n",
              precise.Estimate(loss, {w[0]}, "first").eigenvalue, top_of_first_block.item<double>());
}
