#include "common/statistics.h"

#include <algorithm>
#include <cmath>

namespace accordion {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

bool AgreeWithin(double a, double b, double fraction) {
  return a > 0 && b > 0 && std::abs(a - b) <= fraction * std::max(a, b);
}

}  // namespace accordion
