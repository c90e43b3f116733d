#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "tests/support/synthetic_trace.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_writer.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/train_options.h"

namespace accordion {
namespace {

TrainOptions Synthetic() {
  TrainOptions o;
  o.dataset = "synthetic";
  return o;
}

// Synthetic() with one change.
template <typename Change>
TrainOptions With(Change change) {
  TrainOptions o = Synthetic();
  change(o);
  return o;
}

void ExpectRefused(const TrainOptions& o, const std::string& fragment) {
  try {
    ValidateOptions(o);
    ADD_FAILURE() << "accepted; expected an error about " << fragment;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TrainOptions, LevelsFollowSchemeAndPolicy) {
  TrainOptions o = Synthetic();
  o.scheme = "powersgd";
  LevelPlan p = LevelsOf(o);
  EXPECT_EQ(p.low, 2);
  EXPECT_EQ(p.high, 2);  // static: one level, the scheme's low by default
  o.policy = "accordion";
  p = LevelsOf(o);
  EXPECT_EQ(p.low, 2);
  EXPECT_EQ(p.high, 1);
  o.scheme = "topk";
  o.low = 0.5;
  p = LevelsOf(o);
  EXPECT_EQ(p.low, 0.5);
  EXPECT_EQ(p.high, 0.1);
  EXPECT_NO_THROW(ValidateOptions(o));
}

TEST(TrainOptions, AModelFileIsAPathEndingInPtOrHoldingASlash) {
  for (const char* file : {"net.pt", "./net", "models/net.ts", "/abs/net.pt"}) EXPECT_TRUE(IsModelFile(file)) << file;
  for (const char* name : {"mlp", "resnet18", "vgg", ".pt", "net.pth"}) EXPECT_FALSE(IsModelFile(name)) << name;
  EXPECT_EQ(ModelLabel("mlp"), "mlp");
  EXPECT_EQ(ModelLabel("/data/models/net.pt"), "torchscript:net.pt");
  EXPECT_EQ(ModelLabel("net.pt"), "torchscript:net.pt");
  // The flag takes a path (no fixed choices); ConfigJson keeps it as given.
  TrainOptions o;
  CLI::App app;
  AddTrainFlags(app, o);
  EXPECT_NO_THROW(app.parse(std::vector<std::string>{"/data/models/net.pt", "--model"}));
  EXPECT_EQ(o.model, "/data/models/net.pt");
  EXPECT_EQ(nlohmann::json::parse(ConfigJson(o)).at("model"), "/data/models/net.pt");
}

TEST(TrainOptions, AModelFileMustBeAReadableFileAndTakesAnyDataset) {
  const std::string dir = test_support::MakeTempDir("model-file");
  std::ofstream(dir + "/net.pt") << "checked by LibTorch, later";
  ExpectRefused(With([&](TrainOptions& o) { o.model = dir + "/missing.pt"; }), "no such file");
  ExpectRefused(With([&](TrainOptions& o) { o.model = dir; }), "is a directory");
  ExpectRefused(With([&](TrainOptions& o) { o.model = "/dev/null/"; }), "--model /dev/null/");
  EXPECT_NO_THROW(ValidateOptions(With([&](TrainOptions& o) { o.model = dir + "/net.pt"; })));
  // Unlike mlp, a model file may read text; unlike lstm, it may read images.
  std::ofstream(dir + "/words.txt") << test_support::ReadFile(ACCORDION_SOURCE_DIR "/README.md");
  EXPECT_NO_THROW(ValidateOptions(With([&](TrainOptions& o) {
    o.model = dir + "/net.pt";
    o.dataset = "tokens";
    o.data_file = dir + "/words.txt";
  })));
  ExpectRefused(With([&](TrainOptions& o) {
                  o.model = dir + "/net.pt";
                  o.dataset = "tokens";
                  o.data_file = dir + "/words.txt";
                  o.augment = true;
                }),
                "--augment crops and flips images; --dataset tokens is text");
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, RefusesBadConfigurations) {
  ExpectRefused(With([](TrainOptions& o) { o.model = "vgg"; }), "unknown model");
  ExpectRefused(With([](TrainOptions& o) { o.scheme = "gradient-dropping"; }), "unknown scheme");
  ExpectRefused(With([](TrainOptions& o) { o.epochs = 0; }), "--epochs");
  ExpectRefused(With([](TrainOptions& o) {
                  o.batch_size = 30;
                  o.nproc = 4;
                }),
                "split evenly");
  ExpectRefused(With([](TrainOptions& o) { o.policy = "accordion"; }), "--policy accordion chooses levels");
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "powersgd";
                  o.level = 1.5;
                }),
                "PowerSGD rank");
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "topk";
                  o.level = 2;
                }),
                "TopK fraction");
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "topk";
                  o.low = 0.5;
                }),
                "--low and --high");
  ExpectRefused(With([](TrainOptions& o) {
                  o.nesterov = true;
                  o.momentum = 0;
                }),
                "--nesterov");
  ExpectRefused(With([](TrainOptions& o) {
                  o.dataset = "mnist";
                  o.data_dir = "/nonexistent";
                }),
                "not found");
  ExpectRefused(With([](TrainOptions& o) { o.trace = "/nonexistent/dir/run.trace"; }), "does not exist");
  ExpectRefused(With([](TrainOptions& o) { o.resume = true; }), "--checkpoint-dir");
  // One bound for the MSDR factor everywhere: readers took at most 1e6.
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "powersgd";
                  o.policy = "adaqs";
                  o.msdr_factor = 1e308;
                }),
                "--msdr-factor must be above 1 and at most 1e+06");
}

