// The replay's model of one step against what the trainer did: the order
// and dependencies of its collectives, the slowest rank, stragglers, and a
// replay of real traces on their own setting.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "simulator/communication_model.h"
#include "simulator/iteration_pattern.h"
#include "simulator/replay_engine.h"
#include "tests/simulator/sim_test_support.h"
#include "tests/support/temp_dir_test.h"

namespace accordion::sim {
namespace {

using test_support::ExactStar;

std::string Sample(const std::string& name) { return std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/" + name; }

// Two buckets: dense + P during backward, then Q after backward, each after
// its P and 1 ms of host compression.
IterationPattern PowerSgdPattern() {
  IterationPattern p;
  p.backward_s = 0.010;
  p.calls.push_back({CollectiveOp::kAllReduce, 4000, 0.002, "dense", 0});
  p.calls.push_back({CollectiveOp::kAllReduce, 8000, 0.002, "powersgd-p", 0});
  p.calls.push_back({CollectiveOp::kAllReduce, 4000, 0.006, "dense", 1});
  p.calls.push_back({CollectiveOp::kAllReduce, 8000, 0.006, "powersgd-p", 1});
  for (int b = 0; b < 2; ++b) {
    CollectiveCall q{CollectiveOp::kAllReduce, 16000, b == 0 ? 0.002 : 0.006, "powersgd-q", b};
    q.after = b == 0 ? 1 : 3;
    q.after_backward = true;
    q.gap_s = 0.001;
    p.calls.push_back(q);
  }
  return p;
}

TEST(ComposeIteration, HeldBackCollectivesWaitForBackwardTheirDependencyAndTheHost) {
  const IterationPattern p = PowerSgdPattern();
  const std::vector<double> durations = {0.001, 0.0005, 0.001, 0.002, 0.002, 0.002};
  const IterationTiming t = ComposeIteration(p, durations);
  ASSERT_EQ(t.spans.size(), 6u);
  EXPECT_DOUBLE_EQ(t.spans[0].start_s, 0.002);
  EXPECT_DOUBLE_EQ(t.spans[1].start_s, 0.003);  // queued behind the dense one
  EXPECT_DOUBLE_EQ(t.spans[2].start_s, 0.006);
  EXPECT_DOUBLE_EQ(t.spans[3].end_s, 0.009);
  // Q0: after backward (10 ms) + 1 ms of compression.
  EXPECT_NEAR(t.spans[4].start_s, 0.011, 1e-15);
  // Q1: issued by the host after Q0's issue + 1 ms, queued behind Q0.
  EXPECT_NEAR(t.spans[5].start_s, 0.013, 1e-15);
  EXPECT_NEAR(t.comm_end_s, 0.015, 1e-15);
  // The host's second issue comes 1 ms after its first, when the network is slow to matter.
  std::vector<double> fast = durations;
  fast[4] = 0.0001;
  EXPECT_NEAR(ComposeIteration(p, fast).spans[5].start_s, 0.012, 1e-15);
  // Without the dependencies Q0 would have hidden behind backward.
  IterationPattern free = p;
  for (CollectiveCall& c : free.calls) {
    c.after = -1;
    c.after_backward = false;
    c.gap_s = 0;
  }
  EXPECT_LT(ComposeIteration(free, durations).spans[4].start_s, p.backward_s);
}

// The SimGrid actors apply the same issue rule as the composition: on an
// exact star with no shared links the two agree.
TEST(ComposeIteration, SimGridRanksHonourTheSameDependencies) {
  const IterationPattern p = PowerSgdPattern();
  const PlatformSpec star = ExactStar(0, 1, 5);
  for (Fidelity f : {Fidelity::kFull, Fidelity::kRounds}) {
    SimulatedCommunication sim(star, 4, AllReduceAlgorithm::kRing, f);
    const IterationTiming simulated = sim.Time({p}, {}).at(0);
    std::vector<double> durations;
    for (const CollectiveCall& c : p.calls) {
      durations.push_back(test_support::SimulateCollective(star, 4, c.op, AllReduceAlgorithm::kRing, c.bytes, f));
    }
    const IterationTiming composed = ComposeIteration(p, durations);
    ASSERT_EQ(simulated.spans.size(), composed.spans.size());
    for (size_t i = 0; i < p.calls.size(); ++i) {
      EXPECT_NEAR(simulated.spans[i].start_s, composed.spans[i].start_s, 1e-7) << ToString(f) << " call " << i;
    }
    EXPECT_NEAR(simulated.comm_end_s, composed.comm_end_s, 1e-7) << ToString(f);
    EXPECT_GE(simulated.spans[4].start_s, p.backward_s + 0.001 - 1e-12);
  }
}

TEST(ComposeIteration, PlatformOverheadIsPaidOncePerCollective) {
  PlatformSpec star = ExactStar(0, 1, 5);
  const double plain = test_support::SimulateCollective(star, 4, CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing,
                                                        1 << 20, Fidelity::kFull);
  star.collective_overhead_s = 0.003;
  for (Fidelity f : {Fidelity::kFull, Fidelity::kRounds}) {
    EXPECT_NEAR(
        test_support::SimulateCollective(star, 4, CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 1 << 20, f),
        plain + 0.003, 1e-6)
        << ToString(f);
  }
  IterationPattern two;
  two.calls.push_back({CollectiveOp::kAllReduce, 1 << 20, 0, "dense", 0});
  two.calls.push_back({CollectiveOp::kAllReduce, 1 << 20, 0, "dense", 1});
  AnalyticCommunication analytic(AlphaBetaModel(10e-6, 1.25e8), AllReduceAlgorithm::kRing, 4, 0.003);
  AnalyticCommunication without(AlphaBetaModel(10e-6, 1.25e8), AllReduceAlgorithm::kRing, 4);
  EXPECT_NEAR(analytic.Time({two}, {})[0].comm_end_s, without.Time({two}, {})[0].comm_end_s + 0.006, 1e-12);
}

// A replay of a real trace on its own workers with each collective as the
// trace measured it reproduces the measured step: what is left to the
// network model elsewhere is then the network alone.
TEST(RecordedReplay, EverySampleTraceReproducesItsMeasuredStepWithin5Percent) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ACCORDION_SOURCE_DIR) + "/traces/samples")) {
    if (entry.path().extension() != ".trace") continue;
    const ReplayInput in = LoadReplayInput(entry.path().string());
    const ReplayResult r = ReplayEngine(ReplayOptions().timing(TimingSource::kRecorded)).Run(in);
    ASSERT_TRUE(r.check.has_value()) << entry.path();
    EXPECT_LT(std::abs(r.check->relative_error), 0.05)
        << entry.path().filename() << ": measured " << r.check->measured_iteration_s * 1e3 << " ms, replayed "
        << r.check->simulated_iteration_s * 1e3 << " ms";
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

// What the trace's collectives cost the hosts beyond their transfer stays
// with them on another network: replayed on the network it was recorded on,
// every sample trace comes back within 10 % (the rest is the step model's
// slowest-rank view); the same costs ride on a slower network's transfers.
TEST(HostCosts, TheTracesCollectivesKeepTheirHostCostOnAnotherNetwork) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ACCORDION_SOURCE_DIR) + "/traces/samples")) {
    if (entry.path().extension() != ".trace") continue;
    const ReplayInput in = LoadReplayInput(entry.path().string());
    const ReplayOptions own =
        ReplayOptions().timing(TimingSource::kAnalytic).platform(ExactStar(0, 10, 5)).recorded_bandwidth_gbps(10);
    const ReplayResult r = ReplayEngine(own).Run(in);
    ASSERT_TRUE(r.check.has_value());
    EXPECT_LT(std::abs(r.check->relative_error), 0.10) << entry.path().filename();
    const ReplayResult without = ReplayEngine(ReplayOptions(own).overhead(OverheadSource::kPlatform)).Run(in);
    EXPECT_LT(std::abs(r.check->relative_error), std::abs(without.check->relative_error)) << entry.path().filename();
  }
  // Each recorded collective's host cost is its time less the recorded network's.
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-topk-static-0.1.trace"));
  const ReplayResult slow =
      ReplayEngine(
          ReplayOptions().timing(TimingSource::kAnalytic).platform(ExactStar(0, 1, 5)).recorded_bandwidth_gbps(10))
          .Run(in);
  const AlphaBetaModel recorded(2 * 5e-6, 10e9 / 8);
  int checked = 0;
  for (const IterationPattern& p : slow.patterns) {
    for (const CollectiveCall& c : p.calls) {
      auto it = in.collective_s.find({c.op, c.tag, c.bucket, c.bytes});
      if (it == in.collective_s.end()) continue;
      const double transfer = recorded.Time(c.op, AllReduceAlgorithm::kRing, static_cast<double>(c.bytes), 2);
      EXPECT_NEAR(c.host_s, it->second - transfer, 1e-9);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(RecordedReplay, RefusesAnotherWorkerCount) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-dense.trace"));
  const std::string error = test_support::InputErrorOf(
      [&] { ReplayEngine(ReplayOptions().timing(TimingSource::kRecorded).workers(8)).Run(in); });
  EXPECT_NE(error.find("own 2 workers"), std::string::npos) << error;
}

// PowerSGD's Q all-reduces follow backward in the replay as in the trainer:
// on a slow network they are exposed, not hidden behind backward.
TEST(RecordedReplay, PowerSgdQueriesStartAfterBackwardAndTheirP) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-powersgd-static-2.trace"));
  const ReplayResult r =
      ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).platform(ExactStar(0, 0.1, 50))).Run(in);
  const IterationPattern& p = r.patterns.at(static_cast<size_t>(r.static_low.epochs[5].pattern));
  const IterationTiming& t = r.timings.at(static_cast<size_t>(r.static_low.epochs[5].pattern));
  int queries = 0;
  for (size_t i = 0; i < p.calls.size(); ++i) {
    if (p.calls[i].tag != "powersgd-q") continue;
    ++queries;
    EXPECT_GE(t.spans[i].start_s, p.backward_s);
    ASSERT_GE(p.calls[i].after, 0);
    EXPECT_GE(t.spans[i].start_s, t.spans[static_cast<size_t>(p.calls[i].after)].end_s);
  }
  EXPECT_GE(queries, 1);
  EXPECT_GT(r.static_low.total.exposed_comm_s, 0);
}

