// Calibrator: known latency and bandwidth back from measured collectives.
#include "simulator/calibrator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common/errors.h"
#include "simulator/alpha_beta_model.h"
#include "simulator/platform_file.h"
#include "simulator/replay_input.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

// A network that is slow to start small messages and fast for large ones.
const AlphaBetaModel kTruth({{0, 60e-6, 0.4e9}, {65536, 25e-6, 1.1e9}});

std::vector<test_support::MeasuredCollective> Measurements(int world, double noise) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::vector<test_support::MeasuredCollective> out;
  for (double bytes = 4096; bytes <= 256e6; bytes *= 2) {
    for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather}) {
      const auto b = static_cast<int64_t>(op == CollectiveOp::kAllGather ? bytes / world : bytes);
      out.push_back({op, b, kTruth.Time(op, AllReduceAlgorithm::kRing, static_cast<double>(b), world) * jitter(rng)});
    }
  }
  return out;
}

void ExpectSegmentsRecovered(const Calibration& cal, double tolerance) {
  ASSERT_EQ(cal.segments.size(), 2u);
  EXPECT_EQ(cal.segments[0].min_message_bytes, 0);
  EXPECT_EQ(cal.segments[1].min_message_bytes, 65536);
  for (int k = 0; k < 2; ++k) {
    const double m = cal.segments[k].min_message_bytes;
    EXPECT_NEAR(cal.segments[k].latency_s / kTruth.alpha(m), 1.0, tolerance) << k;
    EXPECT_NEAR(cal.segments[k].bandwidth_Bps / kTruth.bandwidth(m), 1.0, tolerance) << k;
  }
}

TEST(Calibrator, RecoversLatencyAndBandwidthPerSegment) {
  Calibrator c(CalibratorOptions().boundaries({65536}));
  for (const auto& m : Measurements(4, 0.0)) c.Add(m.op, 4, m.bytes, m.duration_s);
  ExpectSegmentsRecovered(c.Fit(), 1e-6);
  // With 2 % noise on every measurement, still within a few percent.
  Calibrator noisy(CalibratorOptions().boundaries({65536}));
  for (const auto& m : Measurements(4, 0.02)) noisy.Add(m.op, 4, m.bytes, m.duration_s);
  ExpectSegmentsRecovered(noisy.Fit(), 0.05);
}

class CalibrateTrace : public accordion::test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(1);
    o.world_size = 4;
    trace_ = test_support::SyntheticTrace(dir_, "t", o);
  }
  std::string trace_;
};

// Every rank records the collective; ranks that arrived early waited for the
// others, so only the shortest duration is the network's.
TEST_F(CalibrateTrace, UsesTheShortestDurationOfEachCollective) {
  test_support::ReplaceCollectives(trace_, 4, Measurements(4, 0.0));
  test_support::ExecuteSql(trace_,
                           "UPDATE collectives SET duration_s = duration_s + 0.001 * rank + 0.002 WHERE rank > 0;");
  Calibrator c(CalibratorOptions().boundaries({65536}));
  c.AddTrace(trace_);
  const Calibration cal = c.Fit();
  EXPECT_EQ(cal.world_size, 4);
  ExpectSegmentsRecovered(cal, 1e-6);
}

// End to end: the platform written from the fit, simulated in SimGrid,
// takes the measured times again.
TEST_F(CalibrateTrace, ThePlatformItWritesReproducesTheMeasurements) {
  const auto measured = Measurements(4, 0.0);
  test_support::ReplaceCollectives(trace_, 4, measured);
  Calibrator c(CalibratorOptions().boundaries({65536}));
  c.AddTrace(trace_);
  const PlatformSpec platform = PlatformFromJson(c.Fit().PlatformJson(trace_), "calibrated");
  EXPECT_EQ(platform.hosts, 0);  // no fixed size: the star grows with the replay's ranks
  for (size_t i = 0; i < measured.size(); i += 5) {
    const double simulated = test_support::SimulateCollective(platform, 4, measured[i].op, AllReduceAlgorithm::kRing,
                                                              measured[i].bytes, Fidelity::kFull);
    EXPECT_NEAR(simulated / measured[i].duration_s, 1.0, 0.01) << measured[i].bytes;
  }
}

