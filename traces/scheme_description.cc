#include "traces/scheme_description.h"

#include <array>
#include <stdexcept>

namespace accordion {

namespace {

constexpr std::array<CollectiveDescription, 4> kCollectives{{
    {CollectiveKind::kDense, "dense", CollectiveOp::kAllReduce, false},
    {CollectiveKind::kPowerSgdP, "powersgd-p", CollectiveOp::kAllReduce, false},
    {CollectiveKind::kPowerSgdQ, "powersgd-q", CollectiveOp::kAllReduce, true},
    {CollectiveKind::kTopK, "topk", CollectiveOp::kAllGather, false},
}};

std::vector<SchemeDescription> MakeSchemes() {
  using K = CollectiveKind;
  return {
      {Scheme::kDense, "dense", "dense", LevelKind::kNone, "", "", 0, 0, 0, Compressor::kNone, {K::kDense}},
      {Scheme::kPowerSgd,
       "powersgd",
       "PowerSGD",
       LevelKind::kRank,
       "PowerSGD rank",
       "rank",
       kMaxPowerSgdRank,
       2,
       1,
       Compressor::kLowRank,
       {K::kDense, K::kPowerSgdP, K::kPowerSgdQ}},
      {Scheme::kTopK,
       "topk",
       "TopK",
       LevelKind::kFraction,
       "TopK fraction",
       "TopK",
       1,
       0.99,
       0.1,
       Compressor::kSparse,
       {K::kDense, K::kTopK}},
      // The paper's batch schedule: B in critical regimes, 8B outside them.
      {Scheme::kBatch,
       "batch",
       "batch size",
       LevelKind::kGlobalBatch,
       "batch size",
       "batch",
       kMaxBatchLevel,
       1,
       8,
       Compressor::kNone,
       {K::kDense}},
  };
}

}  // namespace

const CollectiveDescription& Describe(CollectiveKind kind) {
  for (const CollectiveDescription& c : kCollectives) {
    if (c.kind == kind) return c;
  }
  throw std::logic_error("not a collective kind");
}

const char* ToString(CollectiveKind kind) { return Describe(kind).tag; }

std::optional<CollectiveKind> ParseCollectiveKind(const std::string& tag) {
  for (const CollectiveDescription& c : kCollectives) {
    if (tag == c.tag) return c.kind;
  }
  return std::nullopt;
}

const std::vector<SchemeDescription>& AllSchemes() {
  static const std::vector<SchemeDescription> schemes = MakeSchemes();
  return schemes;
}

const SchemeDescription& Describe(Scheme scheme) {
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.scheme == scheme) return d;
  }
  throw std::logic_error("not a scheme");
}

std::vector<std::string> SchemeNames(SchemeSet set) {
  std::vector<std::string> names;
  for (const SchemeDescription& d : AllSchemes()) {
    if (set == SchemeSet::kAll || d.has_levels()) names.emplace_back(d.name);
  }
  return names;
}

std::string JoinSchemeNames(SchemeSet set, const std::string& separator, const std::string& before_last) {
  const std::vector<std::string> names = SchemeNames(set);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? before_last : separator;
    out += names[i];
  }
  return out;
}

}  // namespace accordion