TEST(TrainOptions, RefusesToOverwriteATraceUnlessAsked) {
  const std::string dir = test_support::MakeTempDir("options");
  TrainOptions o = Synthetic();
  o.trace = dir + "/run.trace";
  std::ofstream(o.trace) << "x";
  ExpectRefused(o, "already exists");
  o.overwrite = true;
  EXPECT_NO_THROW(ValidateOptions(o));
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, LearningRateWarmsUpThenDecays) {
  TrainOptions o;
  o.lr = 0.4;
  o.warmup_epochs = 4;
  o.decay_epochs = {6, 8};
  o.decay_factor = 0.1;
  EXPECT_DOUBLE_EQ(LearningRate(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRate(o, 3), 0.4);
  EXPECT_DOUBLE_EQ(LearningRate(o, 5), 0.4);
  EXPECT_NEAR(LearningRate(o, 6), 0.04, 1e-12);
  EXPECT_NEAR(LearningRate(o, 9), 0.004, 1e-12);
}

TEST(TrainOptions, WarmUpCanStartFromABaseLearningRate) {
  // The paper's batch-size runs: linearly from 0.1 to 0.4 over 5 epochs.
  TrainOptions o;
  o.lr = 0.4;
  o.warmup_epochs = 5;
  o.warmup_from = 0.1;
  EXPECT_DOUBLE_EQ(LearningRate(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(LearningRate(o, 1), 0.16);
  EXPECT_NEAR(LearningRate(o, 4), 0.34, 1e-12);
  EXPECT_DOUBLE_EQ(LearningRate(o, 5), 0.4);
  o.warmup_epochs = 0;
  o.dataset = "synthetic";
  ExpectRefused(o, "--warmup-from");
}

TrainOptions BatchRun(double low, double high) {
  TrainOptions o = Synthetic();
  o.scheme = "batch";
  o.policy = "accordion";
  o.low = low;
  o.high = high;
  return o;
}

TEST(TrainOptions, BatchLevelsAreGlobalBatchesAndScaleTheLearningRate) {
  TrainOptions o = Synthetic();
  o.scheme = "batch";
  o.policy = "accordion";
  o.batch_size = 64;
  // Defaults: the paper's B and 8B.
  EXPECT_EQ(LevelsOf(o).low, 64);
  EXPECT_EQ(LevelsOf(o).high, 512);
  o = BatchRun(128, 1024);
  o.lr = 0.05;
  o.warmup_epochs = 2;
  o.decay_epochs = {10};
  EXPECT_NO_THROW(ValidateOptions(o));
  // Linear scaling by level / low, on top of warm-up and decay.
  EXPECT_DOUBLE_EQ(ScaledLearningRate(o, 0, 128), 0.025);
  EXPECT_DOUBLE_EQ(ScaledLearningRate(o, 0, 1024), 0.2);
  EXPECT_DOUBLE_EQ(ScaledLearningRate(o, 5, 1024), 0.4);
  EXPECT_NEAR(ScaledLearningRate(o, 10, 1024), 0.04, 1e-12);
  // The other schemes ignore the level.
  o.scheme = "powersgd";
  o.low = 2;
  o.high = 1;
  EXPECT_DOUBLE_EQ(ScaledLearningRate(o, 5, 1), 0.05);
  EXPECT_EQ(GlobalMicroBatchOf(o), o.batch_size);
}

TEST(TrainOptions, BatchLevelsAreWholeNumbersOfMicroBatches) {
  TrainOptions o = BatchRun(128, 1024);
  EXPECT_EQ(GlobalMicroBatchOf(o), 128);  // default: the low level
  o.global_micro_batch = 64;
  EXPECT_EQ(GlobalMicroBatchOf(o), 64);
  EXPECT_NO_THROW(ValidateOptions(o));
  o.global_micro_batch = 96;
  ExpectRefused(o, "not a whole number of micro-batches");
  o = BatchRun(128, 1000);
  ExpectRefused(o, "not a whole number of micro-batches");
  o = BatchRun(1024, 128);
  ExpectRefused(o, "batch only grows");
  o = BatchRun(128, 1024);
  o.nproc = 3;
  ExpectRefused(o, "split evenly");
  o = BatchRun(128, 1024);
  o.level = 256;
  ExpectRefused(o, "--level belongs to --policy static");
  o.policy = "static";
  o.low.reset();
  o.high.reset();
  EXPECT_NO_THROW(ValidateOptions(o));
  EXPECT_EQ(LevelsOf(o).low, 256);
  EXPECT_EQ(LevelsOf(o).high, 256);
  o.level = 100.5;
  ExpectRefused(o, "batch size");
  // A micro-batch belongs to the batch scheme only.
  TrainOptions dense = Synthetic();
  dense.global_micro_batch = 32;
  ExpectRefused(dense, "--micro-batch belongs to --scheme batch");
}

TEST(TrainOptions, ModelsDatasetsAndBackendsMustFitTogether) {
  ExpectRefused(With([](TrainOptions& o) { o.model = "lstm"; }), "--dataset tokens");
  ExpectRefused(With([](TrainOptions& o) { o.dataset = "tokens"; }), "--dataset tokens is for --model lstm");
  ExpectRefused(With([](TrainOptions& o) {
                  o.dataset = "tokens";
                  o.model = "lstm";
                }),
                "--data-file");
  ExpectRefused(With([](TrainOptions& o) {
                  o.dataset = "cifar10";
                  o.data_dir = "/nonexistent";
                }),
                "not found");
  ExpectRefused(With([](TrainOptions& o) { o.backend = "nccl"; }), "--device cuda");
  // Gloo runs on either device (several ranks can then share one GPU); VGG
  // pads 28x28 images.
  EXPECT_NO_THROW(ValidateOptions(With([](TrainOptions& o) { o.device = "cuda"; })));
  EXPECT_NO_THROW(ValidateOptions(With([](TrainOptions& o) { o.model = "vgg19bn"; })));
  if (!NcclAvailable()) {
    ExpectRefused(With([](TrainOptions& o) {
                    o.backend = "nccl";
                    o.device = "cuda";
                  }),
                  "without the NCCL");
  }
  ExpectRefused(With([](TrainOptions& o) { o.hessian_every = -1; }), "--hessian-every");
  ExpectRefused(With([](TrainOptions& o) { o.hessian.tolerance(0); }), "--hessian-tolerance");
  ExpectRefused(With([](TrainOptions& o) { o.clip = -1; }), "--clip");
  ExpectRefused(With([](TrainOptions& o) { o.dropout = 1; }), "--dropout");
}

TEST(TrainOptions, ATokenCorpusMustFeedEveryStream) {
  const std::string dir = test_support::MakeTempDir("options-tokens");
  std::ofstream(dir + "/small.txt") << "one two three\nfour five six\nseven eight\n";
  TrainOptions o;
  o.model = "lstm";
  o.dataset = "tokens";
  o.data_file = dir + "/small.txt";
  o.valid_fraction = 0.3;  // the last line validates
  o.batch_size = 4;        // 8 training tokens: 4 streams of 2
  EXPECT_NO_THROW(ValidateOptions(o));
  o.batch_size = 6;
  ExpectRefused(o, "too few for 6 streams");
  o.batch_size = 4;
  o.scheme = "batch";
  ExpectRefused(o, "--scheme batch is for the image models");
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, ResumeNeedsTheSameTrajectory) {
  TrainOptions o = Synthetic();
  o.scheme = "powersgd";
  const std::string saved = ConfigJson(o);
  TrainOptions later = o;
  later.threads = 3;
  later.trace = "elsewhere.trace";
  EXPECT_EQ(ResumeMismatch(saved, later), "");
  later.seed = 99;
  EXPECT_NE(ResumeMismatch(saved, later).find("--seed"), std::string::npos);
  EXPECT_NE(ResumeMismatch("not json", o), "");
  // The configuration records how per-iteration rows are sampled.
  EXPECT_NE(nlohmann::json::parse(saved).at("trace_sample").get<std::string>().find("every rank"), std::string::npos);
}

// Calls visit(app, policy, options, config, key) for each key of the
// ConfigJson of a PowerSGD run under either policy; `app` has every flag.
template <typename Visit>
void ForEveryConfigKey(Visit visit) {
  TrainOptions parsed;
  CLI::App app;
  AddTrainFlags(app, parsed);
  for (const std::string policy : {"static", "accordion"}) {
    TrainOptions o = Synthetic();
    o.scheme = "powersgd";
    o.policy = policy;
    const nlohmann::json config = nlohmann::json::parse(ConfigJson(o));
    for (const auto& item : config.items()) visit(app, policy, o, config, item.key());
  }
}

// A resume with another scheme or policy names that flag, not a level flag
// whose meaning followed from it.
TEST(TrainOptions, ResumeWithAnotherSchemeOrPolicyNamesThatFlag) {
  TrainOptions o = Synthetic();
  o.scheme = "powersgd";
  o.policy = "accordion";
  o.low = 2;
  o.high = 1;
  const std::string saved = ConfigJson(o);
  TrainOptions topk = o;
  topk.scheme = "topk";
  topk.low = 0.5;
  topk.high = 0.1;
  EXPECT_EQ(ResumeMismatch(saved, topk).rfind("--scheme differs", 0), 0u) << ResumeMismatch(saved, topk);
  TrainOptions fixed = o;
  fixed.policy = "static";
  fixed.low = fixed.high = std::nullopt;
  fixed.level = 2;
  EXPECT_EQ(ResumeMismatch(saved, fixed).rfind("--policy differs", 0), 0u) << ResumeMismatch(saved, fixed);
}

// Every field a resume can find different is named by a flag accordion-train
// really has, under either policy.
TEST(TrainOptions, ResumeMismatchNamesFlagsThatExist) {
  ForEveryConfigKey([](const CLI::App& app, const std::string& policy, const TrainOptions&, const nlohmann::json&,
                       const std::string& key) {
    const std::string flag = FlagOfConfigKey(key, policy);
    if (key == "trace_sample") {
      EXPECT_EQ(flag, "");
      return;
    }
    EXPECT_NE(app.get_option_no_throw(flag), nullptr) << key << " -> " << flag << " (" << policy << ")";
  });
  TrainOptions o = Synthetic();
  o.scheme = "powersgd";
  o.policy = "accordion";
  TrainOptions later = o;
  later.hessian.max_iterations(o.hessian.max_iterations() + 1);
  EXPECT_EQ(ResumeMismatch(ConfigJson(o), later).rfind("--hessian-iterations differs", 0), 0u)
      << ResumeMismatch(ConfigJson(o), later);
  later = o;
  later.low = 4;
  EXPECT_EQ(ResumeMismatch(ConfigJson(o), later).rfind("--low differs", 0), 0u) << ResumeMismatch(ConfigJson(o), later);
}

TEST(TrainOptions, TopKChoicesBelongToTopKAndReachTheLevelPlan) {
  TrainOptions o = Synthetic();
  o.scheme = "topk";
  EXPECT_FALSE(LevelsOf(o).scheme.topk_dense_vectors());  // today's behaviour by default
  EXPECT_TRUE(LevelsOf(o).scheme.topk_error_feedback());
  o.topk_dense_vectors = true;
  o.topk_error_feedback = false;
  EXPECT_NO_THROW(ValidateOptions(o));
  EXPECT_EQ(LevelsOf(o).scheme.scheme(), Scheme::kTopK);
  EXPECT_TRUE(LevelsOf(o).scheme.topk_dense_vectors());
  EXPECT_FALSE(LevelsOf(o).scheme.topk_error_feedback());
  const nlohmann::json config = nlohmann::json::parse(ConfigJson(o));
  EXPECT_EQ(config.at("topk_dense_vectors"), true);
  EXPECT_EQ(config.at("topk_error_feedback"), "off");
  ExpectRefused(With([](TrainOptions& x) { x.topk_dense_vectors = true; }),
                "--topk-dense-vectors belongs to --scheme topk");
  ExpectRefused(With([](TrainOptions& x) {
                  x.scheme = "powersgd";
                  x.topk_error_feedback = true;
                }),
                "--topk-error-feedback belongs to --scheme topk");
  // On the command line: on or off.
  CLI::App app;
  TrainOptions parsed;
  AddTrainFlags(app, parsed);
  app.parse("--topk-dense-vectors --topk-error-feedback off");
  EXPECT_TRUE(parsed.topk_dense_vectors);
  EXPECT_EQ(parsed.topk_error_feedback, std::optional<bool>(false));
  CLI::App strict;
  AddTrainFlags(strict, parsed);
  EXPECT_THROW(strict.parse("--topk-error-feedback no"), CLI::ValidationError);
}

// --scheme's choices, help and errors come from traces/scheme_description.h.
TEST(TrainOptions, SchemeFlagTakesEveryDescribedSchemeAndNothingElse) {
  for (const SchemeDescription& d : AllSchemes()) {
    TrainOptions parsed = Synthetic();
    CLI::App app;
    AddTrainFlags(app, parsed);
    EXPECT_NE(app.get_option("--scheme")->get_description().find(d.name), std::string::npos) << d.name;
    app.parse(std::string("--scheme ") + d.name);
    EXPECT_EQ(parsed.scheme, d.name);
    EXPECT_EQ(LevelsOf(parsed).scheme.scheme(), d.scheme);
    if (!d.has_levels()) {
      parsed.policy = "accordion";
      // The names come from the scheme table (scheme_description_test pins it).
      ExpectRefused(parsed, "--policy accordion chooses levels: it needs the " +
                                JoinSchemeNames(SchemeSet::kWithLevels, ", ", " or ") + " scheme, not " + d.name);
    }
  }
  TrainOptions parsed = Synthetic();
  CLI::App app;
  AddTrainFlags(app, parsed);
  EXPECT_THROW(app.parse("--scheme powersgd-p"), CLI::ValidationError);
  ExpectRefused(With([](TrainOptions& o) { o.scheme = "signsgd"; }),
                "unknown scheme 'signsgd' (schemes: " + JoinSchemeNames(SchemeSet::kAll, ", ", ", ") + ")");
}

// --policy's choices and help come from traces/policy_description.h, and a
// policy that does not fit the scheme is refused in the table's words.
TEST(TrainOptions, PolicyFlagTakesEveryDescribedPolicy) {
  for (const PolicyDescription& d : AllPolicies()) {
    TrainOptions parsed = Synthetic();
    CLI::App app;
    AddTrainFlags(app, parsed);
    EXPECT_NE(app.get_option("--policy")->get_description().find(d.summary), std::string::npos) << d.name;
    app.parse(std::string("--policy ") + d.name);
    EXPECT_EQ(parsed.policy, d.name);
    EXPECT_EQ(LevelsOf(parsed).policy, d.policy);
  }
  TrainOptions parsed = Synthetic();
  parsed.scheme = "dense";
  parsed.policy = "adaqs";
  ExpectRefused(parsed, "--" + PolicyFitProblem(Policy::kAdaqs, Scheme::kDense));
  CLI::App app;
  AddTrainFlags(app, parsed);
  EXPECT_THROW(app.parse("--policy AdaQS"), CLI::ValidationError);
}

TEST(TrainOptions, ResumeRefusesOtherTopKChoices) {
  TrainOptions o = Synthetic();
  o.scheme = "topk";
  TrainOptions later = o;
  later.topk_dense_vectors = true;
  EXPECT_EQ(ResumeMismatch(ConfigJson(o), later).rfind("--topk-dense-vectors differs", 0), 0u)
      << ResumeMismatch(ConfigJson(o), later);
  later = o;
  later.topk_error_feedback = false;
  EXPECT_EQ(ResumeMismatch(ConfigJson(o), later).rfind("--topk-error-feedback differs", 0), 0u)
      << ResumeMismatch(ConfigJson(o), later);
  later.topk_error_feedback = true;  // given explicitly: the default
  EXPECT_EQ(ResumeMismatch(ConfigJson(o), later), "");
  // A checkpoint from before the choices existed ran TopK's defaults.
  nlohmann::json old = nlohmann::json::parse(ConfigJson(o));
  old.erase("topk_dense_vectors");
  old.erase("topk_error_feedback");
  EXPECT_EQ(ResumeMismatch(old.dump(), o), "");
  later = o;
  later.topk_dense_vectors = true;
  EXPECT_EQ(ResumeMismatch(old.dump(), later).rfind("--topk-dense-vectors differs", 0), 0u)
      << ResumeMismatch(old.dump(), later);
}

TEST(CheckpointManifest, RoundTripsAndRefusesGarbage) {
  const std::string dir = test_support::MakeTempDir("manifest");
  EXPECT_FALSE(ReadCheckpointManifest(dir).has_value());
  WriteCheckpointManifest(dir, {4, 2, 120, ConfigJson(Synthetic()), "", {}});
  const auto m = ReadCheckpointManifest(dir);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->epoch, 4);
  EXPECT_EQ(m->world_size, 2);
  EXPECT_EQ(m->steps_done, 120);
  EXPECT_EQ(ResumeMismatch(m->config_json, Synthetic()), "");
  std::ofstream(dir + "/checkpoint.json") << "{\"epoch\": ";
  EXPECT_THROW(ReadCheckpointManifest(dir), InputError);
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, LevelsThatCannotBecomeAnIntegerAreRefused) {
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "powersgd";
                  o.level = 1e308;
                }),
                "PowerSGD rank in 1..65536");
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "powersgd";
                  o.policy = "accordion";
                  o.low = 1e308;
                }),
                "PowerSGD rank in 1..");
  ExpectRefused(With([](TrainOptions& o) {
                  o.scheme = "batch";
                  o.level = 1e19;
                }),
                "batch size in 1..");
}

