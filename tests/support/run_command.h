// Runs a shell command for integration tests and captures what it printed.
#ifndef ACCORDION_TESTS_SUPPORT_RUN_COMMAND_H_
#define ACCORDION_TESTS_SUPPORT_RUN_COMMAND_H_

#include <string>

namespace accordion::test_support {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh; stdout and stderr are captured separately.
CommandResult RunCommand(const std::string& command);

// A fresh empty directory under the system temp dir, named after `tag`.
std::string MakeTempDir(const std::string& tag);

// Number of '\n'-terminated lines in `text`.
int CountLines(const std::string& text);

// The whole file at `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_SUPPORT_RUN_COMMAND_H_