// Before a platform is written it must give back the trace it was
// calibrated from: replayed at the trace's own workers, its median step
// within 10 % of the measured one.
TEST_F(CalibrateTrace, ThePlatformMustGiveItsOwnTraceBack) {
  test_support::ReplaceCollectives(trace_, 4, Measurements(4, 0.0));
  Calibrator c(CalibratorOptions().boundaries({65536}));
  c.AddTrace(trace_);
  const Calibration cal = c.Fit();
  EXPECT_EQ(cal.trace_samples, cal.samples);
  const std::vector<SourceReplay> good = c.CheckPlatform(cal.Platform());
  ASSERT_EQ(good.size(), 1u);
  EXPECT_EQ(good[0].trace, trace_);
  EXPECT_EQ(good[0].skipped, "");
  EXPECT_EQ(good[0].workers, 4);
  EXPECT_EQ(good[0].epochs, 1);
  EXPECT_DOUBLE_EQ(good[0].measured_median_s, LoadReplayInput(trace_).measured_iteration_s.at(0));
  EXPECT_LT(std::fabs(good[0].relative_error), 0.1);

  // Every collective 5 ms dearer: the trace's steps had no room for that.
  PlatformSpec slow = cal.Platform();
  slow.collective_overhead_s += 5e-3;
  Calibrator lenient(CalibratorOptions().boundaries({65536}).max_step_error(100));
  lenient.AddTrace(trace_);
  const std::vector<SourceReplay> off = lenient.CheckPlatform(slow);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_GT(off[0].relative_error, 0.1);
  EXPECT_NEAR(off[0].relative_error, off[0].replayed_median_s / off[0].measured_median_s - 1, 1e-12);
  const std::string e = test_support::InputErrorOf([&] { c.CheckPlatform(slow); });
  EXPECT_NE(e.find("does not give " + trace_ + " back"), std::string::npos) << e;
  EXPECT_NE(e.find("at its 4 workers, the median step takes"), std::string::npos) << e;
  EXPECT_NE(e.find("refused beyond 10.0 %"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// The check compares median steps over the sampled epochs: one epoch on a
// loaded host (three times slower here) moves a mean, not the median.
TEST_F(CalibrateTrace, TheCheckComparesTheMedianStep) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(3);
  o.world_size = 4;
  const std::string three = test_support::SyntheticTrace(dir_, "three", o);
  test_support::ReplaceCollectives(three, 4, Measurements(4, 0.0));
  test_support::ExecuteSql(three, "UPDATE iterations SET total_s = total_s * 3 WHERE epoch = 2;");
  std::vector<double> steps;
  for (const auto& [epoch, step] : LoadReplayInput(three).measured_iteration_s) steps.push_back(step);
  ASSERT_EQ(steps.size(), 3u);
  std::sort(steps.begin(), steps.end());
  ASSERT_GT((steps[0] + steps[1] + steps[2]) / 3, steps[1] * 1.5);
  Calibrator c(CalibratorOptions().boundaries({65536}).max_step_error(100));
  c.AddTrace(three);
  const std::vector<SourceReplay> replays = c.CheckPlatform(c.Fit().Platform());
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0].epochs, 3);
  EXPECT_DOUBLE_EQ(replays[0].measured_median_s, steps[1]);
}

// A trace of collectives without sampled steps still calibrates; there is
// nothing to replay, and the check says why.
TEST_F(CalibrateTrace, ATraceReplayCannotLoadIsFittedButNotReplayed) {
  test_support::ReplaceCollectives(trace_, 4, Measurements(4, 0.0));
  test_support::ExecuteSql(trace_, "DELETE FROM iterations;");
  Calibrator c(CalibratorOptions().boundaries({65536}));
  c.AddTrace(trace_);
  const std::vector<SourceReplay> replays = c.CheckPlatform(c.Fit().Platform());
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_NE(replays[0].skipped.find("no per-iteration timings"), std::string::npos) << replays[0].skipped;
}