TEST(TrainOptions, RefusesATraceThatIsNotARegularFileEvenWithOverwrite) {
  TrainOptions o = Synthetic();
  o.trace = "/dev/null";
  o.overwrite = true;
  ExpectRefused(o, "not a regular file");
}

TEST(TrainOptions, RefusesAnotherRunsCheckpointDirectoryUnlessAsked) {
  const std::string dir = test_support::MakeTempDir("options");
  WriteCheckpointManifest(dir, {3, 1, 90, ConfigJson(Synthetic()), "", {}});
  TrainOptions o = Synthetic();
  o.checkpoint_dir = dir;
  ExpectRefused(o, "holds another run's checkpoint (epoch 3)");
  o.overwrite = true;
  EXPECT_NO_THROW(ValidateOptions(o));
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, ResumeRefusesATraceOfAnotherRunBeforeTouchingIt) {
  const std::string dir = test_support::MakeTempDir("options");
  TrainOptions o = Synthetic();
  o.epochs = 5;
  o.checkpoint_dir = dir + "/ckpt";
  o.trace = dir + "/other.trace";
  o.resume = true;
  std::filesystem::create_directory(o.checkpoint_dir);
  CheckpointManifest m{1, 1, 60, ConfigJson(o), NewRunId(), {}};
  WriteCheckpointManifest(o.checkpoint_dir, m);
  RunInfo run = synthetic::MlpRun("synthetic", 100, 10, 5);
  run.backend = "gloo";
  run.device = "cpu";
  run.run_id = NewRunId();
  LayerInfo layer;
  layer.name = "fc";
  layer.shape = {4};
  layer.numel = 4;
  layer.floats_dense = layer.floats_low = layer.floats_high = 4;
  TraceWriter::Create(o.trace, run, {layer})->Finish(RunStatus::kInterrupted);
  const auto before = std::filesystem::last_write_time(o.trace);
  ExpectRefused(o, "is not the one of the checkpoint");
  EXPECT_EQ(std::filesystem::last_write_time(o.trace), before);
  // The same trace with the checkpoint's id is accepted.
  m.run_id = run.run_id;
  WriteCheckpointManifest(o.checkpoint_dir, m);
  EXPECT_NO_THROW(ValidateOptions(o));
  std::filesystem::remove_all(dir);
}

