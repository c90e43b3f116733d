#include "common/number_format.h"

#include <iomanip>
#include <sstream>

namespace accordion {

std::string FormatNumber(double value, int significant_digits) {
  std::ostringstream out;
  out << std::setprecision(significant_digits) << value;
  return out.str();
}

}  // namespace accordion
