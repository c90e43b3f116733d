// The platform spec: the simulated cluster a trace is replayed on, as a
// plain value - a built topology with its links and parameters, or a SimGrid
// XML file that brings its own - with its checks and the sentence that
// describes it. Reading it from a file is platform_file.h; building it in
// SimGrid is platform_builder.h.
//
//   StarPlatformOptions().hosts(64).bandwidth_gbps(25).latency_us(5)
//   FatTreePlatformOptions().hosts_per_leaf(16).spines(4)...
//   HierarchicalPlatformOptions().gpus_per_node(8).intra_bandwidth_gbps(600)...
//   RingPlatformOptions()...
//
// What each topology takes, checks, and how SimGrid builds it is one row of
// topology_description.h. Latencies are per link; every link is split-duplex (each direction has the
// full bandwidth). Ranks are placed on hosts in order, so on the hierarchical
// platform consecutive ranks share a node.
//
// Thread safety: PlatformSpec and the options classes are plain values.
#ifndef ACCORDION_SIMULATOR_PLATFORM_H_
#define ACCORDION_SIMULATOR_PLATFORM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/options.h"
#include "common/number_format.h"

namespace accordion::sim {

// SimGrid's network model and the settings that decide how close it stays to
// the alpha-beta formulas. The defaults are SimGrid's own (LV08, TCP window
// 4 MiB, cross-traffic on), kept because they measured closer to real Gloo
// all-reduces on shaped links than CM02 (30 of 36 points, docs/simulator.md
// "Fidelity against reality"); CM02 + tcp_gamma 0 + no cross-traffic is the
// "exact" setting that docs/simulator.md describes.
class NetworkOptions {
 public:
  // CM02 with tcp_gamma 0 and no cross-traffic.
  static NetworkOptions Exact() { return NetworkOptions().model("CM02").tcp_gamma(0).crosstraffic(false); }
  void Validate() const;  // throws InputError
  std::string Describe() const;

  /// SimGrid's network model, LV08 or CM02. Default: "LV08".
  ACCORDION_ARG(std::string, model) = "LV08";
  /// SimGrid's network/TCP-gamma, the TCP window in bytes; 0: no window. Default: 4194304.
  ACCORDION_ARG(double, tcp_gamma) = 4194304;
  /// SimGrid's network/crosstraffic. Default: true.
  ACCORDION_ARG(bool, crosstraffic) = true;
};

// Calibrated latency and bandwidth for messages of at least
// min_message_bytes (up to the next segment), end to end between two hosts.
// A platform applies them as factors on its links' latency and bandwidth,
// relative to the largest latency and to the last (largest-message)
// segment's bandwidth: a platform whose links carry exactly those values
// reproduces the calibration, and changing its bandwidth scales every
// segment alike.
struct MessageSegment {
  double min_message_bytes = 0;
  double latency_s = 0;
  double bandwidth_Bps = 0;
};

// The topologies the simulator builds itself, one row each in
// topology_description.cc.
enum class Topology { kStar, kFatTree, kHierarchical, kRing };
const char* ToString(Topology topology);
std::optional<Topology> ParseTopology(const std::string& name);

// Where a platform's hosts and links come from: a built topology, or a
// SimGrid XML file that brings its own (no links, parameters or host cost
// of ours apply to it).
enum class PlatformSource { kBuiltIn, kXmlFile };

// Limits on the platforms a replay builds, checked before anything is
// allocated. The largest training clusters have about 100,000 accelerators;
// 131,072 hosts (or ranks) is above that, and SimGrid holds a platform that
// size in a few GB. A node of more than 1,024 devices or a switch of more
// than 131,072 ports does not exist, and a fat-tree's leaf-to-spine links
// (leaves x spines) are held to 4,194,304.
inline constexpr int kMaxHosts = 131072;
inline constexpr int kMaxGpusPerNode = 1024;
inline constexpr int64_t kMaxFatTreeLinks = int64_t{1} << 22;
// SimGrid routes the ring topology with Dijkstra and keeps every source's
// shortest paths to all hosts: memory grows with hosts squared (0.7 GB at
// 8,192 hosts, 2.5 GB at 16,384), and a round routes from every host.
inline constexpr int kMaxRingHosts = 16384;

// Everything needed to build a platform. Plain data; Validate() says what
// is wrong with it.
struct PlatformSpec {
  PlatformSource source = PlatformSource::kBuiltIn;
  Topology topology = Topology::kStar;  // kBuiltIn
  std::string xml_path;                 // kXmlFile
  int hosts = 0;                        // 0: one host per simulated rank
  double bandwidth_Bps = 1.25e9;        // per link (the inter-node links of hierarchical)
  double latency_s = 5e-6;              // per link
  int gpus_per_node = 8;                // hierarchical
  double intra_bandwidth_Bps = 75e9;    // hierarchical: device <-> node switch
  double intra_latency_s = 1e-6;
  int hosts_per_leaf = 16;  // fat-tree: hosts under one leaf switch
  int spines = 0;           // fat-tree: top switches (0: hosts_per_leaf, non-blocking)
  NetworkOptions network;
  std::vector<MessageSegment> segments;  // from calibration; empty: none
  // Software cost of one collective on every rank (launching it, Gloo's or
  // NCCL's bookkeeping), independent of its size and of the rounds it takes;
  // both models add it once per collective. From calibration; 0: none.
  double collective_overhead_s = 0;
  // Per-byte cost at the hosts (copies, the kernel's network stack) that does
  // not shrink when the links get faster: a link of rate R delivers
  // 1 / (1/R + host_s_per_byte). From calibration; 0: none.
  //
  // Why not scale a calibrated effective bandwidth with the rate: a 1 Gb/s
  // link that delivered 0.8 Gb/s does not deliver 4 Gb/s at 5 Gb/s, the
  // hosts' share stays. Proportional scaling replayed a 100 Mb/s run 16 %
  // long and a 5 Gb/s run 40 % short (docs/simulator.md, "Fidelity against
  // reality"). So the links built from bandwidth_Bps get LinkBandwidth():
  // a user's --bandwidth-gbps on a calibrated platform changes the rate and
  // keeps h. Applies to the links bandwidth_Bps describes (not to the
  // hierarchical platform's intra-node links, nor to XML platforms).
  double host_s_per_byte = 0;

