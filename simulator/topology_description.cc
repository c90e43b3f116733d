#include "simulator/topology_description.h"

#include <simgrid/s4u.hpp>
#include <stdexcept>

#include "common/errors.h"
#include "common/number_format.h"
#include "simulator/spec_checks.h"

namespace accordion::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Host speed does not matter: compute is replayed from the trace as delays.
constexpr double kHostSpeed = 1e9;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

sg4::Link* DuplexLink(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency) {
  return zone->create_split_duplex_link(name, bandwidth)->set_latency(latency)->seal();
}

void AttachToStar(sg4::NetZone* star, simgrid::kernel::routing::NetPoint* point,
                  simgrid::kernel::routing::NetPoint* gateway, sg4::Link* link) {
  star->add_route(point, nullptr, gateway, nullptr, {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
}

std::string Links(const PlatformSpec& spec) {
  return GbpsText(spec.bandwidth_Bps) + ", " + MicrosText(spec.latency_s) + " per link";
}

int64_t AnyHostCount(const PlatformSpec&, int64_t wanted) { return wanted; }
NodeLinks OneRankPerNode(const PlatformSpec&) { return {}; }

// Star: every host on its own link to one switch.

std::vector<sg4::Host*> BuildStar(const PlatformSpec& spec, int hosts) {
  auto* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> out;
  for (int i = 0; i < hosts; ++i) {
    const std::string name = "host-" + std::to_string(i);
    sg4::Host* host = zone->create_host(name, kHostSpeed);
    AttachToStar(zone, host->get_netpoint(), nullptr,
                 DuplexLink(zone, name + "-link", spec.LinkBandwidth(), spec.latency_s));
    out.push_back(host);
  }
  zone->seal();
  return out;
}

TopologyDescription Star() {
  return {
      Topology::kStar,
      "star",
      "Star",
      {},
      AnyHostCount,
      [](const PlatformSpec& spec, int hosts) { return "star of " + std::to_string(hosts) + " hosts, " + Links(spec); },
      OneRankPerNode,
      BuildStar};
}

// Fat-tree: leaf switches of hosts_per_leaf hosts, each wired to every spine.

int Spines(const PlatformSpec& spec) { return spec.spines > 0 ? spec.spines : spec.hosts_per_leaf; }

std::vector<sg4::Host*> BuildFatTree(const PlatformSpec& spec, int hosts) {
  const int per_leaf = spec.hosts_per_leaf;
  const int leaves = hosts / per_leaf;
  std::vector<sg4::Host*> out(hosts, nullptr);
  auto make_host = [&out](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    sg4::Host* host = zone->create_host("host-" + std::to_string(id), kHostSpeed);
    out.at(id) = host;
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  };
  const sg4::FatTreeParams params(2, {static_cast<unsigned>(per_leaf), static_cast<unsigned>(leaves)},
                                  {1u, static_cast<unsigned>(Spines(spec))}, {1u, 1u});
  try {
    sg4::NetZone* zone =
        sg4::create_fatTree_zone("cluster", nullptr, params, sg4::ClusterCallbacks(make_host), spec.LinkBandwidth(),
                                 spec.latency_s, sg4::Link::SharingPolicy::SPLITDUPLEX);
    zone->seal();
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("fat-tree: ") + e.what());
  }
  return out;
}

int64_t FatTreeHostCount(const PlatformSpec& spec, int64_t wanted) {
  const int64_t n = CeilDiv(wanted, spec.hosts_per_leaf) * spec.hosts_per_leaf;
  RequireAtMost(n, kMaxHosts, "hosts in whole leaves of " + std::to_string(spec.hosts_per_leaf) + ":");
  RequireAtMost((n / spec.hosts_per_leaf) * Spines(spec), kMaxFatTreeLinks, "fat-tree leaf-to-spine links");
  return n;
}

TopologyDescription FatTree() {
  return {Topology::kFatTree,
          "fat-tree",
          "Fat-tree",
          {{"hosts_per_leaf", "hosts per leaf", "hosts per leaf switch", "Hosts per leaf", ParameterUnit::kCount, 1,
            kMaxHosts, nullptr, [](const PlatformSpec& s) { return double(s.hosts_per_leaf); },
            [](PlatformSpec& s, double v) { s.hosts_per_leaf = static_cast<int>(v); }},
           {"spines", "spines",
            "spine switches, fewer than hosts per leaf oversubscribe; leaves x spines at most " +
                std::to_string(kMaxFatTreeLinks),
            nullptr, ParameterUnit::kCount, 0, kMaxHosts, "as many as hosts per leaf, non-blocking",
            [](const PlatformSpec& s) { return double(s.spines); },
            [](PlatformSpec& s, double v) { s.spines = static_cast<int>(v); }}},
          FatTreeHostCount,
          [](const PlatformSpec& spec, int hosts) {
            return "fat-tree of " + std::to_string(hosts) + " hosts (" + std::to_string(spec.hosts_per_leaf) +
                   " per leaf, " + std::to_string(Spines(spec)) + " spines), " + Links(spec);
          },
          OneRankPerNode,
          BuildFatTree};
}

// Hierarchical: nodes of gpus_per_node devices on a fast switch, one NIC
// link per node to the cluster switch.

std::vector<sg4::Host*> BuildHierarchical(const PlatformSpec& spec, int hosts) {
  auto* cluster = sg4::create_star_zone("cluster");
  const int nodes = hosts / spec.gpus_per_node;
  std::vector<sg4::Host*> out;
  for (int n = 0; n < nodes; ++n) {
    const std::string node = "node-" + std::to_string(n);
    auto* zone = sg4::create_star_zone(node);
    zone->set_parent(cluster);
    // The gateway stands for the node's switch; reaching it from a device
    // crosses that device's intra-node link, leaving the node the NIC.
    auto* gateway = zone->create_router(node + "-switch");
    for (int g = 0; g < spec.gpus_per_node; ++g) {
      const std::string name = node + "-gpu-" + std::to_string(g);
      sg4::Host* host = zone->create_host(name, kHostSpeed);
      AttachToStar(zone, host->get_netpoint(), nullptr,
                   DuplexLink(zone, name + "-link", spec.intra_bandwidth_Bps, spec.intra_latency_s));
      out.push_back(host);
    }
    zone->seal();
    AttachToStar(cluster, zone->get_netpoint(), gateway,
                 DuplexLink(cluster, node + "-nic", spec.LinkBandwidth(), spec.latency_s));
  }
  cluster->seal();
  return out;
}

int64_t HierarchicalHostCount(const PlatformSpec& spec, int64_t wanted) {
  const int64_t n = CeilDiv(wanted, spec.gpus_per_node) * spec.gpus_per_node;
  RequireAtMost(n, kMaxHosts, "hosts in whole nodes of " + std::to_string(spec.gpus_per_node) + " devices:");
  return n;
}

TopologyDescription Hierarchical() {
  return {Topology::kHierarchical,
          "hierarchical",
          "Hierarchical",
          {{"gpus_per_node", "gpus per node", "devices per node", "GPUs per node", ParameterUnit::kCount, 1,
            kMaxGpusPerNode, nullptr, [](const PlatformSpec& s) { return double(s.gpus_per_node); },
            [](PlatformSpec& s, double v) { s.gpus_per_node = static_cast<int>(v); }},
           {"intra_bandwidth_gbps", "intra-node bandwidth", "device link, Gb/s", nullptr, ParameterUnit::kGbps, 0, 0,
            nullptr, [](const PlatformSpec& s) { return GbpsFromBytesPerSecond(s.intra_bandwidth_Bps); },
            [](PlatformSpec& s, double v) { s.intra_bandwidth_Bps = BytesPerSecondFromGbps(v); }},
           {"intra_latency_us", "intra-node latency", "device link latency", nullptr, ParameterUnit::kMicroseconds, 0,
            0, nullptr, [](const PlatformSpec& s) { return s.intra_latency_s * 1e6; },
            [](PlatformSpec& s, double v) { s.intra_latency_s = v * 1e-6; }}},
          HierarchicalHostCount,
          [](const PlatformSpec& spec, int hosts) {
            return "hierarchical: " + std::to_string(hosts / spec.gpus_per_node) + " nodes x " +
                   std::to_string(spec.gpus_per_node) + " devices (intra " + GbpsText(spec.intra_bandwidth_Bps) + ", " +
                   MicrosText(spec.intra_latency_s) + "; NIC " + GbpsText(spec.bandwidth_Bps) + ", " +
                   MicrosText(spec.latency_s) + ")";
          },
          // Inside a node a message crosses two device links and no NIC.
          [](const PlatformSpec& spec) {
            return NodeLinks{spec.gpus_per_node, 2 * spec.intra_latency_s, spec.intra_bandwidth_Bps};
          },
          BuildHierarchical};
}

// Ring: host i wired to host i+1; routes take the shorter way round.

std::vector<sg4::Host*> BuildRing(const PlatformSpec& spec, int hosts) {
  auto* zone = sg4::create_dijkstra_zone("cluster", true);
  std::vector<sg4::Host*> out;
  for (int i = 0; i < hosts; ++i) out.push_back(zone->create_host("host-" + std::to_string(i), kHostSpeed));
  // Two hosts share one link rather than closing a double ring; one has none.
  const int links = hosts < 3 ? hosts - 1 : hosts;
  for (int i = 0; i < links; ++i) {
    sg4::Link* link = DuplexLink(zone, "ring-link-" + std::to_string(i), spec.LinkBandwidth(), spec.latency_s);
    zone->add_route(out[i]->get_netpoint(), out[(i + 1) % hosts]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
  }
  zone->seal();
  return out;
}

int64_t RingHostCount(const PlatformSpec&, int64_t wanted) {
  if (wanted > kMaxRingHosts) {
    throw InputError("a ring of " + std::to_string(wanted) + " hosts is above the limit of " +
                     std::to_string(kMaxRingHosts) +
                     " (SimGrid keeps its routes, hosts squared); for more hosts use --topology star, fat-tree or "
                     "hierarchical");
  }
  return wanted;
}

TopologyDescription Ring() {
  return {
      Topology::kRing,
      "ring",
      "Ring",
      {},
      RingHostCount,
      [](const PlatformSpec& spec, int hosts) { return "ring of " + std::to_string(hosts) + " hosts, " + Links(spec); },
      OneRankPerNode,
      BuildRing};
}

}  // namespace

std::string TopologyParameter::Flag() const {
  std::string flag = std::string("--") + key;
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

std::string TopologyParameter::Help(const char* topology_title) const {
  const double d = get(PlatformSpec());
  std::string text = std::string(topology_title) + ": " + help + " (default " + HelpNumber(d);
  if (unit == ParameterUnit::kCount) {
    if (d == 0 && zero_means) text += std::string(": ") + zero_means;
    text += "; at most " + std::to_string(max_count);
  }
  return text + ")";
}

void TopologyParameter::Check(const PlatformSpec& spec) const {
  const double v = get(spec);
  switch (unit) {
    case ParameterUnit::kCount:
      if (v < min_count) {
        throw InputError(std::string(what) + (min_count > 0
                                                  ? " must be at least " + std::to_string(min_count)
                                                  : std::string(" must be zero (") + zero_means + ") or positive"));
      }
      RequireAtMost(static_cast<int64_t>(v), max_count, what);
      break;
    case ParameterUnit::kGbps:
      RequirePositive(v, what, " Gb/s");
      break;
    case ParameterUnit::kMicroseconds:
      RequireNonNegative(v, what, " us");
      break;
  }
}

const std::vector<TopologyDescription>& AllTopologies() {
  static const std::vector<TopologyDescription> all = {Star(), FatTree(), Hierarchical(), Ring()};
  return all;
}

const TopologyDescription& DescriptionOf(Topology topology) {
  for (const TopologyDescription& d : AllTopologies()) {
    if (d.topology == topology) return d;
  }
  throw std::logic_error("no row for topology " + std::to_string(static_cast<int>(topology)));
}

namespace {

const TopologyParameter& ParameterOf(const PlatformSpec& spec, const std::string& key) {
  for (const TopologyParameter& p : DescriptionOf(spec.topology).parameters) {
    if (key == p.key) return p;
  }
  throw std::logic_error(std::string(DescriptionOf(spec.topology).name) + " has no parameter '" + key + "'");
}

}  // namespace

void SetTopologyParameter(PlatformSpec& spec, const std::string& key, double value) {
  ParameterOf(spec, key).set(spec, value);
}

double TopologyParameterValue(const PlatformSpec& spec, const std::string& key) {
  return ParameterOf(spec, key).get(spec);
}

std::vector<std::string> TopologyNameList() {
  std::vector<std::string> names;
  for (const TopologyDescription& d : AllTopologies()) names.push_back(d.name);
  return names;
}

std::string TopologyNames(const char* last_separator) { return JoinWords(TopologyNameList(), ", ", last_separator); }

NodeLinks NodesOf(const PlatformSpec& spec) {
  return spec.source == PlatformSource::kXmlFile ? NodeLinks{} : DescriptionOf(spec.topology).nodes(spec);
}

}  // namespace accordion::sim
