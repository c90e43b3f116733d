// Writes a result to stdout ("-" or empty path) or to a file that appears
// only once it is complete: written beside it, then renamed over it, so a
// failure never leaves a partial file that looks whole.
#ifndef ACCORDION_COMMON_OUTPUT_FILE_H_
#define ACCORDION_COMMON_OUTPUT_FILE_H_

#include <functional>
#include <ostream>
#include <string>

namespace accordion {

// Throws InputError when the file cannot be written.
void WriteOutput(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace accordion

#endif  // ACCORDION_COMMON_OUTPUT_FILE_H_