TEST(TrainOptions, WorkersWithDifferentFlagsAreNamed) {
  TrainOptions o = Synthetic();
  o.trace = "/tmp/run.trace";
  const std::string rank0 = ConfigJson(o);
  EXPECT_EQ(RankConfigMismatch({rank0, rank0, rank0}), "");
  TrainOptions no_trace = o;
  no_trace.trace.clear();
  const std::string m = RankConfigMismatch({rank0, rank0, ConfigJson(no_trace)});
  EXPECT_NE(m.find("--trace is given on rank 0 and none on rank 2"), std::string::npos) << m;
  // Each node's own paths and threads may differ; where the trace goes too.
  TrainOptions local = o;
  local.trace = "/elsewhere/run.trace";
  local.threads = 3;
  local.data_dir = "/scratch/data";
  EXPECT_EQ(RankConfigMismatch({rank0, ConfigJson(local)}), "");
  TrainOptions lr = o;
  lr.lr = 0.5;
  EXPECT_NE(RankConfigMismatch({rank0, ConfigJson(lr)}).find("--lr is 0.1 on rank 0 and 0.5 on rank 1"),
            std::string::npos)
      << RankConfigMismatch({rank0, ConfigJson(lr)});
}

TEST(CheckpointManifest, KeepsTheRunIdAndADigestPerRankThatCatchesOneChangedByte) {
  const std::string dir = test_support::MakeTempDir("manifest");
  const std::string file = dir + "/state.pt";
  std::ofstream(file) << std::string(300000, 'a');
  const FileDigest digest = DigestOfFile(file);
  EXPECT_EQ(digest.bytes, 300000);
  EXPECT_TRUE(DigestOfBytes(std::string(300000, 'a')) == digest);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(150000);
    f.put('b');
  }
  EXPECT_FALSE(DigestOfFile(file) == digest);
  WriteCheckpointManifest(dir, {2, 2, 10, ConfigJson(Synthetic()), "abc", {digest, {5, 7}}});
  const auto m = ReadCheckpointManifest(dir);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->run_id, "abc");
  ASSERT_EQ(m->state_files.size(), 2u);
  EXPECT_TRUE(m->state_files[0] == digest);
  // One digest for two workers is a damaged manifest.
  WriteCheckpointManifest(dir, {2, 2, 10, ConfigJson(Synthetic()), "abc", {digest}});
  EXPECT_THROW(ReadCheckpointManifest(dir), InputError);
  std::filesystem::remove_all(dir);
}

