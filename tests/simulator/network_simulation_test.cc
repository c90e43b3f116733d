// SimGrid collectives against the alpha-beta formulas, and the two
// fidelities against each other. Every simulation runs in a child process.
#include "simulator/network_simulation.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>

#include "simulator/alpha_beta_model.h"
#include "simulator/child_process.h"
#include "tests/simulator/sim_test_support.h"

namespace accordion::sim {
namespace {

using test_support::ExactStar;
using test_support::SimulateCollective;

constexpr double kBandwidthGbps = 10;
constexpr double kLinkLatencyUs = 5;
const AlphaBetaModel kStarModel(2 * kLinkLatencyUs * 1e-6, kBandwidthGbps * 1e9 / 8);

// The issue's acceptance test: an uncontended star with CM02, TCP-gamma 0 and
// no cross-traffic runs a ring all-reduce as 2(N-1)a + 2(N-1)/N S/B, within
// 1 %, for several N and sizes (every message a real flow).
TEST(RingAllReduceOnExactStar, MatchesAlphaBetaWithinOnePercent) {
  for (int n : {2, 4, 8, 16, 32}) {
    for (double bytes : {4096.0, 1e6, 1e9}) {
      const double simulated =
          SimulateCollective(ExactStar(n, kBandwidthGbps, kLinkLatencyUs), n, CollectiveOp::kAllReduce,
                             AllReduceAlgorithm::kRing, static_cast<int64_t>(bytes), Fidelity::kFull);
      const double formula = kStarModel.RingAllReduce(bytes, n);
      EXPECT_NEAR(simulated / formula, 1.0, 0.01) << n << " ranks, " << bytes << " bytes";
    }
  }
}

TEST(OtherCollectivesOnExactStar, MatchTheirFormulas) {
  const int n = 8;
  const PlatformSpec star = ExactStar(n, kBandwidthGbps, kLinkLatencyUs);
  for (double bytes : {65536.0, 1e8}) {
    const auto b = static_cast<int64_t>(bytes);
    EXPECT_NEAR(SimulateCollective(star, n, CollectiveOp::kAllGather, AllReduceAlgorithm::kRing, b, Fidelity::kFull) /
                    kStarModel.RingAllGather(bytes, n),
                1.0, 0.01);
    EXPECT_NEAR(SimulateCollective(star, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, b,
                                   Fidelity::kFull) /
                    kStarModel.HalvingDoublingAllReduce(bytes, n),
                1.0, 0.01);
    EXPECT_NEAR(SimulateCollective(star, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kTree, b, Fidelity::kFull) /
                    kStarModel.TreeAllReduce(bytes, n),
                1.0, 0.01);
  }
  // Not a power of two: the folding rounds are priced too.
  EXPECT_NEAR(SimulateCollective(ExactStar(6, kBandwidthGbps, kLinkLatencyUs), 6, CollectiveOp::kAllReduce,
                                 AllReduceAlgorithm::kHalvingDoubling, 1 << 24, Fidelity::kFull) /
                  kStarModel.HalvingDoublingAllReduce(1 << 24, 6),
              1.0, 0.01);
}

// SimGrid's default model adds TCP effects: LV08's latency factor 13.01 and
// bandwidth factor 0.97, and cross-traffic on the reverse links.
TEST(RingAllReduceOnDefaultStar, Lv08IsAFewPercentSlowerForLargeBuffers) {
  const int n = 16;
  const PlatformSpec lv08 = StarPlatformOptions().hosts(n).bandwidth_gbps(kBandwidthGbps).latency_us(kLinkLatencyUs);
  const double simulated =
      SimulateCollective(lv08, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, 1 << 30, Fidelity::kFull);
  const double ratio = simulated / kStarModel.RingAllReduce(1 << 30, n);
  EXPECT_GT(ratio, 1.05);
  EXPECT_LT(ratio, 1.15);
}

// Where no two flows of a round share a link, simulating each distinct
// round once gives what simulating every round of every rank gives.
TEST(Fidelity, RoundsEqualFullOnUncontendedPlatforms) {
  const int n = 12;
  const PlatformSpec star = ExactStar(n, 25, 2);
  const PlatformSpec tree =
      FatTreePlatformOptions().hosts_per_leaf(4).bandwidth_gbps(25).latency_us(2).network(NetworkOptions::Exact());
  for (const PlatformSpec& spec : {star, tree}) {
    for (AllReduceAlgorithm a : {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kHalvingDoubling}) {
      const double full = SimulateCollective(spec, n, CollectiveOp::kAllReduce, a, 1 << 22, Fidelity::kFull);
      const double rounds = SimulateCollective(spec, n, CollectiveOp::kAllReduce, a, 1 << 22, Fidelity::kRounds);
      EXPECT_NEAR(rounds / full, 1.0, 1e-9) << ToString(spec.topology) << " " << ToString(a);
    }
  }
}

// Halving-doubling on nodes of 8 ranks behind one NIC each: the large halves
// stay on the node (MPICH's order), so the NICs carry 2 x 3S/4 per node in
// all, about 1.5 S/B; pairing across nodes first would push 8x that through them.
TEST(HalvingDoubling, LargeHalvesStayOnTheNode) {
  const int n = 32;
  const int64_t bytes = int64_t{1} << 24;
  const double nic_Bps = 10e9 / 8;
  const PlatformSpec nodes =
      HierarchicalPlatformOptions().gpus_per_node(8).intra_bandwidth_gbps(600).bandwidth_gbps(10).network(
          NetworkOptions::Exact());
  const double t = SimulateCollective(nodes, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling, bytes,
                                      Fidelity::kFull);
  const double through_nic = 2.0 * 0.75 * static_cast<double>(bytes) / nic_Bps;
  EXPECT_GT(t, through_nic);
  EXPECT_LT(t, 1.5 * through_nic);
}

// With contention (an oversubscribed fat-tree, a physical ring carrying
// multi-hop exchanges) ranks drift in full fidelity; rounds stay close.
TEST(Fidelity, RoundsStayCloseToFullUnderContention) {
  const int n = 16;
  const PlatformSpec oversubscribed =
      FatTreePlatformOptions().hosts_per_leaf(4).spines(1).bandwidth_gbps(10).network(NetworkOptions::Exact());
  const PlatformSpec ring = RingPlatformOptions().bandwidth_gbps(10).network(NetworkOptions::Exact());
  for (const PlatformSpec& spec : {oversubscribed, ring}) {
    const double full = SimulateCollective(spec, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling,
                                           1 << 24, Fidelity::kFull);
    const double rounds = SimulateCollective(spec, n, CollectiveOp::kAllReduce, AllReduceAlgorithm::kHalvingDoubling,
                                             1 << 24, Fidelity::kRounds);
    EXPECT_NEAR(rounds / full, 1.0, 0.05) << ToString(spec.topology);
    // And contention is real: slower than the formula on the bottleneck.
    EXPECT_GT(full, 1.2 * AlphaBetaModel(0, 10e9 / 8).HalvingDoublingAllReduce(1 << 24, n));
  }
}

TEST(NetworkSimulation, IterationsWaitForReadyBucketsAndRunInIssueOrder) {
  const int n = 4;
  IterationPattern pattern;
  pattern.calls.push_back({CollectiveOp::kAllReduce, 1 << 20, 0.010, "dense", 0});
  pattern.calls.push_back({CollectiveOp::kAllReduce, 1 << 20, 0.011, "dense", 1});
  const std::string json = RunInChildProcess([&] {
    NetworkSimulation sim(ExactStar(n, 10, 5), n);
    return ToJson(sim.RunIteration(pattern, AllReduceAlgorithm::kRing, Fidelity::kFull)).dump();
  });
  const IterationTiming t = TimingFromJson(nlohmann::json::parse(json));
  const double one = kStarModel.RingAllReduce(1 << 20, n);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_NEAR(t.spans[0].start_s, 0.010, 1e-12);
  EXPECT_NEAR(t.spans[0].end_s, 0.010 + one, 1e-9);
  // Ready at 11 ms but the first still runs (it takes ~1.26 ms): it queues.
  EXPECT_NEAR(t.spans[1].start_s, t.spans[0].end_s, 1e-9);
  EXPECT_NEAR(t.comm_end_s, 0.010 + 2 * one, 1e-9);
}

// What this process holds: memory mappings, and resident kB.
struct ProcessMemory {
  int mappings = 0;
  long resident_kb = 0;
};
ProcessMemory MemoryNow() {
  ProcessMemory m;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) ++m.mappings;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) m.resident_kb = std::stol(line.substr(6));
  }
  return m;
}

