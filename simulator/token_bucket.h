// TokenBucket: a link shaped as tc's tbf or a cloud instance's burst
// credits shape it. Tokens (bytes) accrue at the sustained rate up to the
// burst; a transfer crosses at the line rate while tokens last, then at the
// sustained rate. A transfer of B bytes that finds k tokens takes
//   max(B / line, (B - k) / sustained)
// against B / sustained on an unshaped link at the sustained rate: what a
// network model at that rate overprices it by is what this tells.
//
// Between collectives and between steps the link is idle and the bucket
// refills, so what a collective saves depends on the step around it:
// ShaperSavings walks a composed step (iteration_pattern.h) to the steady
// state of a run of such steps.
//
// Thread-safe: values and pure functions.
#ifndef ACCORDION_SIMULATOR_TOKEN_BUCKET_H_
#define ACCORDION_SIMULATOR_TOKEN_BUCKET_H_

#include <string>
#include <vector>

#include "simulator/iteration_pattern.h"

namespace accordion::sim {

struct TokenBucket {
  double burst_bytes = 0;    // the bucket's depth per link; 0: no shaper
  double sustained_Bps = 0;  // the rate tokens accrue at (the platform's links)
  double line_Bps = 0;       // the rate inside the burst; 0: unlimited (latency alone)

  // Whether it changes anything: a burst, and a line faster than the
  // sustained rate.
  bool Shapes() const;
  // Seconds a transfer of `bytes` per link that finds `tokens` saves against
  // the sustained rate alone.
  double Saving(double bytes, double tokens) const;
  // The tokens left after that transfer (before any refill).
  double TokensAfter(double bytes, double tokens) const;
  // `tokens` after `idle_s` of an idle link.
  double Refill(double tokens, double idle_s) const;
  // "bursts of up to 256 KiB per link at 1.37 Gb/s, then 0.1 Gb/s sustained"
  std::string Describe() const;
};

// What each call of `pattern` saves under `bucket` (seconds; the order of
// its calls) in the steady state of steps `period_s` apart, each composed
// from `durations` (ComposeIteration). `link_bytes` is what each call puts
// through one link. The bucket is refilled over the idle link: between
// collectives, over the part of each duration past its transfer at the
// line rate, and from one step's last collective to the next step's first.
std::vector<double> ShaperSavings(const IterationPattern& pattern, const std::vector<double>& durations,
                                  const std::vector<double>& link_bytes, const TokenBucket& bucket, double period_s);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_TOKEN_BUCKET_H_
