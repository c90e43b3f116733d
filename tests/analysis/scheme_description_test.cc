// Walks every scheme of traces/scheme_description.h and checks that what the
// toolkit builds from it agrees: names, level checks, defaults, the
// accounting and the step plan.
#include "traces/scheme_description.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "analysis/schedule.h"
#include "analysis/schedule_report.h"
#include "tests/support/synthetic_trace.h"

namespace accordion {
namespace {

constexpr int64_t kBatch = 512;

TEST(SchemeDescription, DescribesEverySchemeOnceAndItsNameRoundTrips) {
  std::set<std::string> names;
  std::set<Scheme> schemes;
  for (const SchemeDescription& d : AllSchemes()) {
    EXPECT_EQ(std::string(ToString(d.scheme)), d.name);
    EXPECT_EQ(ParseScheme(ToString(d.scheme)), d.scheme) << d.name;
    EXPECT_EQ(&DescriptionOf(d.scheme), &d);
    names.insert(d.name);
    schemes.insert(d.scheme);
  }
  EXPECT_EQ(names.size(), AllSchemes().size());
  EXPECT_EQ(schemes, (std::set<Scheme>{Scheme::kDense, Scheme::kPowerSgd, Scheme::kTopK, Scheme::kBatch, Scheme::kFp16,
                                       Scheme::kBf16}));
  EXPECT_FALSE(ParseScheme("powersgd-p"));
  EXPECT_STREQ(ToString(static_cast<Scheme>(99)), "unknown");
  EXPECT_THROW(DescriptionOf(static_cast<Scheme>(99)), std::logic_error);
}

TEST(SchemeDescription, TagsAreTheTraceFormatsAndRoundTrip) {
  const std::pair<CollectiveKind, const char*> expected[] = {{CollectiveKind::kDense, "dense"},
                                                             {CollectiveKind::kPowerSgdP, "powersgd-p"},
                                                             {CollectiveKind::kPowerSgdQ, "powersgd-q"},
                                                             {CollectiveKind::kTopK, "topk"}};
  for (const auto& [kind, tag] : expected) {
    EXPECT_STREQ(ToString(kind), tag);
    EXPECT_EQ(ParseCollectiveKind(tag), kind);
  }
  EXPECT_FALSE(ParseCollectiveKind("powersgd"));
  EXPECT_EQ(DescriptionOf(CollectiveKind::kTopK).op, CollectiveOp::kAllGather);
  EXPECT_TRUE(DescriptionOf(CollectiveKind::kPowerSgdQ).after_backward);
}

TEST(SchemeDescription, DefaultLevelsAreLevelsAndOthersAreRefused) {
  for (const SchemeDescription& d : AllSchemes()) {
    const auto [low, high] = DefaultLevels(d.scheme, kBatch);
    EXPECT_EQ(LevelProblem(d.scheme, low), "") << d.name << " low " << low;
    EXPECT_EQ(LevelProblem(d.scheme, high), "") << d.name << " high " << high;
    EXPECT_NE(LevelProblem(d.scheme, -1), "") << d.name;
    if (d.has_levels()) {
      EXPECT_NE(low, high) << d.name;
      const std::string problem = LevelProblem(d.scheme, 0);
      EXPECT_NE(problem.find(d.level_meaning), std::string::npos) << problem;
      EXPECT_EQ(LevelName(d.scheme, low).rfind(std::string(d.level_label) + " ", 0), 0u) << LevelName(d.scheme, low);
    } else {
      EXPECT_EQ(low, 0);
      EXPECT_EQ(high, 0);
      EXPECT_EQ(LevelName(d.scheme, 0), d.name);
    }
  }
  // A global batch's defaults scale with the run's batch.
  EXPECT_EQ(DefaultLevels(Scheme::kBatch, 64), (std::pair<double, double>{64, 512}));
}

TEST(SchemeDescription, CompressorsSendLessAtTheHighLevel) {
  const std::vector<std::vector<int64_t>> shapes = {{256, 784}, {64, 64, 3, 3}, {512}, {10, 512}};
  for (const SchemeDescription& d : AllSchemes()) {
    const auto [low, high] = DefaultLevels(d.scheme, kBatch);
    for (const auto& shape : shapes) {
      const double at_low = FloatsPerStep(d.scheme, shape, low);
      const double at_high = FloatsPerStep(d.scheme, shape, high);
      if (d.compressor == Compressor::kNone) {
        EXPECT_EQ(at_low, FloatsPerStep(Scheme::kDense, shape, 0)) << d.name;
        EXPECT_EQ(at_high, at_low) << d.name;
      } else if (!d.has_levels()) {  // a 16-bit cast: half of dense, whatever the level
        EXPECT_EQ(at_low, FloatsPerStep(Scheme::kDense, shape, 0) / 2) << d.name;
        EXPECT_EQ(at_high, at_low) << d.name;
      } else {
        EXPECT_GE(at_low, at_high) << d.name << " " << shape.size() << "-D";
      }
    }
    if (d.compressor != Compressor::kNone && d.has_levels()) {
      EXPECT_GT(FloatsPerStep(d.scheme, shapes[0], low), FloatsPerStep(d.scheme, shapes[0], high)) << d.name;
      EXPECT_TRUE(IsCompressed(d.scheme, shapes[0], high)) << d.name;
    }
  }
}

// The plan issues, per bucket, the description's collectives and nothing
// else, with the kind's op and tag, and its bytes are the accounting's floats.
TEST(SchemeDescription, StepPlanFollowsTheDescriptionAndTheAccounting) {
  const auto layers = synthetic::ResNet18Layers();
  const auto buckets = AssignBuckets(layers, 4 * 1000000);
  ASSERT_GT(buckets.size(), 1u);
  for (const SchemeDescription& d : AllSchemes()) {
    // TopK sends 1-D tensors dense only with this choice; other schemes ignore it.
    const CommunicationScheme scheme = CommunicationScheme(d.scheme).topk_dense_vectors(true);
    for (const double level : {DefaultLevels(d.scheme, kBatch).first, DefaultLevels(d.scheme, kBatch).second}) {
      const auto plan = PlanStep(scheme, layers, buckets, std::vector<double>(layers.size(), level));
      double floats = 0;
      for (const LayerInfo& l : layers) floats += FloatsPerStep(scheme, l.shape, level);
      int64_t bytes = 0;
      std::set<CollectiveKind> kinds;
      for (const PlannedCollective& c : plan) {
        bytes += c.bytes;
        kinds.insert(c.kind);
        EXPECT_EQ(c.tag, ToString(c.kind));
        EXPECT_EQ(c.op, DescriptionOf(c.kind).op);
        EXPECT_EQ(c.after_backward, DescriptionOf(c.kind).after_backward);
        if (c.after_backward) {
          ASSERT_GE(c.after, 0);
          EXPECT_EQ(plan[static_cast<size_t>(c.after)].bucket, c.bucket);
        }
      }
      EXPECT_EQ(static_cast<double>(bytes), 4 * floats) << d.name << " at " << level;
      // ResNet-18 has tensors each scheme compresses and 1-D ones it does
      // not: every collective of the description shows up.
      EXPECT_EQ(kinds, std::set<CollectiveKind>(d.bucket_collectives.begin(), d.bucket_collectives.end()))
          << d.name << " at " << level;
    }
  }
}

TEST(SchemeDescription, NameListsForCommandLines) {
  EXPECT_EQ(SchemeNames(), (std::vector<std::string>{"dense", "powersgd", "topk", "batch", "fp16", "bf16"}));
  EXPECT_EQ(JoinSchemeNames(SchemeSet::kAll, ", ", " or "), "dense, powersgd, topk, batch, fp16 or bf16");
  EXPECT_EQ(JoinSchemeNames(SchemeSet::kWithLevels, "|", "|"), "powersgd|topk|batch");
  for (const std::string& name : SchemeNames(SchemeSet::kWithLevels)) {
    EXPECT_TRUE(DescriptionOf(*ParseScheme(name)).has_levels()) << name;
  }
}

// The groups flags belong to are the description's properties, so the
// rules, help and errors built from them name today's schemes.
TEST(SchemeDescription, FlagGroupsFollowTheDescription) {
  EXPECT_EQ(SchemeNames(SchemeSet::kBatchLevels), (std::vector<std::string>{"batch"}));
  EXPECT_EQ(SchemeNames(SchemeSet::kSparse), (std::vector<std::string>{"topk"}));
  for (const SchemeDescription& d : AllSchemes()) {
    EXPECT_TRUE(InSet(d, SchemeSet::kAll)) << d.name;
    EXPECT_EQ(InSet(d, SchemeSet::kWithLevels), d.has_levels()) << d.name;
    EXPECT_EQ(InSet(d, SchemeSet::kBatchLevels), d.level_kind == LevelKind::kGlobalBatch) << d.name;
    EXPECT_EQ(InSet(d, SchemeSet::kSparse), d.compressor == Compressor::kSparse) << d.name;
  }
  EXPECT_EQ(JoinSchemeTitles(SchemeSet::kWithLevels, ", ", " or "), "PowerSGD, TopK or batch size");
}

// The facts code used to decide by comparing Scheme values: which schemes
// have a compression error (error profile, error proxy, advise), which ones
// AdaQS halves, which one is the dense baseline.
TEST(SchemeDescription, FactsOfErrorsHalvingAndTheBaseline) {
  EXPECT_EQ(SchemeNames(SchemeSet::kCompressing), (std::vector<std::string>{"powersgd", "topk"}));
  EXPECT_EQ(SchemeNames(SchemeSet::kHalvable), (std::vector<std::string>{"powersgd", "topk"}));
  EXPECT_EQ(DescriptionOf(Scheme::kPowerSgd).error_profile_levels, (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(DescriptionOf(Scheme::kTopK).error_profile_levels, (std::vector<double>{0.01, 0.1, 0.25, 0.5, 0.99}));
  int baselines = 0;
  for (const SchemeDescription& d : AllSchemes()) {
    // A profile exactly where there is an error to profile, and only of levels.
    EXPECT_EQ(d.error_profile_levels.empty(), !InSet(d, SchemeSet::kCompressing)) << d.name;
    for (double level : d.error_profile_levels) EXPECT_EQ(LevelProblem(d.scheme, level), "") << d.name << " " << level;
    // Halving the compression doubles a level: only a level that is a rank
    // or a fraction of a compressor's.
    if (d.halvable) {
      EXPECT_NE(d.compressor, Compressor::kNone) << d.name;
      EXPECT_TRUE(d.level_kind == LevelKind::kRank || d.level_kind == LevelKind::kFraction) << d.name;
    }
    if (d.dense_baseline) {
      ++baselines;
      EXPECT_EQ(d.compressor, Compressor::kNone) << d.name;
      EXPECT_FALSE(d.has_levels()) << d.name;
    }
  }
  EXPECT_EQ(baselines, 1);
  EXPECT_EQ(DenseBaselineScheme(), Scheme::kDense);
}

// The exchanges compression has to beat (compare-policies' and advise's
// baselines): no levels and every entry sent, so not batch (levels) nor a
// compressor that drops entries; dense first, then bf16 before fp16 - the
// same bytes, and bfloat16 keeps float32's range.
TEST(SchemeDescription, WholeGradientSchemesSendEveryEntry) {
  EXPECT_EQ(SchemeNames(SchemeSet::kWholeGradient), (std::vector<std::string>{"dense", "fp16", "bf16"}));
  EXPECT_EQ(WholeGradientSchemes(), (std::vector<Scheme>{Scheme::kDense, Scheme::kBf16, Scheme::kFp16}));
  for (const SchemeDescription& d : AllSchemes()) {
    EXPECT_EQ(InSet(d, SchemeSet::kWholeGradient),
              !d.has_levels() && (d.compressor == Compressor::kNone || d.compressor == Compressor::kCast16))
        << d.name;
    if (InSet(d, SchemeSet::kWholeGradient)) {
      EXPECT_FALSE(InSet(d, SchemeSet::kCompressing)) << d.name;
    }
  }
  EXPECT_EQ(UnitRoundoff(WireFormat::kFloat16), 1.0 / 2048);
  EXPECT_EQ(UnitRoundoff(WireFormat::kBFloat16), 1.0 / 256);
  EXPECT_EQ(UnitRoundoff(WireFormat::kFloat32), 1.0 / (1 << 24));
  EXPECT_EQ(ExponentBits(WireFormat::kBFloat16), ExponentBits(WireFormat::kFloat32));
  EXPECT_LT(ExponentBits(WireFormat::kFloat16), ExponentBits(WireFormat::kBFloat16));
}

}  // namespace
}  // namespace accordion
