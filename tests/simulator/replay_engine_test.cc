// ReplayEngine: memoisation, bytes, scaling, overlap and bad traces.
#include "simulator/replay_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>

#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "simulator/child_process.h"
#include "simulator/communication_model.h"
#include "simulator/replay_report.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

using test_support::ExactStar;

class Replay : public accordion::test_support::SuiteTempDirTest {
 protected:
  static void SetUpTestSuite() {
    SuiteTempDirTest::SetUpTestSuite();
    synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(30);
    // A decay at 20 would hold every layer critical through epoch 29 (one
    // interval of 10), leaving Accordion nothing but the low level.
    o.decay_epochs = {25};
    mlp_ = new ReplayInput(LoadReplayInput(test_support::SyntheticTrace(dir(), "mlp", o)));
  }
  static void TearDownTestSuite() {
    delete mlp_;
    SuiteTempDirTest::TearDownTestSuite();
  }
  static ReplayInput Load(const std::string& name, const synthetic::SyntheticTraceOptions& o) {
    return LoadReplayInput(test_support::SyntheticTrace(dir(), name, o));
  }
  static ReplayInput* mlp_;
};
ReplayInput* Replay::mlp_ = nullptr;

void ExpectSameEpochs(const ScheduleProjection& a, const ScheduleProjection& b) {
  ASSERT_EQ(a.epochs.size(), b.epochs.size());
  for (size_t e = 0; e < a.epochs.size(); ++e) {
    const EpochProjection &x = a.epochs[e], &y = b.epochs[e];
    // Exactly: each pattern is simulated in a fresh engine, so a timing
    // cannot depend on what was simulated before it.
    EXPECT_EQ(x.iteration_s, y.iteration_s) << a.name << " epoch " << e;
    EXPECT_EQ(x.exposed_comm_s, y.exposed_comm_s) << a.name << " epoch " << e;
    EXPECT_EQ(x.time_s, y.time_s) << a.name << " epoch " << e;
    EXPECT_EQ(x.steps, y.steps);
    EXPECT_EQ(x.payload_bytes, y.payload_bytes);
    EXPECT_EQ(x.wire_bytes, y.wire_bytes);
  }
  EXPECT_EQ(a.total.time_s, b.total.time_s);
}

TEST_F(Replay, MemoisedAndUnmemoisedRunsAgreeExactly) {
  for (Fidelity f : {Fidelity::kFull, Fidelity::kRounds}) {
    const ReplayOptions o = ReplayOptions().platform(ExactStar(0, 1, 20)).workers(6).fidelity(f).eta(0.3);
    const ReplayResult memo = ReplayEngine(o).Run(*mlp_);
    const ReplayResult fresh = ReplayEngine(ReplayOptions(o).memoise(false)).Run(*mlp_);
    EXPECT_EQ(memo.timed_patterns, memo.distinct_patterns);
    EXPECT_EQ(fresh.timed_patterns, 3 * 30);  // every epoch of every schedule
    EXPECT_GE(memo.distinct_patterns, 2);     // Accordion really switched levels
    ExpectSameEpochs(memo.accordion, fresh.accordion);
    ExpectSameEpochs(memo.static_low, fresh.static_low);
    ExpectSameEpochs(memo.static_high, fresh.static_high);
  }
}

// ReplayOptions holds the controller's own options: their defaults, and what
// a caller sets there is the schedule the replay projects.
TEST_F(Replay, AccordionOptionsReachTheReplay) {
  const ReplayResult defaults = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(*mlp_);
  EXPECT_EQ(defaults.eta, AccordionOptions().eta());
  EXPECT_EQ(defaults.interval, AccordionOptions().interval());

  // A vanishing eta: every check finds every layer critical, so Accordion
  // runs the low level throughout, exactly as static low does.
  const ReplayResult always_critical =
      ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).eta(1e-12).interval(3)).Run(*mlp_);
  EXPECT_EQ(always_critical.eta, 1e-12);
  EXPECT_EQ(always_critical.interval, 3);
  EXPECT_DOUBLE_EQ(always_critical.accordion.total.time_s, always_critical.static_low.total.time_s);
  EXPECT_NE(defaults.accordion.total.time_s, defaults.static_low.total.time_s);
}

