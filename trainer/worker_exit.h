// How a worker process ends when its body throws: one line on stderr naming
// the tool and the rank, and the exit code that says what kind of failure it
// was - shared by accordion-train and accordion-bench-collectives.
#ifndef ACCORDION_TRAINER_WORKER_EXIT_H_
#define ACCORDION_TRAINER_WORKER_EXIT_H_

#include <functional>

namespace accordion {

// Runs `body` and returns its exit code. What it throws ends the process at
// once (_exit: tearing down a process group whose peer is gone can wait for
// the timeout, and the launcher is waiting): CommunicationError -> failure
// (or interrupted, after a stop request), InputError -> bad input, anything
// else -> internal error with LibTorch's backtrace left out. SIGPIPE is
// ignored: a closed standard output is an error when the worker ends, not a
// death mid-run.
int RunWorkerBody(const char* tool, int rank, const std::function<int()>& body);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_WORKER_EXIT_H_
