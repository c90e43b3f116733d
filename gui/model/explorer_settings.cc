#include "gui/model/explorer_settings.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "analysis/schedule.h"
#include "common/number_format.h"
#include "simulator/platform_file.h"
#include "simulator/topology_description.h"

namespace accordion::gui {

namespace {

// SimGrid replays run in child processes; two at a time keeps the window
// responsive on a two-core machine and uses more where there are more.
int SimulationJobs() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(cores, 1, 4));
}

}  // namespace

bool ScheduleSettings::operator==(const ScheduleSettings& o) const {
  return scheme == o.scheme && eta == o.eta && interval == o.interval && level_low == o.level_low &&
         level_high == o.level_high;
}

ResolvedSchedule Resolve(const RunInfo& run, const ScheduleSettings& settings) {
  ResolvedSchedule r;
  r.scheme = settings.scheme.value_or(run.scheme);
  std::tie(r.level_low, r.level_high) = ResolveLevels(run, r.scheme, settings.level_low, settings.level_high);
  return r;
}

bool WhatIfSettings::operator==(const WhatIfSettings& o) const {
  return workers == o.workers && bandwidth_gbps == o.bandwidth_gbps && latency_us == o.latency_us &&
         topology == o.topology && platform_file == o.platform_file && topology_parameters == o.topology_parameters &&
         network_model == o.network_model && allreduce == o.allreduce &&
         recorded_bandwidth_gbps == o.recorded_bandwidth_gbps;
}

double TopologyParameterOf(const WhatIfSettings& w, const sim::TopologyParameter& p) {
  const auto it = w.topology_parameters.find(p.key);
  return it != w.topology_parameters.end() ? it->second : p.get(sim::PlatformSpec());
}

sim::PlatformSpec PlatformOf(const WhatIfSettings& w, const sim::PlatformSpec& base) {
  sim::PlatformSpec spec = base;
  if (!w.platform_file.empty()) {
    // A platform file (JSON or SimGrid XML) brings its own links and model.
    spec = sim::LoadPlatformFile(w.platform_file);
  } else {
    spec.topology = w.topology;
    spec.bandwidth_Bps = BytesPerSecondFromGbps(w.bandwidth_gbps);
    if (w.latency_us) spec.latency_s = *w.latency_us * 1e-6;
    for (const sim::TopologyParameter& p : sim::DescriptionOf(w.topology).parameters) {
      if (p.label) p.set(spec, TopologyParameterOf(w, p));
    }
    if (!w.network_model.empty()) spec.network.model(w.network_model);
  }
  spec.Validate();
  return spec;
}

sim::ReplayOptions ReplayOptionsOf(const ScheduleSettings& s, const WhatIfSettings& w, sim::TimingSource model,
                                   const sim::PlatformSpec& base) {
  const sim::PlatformSpec platform = PlatformOf(w, base);
  sim::ReplayOptions o;
  o.platform(platform)
      .workers(w.workers)
      .scheme(s.scheme)
      .eta(s.eta)
      .interval(s.interval)
      .level_low(s.level_low)
      .level_high(s.level_high)
      .timing(model)
      .allreduce(w.allreduce)
      // As accordion-sim: a hierarchical all-reduce groups the platform's nodes.
      .collective(sim::CollectiveOptions().ranks_per_node(sim::NodesOf(platform).ranks_per_node))
      .recorded_bandwidth_gbps(w.recorded_bandwidth_gbps)
      .jobs(SimulationJobs());
  return o;
}

std::string CliFlagsOf(const ScheduleSettings& s, const WhatIfSettings& w, sim::TimingSource model) {
  std::ostringstream f;
  f << "--workers " << w.workers;
  if (!w.platform_file.empty()) {
    f << " --platform '" << w.platform_file << "'";
  } else {
    f << " --topology " << sim::ToString(w.topology) << " --bandwidth-gbps " << FormatNumber(w.bandwidth_gbps, 12);
    if (w.latency_us) f << " --latency-us " << FormatNumber(*w.latency_us, 12);
    for (const sim::TopologyParameter& p : sim::DescriptionOf(w.topology).parameters) {
      if (p.label) f << " " << p.Flag() << " " << FormatNumber(TopologyParameterOf(w, p), 12);
    }
    if (!w.network_model.empty()) f << " --network-model " << w.network_model;
  }
  f << " --allreduce " << sim::ToString(w.allreduce);
  if (w.recorded_bandwidth_gbps) f << " --recorded-bandwidth-gbps " << FormatNumber(*w.recorded_bandwidth_gbps, 12);
  if (s.scheme) f << " --scheme " << ToString(*s.scheme);
  f << " --eta " << FormatNumber(s.eta, 12) << " --interval " << s.interval;
  if (s.level_low) f << " --low " << FormatNumber(*s.level_low, 12);
  if (s.level_high) f << " --high " << FormatNumber(*s.level_high, 12);
  f << " --timing " << sim::ToString(model);
  return f.str();
}

}  // namespace accordion::gui
