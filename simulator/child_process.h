// Runs work in forked child processes and brings back the string it returns.
//
// SimGrid allows one engine per process and its clock only moves forward, so
// a simulation's floating-point results depend on what ran before it in the
// same engine. Each simulation therefore gets a fresh process: its results
// depend only on its input (memoised and un-memoised replays agree to the
// last bit), and independent simulations can run side by side (--jobs).
// The parent must never create a SimGrid engine itself.
//
// Thread safety: these functions may run in several threads at once (the
// GUI's pools do); each call forks, reaps and reports its own children only.
#ifndef ACCORDION_SIMULATOR_CHILD_PROCESS_H_
#define ACCORDION_SIMULATOR_CHILD_PROCESS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace accordion::sim {

using ChildWork = std::function<std::string()>;

// Runs `work` in a child and returns its result. An InputError thrown there
// is rethrown here with the same message; any other failure, or a child that
// dies, becomes std::runtime_error.
std::string RunInChildProcess(const ChildWork& work);

// Runs every item, at most `jobs` at a time, results in input order;
// `progress(done)` is called after each finishes. On the first failure the
// other children are stopped and the failure is rethrown. When `cancel` is
// given and becomes true, the children are killed within about 50 ms and
// Cancelled is thrown. A child still running `timeout_s` seconds after it
// started (0: no limit) is killed and reported as a failure.
//
// Children never outlive what started them: each asks the kernel to kill it
// when the thread that forked it ends (the parent killed by SIGTERM or
// SIGKILL included), and their own children do the same, so stopping a
// child stops everything below it. They stay in the parent's process group,
// so Ctrl-C in a terminal reaches them too.
std::vector<std::string> RunInChildProcesses(const std::vector<ChildWork>& work, int jobs,
                                             const std::function<void(int)>& progress = {},
                                             const std::atomic<bool>* cancel = nullptr, double timeout_s = 0);

// The same for more work than is worth holding (a sweep's grid): item i is
// made by `make(i)` when a child is free to run it, and its result is handed
// to `result(i, text)` in input order as soon as it and every item before it
// have finished. At most max(4 x jobs, 64) results wait for an earlier one,
// so memory does not grow with `count`.
void RunInChildProcesses(int64_t count, const std::function<ChildWork(int64_t)>& make, int jobs,
                         const std::function<void(int64_t, std::string)>& result,
                         const std::atomic<bool>* cancel = nullptr, double timeout_s = 0);

// Thrown when a caller's cancel flag stopped the work.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_CHILD_PROCESS_H_