// Every flag away from its default.
const char* const kEveryFlagSet =
    "--model cnn --dataset mnist --data-dir /data/mnist --data-file train.txt --valid-file valid.txt "
    "--valid-fraction 0.25 --augment --epochs 7 --batch-size 64 --lr 0.05 --momentum 0.5 --nesterov "
    "--weight-decay 0.0005 --warmup-epochs 3 --warmup-from 0.01 --decay-epochs 4 6 --decay-factor 0.2 "
    "--clip 0.25 --scheme topk --policy accordion --low 0.5 --high 0.05 --topk-dense-vectors "
    "--topk-error-feedback off --micro-batch 32 --eta 0.3 --interval 2 --bptt 20 --lstm-size 100 "
    "--dropout 0.2 --tie-weights --hessian-every 2 --hessian-batch 256 --hessian-tolerance 0.01 "
    "--hessian-iterations 50 --hessian-blocks --backend nccl --device cuda --nproc 2 --threads 3 --seed 42 "
    "--trace run.trace --overwrite --checkpoint-dir ckpt --resume --trace-iterations 6 --bucket-mb 12.5 "
    "--limit-samples 1000 --bind-addr 10.0.0.1 --timeout 90 --network-probe-budget 2.5";

TrainOptions Parsed(const std::string& command_line) {
  TrainOptions o;
  CLI::App app;
  AddTrainFlags(app, o);
  app.parse(command_line);
  return o;
}

