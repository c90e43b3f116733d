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
//
// Thread safety: as Communicator (communicator.h).
#ifndef ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_
#define ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "common/options.h"
#include "trainer/communicator.h"

namespace accordion {

class NcclOptions {
  /// Where and how the ranks meet. Default: RendezvousOptions().
  ACCORDION_ARG(RendezvousOptions, rendezvous);
  /// The CUDA device this rank drives (normally LOCAL_RANK). Default: 0.
  ACCORDION_ARG(int, device_index) = 0;
};

// Rendezvous and an NCCL process group on the options' device. Throws
// CommunicationError when the ranks do not all arrive, InputError when this
// build has no NCCL communicator.
std::unique_ptr<Communicator> ConnectNccl(const NcclOptions& options);

// What the NCCL communicator was compiled against ("NCCL 2.28.9, CUDA 13.0"),
// or "" in a build without it.
std::string NcclBuildVersion();

}  // namespace accordion

#endif  // ACCORDION_TRAINER_NCCL_COMMUNICATOR_H_
