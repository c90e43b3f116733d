// The flags that describe the cluster a trace is projected onto (workers,
// links, topology, SimGrid's network model and its TCP window and cross
// traffic, a shaper, the recorded network, the all-reduce algorithm) and
// the timing method, each described once for accordion-sim and
// accordion-report (analysis/cli/shared_flags.h has the schedule's flags).
// Each Add* takes the default text from the options class the flag feeds in
// the caller, never a restated number.
#ifndef ACCORDION_SIMULATOR_CLI_CLUSTER_FLAGS_H_
#define ACCORDION_SIMULATOR_CLI_CLUSTER_FLAGS_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "simulator/platform.h"
#include "simulator/topology_description.h"

namespace accordion::cli {

// A worker count given on the command line: a whole number, at least 1.
CLI::Validator AWorkerCount();

// --workers, --bandwidth-gbps, --latency-us: one value, or a list in a
// sweep (the same sentence; help's type column says which).
CLI::Option* AddWorkersFlag(CLI::App* cmd, int* workers, const std::string& default_text);
CLI::Option* AddWorkersFlag(CLI::App* cmd, std::vector<int>* workers, const std::string& default_text);
CLI::Option* AddBandwidthFlag(CLI::App* cmd, std::optional<double>* gbps, const std::string& default_text);
CLI::Option* AddBandwidthFlag(CLI::App* cmd, std::vector<double>* gbps, const std::string& default_text);
CLI::Option* AddLatencyFlag(CLI::App* cmd, std::optional<double>* us, const std::string& default_text);
CLI::Option* AddLatencyFlag(CLI::App* cmd, std::vector<double>* us, const std::string& default_text);
CLI::Option* AddTopologyFlag(CLI::App* cmd, std::string* topology, const std::string& default_text);
CLI::Option* AddPlatformFileFlag(CLI::App* cmd, std::string* file);
// A link flag's default where the flags change a trace's base platform
// (`over_trace`): `recorded`, the network the trace's probe recorded, else
// `otherwise` (PlatformSpec's). Without a trace, `otherwise` alone.
std::string OverTrace(bool over_trace, const std::string& otherwise,
                      const std::string& recorded = "the trace's recorded network (its probe's fit)");
// --network-model: SimGrid's; the default is the base platform's. Unchecked
// here: accordion-sim's platform check names the models in its own words.
CLI::Option* AddNetworkModelFlag(CLI::App* cmd, std::optional<std::string>* model, bool over_trace = true);
// --tcp-gamma (SimGrid's TCP window) and --crosstraffic.
void AddWindowFlags(CLI::App* cmd, std::optional<double>* tcp_gamma, std::optional<std::string>* crosstraffic,
                    bool over_trace);
// --burst-kib and --line-gbps: a token-bucket shaper on the links.
void AddShaperFlags(CLI::App* cmd, std::optional<double>* burst_kib, std::optional<double>* line_gbps);
CLI::Option* AddRecordedBandwidthFlag(CLI::App* cmd, std::optional<double>* gbps);
CLI::Option* AddAllReduceFlag(CLI::App* cmd, std::string* allreduce);
// --timing among `choices` (TimingSource names), with --model, its name
// before 0.2, as a deprecated alias.
CLI::Option* AddTimingFlag(CLI::App* cmd, std::string* timing, const std::vector<std::string>& choices,
                           const std::string& tool);

// Each topology parameter's flag, from its row; `controls_only`: only the
// parameters the GUI has a control for, their counts checked against the
// row's range at parse time.
class TopologyParameterFlags {
 public:
  void Add(CLI::App* cmd, bool controls_only);
  bool AnyLinkGiven() const;  // a parameter that is not a count
  void Apply(sim::PlatformSpec& spec) const;
  std::map<std::string, double> Given() const;  // by key, in the parameter's unit

 private:
  struct Flag {
    const sim::TopologyParameter* parameter;
    std::optional<int> count;
    std::optional<double> number;
    bool given() const { return count || number; }
    double value() const { return count ? *count : *number; }
  };
  std::deque<Flag> flags_;  // stable addresses for CLI11
};

}  // namespace accordion::cli

#endif  // ACCORDION_SIMULATOR_CLI_CLUSTER_FLAGS_H_
