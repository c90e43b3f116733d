// HessianOptions: how HessianEigenEstimator (hessian.h) runs its power
// iteration. Apart from hessian.h so that code without LibTorch
// (accordion-train's flags, train_options.h) can hold them and read their
// defaults.
#ifndef ACCORDION_TRAINER_HESSIAN_OPTIONS_H_
#define ACCORDION_TRAINER_HESSIAN_OPTIONS_H_

#include <cstdint>

#include "common/options.h"

namespace accordion {

class HessianOptions {
  /// Stop once |lambda - lambda_prev| <= tolerance * |lambda_prev|. Default: 1e-3.
  ACCORDION_ARG(double, tolerance) = 1e-3;
  /// Most power iterations. Default: 100.
  ACCORDION_ARG(int, max_iterations) = 100;
  /// Seed of the starting vector, the same on every rank. Default: 0.
  ACCORDION_ARG(uint64_t, seed) = 0;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_HESSIAN_OPTIONS_H_
