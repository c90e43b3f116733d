// Pins traces/policy_description.h's table and what the toolkit builds from
// it: names, the fit rule for every scheme and its one wording, the literature
// baseline each scheme is compared with, the labels and the algorithms.
#include "traces/policy_description.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>

#include "analysis/level_policy.h"
#include "analysis/policy_comparison.h"
#include "analysis/results_table.h"
#include "analysis/schedule.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"

namespace accordion {
namespace {

TEST(PolicyDescription, DescribesEveryPolicyOnceAndItsNameRoundTrips) {
  std::set<Policy> policies;
  for (const PolicyDescription& d : AllPolicies()) {
    EXPECT_STREQ(ToString(d.policy), d.name);
    EXPECT_EQ(ParsePolicy(d.name), d.policy) << d.name;
    EXPECT_EQ(&DescriptionOf(d.policy), &d);
    policies.insert(d.policy);
  }
  EXPECT_EQ(policies, (std::set<Policy>{Policy::kStatic, Policy::kAccordion, Policy::kAdaqs, Policy::kSmith}));
  EXPECT_EQ(PolicyNames(), (std::vector<std::string>{"static", "accordion", "adaqs", "smith"}));
  EXPECT_EQ(JoinPolicyNames(", ", " or "), "static, accordion, adaqs or smith");
  EXPECT_FALSE(ParsePolicy("AdaQS"));
  EXPECT_STREQ(ToString(static_cast<Policy>(99)), "unknown");
  EXPECT_THROW(DescriptionOf(static_cast<Policy>(99)), std::logic_error);
  EXPECT_STREQ(DescriptionOf(Policy::kSmith).title, "Smith et al.");
  EXPECT_STREQ(DescriptionOf(Policy::kAdaqs).title, "AdaQS");
}

TEST(PolicyDescription, FitRuleForEveryScheme) {
  const std::map<Policy, std::set<Scheme>> fits = {
      {Policy::kStatic,
       {Scheme::kDense, Scheme::kPowerSgd, Scheme::kTopK, Scheme::kBatch, Scheme::kFp16, Scheme::kBf16}},
      {Policy::kAccordion, {Scheme::kPowerSgd, Scheme::kTopK, Scheme::kBatch}},
      {Policy::kAdaqs, {Scheme::kPowerSgd, Scheme::kTopK}},
      {Policy::kSmith, {Scheme::kBatch}},
  };
  for (const PolicyDescription& p : AllPolicies()) {
    for (const SchemeDescription& s : AllSchemes()) {
      const std::string problem = PolicyFitProblem(p.policy, s.scheme);
      EXPECT_EQ(problem.empty(), fits.at(p.policy).count(s.scheme) == 1) << p.name << " on " << s.name;
      // The one wording: the policy, why, what it needs and what it got.
      if (!problem.empty()) {
        EXPECT_EQ(problem.rfind(std::string("policy ") + p.name + " " + p.needs + ": it needs the ", 0), 0u) << problem;
        EXPECT_NE(problem.find(std::string("not ") + s.name), std::string::npos) << problem;
      }
    }
  }
  EXPECT_EQ(PolicyFitProblem(Policy::kAdaqs, Scheme::kBatch),
            "policy adaqs halves a compression: it needs the powersgd or topk scheme, not batch");
  EXPECT_EQ(PolicyFitProblem(Policy::kSmith, Scheme::kTopK),
            "policy smith grows the batch: it needs the batch scheme, not topk");
  EXPECT_EQ(PolicyFitProblem(Policy::kAccordion, Scheme::kDense),
            "policy accordion chooses levels: it needs the powersgd, topk or batch scheme, not dense");
}

// The GUI and the report show Accordion against the literature's policy for
// the scheme; compare-policies derives the same pair by default.
TEST(PolicyDescription, BaselinePairingFollowsTheFitRule) {
  EXPECT_EQ(BaselinePolicyFor(Scheme::kBatch), Policy::kSmith);
  EXPECT_EQ(BaselinePolicyFor(Scheme::kPowerSgd), Policy::kAdaqs);
  EXPECT_EQ(BaselinePolicyFor(Scheme::kTopK), Policy::kAdaqs);
  EXPECT_EQ(BaselinePolicyFor(Scheme::kDense), std::nullopt);
  EXPECT_EQ(DefaultPolicies(Scheme::kBatch), (std::vector<Policy>{Policy::kAccordion, Policy::kSmith}));
  EXPECT_EQ(DefaultPolicies(Scheme::kTopK), (std::vector<Policy>{Policy::kAccordion, Policy::kAdaqs}));
  EXPECT_TRUE(DefaultPolicies(Scheme::kDense).empty());
}

TEST(PolicyDescription, LevelsMoveAsTheLabelsSay) {
  EXPECT_EQ(PolicyLabel(Policy::kAccordion, Scheme::kPowerSgd, 2, 1), "Accordion rank 2 / rank 1");
  EXPECT_EQ(PolicyLabel(Policy::kAdaqs, Scheme::kPowerSgd, 4, 1), "AdaQS rank 1 -> rank 4");
  EXPECT_EQ(PolicyLabel(Policy::kSmith, Scheme::kBatch, 128, 1024), "Smith et al. batch 128 -> batch 1024");
  EXPECT_EQ(PolicyLabel(Policy::kStatic, Scheme::kPowerSgd, 2, 2), "static rank 2");
  EXPECT_EQ(SettingName(Scheme::kPowerSgd, Policy::kStatic, 2, 2), "rank 2");
  EXPECT_EQ(SettingName(Scheme::kPowerSgd, Policy::kAdaqs, 4, 1), "AdaQS (rank 1 -> rank 4)");
  EXPECT_TRUE(DescriptionOf(Policy::kStatic).one_level());
  for (const PolicyDescription& d : AllPolicies()) {
    EXPECT_EQ(d.steps(), d.literature_baseline) << d.name;  // the two baselines step between the ends
    EXPECT_EQ(d.one_level(), d.policy == Policy::kStatic) << d.name;
  }
  EXPECT_EQ(PolicyName(Policy::kSmith), "Smith et al.");
}

// What a trace must carry for each policy.
TEST(PolicyDescription, SignalsAndSchemaVersions) {
  for (const PolicyDescription& d : AllPolicies()) {
    EXPECT_EQ(d.min_schema_version, d.literature_baseline ? 4 : 1) << d.name;
    EXPECT_EQ(d.reads_gradient_moments, d.policy == Policy::kAdaqs) << d.name;
    EXPECT_EQ(d.critical_regimes, d.policy == Policy::kAccordion) << d.name;
  }
  const std::string help = PolicyHelp();
  for (const std::string& name : PolicyNames()) EXPECT_NE(help.find(name), std::string::npos) << name;
  EXPECT_NE(help.find("adaqs (powersgd or topk): "), std::string::npos) << help;
  EXPECT_NE(help.find("smith (batch): "), std::string::npos) << help;
}

// Each adaptive policy's algorithm is the one its row names; the fit rule
// guards it.
TEST(PolicyDescription, MakeLevelPolicyBuildsEachAlgorithm) {
  PolicyInputs in;
  in.num_layers = 3;
  in.accordion = AccordionOptions().level_low(2).level_high(1);
  for (const PolicyDescription& d : AllPolicies()) {
    in.scheme = d.policy == Policy::kSmith ? Scheme::kBatch : Scheme::kPowerSgd;
    if (d.policy == Policy::kSmith) in.accordion = AccordionOptions().level_low(128).level_high(1024);
    if (!HasAlgorithm(d.policy)) {
      EXPECT_TRUE(d.one_level()) << d.name;
      EXPECT_THROW(MakeLevelPolicy(d.policy, in), InputError) << d.name;
      continue;
    }
    const auto policy = MakeLevelPolicy(d.policy, in);
    EXPECT_EQ(policy->kind(), d.policy) << d.name;
    // Accordion per layer; the baselines for the whole model.
    EXPECT_EQ(policy->num_groups(), d.critical_regimes ? 3 : 1) << d.name;
  }
  in.scheme = Scheme::kBatch;
  try {
    MakeLevelPolicy(Policy::kAdaqs, in);
    ADD_FAILURE() << "adaqs on batch";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), PolicyFitProblem(Policy::kAdaqs, Scheme::kBatch));
  }
}

}  // namespace
}  // namespace accordion
