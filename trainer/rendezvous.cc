#include "trainer/rendezvous.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "common/errors.h"
#include "common/number_format.h"
#include "trainer/launcher.h"
#include "trainer/torch_pch.h"
#include "trainer/trainer.h"

namespace accordion {

namespace {

// What RendezvousGuard's terminate handler prints: the latest guard's (a
// worker has one rendezvous at a time; tests run two ranks as threads).
std::string guarded_rendezvous;
int guarded_rank = 0;
// The guard of this thread's rendezvous, for ConnectStore to tell its watch
// that c10d's store answered: the deadline is for the store's replies only
// (c10d reads them without a timeout of its own).
thread_local std::atomic<bool>* store_answered = nullptr;
// Where the guards' own lines go while c10d's log lines are held back.
std::atomic<int> real_stderr{STDERR_FILENO};

// What the guards change for the whole process - the terminate handler and
// standard error - changed by the first guard and restored by the last.
struct ProcessWideChanges {
  std::mutex mutex;
  int guards = 0;
  std::terminate_handler previous = nullptr;
  int saved_stderr = -1;  // the real standard error while c10d's is held
  int captured = -1;      // what c10d wrote meanwhile
};
ProcessWideChanges& Changes() {
  static ProcessWideChanges changes;
  return changes;
}

// How much later than c10d's own timeouts the watch ends a rendezvous: a
// store that is not there (nothing listens, a worker missing) is c10d's to
// report, with its own reason, at the timeout.
constexpr std::chrono::seconds kWatchGrace{1};

std::string RendezvousName(const RendezvousOptions& options) {
  return "rendezvous of " + std::to_string(options.world_size()) + " workers at " + options.master_addr() + ":" +
         std::to_string(options.master_port());
}

// Another service on the port: said the same way whichever thread of c10d's
// read its reply first, or when it never sends a whole one.
std::string NotAStore(const std::string& rendezvous, const std::string& why) {
  return rendezvous + " failed: what answers there is not a c10d store (" + why +
         "); is MASTER_PORT another service's port?";
}

// The one line a worker ends with from outside its main thread: the main
// thread is blocked in c10d, so this is the process's last word.
[[noreturn]] void ExitFromWatch(const std::string& what, int code) {
  std::fflush(stdout);
  ::dprintf(real_stderr.load(), "%s: error: rank %d: %s\n", program_invocation_short_name, guarded_rank, what.c_str());
  ::_exit(code);
}

// Copies what was written to `from` (from its start) to `to`.
void CopyFile(int from, int to) {
  char buffer[4096];
  ssize_t n = 0;
  off_t at = 0;
  while ((n = ::pread(from, buffer, sizeof buffer, at)) > 0) {
    if (::write(to, buffer, static_cast<size_t>(n)) != n) return;
    at += n;
  }
}

// Every rank publishes its WORLD_SIZE in the store and compares it with rank
// 0's (rank 0 with everyone's): a mismatch used to surface as Gloo's
// "[enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) ==
// bytes.size(). 136 vs 272", or as a timeout.
void AgreeOnWorldSize(c10d::Store& store, const RendezvousOptions& options) {
  const auto key = [](int rank) { return "accordion/world_size/" + std::to_string(rank); };
  const std::string mine = std::to_string(options.world_size());
  const auto publish = [&] { store.set(key(options.rank()), std::vector<uint8_t>(mine.begin(), mine.end())); };
  const auto differs = [&](int rank, std::string* theirs) {
    const std::vector<uint8_t> value = store.get(key(rank));
    *theirs = std::string(value.begin(), value.end());
    return *theirs != mine;
  };
  std::string theirs;
  if (options.rank() != 0) {
    // Rank 0's first, then ours: rank 0 (the store) outlives our answer.
    const bool mismatch = differs(0, &theirs);
    publish();
    if (mismatch) {
      throw InputError("WORLD_SIZE is " + mine + " for this worker and " + theirs +
                       " for rank 0; start every worker with the same WORLD_SIZE");
    }
    return;
  }
  publish();
  for (int rank = 1; rank < options.world_size(); ++rank) {
    try {
      differs(rank, &theirs);
    } catch (const c10::Error& e) {
      // c10d says "Socket Timeout": say who did not come.
      throw std::runtime_error("rank " + std::to_string(rank) + " of " + mine + " did not join within --timeout " +
                               FormatNumber(static_cast<double>(options.timeout().count()) / 1000) +
                               " s (was it started, with this MASTER_ADDR and MASTER_PORT?)");
    }
    if (theirs != mine) {
      throw InputError("WORLD_SIZE is " + mine + " for this worker and " + theirs + " for rank " +
                       std::to_string(rank) + "; start every worker with the same WORLD_SIZE");
    }
  }
}

// A MASTER_ADDR that names no host is one line at once: c10d retried it
// until the timeout, with a log line per retry.
void CheckMasterAddress(const RendezvousOptions& options) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(options.master_addr().c_str(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  // EAI_AGAIN (a DNS server that did not answer yet) is c10d's to retry.
  if (rc == EAI_NONAME || rc == EAI_FAIL) {
    throw InputError("MASTER_ADDR " + options.master_addr() + ": cannot resolve it (" + ::gai_strerror(rc) + ")");
  }
}

// Whether something accepts TCP connections at addr:port within `wait`. The
// watch asks when no reply came in time: a service that accepts and never
// answers is not a store (bad input); nothing accepting is an unreachable or
// not yet started rank 0, which PyTorch 1.13's store reported itself at the
// timeout and PyTorch 2's keeps retrying past it.
bool SomethingListens(const std::string& addr, int port, std::chrono::milliseconds wait) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool listens = false;
  for (const addrinfo* a = found; a != nullptr && !listens; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      listens = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t length = sizeof error;
      listens = ::poll(&p, 1, static_cast<int>(wait.count())) == 1 &&
                ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return listens;
}

[[noreturn]] void NotAStoreTerminate() {
  std::string why = "an exception in a c10d thread";
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    why = FirstLineOf(e);
  } catch (...) {
  }
  ExitFromWatch(NotAStore(guarded_rendezvous, why), kExitBadInput);
}

}  // namespace

RendezvousGuard::RendezvousGuard(const RendezvousOptions& options) : uncaught_(std::uncaught_exceptions()) {
  ProcessWideChanges& changes = Changes();
  {
    const std::lock_guard<std::mutex> lock(changes.mutex);
    guarded_rendezvous = RendezvousName(options);
    guarded_rank = options.rank();
    if (changes.guards++ == 0) {
      changes.previous = std::set_terminate(NotAStoreTerminate);
      // c10d logs (glog) each retry and failure before it throws; held back
      // here, shown only when the rendezvous succeeds, so a failure is our
      // one line.
      std::fflush(stderr);
      changes.saved_stderr = ::dup(STDERR_FILENO);
      changes.captured = ::memfd_create("accordion-rendezvous-log", MFD_CLOEXEC);
      if (changes.saved_stderr >= 0 && changes.captured >= 0 && ::dup2(changes.captured, STDERR_FILENO) >= 0) {
        real_stderr = changes.saved_stderr;
      } else {
        if (changes.saved_stderr >= 0) ::close(changes.saved_stderr);
        if (changes.captured >= 0) ::close(changes.captured);
        changes.saved_stderr = changes.captured = -1;
      }
    }
  }
  store_answered = &answered_;
  // Rank 0 hosts the store itself: what answers it is c10d's own server.
  const bool watch_replies = options.rank() != 0;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout() + kWatchGrace;
  const std::string within =
      "within --timeout " + FormatNumber(static_cast<double>(options.timeout().count()) / 1000) + " s";
  const std::string no_reply = NotAStore(guarded_rendezvous, "no whole reply " + within);
  const std::string nothing_listens = guarded_rendezvous + " failed: nothing accepted a connection at " +
                                      options.master_addr() + ":" + std::to_string(options.master_port()) + " " +
                                      within +
                                      " (is rank 0 started there, and MASTER_ADDR reachable from this machine?)";
  const std::string addr = options.master_addr();
  const int port = options.master_port();
  watch_ = std::thread([this, watch_replies, deadline, no_reply, nothing_listens, addr, port] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!ended_) {
      // A stop (SIGTERM, Ctrl-C) only sets a flag, and c10d's blocking reads
      // restart after it; nothing is written yet, so the stop is the exit.
      if (StopRequested()) ::_exit(kExitInterrupted);
      if (watch_replies && !answered_ && std::chrono::steady_clock::now() > deadline) {
        lock.unlock();
        const bool listens = SomethingListens(addr, port, std::chrono::milliseconds(1000));
        lock.lock();
        if (ended_) break;
        if (listens) ExitFromWatch(no_reply, kExitBadInput);
        ExitFromWatch(nothing_listens, kExitFailure);
      }
      ended_changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
  });
}

