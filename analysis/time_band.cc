#include "analysis/time_band.h"

#include "common/number_format.h"

namespace accordion {

std::string TimeBand::Text() const { return FormatNumber(low_s, 3) + "-" + FormatNumber(high_s, 3); }

}  // namespace accordion
