// accordion-train --model FILE: a TorchScript module exported from Python,
// trained by real worker processes over Gloo, and the files it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/trainer/torchscript_files.h"
#include "tests/trainer/train_support.h"
#include "traces/trace_validator.h"

namespace accordion {
namespace {

using test_support::CommandResult;
using test_support::ReadTrace;
using test_support::TraceContent;
using test_support::Train;

const std::string kFashionMnist = "/usr/share/datasets/fashion-mnist";

using TrainTorchScript = test_support::TorchScriptFilesTest;

TEST_F(TrainTorchScript, TwoGlooRanksTrainAnExportedModelOnFashionMnist) {
  if (!std::filesystem::is_directory(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " (dataset-fashion-mnist)";
  const std::string trace = Path("net.trace");
  const CommandResult r = Train("--model " + Model("net.pt") +
                                " --dataset fashion-mnist --limit-samples 512 --batch-size 64 --lr 0.05 --nproc 2"
                                " --epochs 1 --scheme powersgd --level 2 --no-network-probe --trace-iterations 2"
                                " --trace " +
                                trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(ValidateTrace(trace));
  const TraceContent t = ReadTrace(trace);
  EXPECT_EQ(t.run.model, "torchscript:net.pt");
  EXPECT_EQ(nlohmann::json::parse(t.run.config_json).at("model"), Model("net.pt"));
  EXPECT_EQ(t.run.world_size, 2);
  EXPECT_EQ(t.run.train_samples, 512);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"conv1.weight", {4, 1, 3, 3}}, {"conv1.bias", {4}}, {"bn1.weight", {4}}, {"bn1.bias", {4}},
      {"fc.weight", {10, 784}},       {"fc.bias", {10}},
  };
  ASSERT_EQ(t.layers.size(), want.size());
  for (size_t l = 0; l < want.size(); ++l) {
    EXPECT_EQ(t.layers[l].name, want[l].first);
    EXPECT_EQ(t.layers[l].shape, want[l].second) << want[l].first;
  }
  ASSERT_EQ(t.epochs.size(), 1u);
  EXPECT_EQ(t.epochs[0].iterations, 8);
  EXPECT_TRUE(std::isfinite(t.epochs[0].train_loss));
  EXPECT_GT(t.epochs[0].test_acc, 0.3) << "eight steps learn something of Fashion-MNIST";
  ASSERT_FALSE(t.layer_rows.empty());
  ASSERT_EQ(t.layer_rows[0].size(), want.size());
  for (const auto& row : t.layer_rows[0]) EXPECT_GT(row.grad_norm, 0) << row.layer_id;
}

TEST_F(TrainTorchScript, BadModelFilesAreOneLineExitTwoBeforeAnyWorker) {
  std::ofstream(Path("notes.pt")) << "not a model\n";
  std::filesystem::create_directory(Path("folder.pt"));
  const std::string trace = Path("bad.trace");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Path("missing.pt"), "no such file"},
      {"missing.pt", "no such file"},
      {Path("folder.pt"), "is a directory"},
      {dir_ + "/", "is a directory"},
      {Path("notes.pt"), "is not a TorchScript file"},
      {Model("state_dict.pt"), "is not a TorchScript file"},
      {Model("noparams.pt"), "no trainable parameters"},
      {Model("broken.pt"), "forward() fails on a batch of inputs [64, 1, 28, 28] (Float): RuntimeError: mat1 and mat2"},
      {Model("classes5.pt"), "forward() returns [64, 5] (Float)"},
      {Model("unused.pt"), "parameter spare.weight gets no gradient"},
      {Model("tuple.pt"), "returned a Tuple, not a tensor"},
  };
  for (const auto& [model, fragment] : cases) {
    const CommandResult r = Train("--nproc 2 --dataset synthetic --trace " + trace + " --model " + model);
    EXPECT_EQ(r.exit_code, 2) << model << "\n" << r.err;
    EXPECT_EQ(test_support::CountLines(r.err), 1) << model << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("accordion-train: error: --model " + model, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << model << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << model << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(trace)) << model;
  }
}

}  // namespace
}  // namespace accordion
