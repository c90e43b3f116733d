// Every policy projected onto a cluster, and the level advisor, on real
// recorded traces: the reproduction's seed-1 AdaQS (PowerSGD) and Smith
// (batch) runs of the Fashion-MNIST MLP (schema v4: gradient moments and
// the error profile).
#include "simulator/policy_projection.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/errors.h"
#include "common/number_format.h"
#include "tests/support/run_command.h"

namespace accordion::sim {
namespace {

const std::string kPolicies = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/policies/seed-1/";
const std::string kAdaqs = kPolicies + "fmnist-mlp-powersgd-adaqs.trace";
const std::string kSmith = kPolicies + "fmnist-mlp-batch-smith.trace";
const std::string kV3 = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-powersgd-accordion.trace";

// The α-β model: fast, and the same for every schedule.
ReplayOptions At(double gbps) {
  PlatformSpec platform;
  platform.bandwidth_Bps = BytesPerSecondFromGbps(gbps);
  return ReplayOptions().platform(platform).timing(TimingSource::kAnalytic).anchor(false);
}

TEST(ProjectPolicies, EveryRowIsTheEnginesOwnProjection) {
  const ReplayInput input = LoadReplayInput(kAdaqs);
  const ProjectedPolicies p = ProjectPolicies(input, At(1), {});
  const std::vector<std::string> names = {"static-low", "static-high", "accordion", "adaqs"};
  ASSERT_EQ(p.comparison.rows.size(), names.size());
  const ReplayResult alone = ReplayEngine(At(1)).Run(input);
  for (size_t i = 0; i < names.size(); ++i) {
    const PolicyRow& row = p.comparison.rows[i];
    EXPECT_EQ(row.name, names[i]);
    ASSERT_TRUE(row.projected_s.has_value()) << row.name;
    EXPECT_GT(*row.projected_s, 0) << row.name;
    ASSERT_TRUE(row.error.has_value()) << row.name;  // the trace profiled PowerSGD's errors
  }
  // The same schedules as a plain replay projects, to the last bit.
  EXPECT_EQ(*p.comparison.rows[0].projected_s, alone.static_low.total.time_s);
  EXPECT_EQ(*p.comparison.rows[2].projected_s, alone.accordion.total.time_s);
  // Floats at the projected worker count: the trace's two here, as recorded.
  EXPECT_NEAR(p.comparison.rows[0].cost.total_floats, alone.static_low.total.payload_bytes / 4, 1);
}

TEST(ProjectPolicies, OnASlowNetworkTimeFollowsTheFloats) {
  const ReplayInput input = LoadReplayInput(kAdaqs);
  const ProjectedPolicies p = ProjectPolicies(input, At(0.001), {Policy::kAdaqs});
  ASSERT_EQ(p.comparison.rows.size(), 3u);
  // 1 Mb/s: communication is nearly all of a step, so fewer floats is less time.
  const PolicyRow &low = p.comparison.rows[0], &high = p.comparison.rows[1], &adaqs = p.comparison.rows[2];
  EXPECT_LT(*high.projected_s, *low.projected_s);
  EXPECT_LE(*high.projected_s, *adaqs.projected_s);
  EXPECT_LE(*adaqs.projected_s, *low.projected_s);
  EXPECT_LE(high.cost.total_floats, adaqs.cost.total_floats);
  EXPECT_LE(adaqs.cost.total_floats, low.cost.total_floats);
  std::ostringstream table;
  WritePolicyTable(p.comparison, table);
  EXPECT_NE(table.str().find("AdaQS rank 1 -> rank 2"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("speedup"), std::string::npos);
}

TEST(ProjectPolicies, SmithOnTheBatchScheme) {
  const ReplayInput input = LoadReplayInput(kSmith);
  const ProjectedPolicies p = ProjectPolicies(input, At(1), {});
  ASSERT_EQ(p.comparison.rows.size(), 4u);
  EXPECT_EQ(p.comparison.rows[3].name, "smith");
  EXPECT_FALSE(p.comparison.rows[3].error.has_value());  // a batch has no compression error
  // Smith's batch grew once, at the decay: fewer floats than batch 128.
  EXPECT_LT(p.comparison.rows[3].cost.total_floats, p.comparison.rows[0].cost.total_floats);
  EXPECT_EQ(p.comparison.rows[3].level_changes, 1);
  EXPECT_THROW(ProjectPolicies(input, At(1), {Policy::kAdaqs}), InputError);
}

TEST(AdviseLevels, PicksTheFastestPairThatKeepsTheCriticalError) {
  const ReplayInput input = LoadReplayInput(kAdaqs);
  const Advice a = AdviseLevels(input, At(0.01), AdvisorOptions().etas({0.3, 0.5}).tolerance(0.1));
  EXPECT_EQ(a.reference, 2);  // the run's level_low
  ASSERT_FALSE(a.candidates.empty());
  // Two etas x every pair of the profiled ranks 1, 2, 4, 8 (low above high).
  EXPECT_EQ(a.candidates.size(), 2u * 6);
  const double limit = a.reference_critical_error * 1.1 + 1e-12;
  bool seen_inadmissible = false;
  for (const AdvisorCandidate& c : a.candidates) {
    EXPECT_GT(c.level_low, c.level_high);
    EXPECT_EQ(c.admissible, c.critical_error <= limit) << c.level_low << "/" << c.level_high;
    EXPECT_EQ(c.projected_s.has_value(), c.admissible);
    if (!c.admissible) seen_inadmissible = true;
    if (c.admissible) {
      EXPECT_FALSE(seen_inadmissible) << "admissible candidates come first";
    }
  }
  ASSERT_TRUE(a.best.has_value());
  for (const AdvisorCandidate& c : a.candidates) {
    if (c.admissible) {
      EXPECT_LE(*a.best->projected_s, *c.projected_s);
    }
  }
  // A pair that keeps rank 2 in critical epochs and compresses more outside
  // them beats static rank 2 on a slow network.
  EXPECT_LT(*a.best->projected_s, a.reference_s);
  std::ostringstream table;
  WriteAdviceTable(a, table);
  EXPECT_NE(table.str().find("not an accuracy guarantee"), std::string::npos);
  EXPECT_NE(table.str().find("advice: --policy accordion --eta"), std::string::npos) << table.str();
  EXPECT_TRUE(AdviceJson(a).at("advice").at("admissible").get<bool>());
}

// Advice saves time or says to stay: against static rank 1 - the reference
// that compresses most - every pair sends more on a slow network, and none
// is recommended ("0.99x faster" was once advice).
TEST(AdviseLevels, NoSettingProjectedSlowerThanTheReferenceIsAdvised) {
  const ReplayInput input = LoadReplayInput(kAdaqs);
  const Advice a = AdviseLevels(input, At(0.01), AdvisorOptions().etas({0.5}).tolerance(10).reference(1));
  ASSERT_FALSE(a.candidates.empty());
  ASSERT_TRUE(a.candidates.front().admissible);
  ASSERT_GE(*a.candidates.front().projected_s, a.reference_s);
  EXPECT_FALSE(a.best.has_value());
  std::ostringstream table;
  WriteAdviceTable(a, table);
  EXPECT_NE(table.str().find("advice: stay at static rank 1: no pair"), std::string::npos) << table.str();
  EXPECT_EQ(table.str().find("faster than static"), std::string::npos) << table.str();
}

// --etas is bounded like a sweep's grid: 100,000 values were once accepted.
TEST(AdviseLevels, TheThresholdsTriedAreBounded) {
  const ReplayInput input = LoadReplayInput(kAdaqs);
  std::vector<double> many(kMaxAdvisorEtas + 1, 0.5);
  try {
    AdviseLevels(input, At(1), AdvisorOptions().etas(many));
    FAIL() << "65 thresholds accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--etas takes 1 to 64 thresholds, got 65"), std::string::npos) << e.what();
  }
  EXPECT_THROW(AdviseLevels(input, At(1), AdvisorOptions().etas({})), InputError);
}

TEST(AdviseLevels, NeedsAnErrorProfileOfACompressingScheme) {
  EXPECT_THROW(AdviseLevels(LoadReplayInput(kV3), At(1), AdvisorOptions()), InputError);  // schema v3
  EXPECT_THROW(AdviseLevels(LoadReplayInput(kSmith), At(1), AdvisorOptions()), InputError);
  const std::string sim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";
  const test_support::CommandResult r = test_support::RunCommand(sim + " advise " + kV3 + " --timing analytic");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error profile"), std::string::npos) << r.err;
  const test_support::CommandResult c =
      test_support::RunCommand(sim + " compare-policies " + kAdaqs + " --timing analytic --format json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("\"policy\": \"adaqs\""), std::string::npos) << c.out;
}

}  // namespace
}  // namespace accordion::sim
