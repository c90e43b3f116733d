// Launcher starts the local worker processes of a run and watches them.
//
// Workers find each other the way torchrun and Slurm users already set up:
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
// A process that finds WORLD_SIZE in its environment is a worker; started
// without it, accordion-train is a launcher that re-executes itself --nproc
// times with those variables set. The launcher never trains: it forwards
// Ctrl-C, and when one worker dies it stops the others within seconds, so a
// run never hangs on a dead peer.
#ifndef ACCORDION_TRAINER_LAUNCHER_H_
#define ACCORDION_TRAINER_LAUNCHER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/options.h"

namespace accordion {

// Exit code of a worker (and the launcher) whose run was interrupted by
// SIGINT or SIGTERM after committing its finished epochs, as shells report it.
inline constexpr int kExitInterrupted = 130;
// Exit code of a run whose training diverged (a NaN or Inf loss or gradient
// norm): the finished epochs are kept and the trace is marked failed. Not
// bad input and not a crash: the same flags with a smaller LR may train.
inline constexpr int kExitDiverged = 3;

// The environment variable through which accordion-train's launcher hands
// its workers the run id (RunInfo::run_id) it chose; unset under torchrun or
// Slurm, where rank 0 draws one.
inline constexpr const char* kRunIdVariable = "ACCORDION_RUN_ID";

struct WorkerEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  bool launched = false;  // started by our launcher (not torchrun / Slurm)
};

// The worker's rendezvous from the environment; std::nullopt without
// WORLD_SIZE. Throws InputError on malformed or missing variables.
std::optional<WorkerEnvironment> WorkerEnvironmentFromEnv();

// What one machine can hold of local workers: each is a process of its own
// with LibTorch loaded (about 100 MB before any model) and its own threads.
// Limits stated in the tools' --help.
inline constexpr int kMaxWorkersPerCore = 8;
inline constexpr int64_t kWorkerMemoryBytes = int64_t{128} << 20;
inline constexpr int kThreadsPerWorkerProcess = 32;  // what a worker counts against RLIMIT_NPROC
inline constexpr int kMaxThreadsPerCore = 4;         // --threads per worker

// "at most 8 per core, one per 128 MiB of available memory, within the
// process limit", for --nproc's help.
std::string LocalWorkerLimitText();

// Throws InputError, one line starting with `flag` N, when this machine
// cannot hold `nproc` local workers: more than kMaxWorkersPerCore per core,
// more than its available memory holds at kWorkerMemoryBytes each, or more
// than the process limit (RLIMIT_NPROC) allows. Called before anything
// starts: a launcher that forks until memory runs out cannot be stopped.
void CheckLocalWorkers(int nproc, const std::string& flag);

// Throws InputError, one line starting with `flag` and `addr`, unless `addr`
// resolves to an address of this machine that a socket can bind: Gloo binds
// it in every worker, and failed there in a rendezvous error (exit 1).
void CheckBindAddress(const std::string& addr, const std::string& flag);

// A TCP port on `addr` nobody listens on right now.
int PickFreePort(const std::string& addr);

class LauncherOptions {
  /// Worker processes. Default: 1.
  ACCORDION_ARG(int, nproc) = 1;
  /// Where rank 0's store listens. Default: "127.0.0.1".
  ACCORDION_ARG(std::string, master_addr) = "127.0.0.1";
  /// The port of rank 0's store; 0: pick a free one. Default: 0.
  ACCORDION_ARG(int, master_port) = 0;
  /// The name messages give the tool. Default: "accordion-train".
  ACCORDION_ARG(std::string, tool_name) = "accordion-train";
  /// Seconds between asking a worker to stop (SIGTERM) and killing it. Default: 3.
  ACCORDION_ARG(double, grace_s) = 3;
};

class Launcher {
 public:
  explicit Launcher(LauncherOptions options) : options_(std::move(options)) {}

  // Runs this executable with `argv` as nproc workers and waits for them.
  // Returns 0 when all succeed, kExitInterrupted after Ctrl-C, the failed
  // worker's code otherwise (1 for a worker killed by a signal). On failure
  // `on_failure` runs once every worker is gone (e.g. to mark the trace).
  int Run(char** argv, const std::function<void()>& on_failure);

 private:
  LauncherOptions options_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_LAUNCHER_H_