  void Validate() const;  // throws InputError naming the first problem
  // What the links of rate bandwidth_Bps deliver: 1 / (1/bandwidth_Bps +
  // host_s_per_byte), bandwidth_Bps itself without a host cost.
  double LinkBandwidth() const;
  // What the segments make of the links for a message of this size (1 without segments).
  double LatencyFactor(double message_bytes) const;
  double BandwidthFactor(double message_bytes) const;
  // One line, e.g. "star of 64 hosts, 25 Gb/s, 5 us per link, CM02 (TCP-gamma 0, no cross-traffic)".
  std::string Describe(int ranks) const;
  // Hosts the platform will have for `ranks` ranks (throws InputError when
  // it cannot hold them). Unknown (-1) for an XML file until it is loaded.
  int HostCount(int ranks) const;

  nlohmann::json ToJson() const;
};

// A topology's own parameters are rows of topology_description.cc (key,
// unit, limits, help, how the spec holds it); these set and read one by its
// key, in its unit, through its row. Throw std::logic_error for a key the
// spec's topology has no row for (a programming error).
void SetTopologyParameter(PlatformSpec& spec, const std::string& key, double value);
double TopologyParameterValue(const PlatformSpec& spec, const std::string& key);

// The chained setter and the getter of a topology parameter in an options
// class, named by its row's key and going through the row, so the options
// restate no unit conversion, default or limit.
#define ACCORDION_TOPOLOGY_PARAMETER(Self, T, key)                 \
  Self& key(T value) {                                             \
    SetTopologyParameter(spec_, #key, static_cast<double>(value)); \
    return *this;                                                  \
  }                                                                \
  T key() const { return static_cast<T>(TopologyParameterValue(spec_, #key)); }

// The platform options write their PlatformSpec directly, converting units
// (Gb/s to B/s, us to s) on the way; they are hand-written, not
// ACCORDION_ARG, because the spec, not a member per option, is what they
// build. The links' bandwidth and latency are every built topology's; the
// rest are the topology's rows (ACCORDION_TOPOLOGY_PARAMETER).
template <typename Self>
class PlatformOptionsBase {
 public:
  Self& hosts(int n) {
    spec_.hosts = n;
    return self();
  }
  Self& bandwidth_gbps(double v) {
    spec_.bandwidth_Bps = BytesPerSecondFromGbps(v);
    return self();
  }
  Self& latency_us(double v) {
    spec_.latency_s = v * 1e-6;
    return self();
  }
  Self& network(const NetworkOptions& v) {
    spec_.network = v;
    return self();
  }
  const PlatformSpec& spec() const { return spec_; }
  operator const PlatformSpec&() const { return spec_; }  // NOLINT: options read as a spec

 protected:
  explicit PlatformOptionsBase(Topology t) { spec_.topology = t; }
  PlatformSpec spec_;

 private:
  Self& self() { return static_cast<Self&>(*this); }
};

// Every host on its own link to one switch.
class StarPlatformOptions : public PlatformOptionsBase<StarPlatformOptions> {
 public:
  StarPlatformOptions() : PlatformOptionsBase(Topology::kStar) {}
};

// Two-level fat-tree: leaf switches of hosts_per_leaf hosts, each leaf wired
// to every spine; fewer spines than hosts per leaf oversubscribe it.
class FatTreePlatformOptions : public PlatformOptionsBase<FatTreePlatformOptions> {
 public:
  FatTreePlatformOptions() : PlatformOptionsBase(Topology::kFatTree) {}
  ACCORDION_TOPOLOGY_PARAMETER(FatTreePlatformOptions, int, hosts_per_leaf)
  ACCORDION_TOPOLOGY_PARAMETER(FatTreePlatformOptions, int, spines)
};

// Nodes of gpus_per_node devices on a fast intra-node switch; each node has
// one NIC link (bandwidth_gbps, latency_us) to the cluster switch.
class HierarchicalPlatformOptions : public PlatformOptionsBase<HierarchicalPlatformOptions> {
 public:
  HierarchicalPlatformOptions() : PlatformOptionsBase(Topology::kHierarchical) {}
  ACCORDION_TOPOLOGY_PARAMETER(HierarchicalPlatformOptions, int, gpus_per_node)
  ACCORDION_TOPOLOGY_PARAMETER(HierarchicalPlatformOptions, double, intra_bandwidth_gbps)
  ACCORDION_TOPOLOGY_PARAMETER(HierarchicalPlatformOptions, double, intra_latency_us)
};

// Hosts wired in a physical ring, host i to host i+1; routes take the
// shorter way round.
class RingPlatformOptions : public PlatformOptionsBase<RingPlatformOptions> {
 public:
  RingPlatformOptions() : PlatformOptionsBase(Topology::kRing) {}
};

// A SimGrid XML platform file; ranks go to its hosts in natural name order.
PlatformSpec XmlPlatform(const std::string& path);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_PLATFORM_H_
