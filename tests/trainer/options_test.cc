#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/train_options.h"

namespace accordion {
namespace {

TrainOptions Synthetic() {
  TrainOptions o;
  o.dataset = "synthetic";
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

TEST(TrainOptions, RefusesBadConfigurations) {
  auto with = [](auto change) {
    TrainOptions o = Synthetic();
    change(o);
    return o;
  };
  ExpectRefused(with([](TrainOptions& o) { o.model = "vgg"; }), "unknown model");
  ExpectRefused(with([](TrainOptions& o) { o.scheme = "batch"; }), "unknown scheme");
  ExpectRefused(with([](TrainOptions& o) { o.epochs = 0; }), "--epochs");
  ExpectRefused(with([](TrainOptions& o) { o.batch_size = 30; o.nproc = 4; }), "split evenly");
  ExpectRefused(with([](TrainOptions& o) { o.policy = "accordion"; }), "compressing --scheme");
  ExpectRefused(with([](TrainOptions& o) { o.scheme = "powersgd"; o.level = 1.5; }), "PowerSGD rank");
  ExpectRefused(with([](TrainOptions& o) { o.scheme = "topk"; o.level = 2; }), "TopK fraction");
  ExpectRefused(with([](TrainOptions& o) { o.scheme = "topk"; o.low = 0.5; }), "--low and --high");
  ExpectRefused(with([](TrainOptions& o) { o.nesterov = true; o.momentum = 0; }), "--nesterov");
  ExpectRefused(with([](TrainOptions& o) { o.dataset = "mnist"; o.data_dir = "/nonexistent"; }),
                "not found");
  ExpectRefused(with([](TrainOptions& o) { o.trace = "/nonexistent/dir/run.trace"; }), "does not exist");
  ExpectRefused(with([](TrainOptions& o) { o.resume = true; }), "--checkpoint-dir");
}

TEST(TrainOptions, RefusesToOverwriteATraceUnlessAsked) {
  const std::string dir = testing::MakeTempDir("options");
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
  EXPECT_NE(nlohmann::json::parse(saved).at("trace_sample").get<std::string>().find("every rank"),
            std::string::npos);
}

TEST(CheckpointManifest, RoundTripsAndRefusesGarbage) {
  const std::string dir = testing::MakeTempDir("manifest");
  EXPECT_FALSE(ReadCheckpointManifest(dir).has_value());
  WriteCheckpointManifest(dir, {4, 2, 120, ConfigJson(Synthetic())});
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

}  // namespace
}  // namespace accordion
