#include "tests/simulator/sim_test_support.h"

#include <sqlite3.h>

#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "common/errors.h"
#include "simulator/child_process.h"

namespace accordion::sim::test_support {

double SimulateCollective(const PlatformSpec& spec, int ranks, CollectiveOp op, AllReduceAlgorithm algorithm,
                          int64_t bytes, Fidelity fidelity) {
  return std::stod(RunInChildProcess([&] {
    NetworkSimulation sim(spec, ranks);
    std::ostringstream s;
    s << std::setprecision(17) << sim.RunCollective(op, algorithm, bytes, fidelity);
    return s.str();
  }));
}

double SimulateCollective(const PlatformSpec& spec, int ranks, CollectiveOp op, AllReduceAlgorithm algorithm,
                          int64_t bytes, Fidelity fidelity, const CollectiveOptions& options) {
  return std::stod(RunInChildProcess([&] {
    NetworkSimulation sim(spec, ranks, options);
    std::ostringstream s;
    s << std::setprecision(17) << sim.RunCollective(op, algorithm, bytes, fidelity);
    return s.str();
  }));
}

PlatformSpec ExactStar(int hosts, double bandwidth_gbps, double latency_us) {
  return StarPlatformOptions()
      .hosts(hosts)
      .bandwidth_gbps(bandwidth_gbps)
      .latency_us(latency_us)
      .network(NetworkOptions::Exact());
}

std::string InputErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

synthetic::SyntheticTraceOptions MlpTraceOptions(int epochs) {
  synthetic::SyntheticTraceOptions o;
  o.model = "mlp";
  o.epochs = epochs;
  return o;
}

std::string SyntheticTrace(const std::string& dir, const std::string& name,
                           const synthetic::SyntheticTraceOptions& options) {
  const std::string path = dir + "/" + name + ".trace";
  synthetic::WriteSyntheticTrace(path, options);
  return path;
}

void ReplaceCollectives(const std::string& path, int world, const std::vector<MeasuredCollective>& measured) {
  std::ostringstream sql;
  sql << std::setprecision(17) << "BEGIN; DELETE FROM collectives;";
  for (size_t i = 0; i < measured.size(); ++i) {
    for (int rank = 0; rank < world; ++rank) {
      sql << "INSERT INTO collectives VALUES (0, " << i << ", " << rank << ", 0, '" << ToString(measured[i].op)
          << "', 0, 'dense', " << measured[i].bytes << ", 0.0, " << measured[i].duration_s << ");";
    }
  }
  sql << "COMMIT;";
  ExecuteSql(path, sql.str());
}

}  // namespace accordion::sim::test_support
