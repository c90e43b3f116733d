// RendezvousOptions and GlooOptions: where the ranks of a run meet and how
// the Gloo communicator binds. Apart from communicator.h and
// gloo_communicator.h, which need LibTorch, so that code without it
// (accordion-train's flags, the collective benchmark's) reads their defaults
// instead of restating them.
#ifndef ACCORDION_TRAINER_COMMUNICATOR_OPTIONS_H_
#define ACCORDION_TRAINER_COMMUNICATOR_OPTIONS_H_

#include <chrono>
#include <string>

#include "common/options.h"

namespace accordion {

// Where the ranks of a run meet: rank 0 hosts a c10d TCPStore at
// master_addr:master_port and every rank connects to it. Every communicator
// starts with this rendezvous.
class RendezvousOptions {
  /// This process's rank. Default: 0.
  ACCORDION_ARG(int, rank) = 0;
  /// Ranks in the job. Default: 1.
  ACCORDION_ARG(int, world_size) = 1;
  /// Where rank 0's store listens. Default: "127.0.0.1".
  ACCORDION_ARG(std::string, master_addr) = "127.0.0.1";
  /// The port of rank 0's store. Default: 29500.
  ACCORDION_ARG(int, master_port) = 29500;
  /// How long the rendezvous and then every collective may take before it
  /// fails with CommunicationError. Default: 45 s.
  ACCORDION_ARG(std::chrono::milliseconds, timeout) = std::chrono::seconds(45);
};

class GlooOptions {
  /// Where and how the ranks meet. Default: RendezvousOptions().
  ACCORDION_ARG(RendezvousOptions, rendezvous);
  /// The address Gloo's transport binds. Default: "127.0.0.1".
  ACCORDION_ARG(std::string, bind_addr) = "127.0.0.1";
  /// Gloo's worker threads. Default: 2, as in PyTorch.
  ACCORDION_ARG(int, threads) = 2;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_COMMUNICATOR_OPTIONS_H_
