// Timelines (Chrome trace JSON) and sweeps.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "simulator/sweep.h"
#include "simulator/timeline.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

class TimelineAndSweep : public accordion::test_support::SuiteTempDirTest {
 protected:
  static void SetUpTestSuite() {
    SuiteTempDirTest::SetUpTestSuite();
    synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(12);
    o.interval = 5;
    trace_ = new std::string(test_support::SyntheticTrace(dir(), "mlp", o));
    input_ = new ReplayInput(LoadReplayInput(*trace_));
  }
  static void TearDownTestSuite() {
    delete input_;
    delete trace_;
    SuiteTempDirTest::TearDownTestSuite();
  }
  static std::string* trace_;
  static ReplayInput* input_;
};
std::string* TimelineAndSweep::trace_ = nullptr;
ReplayInput* TimelineAndSweep::input_ = nullptr;

TEST_F(TimelineAndSweep, TimelineDrawsTheReplayedIterationNextToTheMeasuredOne) {
  const ReplayResult r =
      ReplayEngine(ReplayOptions().platform(test_support::ExactStar(0, 1, 10)).interval(5)).Run(*input_);
  const MeasuredIteration measured = LoadMeasuredIteration(*trace_, 3);
  EXPECT_EQ(measured.record.epoch, 3);
  const nlohmann::json t = IterationTimeline(r, 3, &measured);
  std::set<int> pids;
  int replayed_collectives = 0, measured_collectives = 0;
  double backward_end = 0, last_collective_end = 0;
  for (const nlohmann::json& e : t.at("traceEvents")) {
    pids.insert(e.at("pid").get<int>());
    if (e.at("ph") != "X") continue;
    EXPECT_GE(e.at("ts").get<double>(), 0);
    EXPECT_GT(e.at("dur").get<double>(), 0);
    const double end = e.at("ts").get<double>() + e.at("dur").get<double>();
    if (e.at("pid") == 2 && e.at("name") == "backward") backward_end = end;
    if (e.at("tid") == 2) {
      (e.at("pid") == 2 ? replayed_collectives : measured_collectives)++;
      if (e.at("pid") == 2) last_collective_end = std::max(last_collective_end, end);
    }
  }
  EXPECT_EQ(pids, (std::set<int>{1, 2}));
  EXPECT_EQ(replayed_collectives, static_cast<int>(r.patterns[r.accordion.epochs[3].pattern].calls.size()));
  EXPECT_EQ(measured_collectives, static_cast<int>(measured.collectives.size()));
  // What ran past backward is the exposed communication of that epoch.
  const EpochProjection& e = r.accordion.epochs[3];
  EXPECT_NEAR((last_collective_end - backward_end) * 1e-6, e.exposed_comm_s / static_cast<double>(e.steps), 1e-9);
  EXPECT_THROW(IterationTimeline(r, 12, nullptr), InputError);
}

TEST(SweepGrid, ExpandsEveryCombinationInOrder) {
  SweepGrid g;
  g.bandwidth_gbps = {10, 25};
  g.workers = {4, 8, 16};
  g.levels = {{2, 1}, {4, 1}};
  const std::vector<SweepPoint> points = ExpandGrid(g);
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(*points[0].bandwidth_gbps, 10);
  EXPECT_EQ(*points[0].workers, 4);
  EXPECT_EQ(points[1].levels->first, 4);
  EXPECT_EQ(*points[11].bandwidth_gbps, 25);
  EXPECT_EQ(*points[11].workers, 16);
  EXPECT_FALSE(points[0].eta.has_value());
  EXPECT_EQ(ExpandGrid(SweepGrid()).size(), 1u);
}

TEST_F(TimelineAndSweep, PointsRunTheirPatternsOneAtATime) {
  // --jobs 4 runs four points at once, not four points of four processes each.
  SweepGrid g;
  g.bandwidth_gbps = {1, 10};
  const ReplayOptions base = ReplayOptions().platform(test_support::ExactStar(0, 1, 10)).jobs(4);
  const std::vector<ReplayOptions> plans = PlanSweep(*input_, base, ExpandGrid(g));
  ASSERT_EQ(plans.size(), 2u);
  for (const ReplayOptions& o : plans) EXPECT_EQ(o.jobs(), 1);
}

