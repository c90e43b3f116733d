#include "simulator/iteration_pattern.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace accordion::sim {

std::string IterationPattern::Key() const {
  // Raw bytes of the doubles: two ready times that print alike but differ
  // must not share a timing.
  auto append = [](std::string& key, double v) {
    char raw[sizeof(double)];
    std::memcpy(raw, &v, sizeof raw);
    key.append(raw, sizeof raw);
  };
  std::string key;
  append(key, backward_s);
  for (const CollectiveCall& c : calls) {
    key += std::to_string(static_cast<int>(c.op)) + ':' + std::to_string(c.bytes) + ':' + std::to_string(c.after) +
           (c.after_backward ? "b" : "") + ':';
    append(key, c.ready_s);
    append(key, c.gap_s);
    append(key, c.host_s);
    append(key, c.network_scale);
    append(key, c.recorded_network_s);
    append(key, c.attribution);
    key += ';';
  }
  return key;
}

nlohmann::json ToJson(const IterationPattern& pattern) {
  nlohmann::json calls = nlohmann::json::array();
  for (const CollectiveCall& c : pattern.calls) {
    calls.push_back({{"op", ToString(c.op)},
                     {"bytes", c.bytes},
                     {"ready_s", c.ready_s},
                     {"tag", c.tag},
                     {"bucket", c.bucket},
                     {"after", c.after},
                     {"after_backward", c.after_backward},
                     {"gap_s", c.gap_s},
                     {"host_s", c.host_s},
                     {"network_scale", c.network_scale}});
  }
  return {{"backward_s", pattern.backward_s}, {"calls", calls}};
}

IterationPattern PatternFromJson(const nlohmann::json& j) {
  IterationPattern p;
  p.backward_s = j.at("backward_s").get<double>();
  for (const nlohmann::json& c : j.at("calls")) {
    CollectiveCall call{*ParseCollectiveOp(c.at("op").get<std::string>()), c.at("bytes").get<int64_t>(),
                        c.at("ready_s").get<double>(), c.at("tag").get<std::string>(), c.at("bucket").get<int>()};
    call.after = c.at("after").get<int>();
    call.after_backward = c.at("after_backward").get<bool>();
    call.gap_s = c.at("gap_s").get<double>();
    call.host_s = c.at("host_s").get<double>();
    call.network_scale = c.value("network_scale", 1.0);
    p.calls.push_back(std::move(call));
  }
  return p;
}

nlohmann::json ToJson(const IterationTiming& timing) {
  nlohmann::json spans = nlohmann::json::array();
  for (const CollectiveSpan& s : timing.spans) spans.push_back({s.start_s, s.end_s});
  return {{"spans", spans}, {"comm_end_s", timing.comm_end_s}};
}

IterationTiming TimingFromJson(const nlohmann::json& j) {
  IterationTiming t;
  for (const nlohmann::json& s : j.at("spans")) t.spans.push_back({s.at(0).get<double>(), s.at(1).get<double>()});
  t.comm_end_s = j.at("comm_end_s").get<double>();
  return t;
}

double IssueTime(const IterationPattern& pattern, size_t i, const std::vector<double>& end, double& host_s) {
  const CollectiveCall& c = pattern.calls[i];
  double t = c.ready_s;
  if (c.after >= 0) t = std::max(t, end.at(static_cast<size_t>(c.after)));
  if (!c.after_backward) return t + c.gap_s;
  t = std::max({t, pattern.backward_s, host_s}) + c.gap_s;
  host_s = t;
  return t;
}

void SettleNegativeDurations(std::vector<double>& durations) {
  double deficit = 0;
  for (double& d : durations) {
    d += deficit;
    deficit = std::min(0.0, d);
    d = std::max(0.0, d);
  }
  for (auto d = durations.rbegin(); d != durations.rend() && deficit < 0; ++d) {
    const double taken = std::min(*d, -deficit);
    *d -= taken;
    deficit += taken;
  }
}

IterationTiming ComposeIteration(const IterationPattern& pattern, const std::vector<double>& durations) {
  IterationTiming t;
  std::vector<double> end(pattern.calls.size(), 0.0);
  double previous_end = 0, host = 0;
  for (size_t i = 0; i < pattern.calls.size(); ++i) {
    const double start = std::max(IssueTime(pattern, i, end, host), previous_end);
    previous_end = end[i] = start + durations.at(i);
    t.spans.push_back({start, previous_end});
  }
  t.comm_end_s = previous_end;
  return t;
}

}  // namespace accordion::sim
