// accordion-train: data-parallel training on LibTorch with dense, PowerSGD
// or TopK gradient communication, static or under Accordion, recording a
// trace. Started plainly it is the launcher of --nproc local workers; with
// WORLD_SIZE in the environment (torchrun, Slurm, our launcher) a worker.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/cli.h"
#include "common/errors.h"
#include "common/output_file.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/communicator.h"
#include "trainer/launcher.h"
#include "trainer/models.h"
#include "trainer/run_outputs.h"
#include "trainer/torch_pch.h"
#include "trainer/trace_recorder.h"
#include "trainer/trainer.h"
#include "trainer/worker_exit.h"

namespace accordion {
namespace {

constexpr const char* kTool = "accordion-train";

void OnStopSignal(int) { RequestStop(); }

// A worker's SIGINT and SIGTERM are a stop request (trainer.h) from its
// first instruction: a stop that came while it parsed its flags or loaded
// its data would otherwise kill it without a word (exit 143).
void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// A run whose workers died leaves its trace "running" (or "interrupted", by
// a survivor the launcher stopped); say "failed" instead. Only this run's
// trace (`run_id`) is touched: one another run holds or wrote - this run may
// have lost the race to create it - is left alone.
void MarkTraceFailed(const std::string& path, const std::string& run_id) {
  if (path.empty() || ::access(path.c_str(), F_OK) != 0 || TraceBeingWritten(path)) return;
  try {
    int epochs = 0;
    {
      auto reader = TraceReader::Open(path);
      const RunInfo& run = reader->run();
      if (run_id.empty()) {
        if (run.status != RunStatus::kRunning) return;  // a checkpoint from before run ids
      } else if (run.run_id != run_id || (run.status != RunStatus::kRunning && run.status != RunStatus::kInterrupted)) {
        return;
      }
      epochs = static_cast<int>(reader->Epochs().size());
    }
    TraceWriter::Resume(path, epochs)->Finish(RunStatus::kFailed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: warning: could not mark %s failed: %s\n", kTool, path.c_str(), e.what());
  }
}

// Holds the run's --checkpoint-dir for the life of this process and of the
// workers it starts: a second run, an --overwrite or a --resume of it is
// refused while they live (common/output_file.h).
void LockCheckpointDirectory(const TrainOptions& options) {
  if (!options.checkpoint_dir.empty())
    LockDirectory(options.checkpoint_dir, "--checkpoint-dir " + options.checkpoint_dir);
}

int RunWorker(const TrainOptions& options, const WorkerEnvironment& env) {
  if (!env.launched) {
    // Under torchrun / Slurm nobody validated the run before it started.
    if (options.nproc != 1) {
      throw InputError("--nproc starts local workers; under torchrun or Slurm (WORLD_SIZE is set) leave it out");
    }
    ValidateOptions(options, /*check_paths=*/env.rank == 0);
    if (env.rank == 0 && IsModelFile(options.model)) CheckModelFile(options, env.world_size);
    if (env.rank == 0) CheckRunOutputsWritable(options);
    if (env.rank == 0) LockCheckpointDirectory(options);
  }
  return RunWorkerBody(kTool, env.rank, [&] {
    auto trainer = std::make_unique<Trainer>(options, env);
    const int code = trainer->Run();
    trainer.reset();
    return code;
  });
}

}  // namespace
}  // namespace accordion

int main(int argc, char** argv) {
  using namespace accordion;
  CLI::App app{
      "accordion-train: data-parallel training with dense, PowerSGD or TopK gradients, "
      "static or under Accordion, recording a trace.\n"
      "Local: accordion-train --nproc N ...; multi-node: set RANK, WORLD_SIZE, LOCAL_RANK, "
      "MASTER_ADDR, MASTER_PORT per worker (torchrun / Slurm style)."};
  // Workers (WORLD_SIZE set, as WorkerEnvironmentFromEnv reads it) stop on
  // request from the start; the launcher installs its own handlers.
  const char* world_size = std::getenv("WORLD_SIZE");
  if (world_size != nullptr && *world_size != '\0') InstallStopHandlers();
  TrainOptions options;
  AddTrainFlags(app, options);
  AddVersionFlags(app, kTool, TrainerBuildDescription());
  return RunCli(app, kTool, argc, argv, [&]() -> int {
    if (const std::optional<WorkerEnvironment> env = WorkerEnvironmentFromEnv()) {
      return RunWorker(options, *env);
    }
    ValidateOptions(options);
    // Here, not in each worker: they would all fail the same way.
    if (options.device == "cuda" && !torch::cuda::is_available()) {
      throw InputError("--device cuda: this LibTorch sees no CUDA device");
    }
    // A TorchScript file is loaded and run on one batch here, so a model that
    // cannot train is one line, not a failure in every worker.
    if (IsModelFile(options.model)) CheckModelFile(options, options.nproc);
    CheckRunOutputsWritable(options);
    LockCheckpointDirectory(options);  // before any worker starts
    // The run's id is chosen here and handed to the workers, so the launcher
    // knows its own trace from another run's; a resume keeps the checkpoint's.
    std::string run_id = NewRunId();
    if (options.resume) run_id = ReadCheckpointManifest(options.checkpoint_dir)->run_id;
    ::setenv(kRunIdVariable, run_id.c_str(), 1);
    const char* addr = std::getenv("MASTER_ADDR");
    const char* port = std::getenv("MASTER_PORT");
    Launcher launcher(LauncherOptions()
                          .nproc(options.nproc)
                          .master_addr(addr != nullptr && *addr != '\0' ? addr : "127.0.0.1")
                          .master_port(port != nullptr ? std::atoi(port) : 0)
                          .tool_name(kTool));
    return launcher.Run(argv, [&] {
      MarkTraceFailed(options.trace, run_id);
      // A worker killed while saving leaves half a file; the checkpoint before it stays whole.
      if (!options.checkpoint_dir.empty()) RemoveUncommittedCheckpointFiles(options.checkpoint_dir);
    });
  });
}