// A static schedule replayed at the trace's own worker count sends what the
// trace says it sent, epoch by epoch, for every scheme.
TEST_F(Replay, StaticSchedulesSendTheBytesTheTraceRecorded) {
  struct Case {
    Scheme scheme;
    double level;
  };
  for (const Case c : {Case{Scheme::kPowerSgd, 2}, Case{Scheme::kTopK, 0.1}, Case{Scheme::kDense, 0}}) {
    synthetic::SyntheticTraceOptions o;
    o.model = "resnet18";
    o.epochs = 3;
    o.scheme = c.scheme;
    o.policy = Policy::kStatic;
    o.level_low = o.level_high = c.level;
    const ReplayInput in = Load(std::string("static-") + ToString(c.scheme), o);
    const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).level_low(c.level)).Run(in);
    for (int e = 0; e < 3; ++e) {
      EXPECT_EQ(r.static_low.epochs[e].steps, in.view.epochs[e].iterations);
      EXPECT_DOUBLE_EQ(r.static_low.epochs[e].payload_bytes, 4 * in.view.epochs[e].floats_sent)
          << ToString(c.scheme) << " epoch " << e;
    }
  }
}

// Accordion re-derived at the trace's own settings reproduces its levels,
// so its bytes are the trace's too.
TEST_F(Replay, AccordionAtTheTracesSettingsSendsWhatTheTraceSent) {
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(*mlp_);
  double recorded = 0;
  for (const EpochRecord& e : mlp_->view.epochs) recorded += 4 * e.floats_sent;
  EXPECT_DOUBLE_EQ(r.accordion.total.payload_bytes, recorded);
  EXPECT_LT(r.accordion.total.payload_bytes, r.static_low.total.payload_bytes);
  EXPECT_GT(r.accordion.total.payload_bytes, r.static_high.total.payload_bytes);
}

TEST_F(Replay, MoreWorkersKeepThePerWorkerBatchAndTheComputePerStep) {
  const ReplayResult at4 = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(*mlp_);
  const ReplayResult at16 = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).workers(16)).Run(*mlp_);
  const int64_t train = mlp_->view.run.train_samples;  // 50000, global batch 512 at 4 workers
  EXPECT_EQ(at4.accordion.epochs[0].steps, StepsPerEpoch(train, 512, 4));
  EXPECT_EQ(at16.accordion.epochs[0].global_batch, 2048);
  EXPECT_EQ(at16.accordion.epochs[0].steps, StepsPerEpoch(train, 2048, 16));
  const double step_compute = mlp_->profile.forward_s + mlp_->profile.backward_s;
  for (const ReplayResult* r : {&at4, &at16}) {
    const EpochProjection& e = r->accordion.epochs[5];
    EXPECT_NEAR(e.compute_s / static_cast<double>(e.steps), step_compute, 1e-12);
  }
  // A step's payload does not depend on the worker count.
  EXPECT_DOUBLE_EQ(at16.accordion.epochs[5].payload_bytes / static_cast<double>(at16.accordion.epochs[5].steps),
                   at4.accordion.epochs[5].payload_bytes / static_cast<double>(at4.accordion.epochs[5].steps));
  EXPECT_TRUE(at4.check.has_value());
  EXPECT_FALSE(at16.check.has_value());  // the trace measured 4 workers, not 16
}

TEST_F(Replay, SimulationAndAnalyticModelAgreeOnTheExactStar) {
  const ReplayOptions o = ReplayOptions().platform(ExactStar(0, 0.1, 20)).workers(8);
  const ReplayResult simulated = ReplayEngine(o).Run(*mlp_);
  const ReplayResult analytic = ReplayEngine(ReplayOptions(o).timing(TimingSource::kAnalytic)).Run(*mlp_);
  for (const auto& [s, a] :
       {std::pair{&simulated.accordion, &analytic.accordion}, std::pair{&simulated.static_low, &analytic.static_low}}) {
    EXPECT_GT(s->total.exposed_comm_s, 0.05 * s->total.time_s);  // communication matters here
    EXPECT_NEAR(s->total.exposed_comm_s / a->total.exposed_comm_s, 1.0, 0.01) << s->name;
    EXPECT_NEAR(s->total.time_s / a->total.time_s, 1.0, 0.01) << s->name;
  }
}

