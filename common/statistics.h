// Small statistics the tools share over measured times.
//
// Thread-safe: pure functions.
#ifndef ACCORDION_COMMON_STATISTICS_H_
#define ACCORDION_COMMON_STATISTICS_H_

#include <vector>

namespace accordion {

// The median of `values` (the mean of the middle two for an even count);
// 0 for none.
double Median(std::vector<double> values);

// The `q` quantile of `values` (q in [0, 1]), linear between the two
// nearest order statistics (numpy's default); 0 for none.
double Quantile(std::vector<double> values, double q);

// Whether positive `a` and `b` differ by at most `fraction` of the larger:
// false where either is not positive.
bool AgreeWithin(double a, double b, double fraction);

}  // namespace accordion

#endif  // ACCORDION_COMMON_STATISTICS_H_
