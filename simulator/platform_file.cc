#include "simulator/platform_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <simgrid/s4u.hpp>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/number_format.h"
#include "simulator/child_process.h"
#include "simulator/platform_builder.h"
#include "simulator/topology_description.h"

namespace accordion::sim {

namespace sg4 = simgrid::s4u;

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
  if (spec.source == PlatformSource::kXmlFile) {
    // A relative 'xml' is the JSON file's neighbour, wherever the tool runs
    // from (as an #include is its includer's).
    const std::filesystem::path named(spec.xml_path);
    if (named.is_relative()) spec.xml_path = (std::filesystem::path(path).parent_path() / named).string();
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
      int argc = 2;
      char name[] = "accordion-sim";
      char quiet[] = "--log=root.thres:critical";  // only its last words
      char* argv[] = {name, quiet, nullptr};
      sg4::Engine engine(&argc, argv);
      const std::vector<sg4::Host*> hosts = LoadXmlPlatform(path);
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

}  // namespace accordion::sim
