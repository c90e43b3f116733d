// The settings the explorer's controls edit: how to derive Accordion's
// schedule (ScheduleSettings) and which cluster to project it on
// (WhatIfSettings), and how they become the simulator's ReplayOptions - the
// same options `accordion-sim replay` builds from its flags.
//
// Thread-safe: plain values and pure functions; ReplayOptionsOf also runs in
// the pool threads of what_if.h.
#ifndef ACCORDION_GUI_MODEL_EXPLORER_SETTINGS_H_
#define ACCORDION_GUI_MODEL_EXPLORER_SETTINGS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "simulator/collectives.h"
#include "simulator/communication_model.h"
#include "simulator/platform.h"
#include "simulator/replay_engine.h"
#include "simulator/topology_description.h"
#include "traces/records.h"

namespace accordion::gui {

struct ScheduleSettings {
  // Empty: the trace's own scheme. A dense trace can be explored as
  // PowerSGD, TopK or batch.
  std::optional<Scheme> scheme;
  double eta = 0.5;
  int interval = 10;
  // Empty: the trace's own pair when it switched levels, else the paper's
  // defaults for the scheme (ResolveLevels).
  std::optional<double> level_low;
  std::optional<double> level_high;

  bool operator==(const ScheduleSettings& o) const;
  bool operator!=(const ScheduleSettings& o) const { return !(*this == o); }
};

// The scheme and level pair `settings` resolve to for `run`.
struct ResolvedSchedule {
  Scheme scheme = Scheme::kDense;
  double level_low = 0;
  double level_high = 0;
};
ResolvedSchedule Resolve(const RunInfo& run, const ScheduleSettings& settings);

struct WhatIfSettings {
  int workers = 64;
  double bandwidth_gbps = 25;
  // Per link, µs. Empty: the base platform's - the trace's recorded network
  // where its probe anchors the replay (the per-message cost the run's own
  // stack paid), else PlatformSpec's - as accordion-sim without --latency-us.
  std::optional<double> latency_us;
  sim::Topology topology = sim::Topology::kStar;
  // Non-empty: the platform is this file's (JSON or SimGrid XML), which
  // brings its own topology, links and network model in place of the above.
  std::string platform_file;
  // The topology's parameters that have a control (TopologyParameter::label),
  // by key, in the parameter's unit; a missing one takes PlatformSpec's default.
  std::map<std::string, double> topology_parameters;
  // LV08 or CM02; empty: the base platform's, as accordion-sim without
  // --network-model (CM02, exact, for a trace whose probe anchors the
  // replay; LV08 otherwise). A platform file keeps its own.
  std::string network_model;
  sim::AllReduceAlgorithm allreduce = sim::AllReduceAlgorithm::kRing;
  // The link rate the trace was recorded at, Gb/s, on this platform
  // (ReplayOptions::recorded_bandwidth_gbps): with it each recorded
  // collective's host cost is its time less that network's. Empty: unknown,
  // one host cost for all, from the fixed part of the trace's collectives.
  std::optional<double> recorded_bandwidth_gbps;

  bool operator==(const WhatIfSettings& o) const;
  bool operator!=(const WhatIfSettings& o) const { return !(*this == o); }
};

// The value of a topology parameter `w` sets, or PlatformSpec's default.
double TopologyParameterOf(const WhatIfSettings& w, const sim::TopologyParameter& p);

// The platform the what-if describes: `base` (sim::WhatIfBasePlatform of
// the run: its recorded network where it has a probe) with the settings'
// links, topology and model, as accordion-sim's flags change it; or the
// platform file's (read here; InputError for a bad one).
sim::PlatformSpec PlatformOf(const WhatIfSettings& w, const sim::PlatformSpec& base = sim::PlatformSpec());

// Options for ReplayEngine, as `accordion-sim replay` would build them from
// the equivalent flags (see CliFlagsOf) for a trace whose base platform is
// `base`.
sim::ReplayOptions ReplayOptionsOf(const ScheduleSettings& s, const WhatIfSettings& w, sim::TimingSource model,
                                   const sim::PlatformSpec& base = sim::PlatformSpec());

// The `accordion-sim replay` flags that give the same projection, for
// people who want to script what they found.
std::string CliFlagsOf(const ScheduleSettings& s, const WhatIfSettings& w, sim::TimingSource model);

}  // namespace accordion::gui

#endif  // ACCORDION_GUI_MODEL_EXPLORER_SETTINGS_H_
