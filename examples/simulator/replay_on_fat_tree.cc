// Replaying a trace on a bigger cluster: a 4-worker MLP run with TopK
// projected onto 16 workers of an oversubscribed fat-tree, Accordion against
// static TopK 99 % and 10 %, simulated and with the analytic model.
#include <cstdio>
#include <filesystem>

#include "simulator/replay_engine.h"
#include "tests/support/synthetic_trace.h"

using namespace accordion;
using namespace accordion::sim;

int main() {
  // A SYNTHETIC trace stands in for a recorded one (same tables, same shape).
  const std::string trace = (std::filesystem::temp_directory_path() / "accordion-example-mlp.trace").string();
  synthetic::SyntheticTraceOptions recorded;
  recorded.model = "mlp";
  recorded.epochs = 30;
  recorded.world_size = 4;
  recorded.scheme = Scheme::kTopK;
  recorded.level_low = 0.99;  // inside critical regimes
  recorded.level_high = 0.1;  // outside them
  recorded.interval = 5;      // a check every 5 of its 30 epochs
  synthetic::WriteSyntheticTrace(trace, recorded);
  const ReplayInput input = LoadReplayInput(trace);
  std::filesystem::remove(trace);

  // Leaves of 4 hosts, 2 spines: traffic between leaves shares half the links.
  const PlatformSpec cluster =
      FatTreePlatformOptions().hosts_per_leaf(4).spines(2).bandwidth_gbps(1).latency_us(5);
  // TopK sends values and indices by all-gather: at 16 workers every worker
  // receives fifteen others' payloads, so the level matters a lot.
  const ReplayOptions options = ReplayOptions().platform(cluster).workers(16).accordion(AccordionOptions().eta(0.5).interval(5));

  for (ModelKind model : {ModelKind::kSimulate, ModelKind::kAnalytic}) {
    const ReplayResult r = ReplayEngine(ReplayOptions(options).model(model)).Run(input);
    std::printf("%s\n", r.communication.c_str());
    for (const ScheduleProjection* s : {&r.accordion, &r.static_low, &r.static_high}) {
      std::printf("  %-28s %9.2f s total, %7.2f s exposed communication, %.4g bytes per worker\n",
                  s->label.c_str(), s->total.time_s, s->total.exposed_comm_s, s->total.payload_bytes);
    }
    std::printf("  Accordion's speedup: %.3fx vs %s, %.3fx vs %s (%d distinct iteration patterns)\n",
                r.speedup_vs_low(), r.static_low.label.c_str(), r.speedup_vs_high(),
                r.static_high.label.c_str(), r.distinct_patterns);
  }
  return 0;
}
