// A user's TorchScript module as the trainer's Model: names, shapes, shared
// tensors, train/eval, checkpoints, and the one-line refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/support/temp_dir_test.h"
#include "tests/trainer/torchscript_files.h"
#include "trainer/models.h"

namespace accordion {
namespace {

using TorchScriptModel = test_support::TorchScriptFilesTest;

const InputShape kImages{1, 28, 28, 10};

std::vector<std::string> Names(const std::vector<LayerInfo>& layers) {
  std::vector<std::string> names;
  for (const LayerInfo& l : layers) names.push_back(l.name);
  return names;
}

// What a call that must be refused said, or "" when it was not.
template <typename F>
std::string Refusal(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Batch ImageBatch(int64_t n) { return {torch::randn({n, 1, 28, 28}), torch::randint(0, 10, {n}, torch::kLong)}; }

TEST_F(TorchScriptModel, LayersAreTheModulesParametersInOrderWithTheirNamesAndShapes) {
  const auto model = MakeModel(Model("net.pt"), kImages);
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  EXPECT_EQ(Names(layers),
            (std::vector<std::string>{"conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias", "fc.weight", "fc.bias"}));
  EXPECT_EQ(layers[0].shape, (std::vector<int64_t>{4, 1, 3, 3}));
  EXPECT_EQ(layers[4].shape, (std::vector<int64_t>{10, 784}));
  EXPECT_EQ(layers[4].numel, 7840);
  std::vector<std::string> buffers;
  for (const auto& b : model->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(buffers, (std::vector<std::string>{"bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked"}));
}

TEST_F(TorchScriptModel, ForwardGivesPythonsLogits) {
  const auto model = LoadTorchScriptModel(Model("net.pt"));
  model->eval();
  const torch::Tensor logits = model->forward(torch::ones({2, 1, 28, 28}));
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{2, 10}));
  std::ifstream in(Model("net_ones.txt"));
  std::vector<double> want;
  for (double v; in >> v;) want.push_back(v);
  ASSERT_EQ(want.size(), 20u);
  const torch::Tensor flat = logits.flatten();
  for (int64_t i = 0; i < 20; ++i) EXPECT_NEAR(flat[i].item<double>(), want[static_cast<size_t>(i)], 1e-5) << i;
}

TEST_F(TorchScriptModel, TrainAndEvalReachTheModule) {
  const auto model = LoadTorchScriptModel(Model("net.pt"));
  const torch::Tensor x = torch::randn({4, 1, 28, 28});
  model->eval();
  EXPECT_FALSE(model->is_training());
  EXPECT_TRUE(torch::equal(model->forward(x), model->forward(x))) << "eval: no dropout, running statistics";
  model->train();
  EXPECT_TRUE(model->is_training());
  torch::manual_seed(1);
  const torch::Tensor a = model->forward(x);
  const torch::Tensor b = model->forward(x);
  EXPECT_FALSE(torch::equal(a, b)) << "train: dropout draws a new mask each call";
}

TEST_F(TorchScriptModel, TheOptimizerAndACheckpointChangeWhatForwardComputes) {
  const auto model = LoadTorchScriptModel(Model("net.pt"));
  model->eval();
  const torch::Tensor x = torch::randn({3, 1, 28, 28});
  const torch::Tensor before = model->forward(x).detach().clone();
  torch::serialize::OutputArchive saved;
  model->save(saved);
  std::stringstream bytes;
  saved.save_to(bytes);

  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.5));
  model->train();
  torch::nn::functional::cross_entropy(model->forward(x), torch::tensor({1, 2, 3})).backward();
  ASSERT_FALSE(model->parameters().empty());
  for (const torch::Tensor& p : model->parameters()) ASSERT_TRUE(p.grad().defined());
  sgd.step();
  model->eval();
  EXPECT_FALSE(torch::allclose(model->forward(x), before)) << "the step moved the module's own weights";

  torch::serialize::InputArchive restored;
  restored.load_from(bytes);
  model->load(restored);
  EXPECT_TRUE(torch::allclose(model->forward(x), before)) << "loading the checkpoint brought them back";
}

TEST_F(TorchScriptModel, FrozenParametersAreBuffersAndATiedWeightIsOneLayer) {
  const auto model = LoadTorchScriptModel(Model("tied.pt"));
  EXPECT_EQ(Names(DescribeLayers(*model)), (std::vector<std::string>{"proj.weight", "proj.bias", "a.weight", "a.bias",
                                                                     "b.bias", "head.weight", "head.bias"}));
  std::vector<std::string> buffers;
  for (const auto& b : model->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(buffers, std::vector<std::string>{"scale"});
  CheckModelTrains(*model, ImageBatch(4), kImages, "tied");  // every parameter gets its gradient
}

TEST_F(TorchScriptModel, AModelThatTrainsPassesTheCheck) {
  const auto model = LoadTorchScriptModel(Model("net.pt"));
  EXPECT_NO_THROW(CheckModelTrains(*model, ImageBatch(4), kImages, "--model net.pt"));
}

TEST_F(TorchScriptModel, FilesThatAreNotTorchScriptOrHaveNothingToTrainAreRefused) {
  std::ofstream(Path("notes.pt")) << "not a model\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Model("state_dict.pt"), "not a TorchScript file"},
      {Path("notes.pt"), "not a TorchScript file"},
      {Model("noparams.pt"), "no trainable parameters"},
  };
  for (const auto& [file, fragment] : cases) {
    const std::string why = Refusal([&, f = file] { LoadTorchScriptModel(f); });
    EXPECT_NE(why.find(fragment), std::string::npos) << file << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << file << ": " << why;
    EXPECT_EQ(why.rfind("--model " + file, 0), 0u) << why;
  }
}

TEST_F(TorchScriptModel, ModelsThatCannotTrainOnTheDataAreRefusedInOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"broken.pt", "mat1 and mat2 shapes cannot be multiplied"},
      {"classes5.pt", "returns [4, 5] (Float)"},
      {"unused.pt", "parameter spare.weight gets no gradient"},
      {"tuple.pt", "returned a Tuple, not a tensor"},
  };
  for (const auto& [file, fragment] : cases) {
    const auto model = LoadTorchScriptModel(Model(file));
    const std::string why = Refusal([&, m = model] { CheckModelTrains(*m, ImageBatch(4), kImages, "--model x.pt"); });
    EXPECT_NE(why.find(fragment), std::string::npos) << file << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << file << ": " << why;
    EXPECT_EQ(why.rfind("--model x.pt: ", 0), 0u) << why;
  }
}

}  // namespace
}  // namespace accordion
