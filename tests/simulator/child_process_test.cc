// Child processes: results, order, and failures brought back to the parent.
#include "simulator/child_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
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
      ::usleep(static_cast<useconds_t>((7 - i) * 3000));  // later items finish first
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

}  // namespace
}  // namespace accordion::sim
