#include "simulator/platform.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <sstream>

#include "common/errors.h"
#include "common/number_format.h"
#include "simulator/child_process.h"

namespace accordion::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Host speed does not matter: compute is replayed from the trace as delays.
constexpr double kHostSpeed = 1e9;

std::string Gbps(double bytes_per_s) { return FormatNumber(GbpsFromBytesPerSecond(bytes_per_s), 12) + " Gb/s"; }
std::string Micros(double s) { return FormatNumber(s * 1e6, 12) + " us"; }

// `unit` and `scale` put the value in the user's units ("Gb/s", 8 / 1e9):
// --bandwidth-gbps -1 is reported as -1 Gb/s, not as -125000000 bytes/s.
void RequirePositive(double v, const std::string& what, const char* unit = "", double scale = 1) {
  if (!std::isfinite(v) || v <= 0) {
    throw InputError(what + " must be a positive number, not " + FormatNumber(v * scale, 12) + unit);
  }
}
void RequireNonNegative(double v, const std::string& what, const char* unit = "", double scale = 1) {
  if (!std::isfinite(v) || v < 0) {
    throw InputError(what + " must be zero or positive, not " + FormatNumber(v * scale, 12) + unit);
  }
}
void RequireRate(double bytes_per_s, const std::string& what) { RequirePositive(bytes_per_s, what, " Gb/s", 8 / 1e9); }
void RequireLatency(double s, const std::string& what) { RequireNonNegative(s, what, " us", 1e6); }