// Synthetic() as a static batch run at level 256 in micro-batches of 64.
TrainOptions StaticBatch() {
  TrainOptions o = Synthetic();
  o.scheme = "batch";
  o.level = 256;
  o.global_micro_batch = 64;
  return o;
}

// Traces and checkpoints store ConfigJson and a resume compares it, so its
// bytes must not change. These strings were printed by ConfigJson as built
// from commit eef2391 (before the flag table) for the same settings (the
// default, kEveryFlagSet's values assigned member by member, StaticBatch()),
// not written by hand; the checked-in sample traces predate the TopK keys.
const char* const kDefaultConfigJson =
    "{\"augment\":false,\"backend\":\"gloo\",\"batch_size\":128,\"bind_addr\":\"127.0.0.1\",\"bptt\":"
    "35,\"bucket_mb\":25.0,\"checkpoint_dir\":\"\",\"clip\":0.0,\"data_dir\":\"/usr/share/datasets/fa"
    "shion-mnist\",\"data_file\":\"\",\"dataset\":\"fashion-mnist\",\"decay_epochs\":[],\"decay_facto"
    "r\":0.1,\"device\":\"cpu\",\"dropout\":0.4,\"epochs\":10,\"eta\":0.5,\"hessian_batch\":512,\"hes"
    "sian_blocks\":false,\"hessian_every\":0,\"hessian_max_iterations\":100,\"hessian_tolerance\":0.0"
    "01,\"interval\":10,\"level_high\":0.0,\"level_low\":0.0,\"limit_samples\":0,\"lr\":0.1,\"lstm_si"
    "ze\":650,\"micro_batch\":128,\"model\":\"mlp\",\"momentum\":0.9,\"msdr_factor\":2.0,\"nesterov\":false,\"network_"
    "probe_budget_s\":5.0,"
    "\"no_network_probe\":false,"
    "\"nproc\":1,"
    "\"overwrite\":false,\"policy\":\"static\",\"resume\":false,\"scheme\":\"dense\",\"seed\":1,\"thr"
    "eads\":0,\"tie_weights\":false,\"timeout_s\":45.0,\"topk_dense_vectors\":false,\"topk_error_feed"
    "back\":\"on\",\"trace\":\"\",\"trace_iterations\":4,\"trace_sample\":\"iterations 0..3 of every "
    "epoch, from every rank (iterations, grad_ready, collectives)\",\"valid_file\":\"\",\"valid_fract"
    "ion\":0.1,\"warmup_epochs\":0,\"warmup_from\":null,\"weight_decay\":0.0001}";
const char* const kEveryFlagSetConfigJson =
    "{\"augment\":true,\"backend\":\"nccl\",\"batch_size\":64,\"bind_addr\":\"10.0.0.1\",\"bptt\":20,"
    "\"bucket_mb\":12.5,\"checkpoint_dir\":\"ckpt\",\"clip\":0.25,\"data_dir\":\"/data/mnist\",\"data"
    "_file\":\"train.txt\",\"dataset\":\"mnist\",\"decay_epochs\":[4,6],\"decay_factor\":0.2,\"device"
    "\":\"cuda\",\"dropout\":0.2,\"epochs\":7,\"eta\":0.3,\"hessian_batch\":256,\"hessian_blocks\":tr"
    "ue,\"hessian_every\":2,\"hessian_max_iterations\":50,\"hessian_tolerance\":0.01,\"interval\":2,"
    "\"level_high\":0.05,\"level_low\":0.5,\"limit_samples\":1000,\"lr\":0.05,\"lstm_size\":100,\"mic"
    "ro_batch\":64,\"model\":\"cnn\",\"momentum\":0.5,\"msdr_factor\":2.0,\"nesterov\":true,\"network_probe_budget_s\":"
    "2.5,\"no_network_"
    "probe\":false,\"nproc\":2,"
    "\"overwrite\":tru"
    "e,\"policy\":\"accordion\",\"resume\":true,\"scheme\":\"topk\",\"seed\":42,\"threads\":3,\"tie_w"
    "eights\":true,\"timeout_s\":90.0,\"topk_dense_vectors\":true,\"topk_error_feedback\":\"off\",\"t"
    "race\":\"run.trace\",\"trace_iterations\":6,\"trace_sample\":\"iterations 0..5 of every epoch, f"
    "rom every rank (iterations, grad_ready, collectives)\",\"valid_file\":\"valid.txt\",\"valid_frac"
    "tion\":0.25,\"warmup_epochs\":3,\"warmup_from\":0.01,\"weight_decay\":0.0005}";
