// Communicator: the collectives data-parallel training needs, and nothing
// else. Gloo (gloo_communicator.h, CPU tensors) and NCCL
// (nccl_communicator.h, one GPU per rank) implement it; nothing above this
// interface may know which one runs.
//
// Every call is collective: all ranks must issue the same calls in the same
// order. Calls return at once with a CollectiveWork to wait on, so gradient
// buckets can travel while backward still runs.
//
// Thread safety: a Communicator is driven by one thread at a time - the
// training thread, or autograd's thread during backward() while the training
// thread waits in it (GradientExchange's hooks). The backend's own threads
// complete the work; a CollectiveWork may be waited on from any one thread.
#ifndef ACCORDION_TRAINER_COMMUNICATOR_H_
#define ACCORDION_TRAINER_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "trainer/communicator_options.h"

namespace accordion {

// A peer died, hung past the timeout or the transport failed. Not an
// InputError: the run was fine, the cluster was not.
class CommunicationError : public std::runtime_error {
 public:
  explicit CommunicationError(const std::string& what) : std::runtime_error(what) {}
};

class CollectiveWork {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~CollectiveWork() = default;
  // Blocks until the collective completed on this rank; throws
  // CommunicationError when it failed or timed out.
  virtual void Wait() = 0;
  // When it completed (meaningful after Wait()).
  virtual Clock::time_point completed_at() const = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;  // "gloo", "nccl"

  // Sums a contiguous tensor over all ranks, in place.
  virtual std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) = 0;
  // Every rank contributes `input` (contiguous, n entries); `output`
  // (world_size x n, same dtype) receives row r from rank r.
  virtual std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) = 0;
  // Copies `root`'s tensor into every rank's, in place.
  virtual std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) = 0;
  // Returns once every rank has called it.
  virtual void Barrier() = 0;
};

// Conveniences built on the interface, for any implementation.

// All ranks' byte strings, in rank order (sizes may differ).
std::vector<std::string> AllGatherBytes(Communicator& comm, const std::string& mine);
// Sums doubles over all ranks and returns them.
std::vector<double> AllReduceSumDoubles(Communicator& comm, const std::vector<double>& values);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_COMMUNICATOR_H_
