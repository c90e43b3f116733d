#include "simulator/platform.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/number_format.h"
#include "simulator/child_process.h"
#include "simulator/spec_checks.h"
#include "simulator/topology_description.h"

namespace accordion::sim {

namespace sg4 = simgrid::s4u;

namespace {

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

const char* ToString(Topology topology) { return topology == Topology::kXml ? "xml" : DescriptionOf(topology).name; }

std::optional<Topology> ParseTopology(const std::string& name) {
  for (const TopologyDescription& d : AllTopologies()) {
    if (name == d.name) return d.topology;
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
  if (topology != Topology::kXml) {
    for (const TopologyParameter& p : sim::DescriptionOf(topology).parameters) p.Check(*this);
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
  if (topology == Topology::kXml) return -1;
  return static_cast<int>(sim::DescriptionOf(topology).host_count(*this, wanted));
}

std::string PlatformSpec::Describe(int ranks) const {
  std::string text = topology == Topology::kXml ? "SimGrid platform " + xml_path
                                                : sim::DescriptionOf(topology).describe(*this, HostCount(ranks));
  text += ", " + network.Describe();
  if (!segments.empty()) text += ", " + std::to_string(segments.size()) + " calibrated message-size segments";
  if (collective_overhead_s > 0) text += ", collective overhead " + MicrosText(collective_overhead_s);
  if (host_s_per_byte > 0) {
    text += ", host cost " + FormatNumber(host_s_per_byte * 1e9, 12) + " ns/B (links deliver " +
            GbpsText(LinkBandwidth()) + ")";
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
  if (topology != Topology::kXml) {
    for (const TopologyParameter& p : sim::DescriptionOf(topology).parameters) {
      j[p.key] = p.unit == ParameterUnit::kCount ? nlohmann::json(static_cast<int>(p.get(*this)))
                                                 : nlohmann::json(p.get(*this));
    }
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
    throw InputError(origin + ": 'topology' is required (" + TopologyNames() + ")");
  } else if (const std::optional<Topology> t = ParseTopology(*topology)) {
    spec.topology = *t;
  } else {
    throw InputError(origin + ": unknown topology '" + *topology + "' (" + TopologyNames(", ") + ")");
  }
  if (auto v = f.Integer("hosts")) spec.hosts = *v;
  if (auto v = f.Number("bandwidth_gbps")) spec.bandwidth_Bps = BytesPerSecondFromGbps(*v);
  if (auto v = f.Number("latency_us")) spec.latency_s = *v * 1e-6;
  // Every topology's keys are read, whichever the file names, as before.
  for (const TopologyDescription& d : AllTopologies()) {
    for (const TopologyParameter& p : d.parameters) {
      std::optional<double> v;
      if (p.unit == ParameterUnit::kCount) {
        if (const std::optional<int> n = f.Integer(p.key)) v = *n;
      } else {
        v = f.Number(p.key);
      }
      if (v) p.set(spec, *v);
    }
  }
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
  const std::string problem = InputFileProblem(path);
  if (!problem.empty()) throw InputError(path + ": cannot open platform file: " + problem);
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
  PlatformSpec spec = PlatformFromJson(j, path);
  if (spec.topology == Topology::kXml) {
    // The file its 'xml' key names is checked as an XML platform given
    // directly would be: a FIFO there would block SimGrid for ever.
    try {
      CheckXmlPlatform(spec.xml_path);
    } catch (const InputError& e) {
      throw InputError(path + ": 'xml': " + e.what());
    }
  }
  return spec;
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

// SimGrid builds every host a radical names, so a radical of 100 million
// takes all memory before anything else could object; counted from the
// text, it is refused first.
int64_t XmlClusterHostsDeclared(const std::string& text) {
  constexpr int64_t kMany = int64_t{1} << 40;
  int64_t total = 0;
  for (size_t at = text.find("radical"); at != std::string::npos; at = text.find("radical", at + 7)) {
    size_t i = at + 7;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) continue;
    const size_t close = text.find(text[i], i + 1);
    if (close == std::string::npos) continue;
    std::istringstream parts(text.substr(i + 1, close - i - 1));
    for (std::string part; std::getline(parts, part, ',');) {
      const char* p = part.c_str();
      char* end = nullptr;
      const long long first = std::strtoll(p, &end, 10);
      if (end == p) continue;
      long long last = first;
      if (*end == '-') {
        const char* q = end + 1;
        last = std::strtoll(q, &end, 10);
        if (end == q) continue;
      }
      if (last < first) continue;
      // In unsigned arithmetic: 0-9223372036854775807 spans more than
      // int64_t holds.
      const uint64_t span = static_cast<uint64_t>(last) - static_cast<uint64_t>(first);
      const int64_t hosts = span >= static_cast<uint64_t>(kMany) ? kMany : static_cast<int64_t>(span) + 1;
      total = std::min(kMany, total + hosts);
    }
  }
  return total;
}

void CheckXmlPlatform(const std::string& path) {
  CheckInputFile(path);
  {
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int64_t declared = XmlClusterHostsDeclared(text);
    if (declared > kMaxHosts) {
      throw InputError(path + ": its clusters declare " + std::to_string(declared) +
                       " hosts; a platform holds at most " + std::to_string(kMaxHosts));
    }
  }
  // SimGrid dies (abort) on some platforms it cannot load - a route given
  // twice, say - and prints a backtrace, so the platform is loaded once in
  // a child process whose stderr is kept here and reduced to one line.
  // An anonymous in-memory file: nothing on disk, nothing left behind.
  const int log_fd = ::memfd_create("accordion-platform-log", MFD_CLOEXEC);
  if (log_fd < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
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
  std::vector<sg4::Host*> all =
      spec.topology == Topology::kXml ? LoadXml(spec) : DescriptionOf(spec.topology).build(spec, hosts);
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