TEST_F(CalibrateTrace, RefusesWhatCannotBeFitted) {
  test_support::ExecuteSql(trace_, "DELETE FROM collectives;");
  EXPECT_THROW(Calibrator().AddTrace(trace_), InputError);
  // One size cannot separate latency from bandwidth.
  test_support::ReplaceCollectives(
      trace_, 4, {{CollectiveOp::kAllReduce, 1 << 20, 0.01}, {CollectiveOp::kAllReduce, 1 << 20, 0.011}});
  Calibrator one_size;
  one_size.AddTrace(trace_);
  EXPECT_THROW(one_size.Fit(), InputError);
  EXPECT_THROW(Calibrator().Add(CollectiveOp::kAllReduce, 1, 1024, 0.001), InputError);
  EXPECT_THROW(Calibrator(CalibratorOptions().boundaries({100, 50})), InputError);
}

// A fit says how good it is: its rms relative error over the collectives
// it fitted, how many, which sizes, per segment and per world size.
TEST(Calibrator, AGoodFitReportsItsQualityAndIsAccepted) {
  Calibrator c(CalibratorOptions().boundaries({65536}));
  for (int world : {2, 4}) {
    for (double b = 4096; b <= 16 << 20; b *= 4) {
      c.Add(CollectiveOp::kAllReduce, world, static_cast<int64_t>(b), kTruth.RingAllReduce(b, world));
    }
  }
  const Calibration cal = c.Fit();
  EXPECT_LT(cal.rms_relative_error, 1e-9);
  EXPECT_EQ(cal.sizes, 7);
  EXPECT_EQ(cal.smallest_bytes, 4096);
  EXPECT_EQ(cal.largest_bytes, 16 << 20);
  EXPECT_EQ(cal.trace_samples, 0);
  // Segments go by a round's message, S/N for a ring: below 64 KiB are
  // collectives of 4, 16 and 64 KiB at 2 and 4 ranks.
  ASSERT_EQ(cal.segments.size(), 2u);
  EXPECT_EQ(cal.segments[0].sizes, 3);
  EXPECT_EQ(cal.segments[0].samples, 6);
  EXPECT_EQ(cal.segments[0].largest_bytes, 65536);
  EXPECT_EQ(cal.segments[1].sizes, 4);  // 256 KiB to 16 MiB
  EXPECT_EQ(cal.segments[1].smallest_bytes, 262144);
  ASSERT_EQ(cal.rms_per_world_size.size(), 2u);
  EXPECT_LT(cal.rms_per_world_size.at(4), 1e-9);
  EXPECT_EQ(test_support::InputErrorOf([&] { c.CheckFit(cal); }), "");
  EXPECT_EQ(SizeRangeText(1536, 9216), "1.5 KiB to 9 KiB");
  EXPECT_EQ(SizeRangeText(16 << 20, 16 << 20), "16 MiB");
}

// PowerSGD's factors as a 2-rank training run measures them: three sizes of
// 1.5 to 9 KiB whose times are the hosts' noise, scattered over 0.3x to 3x.
void AddHostNoise(Calibrator& c) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.3, 3.0);
  for (int i = 0; i < 40; ++i) {
    for (int64_t bytes : {1536, 4608, 9216}) {
      c.Add(CollectiveOp::kAllReduce, 2, bytes, (500e-6 + static_cast<double>(bytes) * 1e-7) * noise(rng));
    }
  }
}

std::string PercentOf(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100 << " %";
  return out.str();
}

