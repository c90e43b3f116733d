// The token-bucket shaper: each transfer's time against a tbf stepped in
// microseconds, and the steady state of a step's collectives against the
// bucket's own bookkeeping done by hand.
#include "simulator/token_bucket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace accordion::sim {
namespace {

constexpr double kKiB = 1024;

// 100 Mb/s sustained, 256 KiB of burst at 1 Gb/s: tc's tbf as the netns
// validation sets it up.
TokenBucket Shaper() { return {256 * kKiB, 12.5e6, 125e6}; }

// What `bytes` take through `b` starting with `tokens`, as a tbf sends:
// in steps of `dt`, at the line rate while a whole step's bytes have
// tokens, tokens accruing at the sustained rate up to the burst.
double Stepped(const TokenBucket& b, double bytes, double tokens, double dt = 1e-7) {
  double t = 0;
  while (bytes > 0) {
    tokens = std::min(b.burst_bytes, tokens + b.sustained_Bps * dt);
    const double can = std::min(bytes, std::min(b.line_Bps * dt, tokens));
    tokens -= can;
    bytes -= can;
    t += dt;
  }
  return t;
}

TEST(TokenBucket, ATransferTakesWhatASteppedTbfTakes) {
  const TokenBucket b = Shaper();
  for (double bytes : {4 * kKiB, 100 * kKiB, 256 * kKiB, 300 * kKiB, 1024 * kKiB}) {
    for (double tokens : {0.0, 64 * kKiB, 256 * kKiB}) {
      const double shaped = bytes / b.sustained_Bps - b.Saving(bytes, tokens);
      EXPECT_NEAR(shaped, Stepped(b, bytes, tokens), 2e-6 + shaped * 1e-3) << bytes << " bytes, " << tokens;
    }
  }
}

TEST(TokenBucket, InsideTheBurstTheLineRateBeyondItTheTokensSaved) {
  const TokenBucket b = Shaper();
  // 100 KiB with a full bucket: all at 1 Gb/s.
  EXPECT_DOUBLE_EQ(b.Saving(100 * kKiB, b.burst_bytes), 100 * kKiB / 12.5e6 - 100 * kKiB / 125e6);
  // Tokens spent less those that accrued meanwhile.
  EXPECT_NEAR(b.TokensAfter(100 * kKiB, b.burst_bytes), 156 * kKiB + 12.5e6 * (100 * kKiB / 125e6), 1e-6);
  // 1 MiB: the bucket's worth at the line rate, then the sustained rate; the
  // saving is the tokens' time at the sustained rate, and none are left.
  EXPECT_NEAR(b.Saving(1024 * kKiB, 64 * kKiB), 64 * kKiB / 12.5e6, 1e-12);
  EXPECT_EQ(b.TokensAfter(1024 * kKiB, 64 * kKiB), 0);
  EXPECT_EQ(b.Saving(1024 * kKiB, 0), 0);
  // Refilled at the sustained rate, never past the burst.
  EXPECT_DOUBLE_EQ(b.Refill(0, 1e-3), 12500);
  EXPECT_EQ(b.Refill(0, 10), b.burst_bytes);
  EXPECT_EQ(b.Refill(1000, -1), 1000);
}

TEST(TokenBucket, NoBurstOrNoFasterLineIsNoShaper) {
  TokenBucket none = Shaper();
  none.burst_bytes = 0;
  EXPECT_FALSE(none.Shapes());
  EXPECT_EQ(none.Saving(100 * kKiB, 256 * kKiB), 0);
  TokenBucket slow_line = Shaper();
  slow_line.line_Bps = slow_line.sustained_Bps;
  EXPECT_FALSE(slow_line.Shapes());
  // An unlimited line: inside the burst a transfer is free.
  TokenBucket unlimited = Shaper();
  unlimited.line_Bps = 0;
  EXPECT_TRUE(unlimited.Shapes());
  EXPECT_DOUBLE_EQ(unlimited.Saving(100 * kKiB, 256 * kKiB), 100 * kKiB / 12.5e6);
  EXPECT_NE(Shaper().Describe().find("256 KiB per link at 1 Gb/s, then 0.1 Gb/s sustained"), std::string::npos)
      << Shaper().Describe();
}

IterationPattern Calls(int n) {
  IterationPattern p;
  for (int i = 0; i < n; ++i) p.calls.push_back(CollectiveCall{CollectiveOp::kAllReduce, 1 << 20, 0, "dense", i});
  return p;
}

// One 1 MiB collective a step, 40 ms of it, in steps 50 ms apart: the link
// is idle 10 ms a step, which refills 125,000 bytes; that is what every
// step after the first finds, and what it saves is their time.
TEST(ShaperSavings, TheSteadyStateRefillsWhatTheIdleLinkAllows) {
  const TokenBucket b = Shaper();
  const std::vector<double> saved = ShaperSavings(Calls(1), {0.040}, {1024 * kKiB}, b, 0.050);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_NEAR(saved[0], 125000 / 12.5e6, 1e-9);
  // Steps far apart: a full bucket each time.
  EXPECT_NEAR(ShaperSavings(Calls(1), {0.040}, {1024 * kKiB}, b, 10)[0], 256 * kKiB / 12.5e6, 1e-9);
}

// Two collectives back to back: the first spends the bucket, the second
// finds none; 2 ms between them would have given it 25,000 bytes.
TEST(ShaperSavings, ALaterCollectiveFindsWhatTheEarlierLeft) {
  const TokenBucket b = Shaper();
  IterationPattern p = Calls(2);
  const std::vector<double> back_to_back = ShaperSavings(p, {0.080, 0.080}, {1024 * kKiB, 1024 * kKiB}, b, 10);
  EXPECT_NEAR(back_to_back[0], 256 * kKiB / 12.5e6, 1e-9);
  EXPECT_EQ(back_to_back[1], 0);
  p.calls[1].ready_s = 0.082;
  const std::vector<double> apart = ShaperSavings(p, {0.080, 0.080}, {1024 * kKiB, 1024 * kKiB}, b, 10);
  EXPECT_NEAR(apart[1], 25000 / 12.5e6, 1e-9);
  // No shaper, no savings.
  TokenBucket none = b;
  none.burst_bytes = 0;
  EXPECT_EQ(ShaperSavings(p, {0.080, 0.080}, {1024 * kKiB, 1024 * kKiB}, none, 10), std::vector<double>(2, 0.0));
}

}  // namespace
}  // namespace accordion::sim
