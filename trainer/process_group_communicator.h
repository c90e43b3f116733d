// ProcessGroupCommunicator: the Communicator interface over any c10d
// process group - the Gloo one accordion-train creates (gloo_communicator.h)
// or the one a PyTorch script initialised (the Python package's hook) - so
// both drive their collectives the same way, with no Python in between.
// The group is a c10d::ProcessGroup (PyTorch 1.13's Gloo, any script's
// group) or a c10d::Backend (PyTorch 2's Gloo, which is no process group).
//
// Thread safety: as Communicator.
#ifndef ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_
#define ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>
#include <optional>
#include <string>

#include "trainer/communicator.h"

namespace accordion {

class ProcessGroupCommunicator : public Communicator {
 public:
  // `group` runs the collectives as `rank` of `world_size`; `store`, when
  // given, lives as long as the communicator (the rendezvous store of a
  // group this process created).
  ProcessGroupCommunicator(c10::intrusive_ptr<c10d::ProcessGroup> group, int rank, int world_size, std::string backend,
                           c10::intrusive_ptr<c10d::Store> store = {});
  ProcessGroupCommunicator(c10::intrusive_ptr<c10d::Backend> group, int rank, int world_size, std::string backend,
                           c10::intrusive_ptr<c10d::Store> store = {});
  ~ProcessGroupCommunicator() override;

  // Collectives given CPU tensors run them on copies on `device` and copy
  // the result back on Wait(): for a group whose backend takes device
  // tensors only (NCCL), under a caller whose small messages (sums of
  // losses, option checks) are host tensors. Default: none staged.
  void StageHostTensorsOn(torch::Device device);

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return backend_; }
  std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) override;
  std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) override;
  std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) override;
  void Barrier() override;

 private:
  class Collectives;  // the group's collectives, whichever c10d type it is

  torch::Tensor Staged(const torch::Tensor& tensor) const;

  c10::intrusive_ptr<c10d::Store> store_;  // before group_: destroyed after it
  std::unique_ptr<Collectives> group_;
  int rank_, world_size_;
  std::string backend_;
  std::optional<torch::Device> stage_device_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_