TEST(Calibrator, ANoisyFitIsRefusedNamingItsErrorAndTheLikelyCause) {
  EXPECT_EQ(CalibratorOptions().max_rms_error(), 0.25);
  Calibrator c;
  AddHostNoise(c);
  const Calibration cal = c.Fit();
  ASSERT_GT(cal.rms_relative_error, 0.25);
  const std::string e = test_support::InputErrorOf([&] { c.CheckFit(cal); });
  EXPECT_NE(e.find("misses its 120 collectives by " + PercentOf(cal.rms_relative_error) + " rms"), std::string::npos)
      << e;
  EXPECT_NE(e.find("refused above 25.0 %"), std::string::npos) << e;
  EXPECT_NE(e.find("too few distinct message sizes (3 sizes, 1.5 KiB to 9 KiB): their times are dominated by "
                   "host noise"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("accordion-bench-collectives"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-rms-error"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;  // one line
  // The limit is the option's: the same fit passes just above its error and
  // is refused just below it.
  Calibrator above(CalibratorOptions().max_rms_error(cal.rms_relative_error * 1.001));
  AddHostNoise(above);
  EXPECT_EQ(test_support::InputErrorOf([&] { above.CheckFit(above.Fit()); }), "");
  Calibrator below(CalibratorOptions().max_rms_error(cal.rms_relative_error * 0.999));
  AddHostNoise(below);
  EXPECT_NE(test_support::InputErrorOf([&] { below.CheckFit(below.Fit()); }), "");
  EXPECT_THROW(Calibrator(CalibratorOptions().max_rms_error(0)), InputError);
}

// Where one world size or one size range is what the fit misses, the
// refusal says which.
TEST(Calibrator, TheRefusalNamesTheWorldSizeOrSizesThatFitWorst) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> noise(0.2, 5.0);
  Calibrator worlds(CalibratorOptions().boundaries({65536}));
  for (double b = 4096; b <= 16 << 20; b *= 4) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      worlds.Add(CollectiveOp::kAllReduce, 2, static_cast<int64_t>(b), kTruth.RingAllReduce(b, 2));
    }
    // 8 ranks on a host of 2 cores: they wait for a CPU.
    worlds.Add(CollectiveOp::kAllReduce, 8, static_cast<int64_t>(b), kTruth.RingAllReduce(b, 8) * noise(rng));
  }
  const Calibration w = worlds.Fit();
  // 28 samples at 2 ranks and 7 at 8 make up the whole fit's squares.
  EXPECT_NEAR(28 * std::pow(w.rms_per_world_size.at(2), 2) + 7 * std::pow(w.rms_per_world_size.at(8), 2),
              35 * std::pow(w.rms_relative_error, 2), 1e-9);
  const std::string e = test_support::InputErrorOf([&] { worlds.CheckFit(w); });
  EXPECT_NE(e.find("the collectives at 8 ranks fit worst (" + PercentOf(w.rms_per_world_size.at(8)) + " rms, " +
                   PercentOf(w.rms_per_world_size.at(2)) + " at 2 ranks)"),
            std::string::npos)
      << e;

  Calibrator sizes(CalibratorOptions().boundaries({65536}));
  for (double b = 4096; b <= 16 << 20; b *= 2) {
    for (int world : {2, 4}) {
      // Small collectives twice, at 1.6 and 0.5 times their time: noise
      // that keeps their growth with size.
      const double t = kTruth.RingAllReduce(b, world);
      for (double f : b < 65536 ? std::vector<double>{1.6, 0.5} : std::vector<double>{1.0}) {
        sizes.Add(CollectiveOp::kAllReduce, world, static_cast<int64_t>(b), t * f);
      }
    }
  }
  const Calibration s = sizes.Fit();
  ASSERT_EQ(s.segments.size(), 2u);
  EXPECT_EQ(s.segments[0].largest_bytes, 32768 * 4);  // a 4-rank ring's messages of 32 KiB
  ASSERT_GT(s.segments[0].rms_relative_error, 0.25);
  ASSERT_LE(s.segments[1].rms_relative_error, 0.25);
  const std::string f = test_support::InputErrorOf([&] { sizes.CheckFit(s); });
  EXPECT_NE(f.find("collectives of 4 KiB to 128 KiB fit worst (" + PercentOf(s.segments[0].rms_relative_error) +
                   " rms, " + PercentOf(s.segments[1].rms_relative_error) + " for 128 KiB to 16 MiB)"),
            std::string::npos)
      << f;
}

TEST(Calibrator, MergesSegmentsWithTooFewSizes) {
  Calibrator c(CalibratorOptions().boundaries({1024, 65536}));
  // Nothing has messages below 1 KiB; only one size between 1 and 64 KiB.
  c.Add(CollectiveOp::kAllReduce, 4, 4 * 4096, kTruth.RingAllReduce(4 * 4096, 4));
  for (double b = 1e6; b <= 64e6; b *= 2) {
    c.Add(CollectiveOp::kAllReduce, 4, static_cast<int64_t>(b),
          kTruth.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, b, 4));
  }
  const Calibration cal = c.Fit();
  ASSERT_EQ(cal.segments.size(), 1u);
  EXPECT_EQ(cal.segments[0].samples, 8);
  EXPECT_FALSE(cal.notes.empty());
}

}  // namespace
}  // namespace accordion::sim