RendezvousGuard::~RendezvousGuard() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
  }
  ended_changed_.notify_one();
  watch_.join();
  store_answered = nullptr;
  ProcessWideChanges& changes = Changes();
  const std::lock_guard<std::mutex> lock(changes.mutex);
  if (--changes.guards > 0) return;
  if (changes.saved_stderr >= 0) {
    std::fflush(stderr);
    ::dup2(changes.saved_stderr, STDERR_FILENO);
    real_stderr = STDERR_FILENO;
    if (std::uncaught_exceptions() == uncaught_) CopyFile(changes.captured, STDERR_FILENO);
    ::close(changes.saved_stderr);
    ::close(changes.captured);
    changes.saved_stderr = changes.captured = -1;
  }
  std::set_terminate(changes.previous);
}

c10::intrusive_ptr<c10d::Store> ConnectStore(const RendezvousOptions& options) {
  c10d::TCPStoreOptions store;
  store.port = static_cast<uint16_t>(options.master_port());
  store.isServer = options.rank() == 0;
  store.numWorkers = static_cast<size_t>(options.world_size());
  // Rank 0 waits for the others in AgreeOnWorldSize: a worker of another
  // WORLD_SIZE is named there, where c10d's count would only time out.
  store.waitWorkers = options.rank() != 0;
  store.timeout = options.timeout();
  CheckMasterAddress(options);
  c10::intrusive_ptr<c10d::TCPStore> connected;
  try {
    connected = c10::make_intrusive<c10d::TCPStore>(options.master_addr(), store);
  } catch (const std::exception& e) {
    // PyTorch 1.13 says "Address already in use"; PyTorch 2's store
    // "... code: -98, name: EADDRINUSE, message: address already in use".
    const std::string said = FirstLineOf(e);
    if (store.isServer &&
        (said.find("Address already in use") != std::string::npos || said.find("EADDRINUSE") != std::string::npos)) {
      throw InputError("MASTER_PORT " + std::to_string(options.master_port()) + " is already in use on " +
                       options.master_addr() + " (another run, or a second worker started with RANK 0?)");
    }
    throw;
  }
  if (store_answered != nullptr) *store_answered = true;  // its reply to the join was a c10d store's
  AgreeOnWorldSize(*connected, options);
  return connected;
}

void ThrowIfNotAStore(const RendezvousOptions& options, const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e) != nullptr) throw;  // ConnectStore's own answers, as they are
  // c10d checks each reply of the store ("Stop_waiting response is
  // expected"; PyTorch 2's client pings first: "Ping failed, invalid value
  // returned from server"): a reply it did not expect, or a length no reply
  // has, comes from another service.
  const std::string why = FirstLineOf(e);
  if (why.find("response is expected") != std::string::npos || why.find("Ping failed") != std::string::npos ||
      dynamic_cast<const std::length_error*>(&e) != nullptr) {
    throw InputError(NotAStore(RendezvousName(options), why));
  }
}

std::string RendezvousFailure(const RendezvousOptions& options, const std::exception& e) {
  return RendezvousName(options) + " failed: " + FirstLineOf(e);
}

std::string FirstLineOf(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

}  // namespace accordion
