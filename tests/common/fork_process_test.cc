// ForkProcess: a child forked while other threads allocate can allocate too.
#include "common/fork_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace accordion {
namespace {

// Allocations of many sizes, so that every size class's lock is taken now
// and then.
void Allocate(std::vector<std::string>* held, int count) {
  for (int i = 0; i < count; ++i) held->emplace_back(static_cast<size_t>(16 + (i * 37) % 4000), 'x');
}

TEST(ForkProcess, ChildrenOfAThreadedProcessCanAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&stop] {
      while (!stop.load()) {
        std::vector<std::string> held;
        Allocate(&held, 200);
      }
    });
  }
  // Under GCC 12's ASan without the locks, the first or second child hung
  // on the allocator's lock; the alarm turns a hang into a failure.
  int hung = 0;
  int failed = 0;
  for (int i = 0; i < 40; ++i) {
    const pid_t pid = ForkProcess();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Allocates and never frees: what ForkProcess promises is the
      // allocator, not ASan's quarantine of freed memory (fork_process.h).
      ::alarm(20);
      auto* held = new std::vector<std::string>;
      Allocate(held, 2000);
      ::_exit(held->size() == 2000 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) ++hung;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    if (failed > 0) break;
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(hung, 0);
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace accordion