// The MLP is one bucket whose last gradient (layer 0) is ready when backward
// ends, so everything it sends is exposed: the three all-reduces in a row.
TEST_F(Replay, ExposedCommunicationIsWhatRunsPastBackward) {
  const double alpha = 2e-5, bandwidth = 1e9 / 8;
  const ReplayResult r =
      ReplayEngine(ReplayOptions().platform(ExactStar(0, 1, 10)).timing(TimingSource::kAnalytic)).Run(*mlp_);
  const EpochProjection& e = r.static_low.epochs[0];
  const AlphaBetaModel m(alpha, bandwidth);
  double expected = 0;
  for (const CollectiveCall& c : r.patterns[e.pattern].calls) expected += m.RingAllReduce(c.bytes, 4);
  EXPECT_NEAR(e.exposed_comm_s / static_cast<double>(e.steps), expected, 1e-4 * expected);
  // On a fast network without latency it all but vanishes.
  const ReplayResult fast =
      ReplayEngine(ReplayOptions().platform(ExactStar(0, 1000, 0)).timing(TimingSource::kAnalytic)).Run(*mlp_);
  EXPECT_LT(fast.static_low.total.exposed_comm_s, 0.05 * r.static_low.total.exposed_comm_s);
}

TEST_F(Replay, LargerBatchesTakeFewerLongerSteps) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(30);
  o.scheme = Scheme::kBatch;
  o.level_low = 512;
  o.level_high = 4096;
  o.decay_epochs = {};
  // A batch the trace sampled keeps the compute measured at it; one it did
  // not is scaled linearly from the nearest it did.
  const std::string path = test_support::SyntheticTrace(dir(), "batch", o);
  test_support::ExecuteSql(path,
                           "DELETE FROM iterations WHERE epoch IN (SELECT epoch FROM epochs WHERE batch_size = 4096);"
                           "DELETE FROM grad_ready WHERE epoch IN (SELECT epoch FROM epochs WHERE batch_size = 4096);");
  const ReplayInput in = LoadReplayInput(path);
  ASSERT_EQ(in.steps.size(), 1u);
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(in);
  const EpochProjection& small = r.static_low.epochs[0];
  const EpochProjection& large = r.static_high.epochs[0];
  EXPECT_EQ(large.global_batch, 4096);
  EXPECT_EQ(large.steps, StepsPerEpoch(50000, 4096, 4));
  const double per_step_small = small.compute_s / static_cast<double>(small.steps);
  const double per_step_large = large.compute_s / static_cast<double>(large.steps);
  EXPECT_NEAR(per_step_large / per_step_small, 8.0, 1e-9);
  EXPECT_LT(large.exposed_comm_s, small.exposed_comm_s);  // 8x fewer rounds of communication
  EXPECT_FALSE(r.notes.empty());                          // says the large batch's compute was not measured
}

TEST_F(Replay, EachLevelKeepsTheComputeMeasuredAtIt) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(30);
  o.scheme = Scheme::kBatch;
  o.level_low = 512;
  o.level_high = 4096;
  o.decay_epochs = {};
  const std::string path = test_support::SyntheticTrace(dir(), "batch-measured", o);
  // The large batch's steps took 3 ms longer forward than measured at the small one.
  test_support::ExecuteSql(path,
                           "UPDATE iterations SET forward_s = forward_s + 0.003 WHERE epoch IN "
                           "(SELECT epoch FROM epochs WHERE batch_size = 4096);");
  const ReplayInput in = LoadReplayInput(path);
  ASSERT_EQ(in.steps.size(), 2u);
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(in);
  const EpochProjection& small = r.static_low.epochs[0];
  const EpochProjection& large = r.static_high.epochs[0];
  EXPECT_NEAR(large.step_forward_s - small.step_forward_s, 0.003, 1e-9);
}

TEST_F(Replay, TracesWithoutTheNeededTablesAreRefused) {
  const synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(2);
  const std::string no_iterations = test_support::SyntheticTrace(dir(), "no-iterations", o);
  test_support::ExecuteSql(no_iterations, "DELETE FROM iterations;");
  EXPECT_NE(test_support::InputErrorOf([&] { LoadReplayInput(no_iterations); }).find("no per-iteration timings"),
            std::string::npos);
  const std::string no_ready = test_support::SyntheticTrace(dir(), "no-ready", o);
  test_support::ExecuteSql(no_ready, "DELETE FROM grad_ready WHERE layer_id = 3;");
  EXPECT_NE(
      test_support::InputErrorOf([&] { LoadReplayInput(no_ready); }).find("no gradient-ready offsets for layer 3"),
      std::string::npos);
}

