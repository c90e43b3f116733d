// accordion-sim-bench: wall time to replay a full 300-epoch ResNet-18-shaped
// run (62 layers, Accordion PowerSGD rank 2 / rank 1) at several worker
// counts, simulated in SimGrid and with the analytic model in the same run.
// Prints figures and ratios; asserts nothing (see docs/bench-simulator.md).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "simulator/replay_engine.h"
#include "simulator/platform_file.h"
#include "tests/support/synthetic_trace.h"

using namespace accordion;
using namespace accordion::sim;

namespace {

double Seconds(const std::chrono::steady_clock::time_point& since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Timed {
  ReplayResult result;
  double wall_s = 0;
};

Timed TimeReplay(const ReplayInput& input, const ReplayOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Timed t{ReplayEngine(options).Run(input), 0};
  t.wall_s = Seconds(start);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks = {8, 64, 256, 1024};
  int epochs = 300;
  int full_max = 256;
  double bandwidth_gbps = 25, latency_us = 5;
  bool exact = false;
  std::string platform_file;
  CLI::App app{"Wall time of accordion-sim replays, simulated and analytic"};
  app.add_option("--ranks", ranks, "Worker counts")->delimiter(',');
  app.add_option("--epochs", epochs, "Epochs of the synthetic run");
  app.add_option("--full-max", full_max, "Also time full fidelity up to this many ranks");
  app.add_option("--bandwidth-gbps", bandwidth_gbps);
  app.add_option("--latency-us", latency_us);
  app.add_flag("--exact", exact, "CM02, TCP-gamma 0, no cross-traffic (default: SimGrid's LV08)");
  app.add_option("--platform", platform_file, "A platform file instead of the star (JSON or SimGrid XML)");
  CLI11_PARSE(app, argc, argv);

  const std::string trace = (std::filesystem::temp_directory_path() / "accordion-sim-bench.trace").string();
  synthetic::SyntheticTraceOptions o;
  o.model = "resnet18";
  o.epochs = epochs;
  o.world_size = 4;
  o.decay_epochs = {epochs / 2, epochs * 5 / 6};  // 150 and 250 of 300, as the paper's schedule
  auto start = std::chrono::steady_clock::now();
  synthetic::WriteSyntheticTrace(trace, o);
  const ReplayInput input = LoadReplayInput(trace);
  std::filesystem::remove(trace);
  std::printf("SYNTHETIC ResNet-18 trace: %d epochs, %d layers, written and loaded in %.2f s\n", epochs,
              input.view.num_layers(), Seconds(start));

  PlatformSpec platform = StarPlatformOptions().bandwidth_gbps(bandwidth_gbps).latency_us(latency_us);
  if (!platform_file.empty()) platform = LoadPlatformFile(platform_file);
  if (exact) platform.network = NetworkOptions::Exact();
  std::printf("platform (hosts follow the ranks): %s; Accordion eta 0.5, interval 10\n\n",
              platform.Describe(ranks.back()).c_str());
  std::printf("%6s %9s %9s %12s %12s %10s %14s %14s %10s\n", "ranks", "fidelity", "patterns", "simulate_s",
              "analytic_s", "wall_ratio", "projected_sim", "projected_ab", "sim/ab");
  for (int n : ranks) {
    const ReplayOptions base = ReplayOptions().platform(platform).workers(n);
    std::vector<Fidelity> fidelities = {Fidelity::kAuto};
    if (n <= full_max && ResolveFidelity(Fidelity::kAuto, n) != Fidelity::kFull) fidelities.push_back(Fidelity::kFull);
    const Timed analytic = TimeReplay(input, ReplayOptions(base).timing(TimingSource::kAnalytic));
    for (Fidelity f : fidelities) {
      const Timed sim = TimeReplay(input, ReplayOptions(base).fidelity(f));
      std::printf("%6d %9s %9d %12.3f %12.3f %10.1f %13.1fs %13.1fs %10.3f\n", n, ToString(ResolveFidelity(f, n)),
                  sim.result.distinct_patterns, sim.wall_s, analytic.wall_s, sim.wall_s / analytic.wall_s,
                  sim.result.accordion.total.time_s, analytic.result.accordion.total.time_s,
                  sim.result.accordion.total.time_s / analytic.result.accordion.total.time_s);
      std::fflush(stdout);
    }
  }
  return 0;
}
