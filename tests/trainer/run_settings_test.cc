// The run settings' one table (analysis/run_settings.h) and what both
// writers derive from it: accordion-train's flags and ConfigJson, the hook's
// keywords and digest, the checks in either vocabulary, an old trace's
// configuration read back.
#include "analysis/run_settings.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "analysis/trace_view.h"
#include "common/errors.h"
#include "trainer/train_options.h"

namespace accordion {
namespace {

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunSettings, EveryFieldHasAKeywordAKeyAndAFlagOfItsOwn) {
  std::set<std::string> keywords, keys, flags;
  for (const RunSettingField& f : RunSettingFields()) {
    EXPECT_TRUE(keywords.insert(f.keyword).second) << f.keyword;
    EXPECT_TRUE(keys.insert(f.key).second) << f.key;
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_FALSE(f.help.empty()) << f.keyword;
  }
}

TEST(RunSettings, AccordionTrainRegistersEveryFieldsFlagWithItsHelp) {
  CLI::App app;
  TrainOptions o;
  AddTrainFlags(app, o);
  for (const RunSettingField& f : RunSettingFields()) {
    const CLI::Option* option = app.get_option_no_throw(f.flag);
    ASSERT_NE(option, nullptr) << f.flag;
    // Help may add the per-scheme defaults after the field's sentence.
    EXPECT_EQ(option->get_description().rfind(f.help, 0), 0u) << f.flag << ": " << option->get_description();
  }
}

TEST(RunSettings, BothWritersRecordTheSameKeysInTheSameForms) {
  TrainOptions o;
  o.scheme = "topk";
  o.policy = "accordion";
  o.low = 0.5;
  o.high = 0.05;
  o.topk_error_feedback = false;
  o.bucket_mb = 12.5;
  o.no_network_probe = true;
  const nlohmann::json train = nlohmann::json::parse(ConfigJson(o));
  const nlohmann::json hook = RecordedSettingsJson(RunSettingsOf(o));
  for (const auto& [key, value] : hook.items()) {
    ASSERT_TRUE(train.contains(key)) << key;
    EXPECT_EQ(train[key], value) << key;
  }
  EXPECT_EQ(hook["topk_error_feedback"], "off");
  EXPECT_EQ(hook["no_network_probe"], true);
  EXPECT_EQ(hook["bucket_mb"], 12.5);
  EXPECT_EQ(hook["level_low"], 0.5);
}

TEST(RunSettings, AnOldHookTracesConfigurationReadsThroughTheTable) {
  // The hook wrote topk_error_feedback as a boolean before November 2026;
  // a reader that wanted "on"/"off" took false for on.
  const RunSettings old = SettingsFromConfig(R"({"scheme":"topk","topk_error_feedback":false,"bucket_mb":4})");
  EXPECT_EQ(old.scheme.scheme(), Scheme::kTopK);
  EXPECT_FALSE(old.scheme.topk_error_feedback());
  EXPECT_EQ(BucketBytesOf(old), 4 * 1024 * 1024);
  EXPECT_FALSE(SettingsFromConfig(R"({"topk_error_feedback":"off"})").scheme.topk_error_feedback());
  // What no writer wrote keeps the default; so does a configuration that is no JSON.
  const RunSettings odd = SettingsFromConfig(R"({"eta":"high","interval":3,"mine":1})");
  EXPECT_EQ(odd.eta, RunSettings().eta);
  EXPECT_EQ(odd.interval, 3);
  EXPECT_EQ(SettingsFromConfig("not json").interval, RunSettings().interval);
}

TEST(RunSettings, AHookTracesTopKChoicesReadAsRecorded) {
  RunInfo run;
  run.scheme = Scheme::kTopK;
  run.config_json = R"({"scheme":"topk","topk_error_feedback":false,"topk_dense_vectors":true})";
  const CommunicationScheme recorded = RecordedScheme(run, Scheme::kTopK);
  EXPECT_FALSE(recorded.topk_error_feedback());
  EXPECT_TRUE(recorded.topk_dense_vectors());
  // Another scheme than the run's takes its defaults.
  EXPECT_TRUE(RecordedScheme(run, Scheme::kPowerSgd).topk_error_feedback());
}

TEST(RunSettings, KeywordsAreCheckedForKindAndBoundsInOneWording) {
  RunSettings s;
  EXPECT_EQ(ErrorOf([&] { SetKeyword(s, "interval", 0); }), "interval must be from 1 to 2147483647 epochs, not 0");
  EXPECT_EQ(ErrorOf([&] { SetKeyword(s, "interval", 2.5); }), "interval must be a whole number, not 2.5");
  EXPECT_EQ(ErrorOf([&] { SetKeyword(s, "network_probe", "yes"); }), "network_probe must be a boolean, not 'yes'");
  EXPECT_EQ(ErrorOf([&] { SetKeyword(s, "bucket_mb", 0); }).rfind("bucket_mb must be above 0", 0), 0u);
  EXPECT_NE(ErrorOf([&] { SetKeyword(s, "scheme", "gzip"); }).find("unknown scheme 'gzip'"), std::string::npos);
  SetKeyword(s, "network_probe", false);
  EXPECT_FALSE(s.network_probe);
  EXPECT_EQ(RecordedSettingsJson(s)["no_network_probe"], true);
  // The one conversion of a bucket's MiB: to the nearest byte, at least one.
  SetKeyword(s, "bucket_mb", 12.5);
  EXPECT_EQ(BucketBytesOf(s), 13107200);
  SetKeyword(s, "bucket_mb", 1e-9);
  EXPECT_EQ(BucketBytesOf(s), 1);
}

TEST(RunSettings, ChecksSpeakTheCallersVocabulary) {
  RunSettings s;
  s.policy = Policy::kAdaqs;
  const std::string flags = ErrorOf([&] { CheckRunSettings(s, SettingVocabulary::kFlags); });
  const std::string keywords = ErrorOf([&] { CheckRunSettings(s, SettingVocabulary::kKeywords); });
  EXPECT_EQ(flags.rfind("--policy adaqs halves a compression", 0), 0u) << flags;
  EXPECT_EQ(keywords.rfind("policy adaqs halves a compression", 0), 0u) << keywords;
  s = RunSettings();
  s.msdr_factor = 1;
  EXPECT_EQ(ErrorOf([&] { CheckRunSettings(s, SettingVocabulary::kFlags); }),
            "--msdr-factor must be above 1 and at most 1e+06, not 1");
  s = RunSettings();
  s.scheme = Scheme::kPowerSgd;
  s.policy = Policy::kAccordion;
  s.level_low = 1;
  s.level_high = 2;  // the critical regimes would compress more
  EXPECT_NE(ErrorOf([&] { CheckRunSettings(s, SettingVocabulary::kKeywords); }).find("low (the level inside"),
            std::string::npos);
  s.level_low = s.level_high = 2;
  EXPECT_EQ(ErrorOf([&] { CheckRunSettings(s, SettingVocabulary::kKeywords); }), "");
}

TEST(RunSettings, RanksCompareWhatShapesTheirCollectivesOnly) {
  RunSettings a, b;
  b.epochs = 7;             // the writer's
  b.sample_iterations = 0;  // the writer's
  b.batch_size = 64;        // the writer's
  EXPECT_EQ(SharedSettingsDigest(a), SharedSettingsDigest(b));
  b.seed = 2;
  EXPECT_NE(SharedSettingsDigest(a), SharedSettingsDigest(b));
  EXPECT_TRUE(SharedSettingsDigest(a).contains("network_probe"));
}

TEST(RunSettings, TheRunRowOfABatchRunStartsAtItsLowLevel) {
  RunSettings s;
  s.scheme = Scheme::kBatch;
  s.level_low = 256;
  s.level_high = 1024;
  s.batch_size = 128;
  RunInfo run;
  FillRunInfo(s, run);
  EXPECT_EQ(run.batch_size, 256);
  EXPECT_EQ(run.scheme, Scheme::kBatch);
  EXPECT_EQ(run.msdr_factor, kDefaultMsdrFactor);
}

}  // namespace
}  // namespace accordion
