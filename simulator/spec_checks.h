// Range checks and unit formatting shared by the platform's generic part
// (platform.cc) and the topologies' own parameters (topology_description.cc).
// Messages name values in the user's units: --bandwidth-gbps -1 is reported
// as -1 Gb/s, not as -125000000 bytes/s.
#ifndef ACCORDION_SIMULATOR_SPEC_CHECKS_H_
#define ACCORDION_SIMULATOR_SPEC_CHECKS_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "common/errors.h"
#include "common/number_format.h"

namespace accordion::sim {

// Four significant digits, as people read a link: "126.6 us", "9.412 Gb/s".
// A fitted network carries more digits than it can stand behind; the
// description of a platform is for reading, its JSON keeps every digit.
inline std::string GbpsText(double bytes_per_s) {
  return FormatNumber(GbpsFromBytesPerSecond(bytes_per_s), 4) + " Gb/s";
}
inline std::string MicrosText(double s) { return FormatNumber(s * 1e6, 4) + " µs"; }

// `unit` and `scale` put the value in the user's units ("Gb/s", 8 / 1e9).
inline void RequirePositive(double v, const std::string& what, const char* unit = "", double scale = 1) {
  if (!std::isfinite(v) || v <= 0) {
    throw InputError(what + " must be a positive number, not " + FormatNumber(v * scale, 12) + unit);
  }
}
inline void RequireNonNegative(double v, const std::string& what, const char* unit = "", double scale = 1) {
  if (!std::isfinite(v) || v < 0) {
    throw InputError(what + " must be zero or positive, not " + FormatNumber(v * scale, 12) + unit);
  }
}
// The plausibility limits of every rate and latency a tool reads - a flag,
// a platform file (JSON or SimGrid XML), a calibration, a trace's probe: 1
// kb/s to 1 Pb/s, and at most 10 s. Beyond them a number is a typo, and
// SimGrid's solver or a table's columns break on it.
inline constexpr double kMinRateGbps = 1e-6;
inline constexpr double kMaxRateGbps = 1e6;
inline constexpr double kMaxLatencyS = 10;

inline void RequireRate(double bytes_per_s, const std::string& what) {
  RequirePositive(bytes_per_s, what, " Gb/s", 8 / 1e9);
  const double gbps = GbpsFromBytesPerSecond(bytes_per_s);
  if (gbps < kMinRateGbps || gbps > kMaxRateGbps) {
    throw InputError(what + " must be between " + FormatNumber(kMinRateGbps) + " and " + FormatNumber(kMaxRateGbps) +
                     " Gb/s, not " + FormatNumber(gbps, 12) + " Gb/s");
  }
}
inline void RequireLatency(double s, const std::string& what) {
  RequireNonNegative(s, what, " us", 1e6);
  if (s > kMaxLatencyS) {
    throw InputError(what + " must be at most " + FormatNumber(kMaxLatencyS * 1e6) + " us, not " +
                     FormatNumber(s * 1e6, 12) + " us");
  }
}
inline void RequireAtMost(int64_t v, int64_t limit, const std::string& what) {
  if (v > limit) throw InputError(what + " " + std::to_string(v) + " is above the limit of " + std::to_string(limit));
}

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_SPEC_CHECKS_H_
