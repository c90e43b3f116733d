// ConnectGloo: the Communicator over c10d's ProcessGroupGloo (CPU tensors),
// after the rendezvous every communicator shares (RendezvousOptions).
//
// Gloo's own sockets bind to `bind_addr` (loopback by default, so a local run
// opens nothing to the network). Every collective fails after the
// rendezvous' timeout, so a hung peer ends the run instead of blocking it; a
// dead one fails it at once, when its sockets close.
#ifndef ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
#define ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "trainer/communicator.h"

namespace accordion {

class GlooOptions {
 public:
  GlooOptions& rendezvous(RendezvousOptions v) { rendezvous_ = std::move(v); return *this; }
  GlooOptions& bind_addr(std::string v) { bind_addr_ = std::move(v); return *this; }
  GlooOptions& threads(int v) { threads_ = v; return *this; }  // Gloo's worker threads

  const RendezvousOptions& rendezvous() const { return rendezvous_; }
  const std::string& bind_addr() const { return bind_addr_; }
  int threads() const { return threads_; }

 private:
  RendezvousOptions rendezvous_;
  std::string bind_addr_ = "127.0.0.1";
  int threads_ = 2;  // as in PyTorch
};

// Rendezvous with the other ranks and a Gloo process group; throws
// CommunicationError when they do not all arrive within the timeout.
std::unique_ptr<Communicator> ConnectGloo(const GlooOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
