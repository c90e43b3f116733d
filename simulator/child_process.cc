#include "simulator/child_process.h"

#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <stdexcept>

#include "common/errors.h"
#include "common/fork_process.h"

namespace accordion::sim {

namespace {

// A child's stack (AnswerOnDeepStack). A ring all-reduce over 131,072 hosts
// of a star, the most a platform holds, took between 16 and 32 MiB; other
// topologies connect more links.
constexpr size_t kChildStackBytes = size_t{1} << 30;

// First byte of a child's answer.
constexpr char kOk = 'O';
constexpr char kInputError = 'E';
constexpr char kFailure = 'X';

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent went away; nothing left to tell
    done += static_cast<size_t>(n);
  }
}

std::string Answer(const ChildWork& work) {
  try {
    return kOk + work();
  } catch (const InputError& e) {
    return kInputError + std::string(e.what());
  } catch (const std::exception& e) {
    return kFailure + std::string(e.what());
  } catch (...) {
    return kFailure + std::string("unknown exception in a simulation process");
  }
}

struct DeepStackJob {
  const ChildWork* work;
  std::string answer;
};

void* RunDeepStackJob(void* arg) {
  auto* job = static_cast<DeepStackJob*>(arg);
  job->answer = Answer(*job->work);
  return nullptr;
}

// SimGrid's max-min solver follows the links that a round's flows connect
// recursively, a stack frame per link: a ring over 65,536 hosts of a star
// overflows the main thread's 8 MiB. The work runs on a thread whose stack
// is reserved address space, touched only as deep as a run goes; where the
// thread cannot be had, on this one.
std::string AnswerOnDeepStack(const ChildWork& work) {
  DeepStackJob job{&work, {}};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = false;
  if (::pthread_attr_init(&attr) == 0) {
    started = ::pthread_attr_setstacksize(&attr, kChildStackBytes) == 0 &&
              ::pthread_create(&thread, &attr, RunDeepStackJob, &job) == 0;
    ::pthread_attr_destroy(&attr);
  }
  if (!started) return Answer(work);
  ::pthread_join(thread, nullptr);
  return job.answer;
}

[[noreturn]] void ChildMain(int fd, const ChildWork& work) {
  const std::string answer = AnswerOnDeepStack(work);
  WriteAll(fd, answer);
  ::close(fd);
  std::cout.flush();
  std::cerr.flush();
  // Skip atexit handlers and static destructors: they belong to the parent
  // (test frameworks, SimGrid's engine teardown) and would run twice.
  ::_exit(0);
}

using Clock = std::chrono::steady_clock;

struct Running {
  int64_t index = -1;
  pid_t pid = -1;
  int fd = -1;
  std::string data;
  Clock::time_point started;
};

// Held from a pipe's creation until the parent has closed its write end:
// a child forked by another thread in between would inherit that end, and
// this call's reader would then wait for EOF until that unrelated child
// exits (a quick probe held up by a long replay, then reported as a
// timeout). Every fork of this process's simulations comes through here.
std::mutex& ForkingLock() {
  static std::mutex forking;
  return forking;
}

Running Start(const ChildWork& work, int64_t index) {
  const pid_t parent = ::getpid();
  std::unique_lock<std::mutex> forking(ForkingLock());
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();  // or the child would print the parent's buffered output again
  std::cerr.flush();
  const pid_t pid = ForkProcess();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Dies with the forking thread, which waits for its children before it
    // can end: a parent killed outright takes its simulations with it. The
    // parent may have died before the request took effect.
    forking.unlock();  // the child's copy: its own simulations may fork again
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    ChildMain(fds[1], work);
  }
  ::close(fds[1]);
  return Running{index, pid, fds[0], {}, Clock::now()};
}

// Reaps the child and turns its answer into a result or an exception.
std::string Finish(Running& r) {
  ::close(r.fd);
  int status = 0;
  while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.data.empty()) {
    if (WIFSIGNALED(status)) {
      throw std::runtime_error("a simulation process died with signal " + std::to_string(WTERMSIG(status)));
    }
    throw std::runtime_error("a simulation process exited without an answer");
  }
  const std::string payload = r.data.substr(1);
  switch (r.data[0]) {
    case kOk:
      return payload;
    case kInputError:
      throw InputError(payload);
    default:
      throw std::runtime_error(payload);
  }
}

