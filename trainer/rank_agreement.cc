#include "trainer/rank_agreement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "common/number_format.h"

namespace accordion {

namespace {

using nlohmann::json;

std::string Text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return FormatNumber(value.get<double>(), 15);
  return value.dump();
}

// Ranks grouped by a key, in order of their first rank.
template <typename Key>
std::vector<std::pair<Key, std::vector<int>>> GroupRanks(const std::vector<Key>& keys) {
  std::vector<std::pair<Key, std::vector<int>>> groups;
  for (int r = 0; r < static_cast<int>(keys.size()); ++r) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == keys[r]; });
    if (it == groups.end()) {
      groups.push_back({keys[r], {r}});
    } else {
      it->second.push_back(r);
    }
  }
  return groups;
}

// "x on rank 0 but y on rank 1 and z on ranks 2-3", for values grouped by rank.
std::string ValuesByRank(const std::vector<std::pair<std::string, std::vector<int>>>& groups) {
  std::string out = groups[0].first + " on " + DescribeRanks(groups[0].second) + " but ";
  std::vector<std::string> others;
  for (size_t g = 1; g < groups.size(); ++g)
    others.push_back(groups[g].first + " on " + DescribeRanks(groups[g].second));
  return out + JoinWords(others, ", ", " and ");
}

std::string ParameterText(const json& list, size_t i) {
  if (i >= list.size()) return "absent";
  return "'" + Text(list[i]) + "'";
}

// The first parameter whose name or shape differs from rank 0's.
std::string DescribeParameters(const std::vector<json>& lists) {
  std::vector<std::string> counts;
  for (const json& l : lists) counts.push_back(std::to_string(l.size()));
  std::string out;
  const auto count_groups = GroupRanks(counts);
  if (count_groups.size() > 1) {
    out = "the number of parameters that require a gradient is " + ValuesByRank(count_groups);
  }
  size_t longest = 0;
  for (const json& l : lists) longest = std::max(longest, l.size());
  for (size_t i = 0; i < longest; ++i) {
    std::vector<std::string> at;
    for (const json& l : lists) at.push_back(ParameterText(l, i));
    const auto groups = GroupRanks(at);
    if (groups.size() == 1) continue;
    out += std::string(out.empty() ? "the models differ" : "") + " (parameter " + std::to_string(i) + " is " +
           ValuesByRank(groups) + ")";
    break;
  }
  return out;
}

std::string Describe(const PhaseReport& r) {
  const std::string epoch = std::to_string(r.epoch);
  switch (r.phase) {
    case RankPhase::kStep:
      return "starts a step after " + std::to_string(r.step) + " step(s) of epoch " + epoch;
    case RankPhase::kEndEpoch:
      return "ends epoch " + epoch + " after " + std::to_string(r.step) + " step(s)";
    case RankPhase::kClose:
      return "closes the hook after " + std::to_string(r.epoch) + " epoch(s)" +
             (r.step > 0 ? " and " + std::to_string(r.step) + " step(s) of epoch " + epoch : "");
  }
  return "?";
}

}  // namespace

std::vector<double> ToDoubles(const PhaseReport& r) {
  return {static_cast<double>(r.phase),
          static_cast<double>(r.epoch),
          static_cast<double>(r.step),
          r.problem ? 1.0 : 0.0,
          r.lr,
          r.next_lr};
}

PhaseReport FromDoubles(const std::vector<double>& v) {
  if (v.size() != kPhaseReportSize) throw std::invalid_argument("a phase report holds 6 values");
  PhaseReport r;
  const int phase = static_cast<int>(v[0]);
  if (phase < 1 || phase > 3) throw std::invalid_argument("unknown phase " + std::to_string(phase));
  r.phase = static_cast<RankPhase>(phase);
  r.epoch = static_cast<int64_t>(v[1]);
  r.step = static_cast<int64_t>(v[2]);
  r.problem = v[3] != 0;
  r.lr = v[4];
  r.next_lr = v[5];
  return r;
}

std::string DescribeRanks(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks[0]);
  const bool consecutive = ranks.size() > 2 && ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  if (consecutive) return "ranks " + std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
  std::vector<std::string> words;
  for (int r : ranks) words.push_back(std::to_string(r));
  // A thousand ranks that disagree need not be listed one by one.
  if (words.size() > 8) {
    const std::string more = " and " + std::to_string(words.size() - 6) + " more";
    words.resize(6);
    return "ranks " + JoinWords(words, ", ", ", ") + more;
  }
  return "ranks " + JoinWords(words, ", ", " and ");
}