void RequireAtMost(int64_t v, int64_t limit, const std::string& what) {
  if (v > limit) throw InputError(what + " " + std::to_string(v) + " is above the limit of " + std::to_string(limit));
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// "host-2" before "host-10": ranks follow the numbering people give hosts.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      const std::string ta = na.substr(std::min(na.find_first_not_of('0'), na.size()));
      const std::string tb = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void ApplyNetworkOptions(const PlatformSpec& spec) {
  const NetworkOptions& n = spec.network;
  sg4::Engine::set_config("network/model:" + n.model());
  sg4::Engine::set_config("network/TCP-gamma:" + FormatNumber(n.tcp_gamma(), 12));
  sg4::Engine::set_config(std::string("network/crosstraffic:") + (n.crosstraffic() ? "1" : "0"));
}

// Calibrated segments become SimGrid's latency and bandwidth factors.
void InstallSegments(const PlatformSpec& spec) {
  if (spec.segments.empty()) return;
  auto* model = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
  model->set_lat_factor_cb([spec](double size, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                                  const std::unordered_set<sg4::NetZone*>&) { return spec.LatencyFactor(size); });
  model->set_bw_factor_cb([spec](double size, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>&,
                                 const std::unordered_set<sg4::NetZone*>&) { return spec.BandwidthFactor(size); });
}

sg4::Link* DuplexLink(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency) {
  return zone->create_split_duplex_link(name, bandwidth)->set_latency(latency)->seal();
}

void AttachToStar(sg4::NetZone* star, simgrid::kernel::routing::NetPoint* point,
                  simgrid::kernel::routing::NetPoint* gateway, sg4::Link* link) {
  star->add_route(point, nullptr, gateway, nullptr, {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
}

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

std::vector<sg4::Host*> BuildFatTree(const PlatformSpec& spec, int hosts) {
  const int per_leaf = spec.hosts_per_leaf;
  const int leaves = hosts / per_leaf;
  const int spines = spec.spines > 0 ? spec.spines : per_leaf;
  std::vector<sg4::Host*> out(hosts, nullptr);
  auto make_host = [&out](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    sg4::Host* host = zone->create_host("host-" + std::to_string(id), kHostSpeed);
    out.at(id) = host;
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  };
  const sg4::FatTreeParams params(2, {static_cast<unsigned>(per_leaf), static_cast<unsigned>(leaves)},
                                  {1u, static_cast<unsigned>(spines)}, {1u, 1u});
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

std::vector<sg4::Host*> LoadXml(const PlatformSpec& spec) {
  const sg4::Engine* engine = sg4::Engine::get_instance();
  try {
    engine->load_platform(spec.xml_path);
  } catch (const std::exception& e) {
    throw InputError(spec.xml_path + ": " + e.what());
  }
  // SimGrid accepts links it cannot simulate sensibly; refuse them here.
  for (const sg4::Link* link : engine->get_all_links()) {
    if (!(link->get_bandwidth() > 0)) {
      throw InputError(spec.xml_path + ": link '" + link->get_name() + "' has bandwidth " +
                       FormatNumber(link->get_bandwidth(), 12) + "; it must be positive");
    }
    if (link->get_latency() < 0) {
      throw InputError(spec.xml_path + ": link '" + link->get_name() + "' has a negative latency");
    }
  }
  std::vector<sg4::Host*> hosts = engine->get_all_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return NaturalLess(a->get_name(), b->get_name()); });
  return hosts;
}

}  // namespace

const char* ToString(Topology topology) {
  switch (topology) {
    case Topology::kStar:
      return "star";
    case Topology::kFatTree:
      return "fat-tree";
    case Topology::kHierarchical:
      return "hierarchical";
    case Topology::kRing:
      return "ring";
    case Topology::kXml:
      return "xml";
  }
  return "?";
}

std::optional<Topology> ParseTopology(const std::string& name) {
  for (Topology t : {Topology::kStar, Topology::kFatTree, Topology::kHierarchical, Topology::kRing}) {
    if (name == ToString(t)) return t;
  }
  return std::nullopt;
}

void NetworkOptions::Validate() const {
  if (model_ != "CM02" && model_ != "LV08") {
    throw InputError("unknown network model '" + model_ + "' (known: CM02, LV08)");
  }
  RequireNonNegative(tcp_gamma_, "TCP-gamma");
}

std::string NetworkOptions::Describe() const {
  return model_ + " (TCP-gamma " + FormatNumber(tcp_gamma_, 12) + ", cross-traffic " + (crosstraffic_ ? "on" : "off") +
         ")";
}

void PlatformSpec::Validate() const {
  network.Validate();
  if (hosts < 0) throw InputError("hosts must be zero (one per rank) or positive, not " + std::to_string(hosts));
  if (topology == Topology::kXml) {
    if (xml_path.empty()) throw InputError("an XML platform needs a file");
  } else {
    RequireRate(bandwidth_Bps, "bandwidth");
    RequireLatency(latency_s, "latency");
  }
  RequireAtMost(hosts, kMaxHosts, "hosts");
  if (topology == Topology::kHierarchical) {
    if (gpus_per_node < 1) throw InputError("gpus per node must be at least 1");
    RequireAtMost(gpus_per_node, kMaxGpusPerNode, "gpus per node");
    RequireRate(intra_bandwidth_Bps, "intra-node bandwidth");
    RequireLatency(intra_latency_s, "intra-node latency");
  }
  if (topology == Topology::kFatTree) {
    if (hosts_per_leaf < 1) throw InputError("hosts per leaf must be at least 1");
    if (spines < 0) throw InputError("spines must be zero (as many as hosts per leaf) or positive");
    RequireAtMost(hosts_per_leaf, kMaxHosts, "hosts per leaf");
    RequireAtMost(spines, kMaxHosts, "spines");
  }
  RequireNonNegative(collective_overhead_s, "collective overhead");
  if (collective_overhead_s >= 10) {
    throw InputError("collective overhead must be below 10 s, not " + FormatNumber(collective_overhead_s, 12) + " s");
  }
  RequireNonNegative(host_s_per_byte, "host cost per byte");
  if (host_s_per_byte >= 1e-6) {
    throw InputError("host cost per byte must be below 1000 ns/B, not " + FormatNumber(host_s_per_byte * 1e9, 12) +
                     " ns/B");
  }
  if (topology == Topology::kXml && host_s_per_byte > 0) {
    throw InputError("an XML platform has its own links: a host cost per byte cannot be applied to them");
  }
  double previous = -1;
  for (const MessageSegment& s : segments) {
    RequireNonNegative(s.min_message_bytes, "segment min_message_bytes");
    RequireNonNegative(s.latency_s, "segment latency");
    RequirePositive(s.bandwidth_Bps, "segment bandwidth");
    if (s.min_message_bytes <= previous) throw InputError("segments must be in increasing message size");
    previous = s.min_message_bytes;
  }
  if (!segments.empty() && segments.front().min_message_bytes != 0) {
    throw InputError("the first segment must start at message size 0");
  }
}

namespace {

const MessageSegment& SegmentOf(const std::vector<MessageSegment>& segments, double message_bytes) {
  size_t k = 0;
  while (k + 1 < segments.size() && message_bytes >= segments[k + 1].min_message_bytes) ++k;
  return segments[k];
}

}  // namespace

double PlatformSpec::LatencyFactor(double message_bytes) const {
  if (segments.empty()) return 1;
  double reference = 0;
  for (const MessageSegment& s : segments) reference = std::max(reference, s.latency_s);
  return reference > 0 ? SegmentOf(segments, message_bytes).latency_s / reference : 1;
}

double PlatformSpec::BandwidthFactor(double message_bytes) const {
  if (segments.empty()) return 1;
  return SegmentOf(segments, message_bytes).bandwidth_Bps / segments.back().bandwidth_Bps;
}

double PlatformSpec::LinkBandwidth() const {
  return host_s_per_byte > 0 ? 1.0 / (1.0 / bandwidth_Bps + host_s_per_byte) : bandwidth_Bps;
}

int PlatformSpec::HostCount(int ranks) const {
  if (ranks < 1) throw InputError("at least one rank is needed");
  RequireAtMost(ranks, kMaxHosts, "ranks (workers)");
  const int wanted = hosts > 0 ? hosts : ranks;
  if (topology != Topology::kXml && wanted < ranks) {
    throw InputError(std::to_string(ranks) + " ranks do not fit on " + std::to_string(wanted) + " hosts");
  }
  // In 64 bits: whole nodes or leaves of a huge size overflow an int.
  int64_t n = wanted;
  switch (topology) {
    case Topology::kXml:
      return -1;
    case Topology::kHierarchical:
      n = CeilDiv(wanted, gpus_per_node) * gpus_per_node;
      RequireAtMost(n, kMaxHosts, "hosts in whole nodes of " + std::to_string(gpus_per_node) + " devices:");
      break;
    case Topology::kFatTree: {
      n = CeilDiv(wanted, hosts_per_leaf) * hosts_per_leaf;
      RequireAtMost(n, kMaxHosts, "hosts in whole leaves of " + std::to_string(hosts_per_leaf) + ":");
      const int64_t leaf_spine_links = (n / hosts_per_leaf) * (spines > 0 ? spines : hosts_per_leaf);
      RequireAtMost(leaf_spine_links, kMaxFatTreeLinks, "fat-tree leaf-to-spine links");
      break;
    }
    default:
      break;
  }
  return static_cast<int>(n);
}

std::string PlatformSpec::Describe(int ranks) const {
  std::string text;
  const int n = HostCount(ranks);
  switch (topology) {
    case Topology::kStar:
      text = "star of " + std::to_string(n) + " hosts, " + Gbps(bandwidth_Bps) + ", " + Micros(latency_s) + " per link";
      break;
    case Topology::kFatTree:
      text = "fat-tree of " + std::to_string(n) + " hosts (" + std::to_string(hosts_per_leaf) + " per leaf, " +
             std::to_string(spines > 0 ? spines : hosts_per_leaf) + " spines), " + Gbps(bandwidth_Bps) + ", " +
             Micros(latency_s) + " per link";
      break;
    case Topology::kHierarchical:
      text = "hierarchical: " + std::to_string(n / gpus_per_node) + " nodes x " + std::to_string(gpus_per_node) +
             " devices (intra " + Gbps(intra_bandwidth_Bps) + ", " + Micros(intra_latency_s) + "; NIC " +
             Gbps(bandwidth_Bps) + ", " + Micros(latency_s) + ")";
      break;
    case Topology::kRing:
      text = "ring of " + std::to_string(n) + " hosts, " + Gbps(bandwidth_Bps) + ", " + Micros(latency_s) + " per link";
      break;
    case Topology::kXml:
      text = "SimGrid platform " + xml_path;
      break;
  }
  text += ", " + network.Describe();
  if (!segments.empty()) text += ", " + std::to_string(segments.size()) + " calibrated message-size segments";
  if (collective_overhead_s > 0) text += ", collective overhead " + Micros(collective_overhead_s);
  if (host_s_per_byte > 0) {
    text += ", host cost " + FormatNumber(host_s_per_byte * 1e9, 12) + " ns/B (links deliver " + Gbps(LinkBandwidth()) +
            ")";
  }
  return text;
}

nlohmann::json PlatformSpec::ToJson() const {
  nlohmann::json j;
  j["topology"] = ToString(topology);
  if (topology == Topology::kXml) {
    j["xml"] = xml_path;
  } else {
    j["bandwidth_gbps"] = GbpsFromBytesPerSecond(bandwidth_Bps);
    j["latency_us"] = latency_s * 1e6;
  }
  if (hosts > 0) j["hosts"] = hosts;
  if (topology == Topology::kHierarchical) {
    j["gpus_per_node"] = gpus_per_node;
    j["intra_bandwidth_gbps"] = GbpsFromBytesPerSecond(intra_bandwidth_Bps);
    j["intra_latency_us"] = intra_latency_s * 1e6;
  }
  if (topology == Topology::kFatTree) {
    j["hosts_per_leaf"] = hosts_per_leaf;
    j["spines"] = spines;
  }
  j["network"] = {
      {"model", network.model()}, {"tcp_gamma", network.tcp_gamma()}, {"crosstraffic", network.crosstraffic()}};
  if (!segments.empty()) {
    j["segments"] = nlohmann::json::array();
    for (const MessageSegment& s : segments) {
      j["segments"].push_back({{"min_message_bytes", s.min_message_bytes},
                               {"latency_us", s.latency_s * 1e6},
                               {"bandwidth_gbps", GbpsFromBytesPerSecond(s.bandwidth_Bps)}});
    }
  }
  // Only when set, so platforms without them keep their cache keys.
  if (collective_overhead_s > 0) j["collective_overhead_us"] = collective_overhead_s * 1e6;
  if (host_s_per_byte > 0) j["host_ns_per_byte"] = host_s_per_byte * 1e9;
  return j;
}

PlatformSpec XmlPlatform(const std::string& path) {
  PlatformSpec spec;
  spec.topology = Topology::kXml;
  spec.xml_path = path;
  return spec;
}

namespace {

// Typed access to one JSON object, refusing keys nobody reads (typos).
class JsonFields {
 public:
  JsonFields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw InputError(where_ + ": expected a JSON object");
  }
  ~JsonFields() = default;

  std::optional<double> Number(const std::string& key) {
    if (!Take(key)) return std::nullopt;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_number()) throw InputError(where_ + ": '" + key + "' must be a number");
    return v.get<double>();
  }
  std::optional<int> Integer(const std::string& key) {
    const std::optional<double> v = Number(key);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v) || std::fabs(*v) > std::numeric_limits<int>::max()) {
      throw InputError(where_ + ": '" + key + "' must be a whole number");
    }
    return static_cast<int>(*v);
  }
  std::optional<std::string> String(const std::string& key) {
    if (!Take(key)) return std::nullopt;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_string()) throw InputError(where_ + ": '" + key + "' must be a string");
    return v.get<std::string>();
  }
  std::optional<bool> Bool(const std::string& key) {
    if (!Take(key)) return std::nullopt;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_boolean()) throw InputError(where_ + ": '" + key + "' must be true or false");
    return v.get<bool>();
  }
  const nlohmann::json* Child(const std::string& key) { return Take(key) ? &j_.at(key) : nullptr; }
  void RefuseOthers() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!read_.count(it.key())) throw InputError(where_ + ": unknown key '" + it.key() + "'");
    }
  }

 private:
  bool Take(const std::string& key) {
    read_.insert(key);
    return j_.contains(key);
  }
  const nlohmann::json& j_;
  std::string where_;
  std::set<std::string> read_;
};

}  // namespace