// A synchronous step waits for its slowest rank: slowing one rank's forward
// pass slows the replayed step by as much, not by half as much.
using SlowestRank = accordion::test_support::TempDirTest;

TEST_F(SlowestRank, OneSlowRankSetsTheStep) {
  const std::string path = Path("dense.trace");
  std::filesystem::copy_file(Sample("fmnist-mlp-dense.trace"), path);
  const ReplayOptions o = ReplayOptions().timing(TimingSource::kAnalytic).platform(ExactStar(0, 10, 5));
  const ReplayResult before = ReplayEngine(o).Run(LoadReplayInput(path));
  test_support::ExecuteSql(path, "UPDATE iterations SET forward_s = forward_s + 0.020 WHERE rank = 1");
  const ReplayResult after = ReplayEngine(o).Run(LoadReplayInput(path));
  EXPECT_NEAR(after.accordion.total.iteration_s - before.accordion.total.iteration_s, 0.020, 0.002);
}

// TopK's decompression adds every worker's k entries, PowerSGD's does not
// depend on the worker count.
TEST(Decompression, GrowsWithTheWorkersForTopKOnly) {
  auto other_per_step = [](const std::string& trace, int workers) {
    const ReplayInput in = LoadReplayInput(Sample(trace));
    const ReplayResult r =
        ReplayEngine(ReplayOptions().timing(TimingSource::kAnalytic).platform(ExactStar(0, 10, 5)).workers(workers))
            .Run(in);
    return r.static_low.total.other_s / static_cast<double>(r.static_low.total.steps);
  };
  const ReplayInput topk = LoadReplayInput(Sample("fmnist-mlp-topk-static-0.1.trace"));
  double decompress = 0;
  for (const StepSample& s : topk.steps.at(0).samples) decompress += s.decompress_s;
  decompress /= static_cast<double>(topk.steps.at(0).samples.size());
  ASSERT_GT(decompress, 0);
  EXPECT_NEAR(
      other_per_step("fmnist-mlp-topk-static-0.1.trace", 8) - other_per_step("fmnist-mlp-topk-static-0.1.trace", 2),
      3 * decompress, 1e-9);
  EXPECT_NEAR(other_per_step("fmnist-mlp-powersgd-static-2.trace", 8),
              other_per_step("fmnist-mlp-powersgd-static-2.trace", 2), 1e-12);
}

