#include "simulator/platform_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_set>

#include "common/errors.h"
#include "common/number_format.h"
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

}  // namespace

std::vector<sg4::Host*> LoadXmlPlatform(const std::string& path) {
  const sg4::Engine* engine = sg4::Engine::get_instance();
  try {
    engine->load_platform(path);
  } catch (const std::exception& e) {
    throw InputError(path + ": " + e.what());
  }
  // SimGrid accepts links it cannot simulate sensibly; refuse them here.
  // (bandwidth="1e308Gbps" overflows to infinity and aborts its solver).
  for (const sg4::Link* link : engine->get_all_links()) {
    const std::string what = path + ": link '" + link->get_name() + "'";
    RequireRate(link->get_bandwidth(), what + " bandwidth");
    RequireLatency(link->get_latency(), what + " latency");
  }
  std::vector<sg4::Host*> hosts = engine->get_all_hosts();
  std::sort(hosts.begin(), hosts.end(),
            [](const sg4::Host* a, const sg4::Host* b) { return NaturalLess(a->get_name(), b->get_name()); });
  return hosts;
}

std::vector<sg4::Host*> BuildPlatform(const PlatformSpec& spec, int ranks) {
  spec.Validate();
  const int hosts = spec.HostCount(ranks);
  ApplyNetworkOptions(spec);
  std::vector<sg4::Host*> all = spec.source == PlatformSource::kXmlFile
                                    ? LoadXmlPlatform(spec.xml_path)
                                    : DescriptionOf(spec.topology).build(spec, hosts);
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
