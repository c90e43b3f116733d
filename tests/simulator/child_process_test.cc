// Child processes: results, order, and failures brought back to the parent.
#include "simulator/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/errors.h"

namespace accordion::sim {
namespace {

TEST(ChildProcess, RunsWorkElsewhereAndReturnsItsResult) {
  const pid_t parent = ::getpid();
  const std::string out = RunInChildProcess([] { return std::to_string(::getpid()); });
  EXPECT_NE(std::stoi(out), parent);
}

TEST(ChildProcess, KeepsInputOrderWhateverFinishesFirst) {
  std::vector<ChildWork> work;
  for (int i = 0; i < 7; ++i) {
    work.push_back([i] {
      ::usleep(static_cast<useconds_t>((7 - i) * 3000));                                // later items finish first
      return std::string(static_cast<size_t>(100000 + i), static_cast<char>('a' + i));  // bigger than a pipe
    });
  }
  int last_done = 0;
  const std::vector<std::string> out = RunInChildProcesses(work, 3, [&](int done) { last_done = done; });
  ASSERT_EQ(out.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(out[i].size(), static_cast<size_t>(100000 + i));
    EXPECT_EQ(out[i][0], 'a' + i);
  }
  EXPECT_EQ(last_done, 7);
}

TEST(ChildProcess, BringsBackInputErrorsAndFailures) {
  EXPECT_THROW(RunInChildProcess([]() -> std::string { throw InputError("bad platform"); }), InputError);
  try {
    RunInChildProcess([]() -> std::string { throw InputError("bad platform"); });
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "bad platform");
  }
  EXPECT_THROW(RunInChildProcess([]() -> std::string { throw std::logic_error("bug"); }), std::runtime_error);
  try {
    RunInChildProcess([]() -> std::string { std::abort(); });
    FAIL() << "a child that aborts must not look like success";
  } catch (const InputError&) {
    FAIL() << "a crash is not bad input";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RunInChildProcesses({}, 0), InputError);
}

TEST(ChildProcess, AChildPastItsTimeLimitIsStoppedAndReported) {
  const auto start = std::chrono::steady_clock::now();
  try {
    RunInChildProcesses({[]() -> std::string {
                          ::sleep(20);
                          return "late";
                        }},
                        1, {}, nullptr, 0.3);
    FAIL() << "a child past its limit must not look like success";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  EXPECT_THROW(RunInChildProcesses({}, 1, {}, nullptr, -1), InputError);
}

// True while `pid` is a live process (a zombie waiting for its reaper is
// dead: it runs nothing).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// A simulation that itself runs simulations (a sweep point) is stopped with
// everything it started: killing the middle process takes the grandchild.
TEST(ChildProcess, StoppingAChildStopsItsChildrenToo) {
  const std::string pid_file = ::testing::TempDir() + "grandchild-" + std::to_string(::getpid());
  std::remove(pid_file.c_str());
  try {
    RunInChildProcesses({[pid_file]() -> std::string {
                          return RunInChildProcess([pid_file]() -> std::string {
                            std::ofstream(pid_file) << ::getpid();
                            ::sleep(30);
                            return "late";
                          });
                        }},
                        1, {}, nullptr, 1.0);
    FAIL() << "the middle process must have been stopped";
  } catch (const std::runtime_error&) {
  }
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0) << "the grandchild never started";
  for (int i = 0; i < 100 && Alive(grandchild); ++i) ::usleep(20000);
  EXPECT_FALSE(Alive(grandchild)) << "grandchild " << grandchild << " outlived its parent";
  std::remove(pid_file.c_str());
}

// Recurses `frames` times with 1 KiB a frame; returns the bytes of stack
// from the first frame to the last.
[[gnu::noinline]] uintptr_t StackUsed(int frames, uintptr_t top) {
  volatile char frame[1024];
  frame[0] = 0;
  const auto here = reinterpret_cast<uintptr_t>(&frame[0]);
  if (frames == 0) return top - here;
  const uintptr_t used = StackUsed(frames - 1, top == 0 ? here : top);
  frame[1] = 1;  // the frame outlives the call: no tail call
  return used;
}

// SimGrid's solver recursed 16 to 32 MiB deep on a ring over 131,072 ranks
// of a star, beyond a main thread's usual 8 MiB: a child has room for more.
TEST(ChildProcess, WorkHasADeepStack) {
  const std::string used = RunInChildProcess([] { return std::to_string(StackUsed(64 * 1024, 0)); });
  EXPECT_GE(std::stoull(used), 64ull << 20);
}

}  // namespace
}  // namespace accordion::sim
