// NcclCommunicator: the Communicator over c10d's ProcessGroupNCCL, one CUDA
// device per rank (LOCAL_RANK's), rendezvous through the same TCPStore as
// Gloo. Selected by --backend nccl --device cuda; nothing above the
// Communicator interface changes.
//
// Gradient buckets live on the GPU and go to NCCL as they are. The small
// CPU tensors of the trainer's control messages (AllReduceSumDoubles,
// AllGatherBytes: losses, trace samples) are staged through the device and
// copied back when the collective is waited on.
//
// Wait() blocks the host until the collective finished (NCCL's own wait only
// orders the current stream after it), so "waited" means the same on both
// backends and the trace's durations are host-observed. Blocking wait is
// turned on, so a collective that outlives the timeout throws instead of
// hanging.
//
// This header needs no CUDA; the implementation is compiled only where CUDA
// and NCCL headers exist and linked only into a CUDA LibTorch build
// (ACCORDION_HAVE_NCCL). Elsewhere ConnectNccl throws InputError.
#ifndef ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_
#define ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "trainer/communicator.h"

namespace accordion {

class NcclOptions {
 public:
  NcclOptions& rank(int v) { rank_ = v; return *this; }
  NcclOptions& world_size(int v) { world_size_ = v; return *this; }
  NcclOptions& master_addr(std::string v) { master_addr_ = std::move(v); return *this; }
  NcclOptions& master_port(int v) { master_port_ = v; return *this; }
  // The CUDA device this rank drives (normally LOCAL_RANK).
  NcclOptions& device_index(int v) { device_index_ = v; return *this; }
  NcclOptions& timeout(std::chrono::milliseconds v) { timeout_ = v; return *this; }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  const std::string& master_addr() const { return master_addr_; }
  int master_port() const { return master_port_; }
  int device_index() const { return device_index_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  int rank_ = 0;
  int world_size_ = 1;
  std::string master_addr_ = "127.0.0.1";
  int master_port_ = 29500;
  int device_index_ = 0;
  std::chrono::milliseconds timeout_ = std::chrono::seconds(45);
};

// Rendezvous and an NCCL process group on the options' device. Throws
// CommunicationError when the ranks do not all arrive, InputError when this
// build has no NCCL communicator.
std::unique_ptr<Communicator> ConnectNccl(const NcclOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_