TEST_F(Replay, AnEpochsFirstStepCountsAsWarmUpWhereLaterStepsWereSampled) {
  const std::string warm =
      "UPDATE iterations SET forward_s = forward_s + 1, total_s = total_s + 1 WHERE iteration = 0;";
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(3);  // iterations 0 and 1 sampled
  const std::string two = test_support::SyntheticTrace(dir(), "two-samples", o);
  const ReplayInput before = LoadReplayInput(two);
  test_support::ExecuteSql(two, warm);
  const ReplayInput after = LoadReplayInput(two);
  EXPECT_DOUBLE_EQ(after.profile.forward_s, before.profile.forward_s);
  EXPECT_DOUBLE_EQ(after.measured_iteration_s.at(1), before.measured_iteration_s.at(1));
  EXPECT_EQ(after.profile.iteration_samples, 3 * 4);  // one steady step per epoch and rank
  // Sampled at the first step only, it is all there is: kept.
  o.sampled_iterations = 1;
  const std::string one = test_support::SyntheticTrace(dir(), "one-sample", o);
  const double forward = LoadReplayInput(one).profile.forward_s;
  test_support::ExecuteSql(one, warm);
  EXPECT_NEAR(LoadReplayInput(one).profile.forward_s, forward + 1, 1e-12);
}

// The step plan must be the one the trainer executed: its bucket size comes
// from the trace's configuration unless the options say otherwise.
TEST_F(Replay, BucketsFollowTheTrainersConfiguration) {
  const std::string path = test_support::SyntheticTrace(dir(), "buckets", test_support::MlpTraceOptions(2));
  test_support::ExecuteSql(path, "UPDATE run SET config_json = '{\"bucket_mb\": 0.1}';");
  const ReplayInput in = LoadReplayInput(path);
  ASSERT_TRUE(in.bucket_bytes.has_value());
  EXPECT_EQ(*in.bucket_bytes, 104858);
  const ReplayResult recorded = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic)).Run(in);
  EXPECT_EQ(recorded.bucket_bytes, 104858);
  EXPECT_EQ(recorded.patterns[0].calls.back().bucket, 1);  // fc2 closes the first bucket, fc1 the second
  const ReplayResult chosen =
      ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).bucket_bytes(kDefaultBucketBytes)).Run(in);
  EXPECT_EQ(chosen.patterns[0].calls.back().bucket, 0);
  EXPECT_FALSE(mlp_->bucket_bytes.has_value());  // the synthetic configuration names none
}

// A trace recorded with --topk-dense-vectors is replayed as its trainer
// ran: each bucket's biases in a dense all-reduce before the all-gather of
// the rest, and the biases counted whole.
TEST_F(Replay, TopKFollowsTheTracesDenseVectors) {
  synthetic::SyntheticTraceOptions o = test_support::MlpTraceOptions(2);
  o.scheme = Scheme::kTopK;
  o.policy = Policy::kStatic;
  o.level_low = o.level_high = 0.1;
  const std::string path = test_support::SyntheticTrace(dir(), "topk-dense-vectors", o);
  test_support::ExecuteSql(path, "UPDATE run SET config_json = '{\"bucket_mb\": 0.1, \"topk_dense_vectors\": true}';");
  const ReplayInput in = LoadReplayInput(path);
  const ReplayResult r =
      ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).level_low(0.1).level_high(0.1)).Run(in);
  std::vector<std::string> calls;
  for (const CollectiveCall& c : r.patterns[0].calls) calls.push_back(c.tag + "/" + std::to_string(c.bucket));
  EXPECT_EQ(calls, (std::vector<std::string>{"dense/0", "topk/0", "dense/1", "topk/1"}));
  const CommunicationScheme reference = CommunicationScheme(Scheme::kTopK).topk_dense_vectors(true);
  double per_step = 0;
  for (const LayerInfo& l : in.view.layers) per_step += FloatsPerStep(reference, l.shape, 0.1);
  EXPECT_DOUBLE_EQ(r.static_low.epochs[0].payload_bytes,
                   4 * per_step * static_cast<double>(r.static_low.epochs[0].steps));
}