const char* const kStaticBatchConfigJson =
    "{\"augment\":false,\"backend\":\"gloo\",\"batch_size\":128,\"bind_addr\":\"127.0.0.1\",\"bptt\":"
    "35,\"bucket_mb\":25.0,\"checkpoint_dir\":\"\",\"clip\":0.0,\"data_dir\":\"/usr/share/datasets/sy"
    "nthetic\",\"data_file\":\"\",\"dataset\":\"synthetic\",\"decay_epochs\":[],\"decay_factor\":0.1,"
    "\"device\":\"cpu\",\"dropout\":0.4,\"epochs\":10,\"eta\":0.5,\"hessian_batch\":512,\"hessian_blo"
    "cks\":false,\"hessian_every\":0,\"hessian_max_iterations\":100,\"hessian_tolerance\":0.001,\"int"
    "erval\":10,\"level_high\":256.0,\"level_low\":256.0,\"limit_samples\":0,\"lr\":0.1,\"lstm_size\""
    ":650,\"micro_batch\":64,\"model\":\"mlp\",\"momentum\":0.9,\"msdr_factor\":2.0,\"nesterov\":false,\"network_probe_"
    "budget_s\":5.0,\"no_"
    "network_probe\":false,"
    "\"nproc\":1,\"over"
    "write\":false,\"policy\":\"static\",\"resume\":false,\"scheme\":\"batch\",\"seed\":1,\"threads\""
    ":0,\"tie_weights\":false,\"timeout_s\":45.0,\"topk_dense_vectors\":false,\"topk_error_feedback\""
    ":\"on\",\"trace\":\"\",\"trace_iterations\":4,\"trace_sample\":\"iterations 0..3 of every epoch,"
    " from every rank (iterations, grad_ready, collectives)\",\"valid_file\":\"\",\"valid_fraction\":"
    "0.1,\"warmup_epochs\":0,\"warmup_from\":null,\"weight_decay\":0.0001}";

TEST(TrainOptions, ConfigJsonIsByteForByteWhatItWasBeforeTheFlagTable) {
  EXPECT_EQ(ConfigJson(TrainOptions()), kDefaultConfigJson);
  EXPECT_EQ(ConfigJson(StaticBatch()), kStaticBatchConfigJson);
  // Also proof that each flag lands in its own member: a table row bound to
  // the wrong member would record another value.
  EXPECT_EQ(ConfigJson(Parsed(kEveryFlagSet)), kEveryFlagSetConfigJson);
  EXPECT_EQ(ConfigJson(Parsed("--dataset synthetic --scheme batch --level 256 --micro-batch 64")),
            kStaticBatchConfigJson);
  // What ConfigJson records as derived values.
  const TrainOptions every = Parsed(kEveryFlagSet);
  EXPECT_EQ(every.global_micro_batch, 32);  // recorded as the batch used: 64 (not --scheme batch)
  EXPECT_EQ(every.low, std::optional<double>(0.5));
  EXPECT_EQ(every.high, std::optional<double>(0.05));
  EXPECT_EQ(every.topk_error_feedback, std::optional<bool>(false));
  EXPECT_EQ(every.data_dir, "/data/mnist");
}

// --help shows what a default-constructed TrainOptions holds, whatever the
// options the flags are bound to hold.
TEST(TrainOptions, HelpShowsTheDefaultsOfADefaultTrainOptions) {
  TrainOptions o;
  o.lr = 0.05;
  o.model = "cnn";
  o.hessian.max_iterations(7);
  o.bind_addr = "10.0.0.1";
  CLI::App app;
  AddTrainFlags(app, o);
  EXPECT_EQ(app.get_option("--lr")->get_default_str(), "0.1");
  EXPECT_EQ(app.get_option("--model")->get_default_str(), "mlp");
  EXPECT_EQ(app.get_option("--hessian-iterations")->get_default_str(), "100");
  EXPECT_EQ(app.get_option("--bind-addr")->get_default_str(), "127.0.0.1");
  // 0 stands for "computed" there; the help text says what.
  EXPECT_EQ(app.get_option("--threads")->get_default_str(), "");
  EXPECT_EQ(app.get_option("--micro-batch")->get_default_str(), "");
  EXPECT_EQ(o.lr, 0.05);  // registering the flags leaves the options alone
}

// Walks every ConfigJson key: changed in a checkpoint or on another rank, it
// is either allowed to differ or reported under a flag AddTrainFlags
// registers (under both policies: level_low is --level or --low).
TEST(TrainOptions, EveryKeyAResumeOrARankCanReportNamesARegisteredFlag) {
  const std::string rank_prefix = "the workers were started with different flags: ";
  std::set<std::string> resume_may_change, rank_may_differ;
  ForEveryConfigKey([&](const CLI::App& app, const std::string& policy, const TrainOptions& o,
                        const nlohmann::json& config, const std::string& key) {
    nlohmann::json changed = config;
    changed[key] = "changed on purpose";
    // A key no flag sets is reported by its name.
    const std::string flag = key == "trace_sample" ? key : FlagOfConfigKey(key, policy);
    if (key != "trace_sample") {
      EXPECT_NE(app.get_option_no_throw(flag), nullptr) << key << " -> '" << flag << "' (" << policy << ")";
    }
    const std::string resume = ResumeMismatch(changed.dump(), o);
    if (resume.empty()) {
      resume_may_change.insert(key);
    } else {
      EXPECT_EQ(resume.rfind(flag + " differs from the checkpointed run", 0), 0u) << key << ": " << resume;
    }
    const std::string ranks = RankConfigMismatch({config.dump(), changed.dump()});
    if (ranks.empty()) {
      rank_may_differ.insert(key);
    } else {
      EXPECT_EQ(ranks.rfind(rank_prefix + flag + " is ", 0), 0u) << key << ": " << ranks;
    }
  });
  EXPECT_EQ(FlagOfConfigKey("level_low", "static"), "--level");
  EXPECT_EQ(FlagOfConfigKey("level_high", "accordion"), "--high");
  EXPECT_EQ(FlagOfConfigKey("no_such_key", "static"), "");
  EXPECT_EQ(resume_may_change,
            (std::set<std::string>{"bind_addr", "checkpoint_dir", "data_dir", "data_file", "network_probe_budget_s",
                                   "no_network_probe", "overwrite", "resume", "threads", "timeout_s", "trace",
                                   "trace_iterations", "trace_sample", "valid_file"}));
  EXPECT_EQ(rank_may_differ,
            (std::set<std::string>{"bind_addr", "data_dir", "data_file", "threads", "timeout_s", "valid_file"}));
}

