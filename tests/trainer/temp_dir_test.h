// A test fixture with its own temporary directory, removed afterwards.
#ifndef ACCORDION_TESTS_TRAINER_TEMP_DIR_TEST_H_
#define ACCORDION_TESTS_TRAINER_TEMP_DIR_TEST_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/run_command.h"

namespace accordion::test_support {

class TempDirTest : public ::testing::Test {
 public:
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 protected:
  void SetUp() override { dir_ = MakeTempDir("trainer"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_TRAINER_TEMP_DIR_TEST_H_