TEST_F(TimelineAndSweep, SweepRowsAreTheReplaysOfTheirPoints) {
  const ReplayOptions base = ReplayOptions().platform(test_support::ExactStar(0, 1, 10)).interval(5);
  SweepGrid g;
  g.bandwidth_gbps = {1, 10, 100};
  g.eta = {0.3, 0.5};
  const std::vector<SweepPoint> points = ExpandGrid(g);
  int calls = 0;
  const std::vector<SweepRow> rows = RunSweep(*input_, PlanSweep(*input_, base, points), 2, [&](int, int) { ++calls; });
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(calls, 6);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReplayResult r = ReplayEngine(OptionsAt(base, points[i])).Run(*input_);
    EXPECT_EQ(rows[i].accordion_s, r.accordion.total.time_s) << i;
    EXPECT_EQ(rows[i].static_high_s, r.static_high.total.time_s) << i;
    EXPECT_EQ(rows[i].eta, *points[i].eta);
  }
  // Faster links, shorter runs.
  EXPECT_GT(rows[0].accordion_s, rows[2].accordion_s);
  EXPECT_GT(rows[2].accordion_s, rows[4].accordion_s);
  EXPECT_THROW(PlanSweep(*input_, ReplayOptions().platform(XmlPlatform("x.xml")), points), InputError);
  EXPECT_THROW(PlanSweep(*input_, ReplayOptions().platform(StarPlatformOptions().hosts(2)), points), InputError);
}

// The CLI streams rows as they complete; what it writes is what the held
// rows would have made, in the same order.
TEST_F(TimelineAndSweep, StreamedRowsAreTheHeldOnesInGridOrder) {
  const ReplayOptions base = ReplayOptions().platform(test_support::ExactStar(0, 1, 10)).interval(5);
  SweepGrid g;
  g.bandwidth_gbps = {1, 10, 100};
  g.levels = {{2, 1}, {4, 1}};
  const std::vector<SweepRow> held = RunSweep(*input_, PlanSweep(*input_, base, ExpandGrid(g)), 3);
  std::vector<SweepRow> streamed;
  int64_t last = 0;
  RunSweep(
      *input_, base, g, 3, [&](const SweepRow& r) { streamed.push_back(r); },
      [&](int64_t done, int64_t total) {
        EXPECT_EQ(total, 6);
        last = done;
      });
  EXPECT_EQ(last, 6);
  std::ostringstream held_csv, streamed_csv, streamed_json;
  WriteSweepCsv(held, held_csv);
  SweepWriter csv(streamed_csv, false), json(streamed_json, true);
  for (const SweepRow& r : streamed) {
    csv.Add(r);
    json.Add(r);
  }
  csv.Finish();
  json.Finish();
  EXPECT_EQ(streamed_csv.str(), held_csv.str());
  EXPECT_EQ(streamed_json.str(), SweepJson(held).dump(1) + "\n");
  std::ostringstream empty;
  SweepWriter(empty, true).Finish();
  EXPECT_EQ(empty.str(), SweepJson({}).dump(1) + "\n");
}

TEST(SweepGrid, IsCountedAndRefusedBeforeItIsExpanded) {
  SweepGrid g;
  for (int i = 0; i < 1000; ++i) g.bandwidth_gbps.push_back(i + 1), g.latency_us.push_back(i);
  EXPECT_EQ(GridSize(g), 1000000);
  EXPECT_EQ(*GridPoint(g, 1001).bandwidth_gbps, 2);
  EXPECT_EQ(*GridPoint(g, 1001).latency_us, 1);
  g.eta = {0.3, 0.5};
  EXPECT_THROW(GridSize(g), InputError);
}

}  // namespace
}  // namespace accordion::sim
