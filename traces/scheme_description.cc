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
  // One row per scheme, fields in SchemeDescription's order.
  return {
      {Scheme::kDense, /*name=*/"dense", /*title=*/"dense", LevelKind::kNone, /*level_meaning=*/"",
       /*level_label=*/"", /*max_level=*/0, /*default_low=*/0, /*default_high=*/0, Compressor::kNone,
       /*bucket_collectives=*/{K::kDense}},
      {Scheme::kPowerSgd, /*name=*/"powersgd", /*title=*/"PowerSGD", LevelKind::kRank,
       /*level_meaning=*/"PowerSGD rank", /*level_label=*/"rank", /*max_level=*/kMaxPowerSgdRank,
       /*default_low=*/2, /*default_high=*/1, Compressor::kLowRank,
       /*bucket_collectives=*/{K::kDense, K::kPowerSgdP, K::kPowerSgdQ}},
      {Scheme::kTopK, /*name=*/"topk", /*title=*/"TopK", LevelKind::kFraction, /*level_meaning=*/"TopK fraction",
       /*level_label=*/"TopK", /*max_level=*/1, /*default_low=*/0.99, /*default_high=*/0.1, Compressor::kSparse,
       /*bucket_collectives=*/{K::kDense, K::kTopK}},
      // The paper's batch schedule: B in critical regimes, 8B outside them.
      {Scheme::kBatch, /*name=*/"batch", /*title=*/"batch size", LevelKind::kGlobalBatch,
       /*level_meaning=*/"batch size", /*level_label=*/"batch", /*max_level=*/kMaxBatchLevel,
       /*default_low=*/1, /*default_high=*/8, Compressor::kNone, /*bucket_collectives=*/{K::kDense}},
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
