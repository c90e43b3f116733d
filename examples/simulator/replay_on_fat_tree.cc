// Replaying a trace on a bigger cluster: a 4-worker MLP run with TopK
// projected onto 16 workers of an oversubscribed fat-tree, Accordion against
// static TopK 99 % and 10 %, simulated and with the analytic model.
//
// The trace is the argument. ctest hands it a SYNTHETIC one shaped like such
// a run (30 epochs, a check every 5, TopK 99 % inside critical regimes and
// 10 % outside), made by the test tool
//   accordion-make-synthetic-trace mlp.trace --model mlp --epochs 30 --workers 4 --scheme topk --interval 5
// A trace recorded by accordion-train replays the same way.
#include <cstdio>

#include "simulator/replay_engine.h"

using namespace accordion;
using namespace accordion::sim;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE\n", argv[0]);
    return 2;
  }
  const ReplayInput input = LoadReplayInput(argv[1]);

  // Leaves of 4 hosts, 2 spines: traffic between leaves shares half the links.
  const PlatformSpec cluster = FatTreePlatformOptions().hosts_per_leaf(4).spines(2).bandwidth_gbps(1).latency_us(5);
  // TopK sends values and indices by all-gather: at 16 workers every worker
  // receives fifteen others' payloads, so the level matters a lot.
  const ReplayOptions options = ReplayOptions().platform(cluster).workers(16).eta(0.5).interval(5);

  for (TimingSource model : {TimingSource::kSimulate, TimingSource::kAnalytic}) {
    const ReplayResult r = ReplayEngine(ReplayOptions(options).timing(model)).Run(input);
    std::printf("%s\n", r.communication.c_str());
    for (const ScheduleProjection* s : {&r.accordion, &r.static_low, &r.static_high}) {
      std::printf("  %-28s %9.2f s total, %7.2f s exposed communication, %.4g bytes per worker\n", s->label.c_str(),
                  s->total.time_s, s->total.exposed_comm_s, s->total.payload_bytes);
    }
    std::printf("  Accordion's speedup: %.3fx vs %s, %.3fx vs %s (%d distinct iteration patterns)\n",
                r.speedup_vs_low(), r.static_low.label.c_str(), r.speedup_vs_high(), r.static_high.label.c_str(),
                r.distinct_patterns);
  }
  return 0;
}