TEST_F(Replay, MoreWorkersThanHostsIsRefusedBeforeAnythingRuns) {
  EXPECT_NE(test_support::InputErrorOf([] {
              ReplayEngine(ReplayOptions().platform(StarPlatformOptions().hosts(4)).workers(8)).Run(*mlp_);
            }).find("8 ranks do not fit on 4 hosts"),
            std::string::npos);
}

TEST_F(Replay, TheCheckComparesTheTracesOwnScheduleWithWhatItMeasured) {
  // Each epoch priced from its own levels' steps, as the check always is.
  const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).share_compute(false)).Run(*mlp_);
  ASSERT_TRUE(r.check.has_value());
  EXPECT_EQ(r.check->epochs, 30);
  double measured = 0;
  for (const auto& [epoch, seconds] : mlp_->measured_iteration_s) measured += seconds;
  EXPECT_DOUBLE_EQ(r.check->measured_iteration_s, measured / 30);
  // The recorded schedule is Accordion's at these settings: same steps.
  EXPECT_NEAR(r.check->simulated_iteration_s, r.accordion.total.iteration_s, 1e-12);
}

// The analytic replay's only child process builds the platform. The GUI
// runs it on a pool thread it must be able to stop: a window closing waits
// for that thread, so a probe that ignored the flag could hold it forever.
TEST_F(Replay, CancellingStopsTheAnalyticReplayWhileItBuildsThePlatform) {
  std::atomic<bool> cancel{true};
  // Seven hosts: a platform no other test probes, so no remembered answer.
  const ReplayOptions o = ReplayOptions()
                              .timing(TimingSource::kAnalytic)
                              .platform(StarPlatformOptions().hosts(7))
                              .workers(7)
                              .cancel(&cancel);
  EXPECT_THROW(ReplayEngine(o).Run(*mlp_), Cancelled);
  cancel = false;
  EXPECT_EQ(ReplayEngine(o).Run(*mlp_).workers, 7);
}

TEST(ProbePlatform, AProbePastItsTimeLimitIsStopped) {
  // A 16,384-host fat-tree takes over a second to build here: a limit a
  // thousand times shorter is passed on any machine this will run on.
  try {
    ProbePlatform(FatTreePlatformOptions(), 16384, nullptr, 1e-3);
    FAIL() << "the probe ran past its limit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ran longer than its limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace accordion::sim

namespace accordion::sim {
namespace {

// Lines of `text` from the one starting with `header` to the next blank one.
std::vector<std::string> TableAt(const std::string& text, const std::string& header) {
  std::vector<std::string> lines;
  std::istringstream in(text.substr(text.find(header)));
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  return lines;
}

// Whatever the magnitudes (a trace's collectives of 9e6 s, the largest its
// limits allow), the text table keeps its columns: every row as wide as its
// header, a space before every number.
TEST(ReplayTable, KeepsItsColumnsWhateverTheMagnitude) {
  ReplayResult r;
  r.trace = "huge.trace";
  for (ScheduleProjection* s : {&r.accordion, &r.static_low, &r.static_high}) {
    s->label = "static rank 2";
    EpochProjection e;
    e.steps = 1000;
    e.iteration_s = 9e6;
    e.time_s = 9e9;
    e.exposed_comm_s = 8.9e9;
    s->epochs = {e, e};
    s->total = e;
    s->total.time_s = 1.8e10;
    s->total.time_low_s = 1.234e10;
    s->total.time_high_s = 2.345e10;
    s->total.compute_s = 1e8;
  }
  std::ostringstream out;
  WriteReplayTable(r, out);
  const std::string text = out.str();
  for (const auto& [header, rows] : {std::pair{"schedule ", 4u}, std::pair{"epoch ", 3u}}) {
    const std::vector<std::string> table = TableAt(text, header);
    ASSERT_EQ(table.size(), rows) << text;
    for (const std::string& row : table) EXPECT_EQ(row.size(), table.front().size()) << "\n" << text;
  }
  EXPECT_NE(text.find(" 9.000e+09"), std::string::npos) << text;
}

}  // namespace
}  // namespace accordion::sim
