// Test fixtures with a temporary directory of their own, named after the
// test suite (to tell a leftover directory's suite) and removed afterwards.
#ifndef ACCORDION_TESTS_SUPPORT_TEMP_DIR_TEST_H_
#define ACCORDION_TESTS_SUPPORT_TEMP_DIR_TEST_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/support/run_command.h"

namespace accordion::test_support {

// A fresh directory named after the running test suite (a parameterized
// suite's name holds a '/').
inline std::string MakeSuiteTempDir() {
  std::string tag = ::testing::UnitTest::GetInstance()->current_test_suite()->name();
  std::replace(tag.begin(), tag.end(), '/', '-');
  return MakeTempDir(tag);
}

// A directory per test. A fixture that overrides SetUp calls this one's first.
class TempDirTest : public ::testing::Test {
 public:
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 protected:
  void SetUp() override { dir_ = MakeSuiteTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// One directory for a whole suite, for files made once and read by every
// test. A suite that overrides SetUpTestSuite (TearDownTestSuite) calls this
// one's first (last). One directory serves one suite at a time: gtest runs
// the suites of a binary one after another.
class SuiteTempDirTest : public ::testing::Test {
 public:
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  static const std::string& dir() { return *dir_; }

 protected:
  static void SetUpTestSuite() { dir_ = new std::string(MakeSuiteTempDir()); }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }

 private:
  static inline std::string* dir_ = nullptr;
};

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_SUPPORT_TEMP_DIR_TEST_H_
