#include "simulator/cli/cluster_flags.h"

#include "analysis/cli/shared_flags.h"
#include "common/cli.h"
#include "common/number_format.h"
#include "simulator/communication_model.h"

namespace accordion::cli {

CLI::Validator AWorkerCount() {
  // Inside, 0 means "the trace's": a 0 given would be taken for that without a word.
  return CLI::Validator(
      [](const std::string& value) {
        const bool whole = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        return whole && value.find_first_not_of('0') != std::string::npos
                   ? std::string()
                   : std::string("must be a whole number, at least 1");
      },
      "", "at least 1");
}

constexpr const char* kWorkersHelp = "Workers (ranks) to project to; per-worker batch kept";
constexpr const char* kBandwidthHelp = "Link bandwidth, Gb/s (hierarchical: the node NICs)";
constexpr const char* kLatencyHelp = "Latency per link, microseconds";

CLI::Option* AddWorkersFlag(CLI::App* cmd, int* workers, const std::string& default_text) {
  return cmd->add_option("--workers", *workers, WithDefault(kWorkersHelp, default_text))->check(AWorkerCount());
}

CLI::Option* AddWorkersFlag(CLI::App* cmd, std::vector<int>* workers, const std::string& default_text) {
  return cmd->add_option("--workers", *workers, WithDefault(kWorkersHelp, default_text))
      ->delimiter(',')
      ->check(AWorkerCount());
}

CLI::Option* AddBandwidthFlag(CLI::App* cmd, std::optional<double>* gbps, const std::string& default_text) {
  return cmd->add_option("--bandwidth-gbps", *gbps, WithDefault(kBandwidthHelp, default_text));
}

CLI::Option* AddBandwidthFlag(CLI::App* cmd, std::vector<double>* gbps, const std::string& default_text) {
  return cmd->add_option("--bandwidth-gbps", *gbps, WithDefault(kBandwidthHelp, default_text))->delimiter(',');
}

CLI::Option* AddLatencyFlag(CLI::App* cmd, std::optional<double>* us, const std::string& default_text) {
  return cmd->add_option("--latency-us", *us, WithDefault(kLatencyHelp, default_text));
}

CLI::Option* AddLatencyFlag(CLI::App* cmd, std::vector<double>* us, const std::string& default_text) {
  return cmd->add_option("--latency-us", *us, WithDefault(kLatencyHelp, default_text))->delimiter(',');
}

CLI::Option* AddTopologyFlag(CLI::App* cmd, std::string* topology, const std::string& default_text) {
  return cmd->add_option("--topology", *topology, WithDefault("Topology: " + sim::TopologyNames(), default_text));
}

CLI::Option* AddPlatformFileFlag(CLI::App* cmd, std::string* file) {
  return cmd->add_option("--platform", *file,
                         "Platform file: JSON (see docs/simulator.md) or SimGrid XML (.xml), in place of the "
                         "topology and link flags");
}

std::string OverTrace(bool over_trace, const std::string& otherwise, const std::string& recorded) {
  return over_trace ? recorded + "; without a probe " + otherwise : otherwise;
}

// The recorded network is a star under SimGrid's exact setting (CM02, no
// window, no cross-traffic), fitted to the probe: simulator/recorded_network.h.
CLI::Option* AddNetworkModelFlag(CLI::App* cmd, std::optional<std::string>* model, bool over_trace) {
  const std::vector<std::string> models = {"LV08", "CM02"};
  return cmd->add_option(
      "--network-model", *model,
      WithDefault("SimGrid's network model: " + JoinWords(models, ", ", " or "),
                  OverTrace(over_trace, sim::NetworkOptions().model(), "the recorded network's CM02, exact")));
}

void AddWindowFlags(CLI::App* cmd, std::optional<double>* tcp_gamma, std::optional<std::string>* crosstraffic,
                    bool over_trace) {
  const sim::NetworkOptions network;
  cmd->add_option("--tcp-gamma", *tcp_gamma,
                  WithDefault("SimGrid's TCP window (network/TCP-gamma), bytes; 0: no window",
                              OverTrace(over_trace, HelpNumber(network.tcp_gamma()), "the recorded network's 0")));
  cmd->add_option(
         "--crosstraffic", *crosstraffic,
         WithDefault("SimGrid's network/crosstraffic: on or off",
                     OverTrace(over_trace, network.crosstraffic() ? "on" : "off", "the recorded network's off")))
      ->check(CLI::IsMember({"on", "off"}));
}

void AddShaperFlags(CLI::App* cmd, std::optional<double>* burst_kib, std::optional<double>* line_gbps) {
  cmd->add_option("--burst-kib", *burst_kib,
                  WithDefault("A token-bucket shaper on the replayed links (tc's tbf, a cloud's burst credits): its "
                              "burst per link, KiB, crossing at --line-gbps before the platform's bandwidth, the "
                              "sustained rate; 0: no shaper",
                              "the one the trace's network probe saw, if any"))
      ->check(CLI::Range(0.0, 1073741824.0));
  cmd->add_option(
         "--line-gbps", *line_gbps,
         WithDefault("The shaper's line rate, Gb/s: how fast its burst crosses", "the probe's; else unlimited"))
      ->check(CLI::Range(1e-6, 1e6));
}

CLI::Option* AddRecordedBandwidthFlag(CLI::App* cmd, std::optional<double>* gbps) {
  return cmd
      ->add_option("--recorded-bandwidth-gbps", *gbps,
                   WithDefault("The link rate the trace was recorded at (on this platform): each recorded "
                               "collective's host cost is then its time less that network's",
                               "the trace's network probe, if any; else unknown, one host cost from the fixed part "
                               "of the trace's collectives"))
      ->check(CLI::Range(1e-6, 1e6));
}

CLI::Option* AddAllReduceFlag(CLI::App* cmd, std::string* allreduce) {
  return cmd
      ->add_option(
          "--allreduce", *allreduce,
          WithDefault("All-reduce algorithm: " + JoinWords(sim::AllReduceAlgorithmNames(), ", ", " or "), *allreduce))
      ->check(CLI::IsMember(sim::AllReduceAlgorithmNames()));
}

CLI::Option* AddTimingFlag(CLI::App* cmd, std::string* timing, const std::vector<std::string>& choices,
                           const std::string& tool) {
  CLI::Option* option =
      cmd->add_option("--timing", *timing,
                      WithDefault("What times the collectives: simulate (SimGrid), analytic (alpha-beta formulas) "
                                  "or recorded (each collective as the trace measured it: the trace's own workers "
                                  "and network)",
                                  *timing))
          ->check(CLI::IsMember(choices));
  // "model" also named the trained network and SimGrid's --network-model.
  AddDeprecatedAlias(cmd, tool, "--model", option);
  return option;
}

void TopologyParameterFlags::Add(CLI::App* cmd, bool controls_only) {
  for (const sim::TopologyDescription& d : sim::AllTopologies()) {
    for (const sim::TopologyParameter& p : d.parameters) {
      if (controls_only && !p.label) continue;
      Flag& f = flags_.emplace_back(Flag{&p, std::nullopt, std::nullopt});
      if (p.unit != sim::ParameterUnit::kCount) {
        cmd->add_option(p.Flag(), f.number, p.Help(d.title));
      } else if (controls_only) {
        cmd->add_option(p.Flag(), f.count, p.Help(d.title))->check(CLI::Range(p.min_count, p.max_count));
      } else {
        cmd->add_option(p.Flag(), f.count, p.Help(d.title));
      }
    }
  }
}

bool TopologyParameterFlags::AnyLinkGiven() const {
  return std::any_of(flags_.begin(), flags_.end(),
                     [](const Flag& f) { return f.given() && f.parameter->unit != sim::ParameterUnit::kCount; });
}

void TopologyParameterFlags::Apply(sim::PlatformSpec& spec) const {
  for (const Flag& f : flags_) {
    if (f.given()) f.parameter->set(spec, f.value());
  }
}

std::map<std::string, double> TopologyParameterFlags::Given() const {
  std::map<std::string, double> given;
  for (const Flag& f : flags_) {
    if (f.given()) given[f.parameter->key] = f.value();
  }
  return given;
}

}  // namespace accordion::cli
