#include "trainer/launcher.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "common/cli.h"
#include "common/errors.h"
#include "common/fork_process.h"

namespace accordion {

namespace {

volatile sig_atomic_t g_signals = 0;  // SIGINT / SIGTERM received by the launcher

void OnSignal(int) { g_signals = g_signals + 1; }

int IntFromEnv(const char* name, std::optional<int> fallback, int min_value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    if (fallback) return *fallback;
    throw InputError(std::string("environment variable ") + name + " is not set (needed with WORLD_SIZE)");
  }
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < min_value || v > 1 << 20) {
    throw InputError(std::string("environment variable ") + name + "='" + text + "' is not a valid value");
  }
  return static_cast<int>(v);
}

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;  // waitpid status once exited
};

std::string Describe(const Worker& w) {
  const std::string who = "worker rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + ")";
  if (WIFSIGNALED(w.status)) {
    const int sig = WTERMSIG(w.status);
    return who + " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return who + " exited with code " + std::to_string(WEXITSTATUS(w.status));
}

bool Succeeded(const Worker& w) { return WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0; }
bool Interrupted(const Worker& w) { return WIFEXITED(w.status) && WEXITSTATUS(w.status) == kExitInterrupted; }
// Exit codes whose worker printed its reason in one line (common/errors.h).
bool SaidWhy(int code) { return code == kExitBadInput || code == kExitIoFailure; }
// Every rank of a diverged run ends with this code, and rank 0 has said why.
bool Diverged(const Worker& w) { return WIFEXITED(w.status) && WEXITSTATUS(w.status) == kExitDiverged; }

void SignalAll(std::vector<Worker>& workers, int sig) {
  for (const Worker& w : workers) {
    if (w.running) ::kill(w.pid, sig);
  }
}

[[noreturn]] void ExecWorker(char** argv, const LauncherOptions& o, int rank, int port) {
  // The worker must not outlive a launcher that was killed outright.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string r = std::to_string(rank), n = std::to_string(o.nproc()), p = std::to_string(port);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", n.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  ::setenv("MASTER_ADDR", o.master_addr().c_str(), 1);
  ::setenv("MASTER_PORT", p.c_str(), 1);
  ::setenv("ACCORDION_LAUNCHED", "1", 1);
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "%s: error: cannot start a worker: %s\n", o.tool_name().c_str(), std::strerror(errno));
  ::_exit(1);
}

}  // namespace

std::optional<WorkerEnvironment> WorkerEnvironmentFromEnv() {
  const char* world = std::getenv("WORLD_SIZE");
  if (world == nullptr || *world == '\0') return std::nullopt;
  WorkerEnvironment env;
  env.world_size = IntFromEnv("WORLD_SIZE", std::nullopt, 1);
  env.rank = IntFromEnv("RANK", std::nullopt, 0);
  env.local_rank = IntFromEnv("LOCAL_RANK", env.rank, 0);
  env.local_world_size = IntFromEnv("LOCAL_WORLD_SIZE", env.world_size, 1);
  env.master_port = IntFromEnv("MASTER_PORT", std::nullopt, 1);
  if (env.master_port > 65535) throw InputError("MASTER_PORT must be a TCP port");
  if (env.rank >= env.world_size) throw InputError("RANK must be below WORLD_SIZE");
  const char* addr = std::getenv("MASTER_ADDR");
  env.master_addr = addr != nullptr && *addr != '\0' ? addr : "127.0.0.1";
  const char* launched = std::getenv("ACCORDION_LAUNCHED");
  env.launched = launched != nullptr && std::string(launched) == "1";
  return env;
}

namespace {

// Binds a listening-style socket to `addr`:`port` (0: any free one) and
// returns the port; SO_REUSEADDR as c10d's store sets it, so only a port
// someone listens on counts as taken. A given port is refused only when it is
// taken: an address this host cannot bind (a name, another host's) is left
// for c10d to resolve.
int ProbePort(const std::string& addr, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("cannot create a socket");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    ::close(fd);
    if (port > 0) return port;
    throw InputError("'" + addr + "' is not an IPv4 address");
  }
  socklen_t len = sizeof(sa);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) {
      throw InputError("MASTER_PORT " + std::to_string(port) + " is already in use on " + addr +
                       " (another run?); choose a free port, or unset MASTER_PORT and the launcher picks one");
    }
    if (port > 0) return port;
    throw InputError("cannot bind to " + addr + ": " + std::strerror(err));
  }
  ::close(fd);
  return ntohs(sa.sin_port);
}

}  // namespace

int PickFreePort(const std::string& addr) { return ProbePort(addr, 0); }

namespace {

// MemAvailable of /proc/meminfo: free memory plus what the kernel can
// reclaim; -1 when unknown.
int64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

}  // namespace