std::string PhaseDisagreement(const std::vector<PhaseReport>& reports) {
  std::vector<std::tuple<int, int64_t, int64_t>> where;
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(reports.size()); ++r) {
    if (reports[r].problem) continue;
    where.emplace_back(static_cast<int>(reports[r].phase), reports[r].epoch, reports[r].step);
    ranks.push_back(r);
  }
  if (where.empty()) return "";
  const auto groups = GroupRanks(where);
  if (groups.size() > 1) {
    std::vector<std::string> parts;
    bool closing = false, epochs_differ = false;
    for (const auto& [key, members] : groups) {
      std::vector<int> real;
      for (int m : members) real.push_back(ranks[m]);
      const PhaseReport& r = reports[real[0]];
      parts.push_back(DescribeRanks(real) + " " + Describe(r));
      closing = closing || r.phase == RankPhase::kClose;
      epochs_differ = epochs_differ || r.epoch != reports[ranks[0]].epoch;
    }
    std::string hint;
    if (closing) {
      hint = "every rank must call end_epoch after each epoch and close() at the same point";
    } else if (epochs_differ) {
      hint = "every rank must call end_epoch after each epoch";
    } else {
      hint =
          "every rank must take the same number of steps in an epoch (an uneven data loader? "
          "DistributedSampler(..., drop_last=True) gives each rank the same count) and call end_epoch after "
          "the same step";
    }
    return "ranks disagree: " + JoinWords(parts, "; ", "; ") + "; " + hint;
  }
  const PhaseReport& first = reports[ranks[0]];
  if (first.phase != RankPhase::kEndEpoch) return "";
  std::vector<std::string> problems;
  for (const auto& [name, member] : {std::pair{"lr", &PhaseReport::lr}, std::pair{"next_lr", &PhaseReport::next_lr}}) {
    std::vector<std::string> values;
    for (int r : ranks) values.push_back(FormatNumber(reports[r].*member, 15));
    auto value_groups = GroupRanks(values);
    if (value_groups.size() == 1) continue;
    for (auto& [value, members] : value_groups) {
      for (int& m : members) m = ranks[m];
    }
    problems.push_back(std::string(name) + " is " + ValuesByRank(value_groups));
  }
  if (problems.empty()) return "";
  return "ranks disagree at the end of epoch " + std::to_string(first.epoch) + ": " + JoinWords(problems, "; ", "; ") +
         "; every rank must pass end_epoch the same lr and next_lr";
}

std::string ProblemsOfRanks(const std::vector<std::string>& problems) {
  std::vector<std::string> said;
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(problems.size()); ++r) {
    if (problems[r].empty()) continue;
    said.push_back(problems[r]);
    ranks.push_back(r);
  }
  if (said.empty()) return "";
  auto groups = GroupRanks(said);
  if (groups.size() == 1 && ranks.size() == problems.size()) return said[0];
  std::vector<std::string> parts;
  for (auto& [text, members] : groups) {
    for (int& m : members) m = ranks[m];
    parts.push_back(DescribeRanks(members) + ": " + text);
  }
  return JoinWords(parts, "; ", "; ");
}

std::string SettingsDisagreement(const std::vector<std::string>& settings) {
  std::vector<json> parsed;
  for (size_t r = 0; r < settings.size(); ++r) {
    json j = json::parse(settings[r], nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) throw std::invalid_argument("rank " + std::to_string(r) + "'s settings are not a JSON object");
    parsed.push_back(std::move(j));
  }
  if (parsed.empty()) return "";
  // Rank 0's keys in its order, then keys only others have.
  std::vector<std::string> keys;
  for (const json& j : parsed) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) keys.push_back(it.key());
    }
  }
  std::vector<std::string> differences;
  for (const std::string& key : keys) {
    if (key == "parameters") {
      std::vector<json> lists;
      for (const json& j : parsed) lists.push_back(j.contains(key) ? j[key] : json::array());
      const std::string d = DescribeParameters(lists);
      if (!d.empty()) differences.push_back(d);
      continue;
    }
    std::vector<std::string> values;
    for (const json& j : parsed) values.push_back(j.contains(key) ? Text(j[key]) : "not given");
    const auto groups = GroupRanks(values);
    if (groups.size() > 1) differences.push_back(key + " is " + ValuesByRank(groups));
  }
  return JoinWords(differences, "; ", "; ");
}

}  // namespace accordion
