// Error types shared by all modules.
//
// InputError means the user handed us something we cannot use: a file, a
// flag, a configuration. Command-line tools report it as one line and exit 2.
// Anything else that escapes is a bug in the toolkit and exits 1.
#ifndef ACCORDION_COMMON_ERRORS_H_
#define ACCORDION_COMMON_ERRORS_H_

#include <stdexcept>
#include <string>

namespace accordion {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace accordion

#endif  // ACCORDION_COMMON_ERRORS_H_
