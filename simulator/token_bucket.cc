#include "simulator/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/number_format.h"

namespace accordion::sim {

namespace {

// Seconds per byte inside the burst: 0 where the line is unlimited.
double LineSecondsPerByte(const TokenBucket& b) { return b.line_Bps > 0 ? 1 / b.line_Bps : 0.0; }

// The transfer's time under the bucket.
double ShapedTransfer(const TokenBucket& b, double bytes, double tokens) {
  return std::max(bytes * LineSecondsPerByte(b), (bytes - tokens) / b.sustained_Bps);
}

double Clamp(const TokenBucket& b, double tokens) { return std::clamp(tokens, 0.0, b.burst_bytes); }

// A step's steady state is reached when a step ends with the tokens it began with.
constexpr int kMaxSteps = 64;
constexpr double kSteadyBytes = 1;

}  // namespace

bool TokenBucket::Shapes() const {
  return burst_bytes > 0 && sustained_Bps > 0 && (line_Bps <= 0 || line_Bps > sustained_Bps);
}

double TokenBucket::Saving(double bytes, double tokens) const {
  if (!Shapes() || bytes <= 0) return 0;
  return bytes / sustained_Bps - ShapedTransfer(*this, bytes, Clamp(*this, tokens));
}

double TokenBucket::TokensAfter(double bytes, double tokens) const {
  if (!Shapes() || bytes <= 0) return tokens;
  tokens = Clamp(*this, tokens);
  const double at_line = bytes * LineSecondsPerByte(*this);
  // Tokens ran out before the end: the rest crossed at the sustained rate,
  // spending each token as it came.
  if ((bytes - tokens) / sustained_Bps > at_line) return 0;
  return Clamp(*this, tokens - bytes + sustained_Bps * at_line);
}

double TokenBucket::Refill(double tokens, double idle_s) const {
  return Clamp(*this, tokens + sustained_Bps * std::max(0.0, idle_s));
}

std::string TokenBucket::Describe() const {
  std::ostringstream out;
  out.precision(3);
  out << "bursts of up to " << burst_bytes / 1024 << " KiB per link ";
  if (line_Bps > 0) {
    out << "at " << GbpsFromBytesPerSecond(line_Bps) << " Gb/s";
  } else {
    out << "at the line rate";
  }
  out << ", then " << GbpsFromBytesPerSecond(sustained_Bps) << " Gb/s sustained";
  return out.str();
}

std::vector<double> ShaperSavings(const IterationPattern& pattern, const std::vector<double>& durations,
                                  const std::vector<double>& link_bytes, const TokenBucket& bucket, double period_s) {
  std::vector<double> savings(pattern.calls.size(), 0.0);
  if (!bucket.Shapes() || pattern.calls.empty()) return savings;
  const IterationTiming timing = ComposeIteration(pattern, durations);
  // Calls run one after another in their order (ComposeIteration), so the
  // walk follows the link's time. The first step finds a full bucket.
  double tokens = bucket.burst_bytes;
  for (int step = 0; step < kMaxSteps; ++step) {
    const double began_with = tokens;
    double t = 0;
    for (size_t i = 0; i < pattern.calls.size(); ++i) {
      const CollectiveSpan& span = timing.spans[i];
      tokens = bucket.Refill(tokens, span.start_s - t);
      savings[i] = bucket.Saving(link_bytes[i], tokens);
      tokens = bucket.TokensAfter(link_bytes[i], tokens);
      t = span.end_s;
    }
    tokens = bucket.Refill(tokens, period_s - t);
    if (std::abs(tokens - began_with) < kSteadyBytes) break;
  }
  return savings;
}

}  // namespace accordion::sim
