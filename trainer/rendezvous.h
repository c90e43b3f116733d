// The rendezvous every c10d communicator starts with: rank 0 hosts a
// TCPStore at MASTER_ADDR:MASTER_PORT, the others connect to it. Shared by
// the Gloo and NCCL communicators; private to trainer/.
#ifndef ACCORDION_TRAINER_RENDEZVOUS_H_
#define ACCORDION_TRAINER_RENDEZVOUS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "trainer/communicator.h"

namespace accordion {

// Waits until all `world_size` ranks arrived or `timeout` passed (throws).
// Throws InputError for a MASTER_ADDR that resolves to nothing, a
// MASTER_PORT rank 0 cannot listen on, and workers of different WORLD_SIZE.
c10::intrusive_ptr<c10d::Store> ConnectStore(const RendezvousOptions& options);
// While one lives, an exception escaping a thread of c10d's own (its store
// client reads replies there) ends the worker with one line and exit 2
// instead of std::terminate's abort: during the rendezvous that means what
// answered at MASTER_ADDR:MASTER_PORT is not a c10d store - another
// service's reply read as a length makes the reader allocate without bound.
// Constructed around a communicator's rendezvous, before ConnectStore().
//
// It also watches the rendezvous from a thread of its own, because c10d's
// store client reads replies without a timeout and restarts its reads after
// a signal: a worker whose MASTER_PORT is answered by a service that sends
// part of a reply and holds the connection would wait for ever, deaf to
// SIGTERM. A stop request (trainer.h) ends the worker with exit 130; no whole
// store reply by --timeout (plus a second, so that c10d's own timeouts speak
// first) ends it with the not-a-store line and exit 2. c10d's log lines
// during the rendezvous are held back and shown only if it succeeds.
// Guards may overlap (tests run two ranks as threads): what they change for
// the whole process (the terminate handler, standard error) the first one
// changes and the last one restores.
class RendezvousGuard {
 public:
  explicit RendezvousGuard(const RendezvousOptions& options);
  ~RendezvousGuard();
  RendezvousGuard(const RendezvousGuard&) = delete;
  RendezvousGuard& operator=(const RendezvousGuard&) = delete;

 private:
  int uncaught_;                       // std::uncaught_exceptions() at construction
  std::atomic<bool> answered_{false};  // c10d's store answered (ConnectStore)
  std::mutex mutex_;
  std::condition_variable ended_changed_;
  bool ended_ = false;  // guarded by mutex_
  std::thread watch_;
};

// Throws InputError (exit 2) when `e`, thrown by a rendezvous, says that what
// answered at MASTER_ADDR:MASTER_PORT is not a c10d store, and rethrows `e`
// when it is an InputError already (ConnectStore's); returns otherwise. Call
// it in the handler that caught `e`.
void ThrowIfNotAStore(const RendezvousOptions& options, const std::exception& e);

// "rendezvous of 4 workers at 127.0.0.1:29500 failed: <why>", for a
// CommunicationError.
std::string RendezvousFailure(const RendezvousOptions& options, const std::exception& e);

// An exception's first line: c10::Error appends a C++ backtrace people do
// not need.
std::string FirstLineOf(const std::exception& e);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RENDEZVOUS_H_