PlatformSpec PlatformFromJson(const nlohmann::json& j, const std::string& origin) {
  JsonFields f(j, origin);
  PlatformSpec spec;
  const std::optional<std::string> topology = f.String("topology");
  const std::optional<std::string> xml = f.String("xml");
  if (xml) {
    spec = XmlPlatform(*xml);
  } else if (!topology) {
    throw InputError(origin + ": 'topology' is required (star, fat-tree, hierarchical or ring)");
  } else if (const std::optional<Topology> t = ParseTopology(*topology)) {
    spec.topology = *t;
  } else {
    throw InputError(origin + ": unknown topology '" + *topology + "' (star, fat-tree, hierarchical, ring)");
  }
  if (auto v = f.Integer("hosts")) spec.hosts = *v;
  if (auto v = f.Number("bandwidth_gbps")) spec.bandwidth_Bps = BytesPerSecondFromGbps(*v);
  if (auto v = f.Number("latency_us")) spec.latency_s = *v * 1e-6;
  if (auto v = f.Integer("gpus_per_node")) spec.gpus_per_node = *v;
  if (auto v = f.Number("intra_bandwidth_gbps")) spec.intra_bandwidth_Bps = BytesPerSecondFromGbps(*v);
  if (auto v = f.Number("intra_latency_us")) spec.intra_latency_s = *v * 1e-6;
  if (auto v = f.Integer("hosts_per_leaf")) spec.hosts_per_leaf = *v;
  if (auto v = f.Integer("spines")) spec.spines = *v;
  if (auto v = f.Number("collective_overhead_us")) spec.collective_overhead_s = *v * 1e-6;
  if (auto v = f.Number("host_ns_per_byte")) spec.host_s_per_byte = *v * 1e-9;
  if (const nlohmann::json* n = f.Child("network")) {
    JsonFields nf(*n, origin + ": network");
    if (auto v = nf.String("model")) spec.network.model(*v);
    if (auto v = nf.Number("tcp_gamma")) spec.network.tcp_gamma(*v);
    if (auto v = nf.Bool("crosstraffic")) spec.network.crosstraffic(*v);
    nf.RefuseOthers();
  }
  if (const nlohmann::json* segs = f.Child("segments")) {
    if (!segs->is_array()) throw InputError(origin + ": 'segments' must be an array");
    for (const nlohmann::json& s : *segs) {
      JsonFields sf(s, origin + ": segment");
      MessageSegment m;
      m.min_message_bytes = sf.Number("min_message_bytes").value_or(0);
      m.latency_s = sf.Number("latency_us").value_or(-1) * 1e-6;
      m.bandwidth_Bps = BytesPerSecondFromGbps(sf.Number("bandwidth_gbps").value_or(0));
      sf.Child("samples");  // written by calibrate for people, not read
      sf.Child("rms_relative_error");
      sf.RefuseOthers();
      spec.segments.push_back(m);
    }
  }
  f.Child("calibration");  // provenance written by calibrate
  f.RefuseOthers();
  try {
    spec.Validate();
  } catch (const InputError& e) {
    throw InputError(origin + ": " + e.what());
  }
  return spec;
}

