// Error types shared by all modules, and the exit codes the command-line
// tools give for them (docs/reliability.md, "Exit codes").
//
// InputError means the user handed us something we cannot use: a file, a
// flag, a configuration. Command-line tools report it as one line and exit 2.
// IoError means the machine failed a request the input was fine for: a write
// that did not complete (a full disk, a file-size limit, a device error).
// Tools report it as one line too, and exit 4: a script can tell "fix what
// you gave" from "free some space and run it again".
// Anything else that escapes is a bug in the toolkit and exits 1.
//
// Thread safety: immutable exception values.
#ifndef ACCORDION_COMMON_ERRORS_H_
#define ACCORDION_COMMON_ERRORS_H_

#include <stdexcept>
#include <string>

namespace accordion {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitIoFailure = 4;

// An IoError is an InputError so that every place that shows a problem in
// one line (a GUI status, a worker's last words, a Python ValueError's
// neighbour) shows it too; exit_code() is what sets the two apart.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  // The exit code a tool ends with for it.
  virtual int exit_code() const noexcept { return kExitBadInput; }
};

class IoError : public InputError {
 public:
  explicit IoError(const std::string& what) : InputError(what) {}
  int exit_code() const noexcept override { return kExitIoFailure; }
};

}  // namespace accordion

#endif  // ACCORDION_COMMON_ERRORS_H_
