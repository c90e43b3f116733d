// accordion-train under the paper's two baselines: real 2-worker runs under
// AdaQS and Smith et al. whose traces validate and whose offline
// re-derivation (accordion-analyze's) gives the levels each run used, epoch
// by epoch; and the error profile each records at its checks.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "analysis/policy_comparison.h"
#include "analysis/schedule.h"
#include "analysis/trace_view.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::kAnalyze;
using test_support::kQuickRun;
using test_support::ReadTrace;
using test_support::TraceContent;
using test_support::Train;

using TrainPolicies = test_support::TempDirTest;

// The recorded levels equal `derived`'s in every epoch and layer.
void ExpectRecordedLevels(const TraceContent& t, const Schedule& derived) {
  ASSERT_EQ(static_cast<int>(t.epochs.size()), derived.num_epochs());
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    for (size_t l = 0; l < t.layers.size(); ++l) {
      EXPECT_EQ(t.layer_rows[e][l].level, derived.levels[e][l]) << "epoch " << e << " layer " << l;
      EXPECT_EQ(t.layer_rows[e][l].critical, derived.critical[e][l]) << "epoch " << e << " layer " << l;
    }
  }
}

TEST_F(TrainPolicies, AdaqsRunIsReDerivedEpochByEpoch) {
  const std::string trace = Path("adaqs.trace");
  // The MSDR of this run falls a few percent an epoch once it converges:
  // a factor of 1.01 checked every epoch switches where it does.
  const CommandResult r = Train(kQuickRun +
                                " --nproc 2 --epochs 8 --scheme powersgd --policy adaqs --low 4 --high 1 "
                                "--interval 1 --msdr-factor 1.01 --trace-iterations 1 --trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.policy, Policy::kAdaqs);
  EXPECT_EQ(t.run.msdr_factor, 1.01);
  const TraceView view = LoadTraceView(trace);
  const Schedule derived =
      DerivePolicySchedule(view, Scheme::kPowerSgd,
                           PolicySettings()
                               .policy(Policy::kAdaqs)
                               .msdr_factor(1.01)
                               .accordion(AccordionOptions().interval(1).level_low(4).level_high(1)));
  ExpectRecordedLevels(t, derived);
  std::set<double> used;
  for (const auto& row : t.layer_rows) used.insert(row[0].level);
  EXPECT_GT(used.size(), 1u) << "AdaQS should have halved the compression at least once";
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    EXPECT_EQ(t.epochs[e].schedule_lr, 0.05);
    for (const EpochLayerRecord& row : t.layer_rows[e]) {
      EXPECT_GT(row.grad_mean_norm, 0);
      EXPECT_GT(row.grad_std, 0);
      // |E[g]| = |sum| / (steps x ranks): 8 steps of 2 ranks.
      EXPECT_NEAR(row.grad_mean_norm, row.grad_norm / 16, 1e-9 * row.grad_norm);
    }
  }
  // Every check (every epoch here) profiled every layer at ranks 1, 2, 4, 8.
  EXPECT_EQ(view.error_profile.size(), 8 * t.layers.size() * 4);

  const CommandResult schedule =
      test_support::RunCommand(kAnalyze + " schedule " + trace + " --policy adaqs --format json");
  ASSERT_EQ(schedule.exit_code, 0) << schedule.err;
  const nlohmann::json j = nlohmann::json::parse(schedule.out);
  EXPECT_EQ(j.at("policy"), "adaqs");
  for (size_t e = 0; e < t.epochs.size(); ++e) {
    EXPECT_EQ(j.at("epochs")[e].at("levels")[0].get<double>(), t.layer_rows[e][0].level);
  }
  const CommandResult compare = test_support::RunCommand(kAnalyze + " compare-policies " + trace);
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("AdaQS rank 1 -> rank 4"), std::string::npos) << compare.out;
  EXPECT_NE(compare.out.find("Accordion rank 4 / rank 1"), std::string::npos) << compare.out;
}

TEST_F(TrainPolicies, SmithRunGrowsTheBatchWhereTheLrWouldDecay) {
  const std::string trace = Path("smith.trace");
  const CommandResult r = Train(kQuickRun +
                                " --nproc 2 --epochs 6 --scheme batch --policy smith --low 64 --high 256 "
                                "--decay-epochs 2 4 5 --decay-factor 0.5 --trace-iterations 1 --trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  // Decays after epochs 1 and 3 double the batch; the one after epoch 4 is
  // past the cap, so the LR halves instead.
  const int64_t want_batch[] = {64, 64, 128, 128, 256, 256};
  const double want_lr[] = {0.05, 0.05, 0.05, 0.05, 0.05, 0.025};
  for (size_t e = 0; e < 6; ++e) {
    EXPECT_EQ(t.epochs[e].batch_size, want_batch[e]) << "epoch " << e;
    EXPECT_NEAR(t.epochs[e].lr, want_lr[e], 1e-12) << "epoch " << e;
  }
  const TraceView view = LoadTraceView(trace);
  const Schedule derived = DerivePolicySchedule(
      view, Scheme::kBatch,
      PolicySettings().policy(Policy::kSmith).accordion(AccordionOptions().level_low(64).level_high(256)));
  ExpectRecordedLevels(t, derived);
  EXPECT_TRUE(view.error_profile.empty());  // no compression error to profile

  const CommandResult compare = test_support::RunCommand(kAnalyze + " compare-policies " + trace + " --format json");
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("\"smith\""), std::string::npos) << compare.out;
}

TEST_F(TrainPolicies, PoliciesThatDoNotFitTheSchemeAreRefused) {
  const std::pair<std::string, std::string> cases[] = {
      {"--scheme batch --policy adaqs", "--policy adaqs halves a compression"},
      {"--scheme powersgd --policy smith", "--policy smith grows the batch"},
      {"--scheme powersgd --policy adaqs --low 1 --high 2",
       "--low (the level inside critical regimes) must compress no more"},
      {"--scheme powersgd --policy accordion --msdr-factor 3", "--msdr-factor belongs to --policy adaqs"},
      {"--scheme powersgd --policy adaqs --msdr-factor 1", "--msdr-factor"},
  };
  for (const auto& [flags, message] : cases) {
    const CommandResult r = Train(kQuickRun + " --epochs 1 " + flags);
    EXPECT_EQ(r.exit_code, 2) << flags;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags << ": " << r.err;
  }
  // A re-derivation that needs what a trace lacks (a schema v3 sample has
  // no gradient moments): exit 2, naming the statistic.
  const std::string v3 = std::string(ACCORDION_SOURCE_DIR) + "/traces/samples/fmnist-mlp-powersgd-static-1.trace";
  const CommandResult r = test_support::RunCommand(kAnalyze + " schedule " + v3 + " --policy adaqs");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("grad_mean_norm"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  // The same trace still derives Accordion, and compares without AdaQS.
  EXPECT_EQ(test_support::RunCommand(kAnalyze + " schedule " + v3).exit_code, 0);
  const CommandResult compare = test_support::RunCommand(kAnalyze + " compare-policies " + v3);
  EXPECT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("note: policy adaqs reads"), std::string::npos) << compare.out;
}

}  // namespace
}  // namespace accordion