// The number checks' messages, word for word; a run setting's (analysis/run_settings.h)
// also says the value it was given, as the hook's keywords do.
TEST(TrainOptions, EveryNumberCheckKeepsItsMessage) {
  const std::vector<std::pair<std::function<void(TrainOptions&)>, std::string>> cases = {
      {[](TrainOptions& o) { o.epochs = 0; }, "--epochs must be from 1 to 2147483647, not 0"},
      {[](TrainOptions& o) { o.nproc = 0; }, "--nproc must be at least 1"},
      {[](TrainOptions& o) { o.threads = -1; }, "--threads must be positive (0 picks cores / nproc)"},
      {[](TrainOptions& o) { o.batch_size = 0; }, "--batch-size must be at least 1"},
      {[](TrainOptions& o) { o.lr = std::nan(""); }, "--lr must be a positive number float32 holds (at most 3.4e38)"},
      // LibTorch cannot apply it to float32 parameters: refused here, not an
      // internal error in the first step.
      {[](TrainOptions& o) { o.lr = 1e308; }, "--lr must be a positive number float32 holds (at most 3.4e38)"},
      {[](TrainOptions& o) { o.momentum = 1; }, "--momentum must be in [0, 1)"},
      {[](TrainOptions& o) {
         o.nesterov = true;
         o.momentum = 0;
       },
       "--nesterov needs a --momentum above 0"},
      {[](TrainOptions& o) { o.weight_decay = HUGE_VAL; }, "--weight-decay must be >= 0"},
      {[](TrainOptions& o) { o.warmup_epochs = -1; }, "--warmup-epochs must be >= 0"},
      {[](TrainOptions& o) {
         o.decay_epochs = {3, 0};
       },
       "--decay-epochs must be epochs >= 1 (got 0)"},
      {[](TrainOptions& o) { o.decay_factor = 0; }, "--decay-factor must be in (0, 1]"},
      {[](TrainOptions& o) { o.accordion.eta(0); }, "--eta must be a positive number, not 0"},
      {[](TrainOptions& o) { o.accordion.interval(0); }, "--interval must be from 1 to 2147483647 epochs, not 0"},
      {[](TrainOptions& o) { o.trace_iterations = -1; },
       "--trace-iterations must be from 0 to 2147483647 steps, not -1"},
      {[](TrainOptions& o) { o.bucket_mb = 0; }, "--bucket-mb must be above 0 and at most 1048576 (a TiB), not 0"},
      {[](TrainOptions& o) { o.limit_samples = -1; }, "--limit-samples must be >= 0"},
      {[](TrainOptions& o) {
         o.warmup_epochs = 2;
         o.warmup_from = -0.1;
       },
       "--warmup-from must be a positive learning rate float32 holds (at most 3.4e38)"},
      {[](TrainOptions& o) { o.warmup_from = 0.1; }, "--warmup-from needs --warmup-epochs of at least 1"},
      {[](TrainOptions& o) { o.clip = -HUGE_VAL; }, "--clip must be >= 0 (0: no clipping)"},
      {[](TrainOptions& o) { o.global_micro_batch = -1; }, "--micro-batch must be >= 0 (0: the low level)"},
      {[](TrainOptions& o) { o.bptt = 0; }, "--bptt must be at least 1 token"},
      {[](TrainOptions& o) { o.lstm_size = 0; }, "--lstm-size must be in 1..8192 (the weights grow with its square)"},
      {[](TrainOptions& o) { o.lstm_size = 1000000; },
       "--lstm-size must be in 1..8192 (the weights grow with its square)"},
      {[](TrainOptions& o) { o.dropout = -0.1; }, "--dropout must be in [0, 1)"},
      {[](TrainOptions& o) { o.hessian_every = -1; }, "--hessian-every must be >= 0 (0: never)"},
      {[](TrainOptions& o) { o.hessian_batch = 0; }, "--hessian-batch must be at least 1"},
      {[](TrainOptions& o) { o.hessian.tolerance(-1); }, "--hessian-tolerance must be a positive number"},
      {[](TrainOptions& o) { o.hessian.max_iterations(0); }, "--hessian-iterations must be at least 1"},
      {[](TrainOptions& o) { o.valid_fraction = 1; }, "--valid-fraction must be in (0, 1)"},
      {[](TrainOptions& o) { o.timeout_s = 0.5; }, "--timeout must be at least 1 second"},
  };
  for (const auto& [change, message] : cases) {
    try {
      ValidateOptions(With(change));
      ADD_FAILURE() << "accepted; expected: " << message;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
  // The edges themselves are accepted.
  EXPECT_NO_THROW(ValidateOptions(With([](TrainOptions& o) {
    o.momentum = 0;
    o.decay_factor = 1;
    o.dropout = 0;
    o.timeout_s = 1;
    o.threads = 0;
    o.clip = 0;
  })));
}

}  // namespace
}  // namespace accordion
