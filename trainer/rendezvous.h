// The rendezvous every c10d communicator starts with: rank 0 hosts a
// TCPStore at MASTER_ADDR:MASTER_PORT, the others connect to it. Shared by
// the Gloo and NCCL communicators; private to trainer/.
#ifndef ACCORDION_TRAINER_RENDEZVOUS_H_
#define ACCORDION_TRAINER_RENDEZVOUS_H_

#include <chrono>
#include <exception>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "trainer/communicator.h"

namespace accordion {

// Waits until all `world_size` ranks arrived or `timeout` passed (throws).
c10::intrusive_ptr<c10d::Store> ConnectStore(const RendezvousOptions& options);
// While one lives, an exception escaping a thread of c10d's own (its store
// client reads replies there) ends the worker with one line and exit 2
// instead of std::terminate's abort: during the rendezvous that means what
// answered at MASTER_ADDR:MASTER_PORT is not a c10d store - another
// service's reply read as a length makes the reader allocate without bound.
// Constructed around a communicator's rendezvous, before ConnectStore().
class RendezvousGuard {
 public:
  explicit RendezvousGuard(const RendezvousOptions& options);
  ~RendezvousGuard();
  RendezvousGuard(const RendezvousGuard&) = delete;
  RendezvousGuard& operator=(const RendezvousGuard&) = delete;

 private:
  std::terminate_handler previous_;
};

// Throws InputError (exit 2) when `e`, thrown by a rendezvous, says that what
// answered at MASTER_ADDR:MASTER_PORT is not a c10d store; returns otherwise.
void ThrowIfNotAStore(const RendezvousOptions& options, const std::exception& e);

// "rendezvous of 4 workers at 127.0.0.1:29500 failed: <why>", for a
// CommunicationError.
std::string RendezvousFailure(const RendezvousOptions& options, const std::exception& e);

// An exception's first line: c10::Error appends a C++ backtrace people do
// not need.
std::string FirstLineOf(const std::exception& e);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RENDEZVOUS_H_