// NCCL's settings travel with the replay's options, into the SimGrid
// processes and the analytic model alike: smaller chunks, more latency.
TEST(CollectiveSettings, ReachBothModelsThroughTheReplayOptions) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-dense.trace"));
  for (TimingSource model : {TimingSource::kSimulate, TimingSource::kAnalytic}) {
    auto exposed = [&](int64_t chunk) {
      return ReplayEngine(ReplayOptions()
                              .timing(model)
                              .platform(ExactStar(0, 10, 50))
                              .workers(8)
                              .allreduce(AllReduceAlgorithm::kNcclRing)
                              .collective(CollectiveOptions().chunk_bytes(chunk)))
          .Run(in)
          .static_low.total.exposed_comm_s;
    };
    EXPECT_GT(exposed(1024), 1.5 * exposed(512 * 1024)) << ToString(model);
  }
  EXPECT_NE(test_support::InputErrorOf(
                [&] { ReplayEngine(ReplayOptions().collective(CollectiveOptions().channels(0))).Run(in); }),
            "");
}

TEST(Stragglers, SlowTheStepMoreWithMoreRanks) {
  const ReplayInput in = LoadReplayInput(Sample("fmnist-mlp-dense.trace"));
  auto iteration = [&](int workers, double cv) {
    return ReplayEngine(ReplayOptions()
                            .timing(TimingSource::kAnalytic)
                            .platform(ExactStar(0, 10, 5))
                            .workers(workers)
                            .straggler_cv(cv)
                            .overhead(OverheadSource::kPlatform))
        .Run(in)
        .accordion.total.iteration_s;
  };
  EXPECT_DOUBLE_EQ(iteration(1, 0.3), iteration(1, 0));
  const double at8 = iteration(8, 0.3) / iteration(8, 0);
  const double at64 = iteration(64, 0.3) / iteration(64, 0);
  EXPECT_GT(at8, 1.1);
  EXPECT_GT(at64, at8);
  // E[max of 64 log-normals, cv 0.3] is about 1.9: the compute part of a step
  // cannot grow by more.
  EXPECT_LT(at64, 2.0);
  EXPECT_NE(test_support::InputErrorOf([&] { iteration(4, -1); }), "");
}

}  // namespace
}  // namespace accordion::sim
