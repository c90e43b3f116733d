// ConnectGloo: the Communicator over c10d's ProcessGroupGloo (CPU tensors),
// after the rendezvous every communicator shares (RendezvousOptions).
//
// Gloo's own sockets bind to `bind_addr` (loopback by default, so a local run
// opens nothing to the network). Every collective fails after the
// rendezvous' timeout, so a hung peer ends the run instead of blocking it; a
// dead one fails it at once, when its sockets close.
//
// Thread safety: as Communicator (communicator.h); Gloo's own threads
// complete the work and stamp its completion time.
#ifndef ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
#define ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "trainer/communicator.h"
#include "trainer/communicator_options.h"  // GlooOptions

namespace accordion {

// Rendezvous with the other ranks and a Gloo process group; throws
// CommunicationError when they do not all arrive within the timeout.
std::unique_ptr<Communicator> ConnectGloo(const GlooOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
