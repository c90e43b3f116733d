// The prediction band on every projected time (replay_engine.h,
// EpochProjection::iteration_low_s / _high_s): it holds the point; on the
// recorded network it is the recorded steps' own spread and no more (the
// network / host split cancels there); it widens as a what-if moves away
// from the recorded network, faster or slower.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/statistics.h"
#include "simulator/recorded_network.h"
#include "simulator/replay_engine.h"

namespace accordion::sim {
namespace {

std::string Sample(const std::string& name) { return std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/" + name; }

void ExpectInsideItsBand(const EpochProjection& e, const std::string& what) {
  EXPECT_GT(e.iteration_low_s, 0) << what;
  EXPECT_LE(e.iteration_low_s, e.iteration_s) << what;
  EXPECT_GE(e.iteration_high_s, e.iteration_s) << what;
  EXPECT_LE(e.time_low_s, e.time_s * (1 + 1e-12)) << what;
  EXPECT_GE(e.time_high_s, e.time_s * (1 - 1e-12)) << what;
}

double RelativeWidth(const EpochProjection& total) {
  return (total.iteration_high_s - total.iteration_low_s) / total.iteration_s;
}

TEST(PredictionBand, EveryProjectedTimeSitsInsideItsBand) {
  for (const std::string name : {"fmnist-mlp-powersgd-accordion.trace", "probed/fmnist-mlp-topk-accordion.trace",
                                 "fmnist-mlp-batch-accordion.trace"}) {
    const ReplayInput in = LoadReplayInput(Sample(name));
    PlatformSpec other = WhatIfBasePlatform(in, ReplayOptions());
    other.bandwidth_Bps *= 4;
    const ReplayResult r =
        ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).platform(other).workers(8)).Run(in);
    for (const ScheduleProjection* s : {&r.accordion, &r.static_low, &r.static_high}) {
      ExpectInsideItsBand(s->total, name + " " + s->name);
      for (const EpochProjection& e : s->epochs) ExpectInsideItsBand(e, name + " " + s->name);
    }
  }
}

// On the recorded network every collective takes what it measured, so the
// split between network and host cannot matter: the band is what the
// recorded steps spread over. Each rank's step comes back as it measured
// it, so the band's ends are the measured steps' 5th and 95th percentiles.
TEST(PredictionBand, OnTheRecordedNetworkItIsTheRecordedStepsSpread) {
  const ReplayInput in = LoadReplayInput(Sample("probed/fmnist-mlp-dense.trace"));
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(in);
  ASSERT_TRUE(r.check.has_value());
  std::vector<double> measured;
  for (const auto& [epoch, steps] : in.measured_step_s) measured.insert(measured.end(), steps.begin(), steps.end());
  ASSERT_GT(measured.size(), 20u);
  // Within 10 %: the band's ends are the epochs' own percentiles averaged,
  // the measured ones pooled over every epoch.
  EXPECT_NEAR(r.check->simulated_low_s, Quantile(measured, 0.05), 0.1 * Quantile(measured, 0.05));
  EXPECT_NEAR(r.check->simulated_high_s, Quantile(measured, 0.95), 0.1 * Quantile(measured, 0.95));
  EXPECT_TRUE(r.check->median_in_band());
}

// Away from the recorded network the collectives' net host cost might be
// a rate the probe misjudged: the band widens the further the rate moves,
// either way - relative to a step that shrinks as the network gets faster,
// in seconds as it gets slower (the step grows faster than the spread).
TEST(PredictionBand, ItWidensAsTheRateMovesAwayFromTheRecordedOne) {
  const ReplayInput in = LoadReplayInput(Sample("probed/fmnist-mlp-dense.trace"));
  const PlatformSpec recorded = WhatIfBasePlatform(in, ReplayOptions());
  auto total_at = [&](double factor) {
    PlatformSpec p = recorded;
    p.bandwidth_Bps *= factor;
    return ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).platform(p)).Run(in).static_high.total;
  };
  auto seconds = [](const EpochProjection& t) { return t.iteration_high_s - t.iteration_low_s; };
  const EpochProjection there = total_at(1), faster = total_at(3), fastest = total_at(10), slower = total_at(0.1);
  EXPECT_LT(RelativeWidth(there), RelativeWidth(faster));
  EXPECT_LT(RelativeWidth(faster), RelativeWidth(fastest));
  EXPECT_LT(seconds(there), seconds(slower));
}

}  // namespace
}  // namespace accordion::sim
