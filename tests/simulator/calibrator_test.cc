// Calibrator: known latency and bandwidth back from measured collectives.
#include "simulator/calibrator.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "common/errors.h"
#include "simulator/alpha_beta_model.h"
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
