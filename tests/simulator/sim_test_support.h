// Helpers for the simulator tests: SimGrid runs in child processes (one
// engine per process, so tests can share a test binary), and traces edited
// with SQL to lack or hold exactly the rows a test needs.
#ifndef ACCORDION_TESTS_SIMULATOR_SIM_TEST_SUPPORT_H_
#define ACCORDION_TESTS_SIMULATOR_SIM_TEST_SUPPORT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simulator/collectives.h"
#include "simulator/network_simulation.h"
#include "simulator/platform.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/trace_sql.h"

namespace accordion::sim::test_support {

// Seconds one collective takes in a fresh SimGrid engine. With `options`,
// they are the child's default CollectiveOptions, as the command line makes them.
double SimulateCollective(const PlatformSpec& spec, int ranks, CollectiveOp op, AllReduceAlgorithm algorithm,
                          int64_t bytes, Fidelity fidelity);
double SimulateCollective(const PlatformSpec& spec, int ranks, CollectiveOp op, AllReduceAlgorithm algorithm,
                          int64_t bytes, Fidelity fidelity, const CollectiveOptions& options);

// The star the alpha-beta formulas describe exactly: CM02, no TCP window,
// no cross-traffic; alpha = 2 * latency_us (two links per route).
PlatformSpec ExactStar(int hosts, double bandwidth_gbps, double latency_us);

// The message of the InputError `f` throws, or "" when it throws none.
std::string InputErrorOf(const std::function<void()>& f);

// A synthetic 4-worker MLP run (PowerSGD, Accordion) of `epochs` epochs.
synthetic::SyntheticTraceOptions MlpTraceOptions(int epochs);

// Writes a synthetic trace and returns its path.
std::string SyntheticTrace(const std::string& dir, const std::string& name,
                           const synthetic::SyntheticTraceOptions& options);

// Runs SQL statements on a trace file (to delete or plant rows).
using ::accordion::test_support::ExecuteSql;

struct MeasuredCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t bytes = 0;
  double duration_s = 0;
};
// Replaces the trace's collectives with `measured`, one per iteration of
// epoch 0 (iterations 0, 1, ...), as seen by every rank.
void ReplaceCollectives(const std::string& path, int world, const std::vector<MeasuredCollective>& measured);

}  // namespace accordion::sim::test_support

#endif  // ACCORDION_TESTS_SIMULATOR_SIM_TEST_SUPPORT_H_