// Every rank is an actor with a stack of its own. A guard page per stack
// made two mappings of each, and a round over 32,768 ranks went past the
// kernel's vm.max_map_count of 65,530; unguarded stacks must neither do
// that nor take their full 256 KiB of memory each (glibc clears a reused
// heap block in full), wave after wave of actors.
TEST(NetworkSimulation, ActorStacksTakeNeitherAMappingNorTheirSizeInMemoryEach) {
  constexpr int kActors = 4096;
  const nlohmann::json j = nlohmann::json::parse(RunInChildProcess([] {
    NetworkSimulation sim(StarPlatformOptions().hosts(kActors), kActors);
    ProcessMemory before, during;
    for (int wave = 0; wave < 3; ++wave) {
      before = MemoryNow();
      for (simgrid::s4u::Host* host : sim.hosts()) {
        simgrid::s4u::Actor::create("idle", host, [] { simgrid::s4u::this_actor::sleep_for(1); });
      }
      simgrid::s4u::Actor::create("observer", sim.hosts()[0], [&during] {
        simgrid::s4u::this_actor::sleep_for(0.5);
        during = MemoryNow();
      });
      simgrid::s4u::Engine::get_instance()->run();
    }
    return nlohmann::json{{"mappings", during.mappings}, {"grown_kb", during.resident_kb - before.resident_kb}}.dump();
  }));
  EXPECT_LT(j.at("mappings").get<int>(), kActors / 4) << "stacks each take a memory mapping or more";
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer's allocator has its own ways
  EXPECT_LT(j.at("grown_kb").get<long>(), kActors * 64) << "a stack takes over 64 KiB of memory";
#endif
}

// Stacks are reserved address space: under ulimit -v SimGrid died
// allocating one, with a backtrace; now the platform is refused in one line.
TEST(NetworkSimulation, AnAddressSpaceLimitBelowTheStacksIsOneLine) {
  const std::string error = test_support::InputErrorOf([] {
    RunInChildProcess([]() -> std::string {
      long pages = 0;
      std::ifstream("/proc/self/statm") >> pages;
      rlimit limit{};
      ::getrlimit(RLIMIT_AS, &limit);
      limit.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{1} << 30);
      ::setrlimit(RLIMIT_AS, &limit);
      NetworkSimulation sim(StarPlatformOptions(), 65536);
      return "built";
    });
  });
  EXPECT_NE(error.find("65536 ranks need 17.4 GB of address space"), std::string::npos) << error;
  EXPECT_NE(error.find("ulimit -v"), std::string::npos) << error;
}

}  // namespace
}  // namespace accordion::sim
