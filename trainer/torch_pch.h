// The LibTorch headers the trainer uses, precompiled once (see
// trainer/CMakeLists.txt) and shared by the trainer library, its tool, tests,
// example and benchmark: a translation unit that parses torch/torch.h from
// scratch costs ~18 s on a small machine.
#ifndef ACCORDION_TRAINER_TORCH_PCH_H_
#define ACCORDION_TRAINER_TORCH_PCH_H_

#include <torch/torch.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#endif  // ACCORDION_TRAINER_TORCH_PCH_H_
