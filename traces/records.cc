#include "traces/records.h"

#include <array>
#include <cmath>
#include <utility>

#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

template <typename Enum, size_t N>
const char* NameOf(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <typename Enum, size_t N>
std::optional<Enum> ValueOf(const std::array<std::pair<Enum, const char*>, N>& table, const std::string& name) {
  for (const auto& [e, n] : table) {
    if (name == n) return e;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<RunStatus, const char*>, 5> kStatuses{{
    {RunStatus::kRunning, "running"},
    {RunStatus::kComplete, "complete"},
    {RunStatus::kInterrupted, "interrupted"},
    {RunStatus::kFailed, "failed"},
    {RunStatus::kStoppedEarly, "stopped_early"},
}};
constexpr std::array<std::pair<CollectiveOp, const char*>, 3> kOps{{
    {CollectiveOp::kAllReduce, "allreduce"},
    {CollectiveOp::kAllGather, "allgather"},
    {CollectiveOp::kBroadcast, "broadcast"},
}};

}  // namespace

std::string LevelProblem(Scheme scheme, double level) {
  if (!std::isfinite(level)) return "must be a finite number";
  const SchemeDescription& d = DescriptionOf(scheme);
  switch (d.level_kind) {
    case LevelKind::kNone:
      return level == 0 ? "" : "must be 0 for " + std::string(d.name) + " communication";
    case LevelKind::kRank:
    case LevelKind::kGlobalBatch:
      return level >= 1 && level <= d.max_level && level == std::floor(level)
                 ? ""
                 : "must be a " + std::string(d.level_meaning) + " in 1.." +
                       std::to_string(static_cast<int64_t>(d.max_level));
    case LevelKind::kFraction:
      return level > 0 && level <= 1 ? "" : "must be a " + std::string(d.level_meaning) + " in (0, 1]";
  }
  return "is not a level";
}

const char* ToString(Scheme scheme) {
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.scheme == scheme) return d.name;
  }
  return "unknown";
}
const char* ToString(Policy policy) {
  for (const PolicyDescription& d : AllPolicies()) {
    if (d.policy == policy) return d.name;
  }
  return "unknown";
}
const char* ToString(RunStatus status) { return NameOf(kStatuses, status); }
const char* ToString(CollectiveOp op) { return NameOf(kOps, op); }
std::optional<Scheme> ParseScheme(const std::string& name) {
  for (const SchemeDescription& d : AllSchemes()) {
    if (name == d.name) return d.scheme;
  }
  return std::nullopt;
}
std::optional<Policy> ParsePolicy(const std::string& name) {
  for (const PolicyDescription& d : AllPolicies()) {
    if (name == d.name) return d.policy;
  }
  return std::nullopt;
}
std::optional<RunStatus> ParseRunStatus(const std::string& name) { return ValueOf(kStatuses, name); }
std::optional<CollectiveOp> ParseCollectiveOp(const std::string& name) { return ValueOf(kOps, name); }

}  // namespace accordion
