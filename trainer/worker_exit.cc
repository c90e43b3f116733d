#include "trainer/worker_exit.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "common/cli.h"
#include "common/errors.h"
#include "trainer/communicator.h"
#include "trainer/launcher.h"
#include "trainer/torch_pch.h"
#include "trainer/trainer.h"

namespace accordion {

namespace {

[[noreturn]] void WorkerExit(const char* tool, int rank, const char* kind, const std::string& what, int code) {
  std::fflush(stdout);
  std::string line = what;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "%s: %s: rank %d: %s\n", tool, kind, rank, line.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

// Whether the launcher stopped this worker within `wait`. When a worker
// ends - it refused its input, hit a full disk, died - the launcher that
// started it sees it within milliseconds and stops the others (SIGTERM, a
// stop request here). A peer's own line would then only repeat the first
// worker's, or blame the connection the first one took with it ("Connection
// reset by peer"). Under torchrun or Slurm nobody stops us: no wait.
bool StoppedByTheLauncherWithin(std::chrono::milliseconds wait) {
  const std::optional<WorkerEnvironment> env = WorkerEnvironmentFromEnv();
  if (!env || !env->launched) return StopRequested();
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!StopRequested() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return StopRequested();
}

// How long a worker waits for the launcher's stop before it speaks (the
// launcher looks every 20 ms; a loaded machine takes longer). A rank other
// than 0 with a problem of its own waits less than a peer that lost it: the
// peer's connection is gone the moment the first one's communicator is
// unwound, before it speaks, and the first must have spoken and ended before
// the peer's wait is over.
constexpr std::chrono::milliseconds kSameProblemWait{1000};
constexpr std::chrono::milliseconds kLostPeerWait{3000};

}  // namespace

int RunWorkerBody(const char* tool, int rank, const std::function<int()>& body) {
  // Standard output piped into a reader that went away (`| head`) killed rank
  // 0 mid-run, and its launcher marked the trace failed: the write error is
  // said once, when the worker ends (RunCli), and the run keeps its epochs.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return body();
  } catch (const CommunicationError& e) {
    // After Ctrl-C the first rank to stop takes its sockets with it; the
    // others see a lost peer, which is the stop, not a failure. So is a peer
    // lost because it ended first: its line says why.
    if (StoppedByTheLauncherWithin(kLostPeerWait)) ::_exit(kExitInterrupted);
    WorkerExit(tool, rank, "error", e.what(), kExitFailure);
  } catch (const InputError& e) {
    // Rank 0 speaks for a problem every rank meets (a full disk, a flag only
    // a worker can check); the others say it only if nobody did.
    if (rank != 0 && StoppedByTheLauncherWithin(kSameProblemWait)) ::_exit(kExitInterrupted);
    WorkerExit(tool, rank, "error", e.what(), e.exit_code());
  } catch (const c10::Error& e) {
    // LibTorch appends a C++ backtrace to what(); people need the reason.
    WorkerExit(tool, rank, "internal error", e.what_without_backtrace(), kExitFailure);
  } catch (const std::exception& e) {
    WorkerExit(tool, rank, "internal error", e.what(), kExitFailure);
  }
}

}  // namespace accordion
