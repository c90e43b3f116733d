#include "simulator/platform.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "common/errors.h"
#include "common/number_format.h"
#include "simulator/spec_checks.h"
#include "simulator/topology_description.h"

namespace accordion::sim {

const char* ToString(Topology topology) { return DescriptionOf(topology).name; }

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
  RequireAtMost(hosts, kMaxHosts, "hosts");
  if (source == PlatformSource::kXmlFile) {
    if (xml_path.empty()) throw InputError("an XML platform needs a file");
    if (host_s_per_byte > 0) {
      throw InputError("an XML platform has its own links: a host cost per byte cannot be applied to them");
    }
  } else {
    RequireRate(bandwidth_Bps, "bandwidth");
    RequireLatency(latency_s, "latency");
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
  if (source == PlatformSource::kXmlFile) return -1;
  const int wanted = hosts > 0 ? hosts : ranks;
  if (wanted < ranks) {
    throw InputError(std::to_string(ranks) + " ranks do not fit on " + std::to_string(wanted) + " hosts");
  }
  return static_cast<int>(sim::DescriptionOf(topology).host_count(*this, wanted));
}

std::string PlatformSpec::Describe(int ranks) const {
  std::string text = source == PlatformSource::kXmlFile
                         ? "SimGrid platform " + xml_path
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
  if (source == PlatformSource::kXmlFile) {
    j["topology"] = "xml";
    j["xml"] = xml_path;
  } else {
    j["topology"] = ToString(topology);
    j["bandwidth_gbps"] = GbpsFromBytesPerSecond(bandwidth_Bps);
    j["latency_us"] = latency_s * 1e6;
    for (const TopologyParameter& p : sim::DescriptionOf(topology).parameters) {
      j[p.key] = p.unit == ParameterUnit::kCount ? nlohmann::json(static_cast<int>(p.get(*this)))
                                                 : nlohmann::json(p.get(*this));
    }
  }
  if (hosts > 0) j["hosts"] = hosts;
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
  spec.source = PlatformSource::kXmlFile;
  spec.xml_path = path;
  return spec;
}

}  // namespace accordion::sim
