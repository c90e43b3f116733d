#include "trainer/worker_exit.h"

#include <unistd.h>

#include <cstdio>
#include <string>

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

}  // namespace

int RunWorkerBody(const char* tool, int rank, const std::function<int()>& body) {
  try {
    return body();
  } catch (const CommunicationError& e) {
    // After Ctrl-C the first rank to stop takes its sockets with it; the
    // others see a lost peer, which is the stop, not a failure.
    if (StopRequested()) ::_exit(kExitInterrupted);
    WorkerExit(tool, rank, "error", e.what(), kExitFailure);
  } catch (const InputError& e) {
    WorkerExit(tool, rank, "error", e.what(), e.exit_code());
  } catch (const c10::Error& e) {
    // LibTorch appends a C++ backtrace to what(); people need the reason.
    WorkerExit(tool, rank, "internal error", e.what_without_backtrace(), kExitFailure);
  } catch (const std::exception& e) {
    WorkerExit(tool, rank, "internal error", e.what(), kExitFailure);
  }
}

}  // namespace accordion
