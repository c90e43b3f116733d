// ErrorProfiler: each layer's relative compression error at every candidate
// level of the run's scheme, measured at a regime check on the epoch's
// accumulated raw gradient D (all ranks): |D - C(D)| / |D|
// (ErrorProfileRecord). The candidates are PowerSGD ranks 1, 2, 4, 8 and
// TopK 1, 10, 25, 50, 99 %, plus the run's own two levels.
//
//   TopK: C keeps the level's TopKCount largest entries by magnitude.
//   PowerSGD: C is the best rank-r approximation (from D's singular
//     values): the fixed point its warm-started power iteration approaches,
//     so it does not depend on the iteration's random start.
//   A level at which the scheme sends the layer dense has no error (0).
//
// Thread safety: a pure function of its arguments; runs on the tensors'
// device and reads the results back.
#ifndef ACCORDION_TRAINER_ERROR_PROFILE_H_
#define ACCORDION_TRAINER_ERROR_PROFILE_H_

#include <vector>

#include <torch/types.h>

#include "analysis/communication_accounting.h"
#include "traces/records.h"

namespace accordion {

// The candidate levels of `scheme` with `run_levels` added, ascending;
// empty for schemes without compression error (dense, batch).
std::vector<double> ErrorProfileLevels(Scheme scheme, const std::vector<double>& run_levels);

// One row per layer and level, for `epoch`. `sums` are the layers'
// accumulated gradients (shaped like `layers`).
std::vector<ErrorProfileRecord> ProfileErrors(const std::vector<torch::Tensor>& sums,
                                              const std::vector<LayerInfo>& layers, const CommunicationScheme& scheme,
                                              const std::vector<double>& levels, int epoch);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_ERROR_PROFILE_H_
