// A ring all-reduce on a star, simulated with SimGrid and priced with the
// alpha-beta formula 2(N-1) alpha + 2(N-1)/N S/B.
//
// With CM02, no TCP window and no cross-traffic the simulation *is* the
// formula; SimGrid's default model (LV08) adds TCP's costs on top.
#include <cstdio>
#include <string>

#include "simulator/alpha_beta_model.h"
#include "simulator/child_process.h"
#include "simulator/network_simulation.h"

using namespace accordion::sim;

int main() {
  const int ranks = 8;
  // Every host on its own 10 Gb/s link to one switch, 5 us per link: a
  // message between two hosts crosses two links, so alpha = 10 us.
  const StarPlatformOptions star = StarPlatformOptions().hosts(ranks).bandwidth_gbps(10).latency_us(5);
  const AlphaBetaModel formula(10e-6, 10e9 / 8);

  // SimGrid allows one engine per process; each platform gets a child.
  auto simulate = [&](const NetworkOptions& network, double bytes) {
    return std::stod(RunInChildProcess([&] {
      NetworkSimulation sim(StarPlatformOptions(star).network(network), ranks);
      // Full fidelity: each rank is an actor, each of the 2(N-1) steps a real flow.
      return std::to_string(sim.RunCollective(accordion::CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing,
                                              static_cast<int64_t>(bytes), Fidelity::kFull));
    }));
  };

  std::printf("ring all-reduce, %d ranks, star at 10 Gb/s, alpha 10 us\n", ranks);
  std::printf("%12s %14s %14s %14s %10s\n", "bytes", "formula_s", "CM02_exact_s", "LV08_s", "LV08/formula");
  for (double bytes : {1e3, 1e6, 1e9}) {
    const double f = formula.RingAllReduce(bytes, ranks);
    const double exact = simulate(NetworkOptions::Exact(), bytes);
    const double lv08 = simulate(NetworkOptions(), bytes);
    std::printf("%12.0f %14.6f %14.6f %14.6f %10.3f\n", bytes, f, exact, lv08, lv08 / f);
  }
  // Small messages pay LV08's latency factor (13.01), large ones its
  // bandwidth factor (0.97) and the acknowledgements of cross-traffic.
  return 0;
}
