#include "traces/scheme_description.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "common/number_format.h"

namespace accordion {

namespace {

constexpr std::array<CollectiveDescription, 5> kCollectives{{
    {CollectiveKind::kDense, "dense", CollectiveOp::kAllReduce, false},
    {CollectiveKind::kPowerSgdP, "powersgd-p", CollectiveOp::kAllReduce, false},
    {CollectiveKind::kPowerSgdQ, "powersgd-q", CollectiveOp::kAllReduce, true},
    {CollectiveKind::kTopK, "topk", CollectiveOp::kAllGather, false},
    {CollectiveKind::kCast16, "cast16", CollectiveOp::kAllReduce, false},
}};

std::vector<SchemeDescription> MakeSchemes() {
  using K = CollectiveKind;
  // One row per scheme, fields in SchemeDescription's order.
  return {
      {Scheme::kDense, /*name=*/"dense", /*title=*/"dense", LevelKind::kNone,
       /*level_meaning=*/"", /*level_label=*/"", /*max_level=*/0, /*default_low=*/0, /*default_high=*/0,
       Compressor::kNone, /*bucket_collectives=*/{K::kDense}, /*error_profile_levels=*/{}, /*halvable=*/false,
       /*dense_baseline=*/true},
      {Scheme::kPowerSgd, /*name=*/"powersgd", /*title=*/"PowerSGD", LevelKind::kRank,
       /*level_meaning=*/"PowerSGD rank", /*level_label=*/"rank", /*max_level=*/kMaxPowerSgdRank,
       /*default_low=*/2, /*default_high=*/1, Compressor::kLowRank,
       /*bucket_collectives=*/{K::kDense, K::kPowerSgdP, K::kPowerSgdQ}, /*error_profile_levels=*/{1, 2, 4, 8},
       /*halvable=*/true, /*dense_baseline=*/false},
      {Scheme::kTopK, /*name=*/"topk", /*title=*/"TopK", LevelKind::kFraction,
       /*level_meaning=*/"TopK fraction", /*level_label=*/"TopK", /*max_level=*/1, /*default_low=*/0.99,
       /*default_high=*/0.1, Compressor::kSparse, /*bucket_collectives=*/{K::kDense, K::kTopK},
       /*error_profile_levels=*/{0.01, 0.1, 0.25, 0.5, 0.99}, /*halvable=*/true, /*dense_baseline=*/false},
      // The paper's batch schedule: B in critical regimes, 8B outside them.
      {Scheme::kBatch, /*name=*/"batch", /*title=*/"batch size", LevelKind::kGlobalBatch,
       /*level_meaning=*/"batch size", /*level_label=*/"batch", /*max_level=*/kMaxBatchLevel,
       /*default_low=*/1, /*default_high=*/8, Compressor::kNone, /*bucket_collectives=*/{K::kDense},
       /*error_profile_levels=*/{},
       /*halvable=*/false, /*dense_baseline=*/false},
      // PyTorch's fp16_compress_hook and bf16_compress_hook: every gradient
      // divided by the workers, cast to 16 bits, summed, cast back - the
      // first thing a PyTorch user tries to halve the traffic.
      {Scheme::kFp16, /*name=*/"fp16", /*title=*/"fp16 cast", LevelKind::kNone,
       /*level_meaning=*/"", /*level_label=*/"", /*max_level=*/0, /*default_low=*/0, /*default_high=*/0,
       Compressor::kCast16, /*bucket_collectives=*/{K::kCast16}, /*error_profile_levels=*/{}, /*halvable=*/false,
       /*dense_baseline=*/false, WireFormat::kFloat16},
      {Scheme::kBf16, /*name=*/"bf16", /*title=*/"bf16 cast", LevelKind::kNone,
       /*level_meaning=*/"", /*level_label=*/"", /*max_level=*/0, /*default_low=*/0, /*default_high=*/0,
       Compressor::kCast16, /*bucket_collectives=*/{K::kCast16}, /*error_profile_levels=*/{}, /*halvable=*/false,
       /*dense_baseline=*/false, WireFormat::kBFloat16},
  };
}

}  // namespace

const CollectiveDescription& DescriptionOf(CollectiveKind kind) {
  for (const CollectiveDescription& c : kCollectives) {
    if (c.kind == kind) return c;
  }
  throw std::logic_error("not a collective kind");
}

const char* ToString(CollectiveKind kind) { return DescriptionOf(kind).tag; }

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

const SchemeDescription& DescriptionOf(Scheme scheme) {
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.scheme == scheme) return d;
  }
  throw std::logic_error("not a scheme");
}

Scheme DenseBaselineScheme() {
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.dense_baseline) return d.scheme;
  }
  throw std::logic_error("no dense baseline scheme");
}

int ExponentBits(WireFormat wire) {
  switch (wire) {
    case WireFormat::kFloat32:
    case WireFormat::kBFloat16:
      return 8;
    case WireFormat::kFloat16:
      return 5;
  }
  throw std::logic_error("not a wire format");
}

double UnitRoundoff(WireFormat wire) {
  switch (wire) {
    case WireFormat::kFloat32:
      return std::ldexp(1.0, -24);
    case WireFormat::kFloat16:
      return std::ldexp(1.0, -11);
    case WireFormat::kBFloat16:
      return std::ldexp(1.0, -8);
  }
  throw std::logic_error("not a wire format");
}

std::vector<Scheme> WholeGradientSchemes() {
  std::vector<const SchemeDescription*> set;
  for (const SchemeDescription& d : AllSchemes()) {
    if (InSet(d, SchemeSet::kWholeGradient)) set.push_back(&d);
  }
  std::stable_sort(set.begin(), set.end(), [](const SchemeDescription* a, const SchemeDescription* b) {
    if (a->dense_baseline != b->dense_baseline) return a->dense_baseline;
    return ExponentBits(a->wire) > ExponentBits(b->wire);
  });
  std::vector<Scheme> out;
  for (const SchemeDescription* d : set) out.push_back(d->scheme);
  return out;
}

bool InSet(const SchemeDescription& d, SchemeSet set) {
  switch (set) {
    case SchemeSet::kAll:
      return true;
    case SchemeSet::kWithLevels:
      return d.has_levels();
    case SchemeSet::kBatchLevels:
      return d.level_kind == LevelKind::kGlobalBatch;
    case SchemeSet::kSparse:
      return d.compressor == Compressor::kSparse;
    case SchemeSet::kCompressing:
      return !d.error_profile_levels.empty();
    case SchemeSet::kHalvable:
      return d.halvable;
    case SchemeSet::kWholeGradient:
      return !d.has_levels() && (d.compressor == Compressor::kNone || d.compressor == Compressor::kCast16);
  }
  return false;
}

namespace {

std::vector<std::string> Fields(SchemeSet set, const char* SchemeDescription::*field) {
  std::vector<std::string> out;
  for (const SchemeDescription& d : AllSchemes()) {
    if (InSet(d, set)) out.emplace_back(d.*field);
  }
  return out;
}

}  // namespace

std::vector<std::string> SchemeNames(SchemeSet set) { return Fields(set, &SchemeDescription::name); }

std::string JoinSchemeNames(SchemeSet set, const std::string& separator, const std::string& before_last) {
  return JoinWords(SchemeNames(set), separator, before_last);
}

std::string JoinSchemeTitles(SchemeSet set, const std::string& separator, const std::string& before_last) {
  return JoinWords(Fields(set, &SchemeDescription::title), separator, before_last);
}

}  // namespace accordion
