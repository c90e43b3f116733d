// ProcessGroupCommunicator: the Communicator interface over any c10d
// process group - the Gloo one accordion-train creates (gloo_communicator.h)
// or the one a PyTorch script initialised (the Python package's hook) - so
// both drive their collectives the same way, with no Python in between.
//
// Thread safety: as Communicator.
#ifndef ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_
#define ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <memory>
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

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return backend_; }
  std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) override;
  std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) override;
  std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) override;
  void Barrier() override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;  // before group_: destroyed after it
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  int rank_, world_size_;
  std::string backend_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_PROCESS_GROUP_COMMUNICATOR_H_
