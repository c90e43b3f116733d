// What the simulator knows about each network topology it builds, in one
// row per topology: its name, the numbers it takes beyond the links'
// bandwidth and latency, how many hosts it holds, how it reads in one line,
// where its nodes are and how SimGrid builds it. The command-line flags, the
// platform files' keys, their checks, the GUI's controls and the replay's
// node grouping are all read from these rows, so a new topology is one row
// and its builder (docs/ARCHITECTURE.md, "How to add a network topology").
//
// A SimGrid XML platform is not a row: it brings its own hosts and links.
//
// Thread-safe: the rows are constants built once, on first use (a
// function-local static). Their builders use SimGrid's engine: child only.
#ifndef ACCORDION_SIMULATOR_TOPOLOGY_DESCRIPTION_H_
#define ACCORDION_SIMULATOR_TOPOLOGY_DESCRIPTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/platform.h"

namespace simgrid::s4u {
class Host;
}

namespace accordion::sim {

// The unit a parameter is given in by people (flags, platform files, the
// GUI); PlatformSpec holds rates in B/s and latencies in seconds.
enum class ParameterUnit { kCount, kGbps, kMicroseconds };

// A number a topology takes besides hosts, bandwidth and latency.
struct TopologyParameter {
  const char* key;    // platform files' key; the flag is --key with '-' for '_'
  const char* what;   // in messages: "gpus per node must be at least 1"
  std::string help;   // --help, after the topology's title: "devices per node"
  const char* label;  // the GUI's control for it; nullptr: no control
  ParameterUnit unit;
  int min_count;                       // kCount: 1, or 0 where 0 stands for zero_means
  int max_count;                       // kCount: the limit, stated in --help
  const char* zero_means;              // kCount with min_count 0: what 0 means
  double (*get)(const PlatformSpec&);  // in `unit`
  void (*set)(PlatformSpec&, double);  // from `unit`

  std::string Flag() const;  // "--gpus-per-node"
  std::string Help(const char* topology_title) const;
  // Throws InputError naming the parameter when `spec`'s value is out of range.
  void Check(const PlatformSpec& spec) const;
};

// Ranks that share a node and the links between them there; one rank per
// node (and no links) on a flat topology.
struct NodeLinks {
  int ranks_per_node = 1;
  double latency_s = 0;      // between two ranks of a node
  double bandwidth_Bps = 0;  // of one rank's link to its node
};

struct TopologyDescription {
  Topology topology;
  const char* name;   // --topology and platform files: "fat-tree"
  const char* title;  // the start of --help lines: "Fat-tree"
  std::vector<TopologyParameter> parameters;
  // The hosts built for `wanted` (whole nodes or leaves); throws InputError
  // above the limits in platform.h. 64 bits: a huge node size overflows an int.
  int64_t (*host_count)(const PlatformSpec& spec, int64_t wanted);
  // One line without the network model: "star of 64 hosts, 25 Gb/s, 5 us per link".
  std::string (*describe)(const PlatformSpec& spec, int hosts);
  NodeLinks (*nodes)(const PlatformSpec& spec);
  // Creates the zones, hosts, links and routes in the current SimGrid engine.
  std::vector<simgrid::s4u::Host*> (*build)(const PlatformSpec& spec, int hosts);
};

// The row of a built topology.
const TopologyDescription& DescriptionOf(Topology topology);
// Every built topology, in the order menus and help list them.
const std::vector<TopologyDescription>& AllTopologies();
// The built topologies' names, for --topology's choices.
std::vector<std::string> TopologyNameList();
// "star, fat-tree, hierarchical or ring", for help and messages.
std::string TopologyNames(const char* last_separator = " or ");

// How a spec's nodes are grouped (one rank per node for XML platforms).
NodeLinks NodesOf(const PlatformSpec& spec);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_TOPOLOGY_DESCRIPTION_H_
