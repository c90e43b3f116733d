// The command-line contract every accordion-* tool follows.
//
//   --help and --version on the tool and on every subcommand;
//   bad flags or bad input: one line "tool: error: ..." on stderr, exit 2;
//   an unexpected failure: one line "tool: internal error: ...", exit 1.
//   a failure of the machine (IoError: a write that did not complete, a
//   standard output that could not be written, as to /dev/full): one line
//   "tool: error: ...", exit 4; standard output is checked when the tool
//   ends - its output is not taken for a success.
#ifndef ACCORDION_COMMON_CLI_H_
#define ACCORDION_COMMON_CLI_H_

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/errors.h"
#include "common/number_format.h"

namespace accordion {

// Adds --version to `app` and to each of its subcommands (call after the
// subcommands are declared). `details`, when given, follows the version in
// parentheses (what the tool was built against).
void AddVersionFlags(CLI::App& app, const std::string& tool_name, const std::string& details = "");

// Parses argv into `app`, then runs `body`. Maps parse errors, InputError,
// other exceptions and a failed standard output onto the contract above and
// returns the exit code.
int RunCli(CLI::App& app, const std::string& tool_name, int argc, char** argv, const std::function<int()>& body);

// A number above zero, said in those words ("must be above 0, not -1"):
// CLI11's PositiveNumber prints its range up to the largest double.
const CLI::Validator& AboveZero();

}  // namespace accordion

#endif  // ACCORDION_COMMON_CLI_H_
