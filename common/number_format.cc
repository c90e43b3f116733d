#include "common/number_format.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace accordion {

std::string FormatNumber(double value, int significant_digits) {
  std::ostringstream out;
  out << std::setprecision(significant_digits) << value;
  return out.str();
}

std::string FormatPrintf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string JoinWords(const std::vector<std::string>& words, const std::string& separator,
                      const std::string& before_last) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? before_last : separator;
    out += words[i];
  }
  return out;
}

std::string HelpChoices(std::vector<std::string> choices, const std::string& default_choice) {
  for (std::string& c : choices) {
    if (c == default_choice) c += " (default)";
  }
  return JoinWords(choices, ", ", " or ");
}

}  // namespace accordion