void StopAll(std::vector<Running>& running) {
  for (Running& r : running) {
    ::kill(r.pid, SIGKILL);
    ::close(r.fd);
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

}  // namespace

std::string RunInChildProcess(const ChildWork& work) { return RunInChildProcesses({work}, 1).front(); }

namespace {

// Both entry points: items made on demand, results handed on in input
// order. A result that finished before an earlier one waits in `waiting`;
// no item more than `window` past the first unfinished one is started, so
// at most `window` results wait at any time.
void RunItems(int64_t count, const std::function<ChildWork(int64_t)>& make, int jobs, int64_t window,
              const std::function<void(int64_t, std::string)>& result, const std::atomic<bool>* cancel,
              double timeout_s) {
  if (jobs < 1) throw InputError("--jobs must be at least 1");
  if (!(timeout_s >= 0) || !std::isfinite(timeout_s)) throw InputError("a simulation timeout must be >= 0 seconds");
  std::map<int64_t, std::string> waiting;
  std::vector<Running> running;
  int64_t next = 0;       // the next item to start
  int64_t delivered = 0;  // items handed to `result`
  try {
    while (next < count || !running.empty()) {
      while (next < count && static_cast<int>(running.size()) < jobs && next - delivered < window) {
        running.push_back(Start(make(next), next));
        ++next;
      }
      if (cancel != nullptr && cancel->load()) throw Cancelled();
      std::vector<pollfd> fds;
      for (const Running& r : running) fds.push_back({r.fd, POLLIN, 0});
      // With a cancel flag, wake up now and then to look at it; with a
      // timeout, when the oldest child runs out of time.
      int timeout_ms = cancel != nullptr ? 50 : -1;
      if (timeout_s > 0) {
        const Clock::time_point now = Clock::now();
        for (const Running& r : running) {
          const double left = timeout_s - std::chrono::duration<double>(now - r.started).count();
          if (left <= 0) {
            throw std::runtime_error("a simulation process ran longer than its limit of " +
                                     std::to_string(static_cast<long long>(std::ceil(timeout_s))) +
                                     " s and was stopped");
          }
          const int ms = static_cast<int>(std::min(left * 1000 + 1, 3.6e6));
          timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
        }
      }
      if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      for (size_t i = running.size(); i-- > 0;) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buffer[65536];
        const ssize_t n = ::read(running[i].fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          running[i].data.append(buffer, static_cast<size_t>(n));
          continue;
        }
        Running finished = std::move(running[i]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        waiting[finished.index] = Finish(finished);
      }
      for (auto it = waiting.begin(); it != waiting.end() && it->first == delivered; it = waiting.erase(it)) {
        result(delivered++, std::move(it->second));
      }
    }
  } catch (...) {
    StopAll(running);
    throw;
  }
}

}  // namespace

std::vector<std::string> RunInChildProcesses(const std::vector<ChildWork>& work, int jobs,
                                             const std::function<void(int)>& progress, const std::atomic<bool>* cancel,
                                             double timeout_s) {
  std::vector<std::string> results(work.size());
  const auto count = static_cast<int64_t>(work.size());
  RunItems(
      count, [&work](int64_t i) { return work[static_cast<size_t>(i)]; }, jobs, count,
      [&](int64_t i, std::string text) {
        results[static_cast<size_t>(i)] = std::move(text);
        if (progress) progress(static_cast<int>(i + 1));
      },
      cancel, timeout_s);
  return results;
}

void RunInChildProcesses(int64_t count, const std::function<ChildWork(int64_t)>& make, int jobs,
                         const std::function<void(int64_t, std::string)>& result, const std::atomic<bool>* cancel,
                         double timeout_s) {
  RunItems(count, make, jobs, std::max<int64_t>(4 * int64_t{jobs}, 64), result, cancel, timeout_s);
}

}  // namespace accordion::sim
