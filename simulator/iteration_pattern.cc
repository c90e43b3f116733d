#include "simulator/iteration_pattern.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace accordion::sim {

std::string IterationPattern::Key() const {
  // Raw bytes of the doubles: two ready times that print alike but differ
  // must not share a timing.
  std::string key;
  for (const CollectiveCall& c : calls) {
    key += std::to_string(static_cast<int>(c.op)) + ':' + std::to_string(c.bytes) + ':';
    char raw[sizeof(double)];
    std::memcpy(raw, &c.ready_s, sizeof raw);
    key.append(raw, sizeof raw);
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
                     {"bucket", c.bucket}});
  }
  return calls;
}

IterationPattern PatternFromJson(const nlohmann::json& j) {
  IterationPattern p;
  for (const nlohmann::json& c : j) {
    p.calls.push_back({*ParseCollectiveOp(c.at("op").get<std::string>()), c.at("bytes").get<int64_t>(),
                       c.at("ready_s").get<double>(), c.at("tag").get<std::string>(),
                       c.at("bucket").get<int>()});
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
  for (const nlohmann::json& s : j.at("spans"))
    t.spans.push_back({s.at(0).get<double>(), s.at(1).get<double>()});
  t.comm_end_s = j.at("comm_end_s").get<double>();
  return t;
}

IterationTiming ComposeInIssueOrder(const IterationPattern& pattern, const std::vector<double>& durations) {
  IterationTiming t;
  double previous_end = 0;
  for (size_t i = 0; i < pattern.calls.size(); ++i) {
    const double start = std::max(pattern.calls[i].ready_s, previous_end);
    previous_end = start + durations.at(i);
    t.spans.push_back({start, previous_end});
  }
  t.comm_end_s = previous_end;
  return t;
}

}  // namespace accordion::sim