PlatformSpec LoadPlatformFile(const std::string& path) {
  const bool xml = path.size() > 4 && path.compare(path.size() - 4, 4, ".xml") == 0;
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open platform file");
  if (xml) {
    CheckXmlPlatform(path);
    return XmlPlatform(path);
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return PlatformFromJson(j, path);
}

namespace {

// The line of SimGrid's dying words that says what is wrong, without its
// "[0.000000] [category/LEVEL]" prefix, or "" when there is none.
std::string SimGridComplaint(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t close = line.rfind("] ");
    if (close != std::string::npos) line = line.substr(close + 2);
    if (line.empty() || line.rfind("Backtrace", 0) == 0 || line.rfind("->", 0) == 0 || line[0] == '#' ||
        line[0] == ' ') {
      continue;
    }
    return line;
  }
  return "";
}

}  // namespace

void CheckXmlPlatform(const std::string& path) {
  // SimGrid dies (abort) on some platforms it cannot load - a route given
  // twice, say - and prints a backtrace, so the platform is loaded once in
  // a child process whose stderr is kept here and reduced to one line.
  char log_name[] = "/tmp/accordion-platform-XXXXXX";
  const int log_fd = ::mkstemp(log_name);
  if (log_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
  ::unlink(log_name);
  auto log = [log_fd] {
    std::string text;
    char buffer[4096];
    ::lseek(log_fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(log_fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
    ::close(log_fd);
    return text;
  };
  try {
    RunInChildProcess([&path, log_fd]() -> std::string {
      ::dup2(log_fd, 2);
      PlatformSpec spec;
      spec.topology = Topology::kXml;
      spec.xml_path = path;
      int argc = 2;
      char name[] = "accordion-sim";
      char quiet[] = "--log=root.thres:critical";  // only its last words
      char* argv[] = {name, quiet, nullptr};
      sg4::Engine engine(&argc, argv);
      const std::vector<sg4::Host*> hosts = LoadXml(spec);
      if (hosts.empty()) throw InputError(path + ": the platform has no hosts");
      // Every host must reach every other: with host 0 reaching all and all
      // reaching host 0 through SimGrid's routing, check each one's ring
      // neighbour too, which collectives use most.
      const size_t n = hosts.size();
      for (size_t i = 0; i < n; ++i) {
        for (const auto& [from, to] :
             {std::pair{hosts[0], hosts[i]}, std::pair{hosts[i], hosts[0]}, std::pair{hosts[i], hosts[(i + 1) % n]}}) {
          if (from == to) continue;
          std::vector<sg4::Link*> links;
          double latency = 0;
          try {
            from->route_to(to, links, &latency);
          } catch (const std::exception& e) {
            throw InputError(path + ": no route from " + from->get_name() + " to " + to->get_name());
          }
          if (links.empty() && latency == 0) {
            throw InputError(path + ": no route from " + from->get_name() + " to " + to->get_name());
          }
        }
      }
      return "";
    });
  } catch (const InputError&) {
    log();
    throw;
  } catch (const std::runtime_error& e) {
    const std::string complaint = SimGridComplaint(log());
    throw InputError(path + ": SimGrid cannot load this platform" +
                     (complaint.empty() ? " (" + std::string(e.what()) + ")" : ": " + complaint));
  }
  log();
}

std::vector<sg4::Host*> BuildPlatform(const PlatformSpec& spec, int ranks) {
  spec.Validate();
  const int hosts = spec.HostCount(ranks);
  ApplyNetworkOptions(spec);
  std::vector<sg4::Host*> all;
  switch (spec.topology) {
    case Topology::kStar:
      all = BuildStar(spec, hosts);
      break;
    case Topology::kFatTree:
      all = BuildFatTree(spec, hosts);
      break;
    case Topology::kHierarchical:
      all = BuildHierarchical(spec, hosts);
      break;
    case Topology::kRing:
      all = BuildRing(spec, hosts);
      break;
    case Topology::kXml:
      all = LoadXml(spec);
      break;
  }
  if (static_cast<int>(all.size()) < ranks) {
    throw InputError(std::to_string(ranks) + " ranks do not fit on the " + std::to_string(all.size()) + " hosts of " +
                     spec.Describe(ranks));
  }
  all.resize(ranks);
  sg4::Engine::get_instance()->seal_platform();
  InstallSegments(spec);
  return all;
}

RouteSummary SummariseRingRoutes(const std::vector<sg4::Host*>& hosts) {
  RouteSummary summary;
  summary.bandwidth_Bps = std::numeric_limits<double>::infinity();
  const size_t n = hosts.size();
  for (size_t r = 0; n > 1 && r < n; ++r) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    hosts[r]->route_to(hosts[(r + 1) % n], links, &latency);
    summary.latency_s = std::max(summary.latency_s, latency);
    for (const sg4::Link* l : links) summary.bandwidth_Bps = std::min(summary.bandwidth_Bps, l->get_bandwidth());
  }
  if (!std::isfinite(summary.bandwidth_Bps)) summary.bandwidth_Bps = 0;
  return summary;
}

}  // namespace accordion::sim
