// Every policy projected onto a cluster, and the level advisor, on real
// recorded traces: the reproduction's seed-1 AdaQS (PowerSGD), Accordion
// (PowerSGD) and Smith (batch) runs of the Fashion-MNIST MLP (schema v4:
// gradient moments and the error profile); and the whole-gradient
// exchanges (dense, the 16-bit casts) both weigh compression against.
#include "simulator/policy_projection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/number_format.h"
#include "tests/support/run_command.h"

namespace accordion::sim {
namespace {

const std::string kPolicies = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/policies/seed-1/";
const std::string kAdaqs = kPolicies + "fmnist-mlp-powersgd-adaqs.trace";
const std::string kSmith = kPolicies + "fmnist-mlp-batch-smith.trace";
const std::string kAccordion = kPolicies + "fmnist-mlp-powersgd-accordion.trace";
const std::string kDense = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-dense.trace";
const std::string kSim = std::string(ACCORDION_BIN_DIR) + "/accordion-sim";
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

// The whole-gradient rows: each the replay engine's projection under its
// scheme on the same cluster, a cast's wire bytes exactly half of dense's,
// dense exact, a cast's rounding not passed off as a measured error; the
// ratio to dense in every row, and the fastest named. The explorer's table
// (kOmit, the default) is unchanged.
TEST(ProjectPolicies, WholeGradientRowsAreProjectedUnderTheirSchemes) {
  const ReplayInput input = LoadReplayInput(kAccordion);
  const ReplayOptions options = At(25).workers(64);
  EXPECT_TRUE(ProjectPolicies(input, options, {}).comparison.whole_gradient.empty());
  const ProjectedPolicies p = ProjectPolicies(input, options, {}, WholeGradientRows::kProject);
  const PolicyComparison& c = p.comparison;
  ASSERT_EQ(c.rows.size(), 4u);
  ASSERT_EQ(c.whole_gradient.size(), 3u);
  const std::vector<std::string> names = {"dense", "bf16", "fp16"}, labels = {"dense", "bf16 cast", "fp16 cast"};
  for (size_t i = 0; i < names.size(); ++i) {
    const PolicyRow& row = c.whole_gradient[i];
    EXPECT_EQ(row.name, names[i]);
    EXPECT_EQ(row.label, labels[i]);
    ASSERT_TRUE(row.whole_gradient.has_value());
    EXPECT_EQ(ToString(*row.whole_gradient), names[i]);
    EXPECT_EQ(row.level_changes, 0);
    ASSERT_TRUE(row.projected_s.has_value());
    // The engine's own projection under that scheme, to the last bit.
    const ReplayResult alone = ReplayEngine(ReplayOptions(options).scheme(*row.whole_gradient)).Run(input);
    EXPECT_EQ(*row.projected_s, alone.static_low.total.time_s) << row.name;
    EXPECT_EQ(row.cost.total_floats, alone.static_low.total.payload_bytes / 4) << row.name;
  }
  const PolicyRow &dense = c.whole_gradient[0], &bf16 = c.whole_gradient[1], &fp16 = c.whole_gradient[2];
  ASSERT_EQ(c.dense(), &dense);
  // 16 bits on the wire: exactly half of dense's bytes, the same for both casts.
  EXPECT_EQ(bf16.cost.total_floats * 2, dense.cost.total_floats);
  EXPECT_EQ(fp16.cost.total_floats, bf16.cost.total_floats);
  // Every gradient: more than any compressed schedule sends.
  for (const PolicyRow& row : c.rows) EXPECT_LT(row.cost.total_floats, bf16.cost.total_floats) << row.name;
  ASSERT_TRUE(dense.error.has_value());
  EXPECT_EQ(dense.error->mean, 0);
  EXPECT_FALSE(bf16.error.has_value());
  EXPECT_FALSE(fp16.error.has_value());

  std::ostringstream json_text;
  WritePolicyJson(c, json_text);
  const nlohmann::json j = nlohmann::json::parse(json_text.str());
  ASSERT_EQ(j.at("policies").size(), 4u);
  ASSERT_EQ(j.at("whole_gradient").size(), 3u);
  for (const char* list : {"policies", "whole_gradient"}) {
    for (const nlohmann::json& r : j.at(list)) {
      EXPECT_DOUBLE_EQ(r.at("speedup_vs_dense").get<double>(), *dense.projected_s / r.at("projected_s").get<double>())
          << r.at("policy");
    }
  }
  EXPECT_EQ(j.at("whole_gradient")[1].at("unit_roundoff").get<double>(), 1.0 / 256);  // bf16
  EXPECT_EQ(j.at("whole_gradient")[1].at("error_proxy"), nullptr);
  EXPECT_EQ(j.at("fastest"), c.fastest()->name);

  std::ostringstream table;
  WritePolicyTable(c, table);
  const std::string t = table.str();
  EXPECT_NE(t.find("vs dense"), std::string::npos) << t;
  EXPECT_NE(t.find("\nbf16 cast "), std::string::npos) << t;
  EXPECT_NE(t.find("note: the 16-bit casts' rounding is not profiled"), std::string::npos) << t;
  // At 25 Gb/s on 64 workers every collective's latency counts: PowerSGD's
  // three a bucket lose to one cast all-reduce (measured: 16.0 s against 46.3 s).
  ASSERT_TRUE(c.fastest()->whole_gradient.has_value()) << t;
  EXPECT_NE(t.find("fastest: bf16 cast, "), std::string::npos) << t;

  std::ostringstream csv;
  WritePolicyCsv(c, csv);
  EXPECT_NE(csv.str().find("\nfp16,\"fp16 cast\",fp16,"), std::string::npos) << csv.str();
}

// A dense trace has no levels for a policy: the whole-gradient rows alone,
// and a note saying what the policies need; without them, as before, a refusal.
TEST(ProjectPolicies, ATraceWithoutLevelsComparesTheWholeGradientRows) {
  const ReplayInput input = LoadReplayInput(kDense);
  EXPECT_THROW(ProjectPolicies(input, At(25), {}), InputError);
  const ProjectedPolicies p = ProjectPolicies(input, At(25), {}, WholeGradientRows::kProject);
  EXPECT_TRUE(p.comparison.rows.empty());
  ASSERT_EQ(p.comparison.whole_gradient.size(), 3u);
  std::ostringstream table;
  WritePolicyTable(p.comparison, table);
  EXPECT_NE(table.str().find("note: the policies choose levels, and dense has none"), std::string::npos) << table.str();
  EXPECT_EQ(table.str().find("vs low"), std::string::npos) << table.str();  // nothing to hold against static low
  const test_support::CommandResult r =
      test_support::RunCommand(kSim + " compare-policies " + kDense + " --timing analytic --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("policies").empty());
  EXPECT_EQ(j.at("whole_gradient").size(), 3u);
}

// The commands a user runs on the committed trace (issue 48): on 64 workers
// at 25 Gb/s, sending bf16 casts beats every compressed setting, and the
// advice says so, with the rate below which compression would pay; on a
// 10 Mb/s link compression wins and the advice is a compressed setting,
// with how much faster it is than the casts.
TEST(AdviseLevels, AdvisesNotToCompressWhereAWholeGradientExchangeIsFaster) {
  const std::string fast = kSim + " advise " + kAccordion + " --workers 64 --bandwidth-gbps 25 --timing analytic";
  const test_support::CommandResult table = test_support::RunCommand(fast);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("advice: don't compress - send bf16 casts (--scheme bf16): static rank 2's "),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("break-even: compression pays below "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(fp16 sends the same bytes with finer rounding"), std::string::npos) << table.out;
  const test_support::CommandResult json = test_support::RunCommand(fast + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("advice").at("kind"), "whole-gradient");
  EXPECT_EQ(j.at("advice").at("scheme"), "bf16");
  EXPECT_GT(j.at("advice").at("speedup_vs_best_compressed").get<double>(), 1 + kExactnessMargin);
  ASSERT_TRUE(j.at("break_even_gbps").is_number()) << j.dump(1);
  EXPECT_LT(j.at("break_even_gbps").get<double>(), 25);
  EXPECT_TRUE(j.at("break_even").at("compression_below").get<bool>());
  // The casts send the same bytes; dense twice theirs.
  const nlohmann::json& whole = j.at("whole_gradient");
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0].at("payload_bytes").get<double>(), 2 * whole[1].at("payload_bytes").get<double>());
  EXPECT_EQ(whole[1].at("payload_bytes").get<double>(), whole[2].at("payload_bytes").get<double>());

  const test_support::CommandResult slow = test_support::RunCommand(
      kSim + " advise " + kAccordion + " --workers 64 --bandwidth-gbps 0.01 --timing analytic --format json");
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  const nlohmann::json s = nlohmann::json::parse(slow.out);
  EXPECT_NE(s.at("advice").at("kind"), "whole-gradient") << s.at("advice");
  EXPECT_GT(s.at("advice").at("speedup_vs_whole_gradient").get<double>(), 1 + kExactnessMargin);
  // The same crossing, seen from the other side.
  ASSERT_TRUE(s.at("break_even_gbps").is_number());
  EXPECT_GT(s.at("break_even_gbps").get<double>(), 0.01);
  const test_support::CommandResult slow_table = test_support::RunCommand(
      kSim + " advise " + kAccordion + " --workers 64 --bandwidth-gbps 0.01 --timing analytic");
  EXPECT_NE(slow_table.out.find("advice: --policy accordion --eta"), std::string::npos) << slow_table.out;
  EXPECT_NE(slow_table.out.find("faster than bf16 cast, the fastest whole-gradient exchange"), std::string::npos)
      << slow_table.out;
}

// At the break-even rate both sides take the same time, to within what the
// bisection's 1 % bracket allows, and just below and above it the faster
// side changes as the result says.
TEST(BreakEvenBandwidth, BothSidesTakeTheSameTimeThere) {
  const ReplayInput input = LoadReplayInput(kAccordion);
  const ReplayOptions compressed = At(25).workers(64).eta(0.7).level_low(8).level_high(4);
  const BreakEven b = BreakEvenBandwidth(input, compressed);
  ASSERT_TRUE(b.gbps.has_value());
  EXPECT_TRUE(b.compression_below);
  EXPECT_EQ(b.workers, 64);
  EXPECT_EQ(b.timing, TimingSource::kAnalytic);
  EXPECT_GT(*b.gbps, 0.01);
  EXPECT_LT(*b.gbps, 25);
  EXPECT_NEAR(b.compressed_s / b.whole_s, 1, 0.01) << b.compressed_s << " s against " << b.whole_s << " s";
  auto margin = [&](double gbps) {  // compressed over the fastest whole-gradient time
    PlatformSpec platform = compressed.platform();
    platform.bandwidth_Bps = BytesPerSecondFromGbps(gbps);
    const ReplayOptions at = ReplayOptions(compressed).platform(platform);
    double whole = INFINITY;
    for (Scheme s : WholeGradientSchemes()) whole = std::min(whole, ProjectWholeGradient(input, at, s).total.time_s);
    return ReplayEngine(at).Run(input).accordion.total.time_s / whole;
  };
  EXPECT_LT(margin(*b.gbps / 1.05), 1);
  EXPECT_GT(margin(*b.gbps * 1.05), 1);
}

// No crossing in the range: said, not invented - compression slower at
// every rate from 5 to 50 Gb/s, faster at every rate from 1 to 10 Mb/s.
TEST(BreakEvenBandwidth, NoCrossingInTheRangeIsNone) {
  const ReplayInput input = LoadReplayInput(kAccordion);
  const ReplayOptions compressed = At(25).workers(64).eta(0.7).level_low(8).level_high(4);
  const BreakEven fast = BreakEvenBandwidth(input, compressed, BreakEvenOptions().min_gbps(5).max_gbps(50));
  EXPECT_FALSE(fast.gbps.has_value());
  EXPECT_FALSE(fast.compression_below);
  const BreakEven slow = BreakEvenBandwidth(input, compressed, BreakEvenOptions().min_gbps(0.001).max_gbps(0.01));
  EXPECT_FALSE(slow.gbps.has_value());
  EXPECT_TRUE(slow.compression_below);
  EXPECT_THROW(BreakEvenBandwidth(input, compressed, BreakEvenOptions().min_gbps(10).max_gbps(1)), InputError);

  const Advice a = AdviseLevels(input, At(25).workers(64),
                                AdvisorOptions().etas({0.7}).break_even(BreakEvenOptions().min_gbps(5).max_gbps(50)));
  ASSERT_TRUE(a.break_even.has_value());
  EXPECT_FALSE(a.break_even->gbps.has_value());
  std::ostringstream table;
  WriteAdviceTable(a, table);
  EXPECT_NE(table.str().find("break-even: none - compression (" + a.CompressedLabel() +
                             ") is slower than every whole-gradient exchange at every rate from 5 to 50 Gb/s"),
            std::string::npos)
      << table.str();
  EXPECT_TRUE(AdviceJson(a).at("break_even_gbps").is_null());
}

// The advice is the most exact setting within 1 % of the fastest: dense,
// then bf16 (before fp16: the same bytes, float32's range), then the best
// compressed setting - at every rate, whichever wins there.
TEST(AdviseLevels, TheMostExactSettingWithinOnePercentOfTheFastest) {
  const ReplayInput input = LoadReplayInput(kAccordion);
  for (double gbps : {0.01, 1.0, 25.0, 10000.0}) {
    const Advice a = AdviseLevels(input, At(gbps).workers(64), AdvisorOptions().etas({0.7}).break_even(std::nullopt));
    EXPECT_FALSE(a.break_even.has_value());
    ASSERT_EQ(a.whole_gradient.size(), 3u);
    EXPECT_EQ(ToString(a.whole_gradient[1].scheme), std::string("bf16"));
    double fastest = a.compressed_s();
    for (const WholeGradientTime& w : a.whole_gradient) fastest = std::min(fastest, w.projected_s);
    std::string want = a.best ? "accordion" : "static";
    for (const WholeGradientTime& w : a.whole_gradient) {
      if (w.projected_s <= fastest * 1.01) {
        want = ToString(w.scheme);
        break;
      }
    }
    const std::string got = a.kind == AdviceKind::kWholeGradient ? ToString(a.whole_gradient_scheme) : ToString(a.kind);
    EXPECT_EQ(got, want) << gbps << " Gb/s";
    if (gbps == 10000.0) {
      // Bytes cost nothing: a cast saves too little to give up exactness.
      EXPECT_EQ(got, "dense");
    }
    if (gbps == 0.01) {
      // Bytes cost everything: compression.
      EXPECT_TRUE(got == "accordion" || got == "static") << got;
    }
  }
}

}  // namespace
}  // namespace accordion::sim