void CheckBindAddress(const std::string& addr, const std::string& flag) {
  const std::string what = flag + " " + addr;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error = ::getaddrinfo(addr.c_str(), nullptr, &hints, &found);
  if (error != 0) throw InputError(what + ": cannot resolve it (" + ::gai_strerror(error) + ")");
  int bind_error = 0;
  bool bound = false;
  for (const addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;  // port 0: any
    if (!bound) bind_error = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (!bound) {
    throw InputError(what + " is not an address of this machine (" + std::strerror(bind_error) +
                     "); give one of its own, e.g. the address the other nodes reach it at");
  }
}

std::string LocalWorkerLimitText() {
  return "at most " + std::to_string(kMaxWorkersPerCore) + " per core, one per " +
         std::to_string(kWorkerMemoryBytes >> 20) + " MiB of available memory, within the process limit";
}

void CheckLocalWorkers(int nproc, const std::string& flag) {
  const std::string what = flag + " " + std::to_string(nproc);
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (nproc > cores * kMaxWorkersPerCore) {
    throw InputError(what + ": this machine has " + std::to_string(cores) + " cores and runs at most " +
                     std::to_string(cores * kMaxWorkersPerCore) + " local workers (" +
                     std::to_string(kMaxWorkersPerCore) + " per core)");
  }
  const int64_t memory = AvailableMemoryBytes();
  if (memory >= 0 && nproc > std::max<int64_t>(1, memory / kWorkerMemoryBytes)) {
    throw InputError(what + ": " + std::to_string(memory >> 20) + " MiB of memory are available, room for " +
                     std::to_string(std::max<int64_t>(1, memory / kWorkerMemoryBytes)) + " workers of " +
                     std::to_string(kWorkerMemoryBytes >> 20) + " MiB");
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto room = static_cast<int64_t>(limit.rlim_cur / kThreadsPerWorkerProcess);
    if (nproc > std::max<int64_t>(1, room)) {
      throw InputError(what + ": the process limit (ulimit -u " + std::to_string(limit.rlim_cur) +
                       ") leaves room for " + std::to_string(std::max<int64_t>(1, room)) + " workers of " +
                       std::to_string(kThreadsPerWorkerProcess) + " threads");
    }
  }
}

int Launcher::Run(char** argv, const std::function<void()>& on_failure) {
  CheckLocalWorkers(options_.nproc(), "--nproc");  // the tools check it earlier; this is the last line
  // A taken port would fail inside c10d's store, in several lines of its log.
  const int port = options_.master_port() > 0 ? ProbePort(options_.master_addr(), options_.master_port())
                                              : PickFreePort(options_.master_addr());
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  std::vector<Worker> workers(static_cast<size_t>(options_.nproc()));
  int running = 0;
  for (int rank = 0; rank < options_.nproc(); ++rank) {
    // A stop asked for while workers start: start no more, stop those started.
    if (g_signals > 0) break;
    const pid_t pid = ForkProcess();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) ExecWorker(argv, options_, rank, port);
    workers[static_cast<size_t>(rank)] = {rank, pid, true, 0};
    ++running;
  }
  const bool all_started = running == options_.nproc();

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> kill_at;  // SIGKILL whoever is left at this time
  std::string failure;
  int failure_code = 0;
  int forwarded = 0;
  bool interrupted = false;
  bool diverged = false;
  while (running > 0) {
    // Reap everything that ended since the last look; a worker killed by a
    // signal is the cause, the peers that then lost it are the consequence.
    bool reaped = false;
    for (Worker& w : workers) {
      if (!w.running || ::waitpid(w.pid, &w.status, WNOHANG) != w.pid) continue;
      w.running = false;
      reaped = true;
      --running;
      if (Succeeded(w)) continue;
      // A worker still starting has no handler yet: the stop (forwarded, or
      // sent to the whole group) ends it by the signal itself, and that is
      // the stop, not a failure.
      const bool stopped_by_us =
          g_signals > 0 && WIFSIGNALED(w.status) &&
          (WTERMSIG(w.status) == SIGINT || WTERMSIG(w.status) == SIGTERM || WTERMSIG(w.status) == SIGKILL);
      if (Interrupted(w) || stopped_by_us) {
        interrupted = true;
        continue;
      }
      if (Diverged(w)) {
        diverged = true;
        continue;
      }
      // Workers this launcher then stopped with signals are not the cause,
      // nor is a peer that lost the connection to a worker that refused its
      // input or could not write (exit 2 or 4, with its reason).
      const bool signaled_cause = WIFSIGNALED(w.status) && !kill_at && failure.find("signal") == std::string::npos;
      const bool refused_input =
          WIFEXITED(w.status) && SaidWhy(WEXITSTATUS(w.status)) && failure.find("signal") == std::string::npos;
      if (failure.empty() || signaled_cause || refused_input) {
        failure = Describe(w);
        failure_code = WIFEXITED(w.status) ? WEXITSTATUS(w.status) : 1;
      }
    }
    if (reaped && !failure.empty() && !kill_at) {
      SignalAll(workers, SIGTERM);
      kill_at = Clock::now() + std::chrono::milliseconds(static_cast<int>(options_.grace_s() * 1000));
    }
    const int signals = g_signals;
    if (signals > forwarded) {
      // The terminal sends Ctrl-C to the workers too; forwarding covers a
      // kill aimed at the launcher alone. A second signal stops waiting.
      SignalAll(workers, signals == 1 ? SIGINT : SIGKILL);
      forwarded = signals;
    }
    if (kill_at && Clock::now() >= *kill_at) {
      SignalAll(workers, SIGKILL);
      kill_at = Clock::now() + std::chrono::hours(1);
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  if (!failure.empty()) {
    // A worker that refused its input or could not write (exit 2 or 4) has
    // said why in one line; a second line from here would only repeat it.
    if (!SaidWhy(failure_code)) {
      std::cerr << options_.tool_name() << ": error: " << failure
                << (options_.nproc() > 1 ? "; stopped the other workers" : "") << "\n";
    }
    if (on_failure) on_failure();
    return failure_code == 0 || failure_code == kExitInterrupted ? 1 : failure_code;
  }
  if (diverged) {
    if (on_failure) on_failure();
    return kExitDiverged;
  }
  return interrupted || !all_started ? kExitInterrupted : 0;
}

}  // namespace accordion
