#include <gtest/gtest.h>

#include <set>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/support/synthetic_trace.h"
#include "trainer/models.h"
#include "trainer/trainer.h"

namespace accordion {
namespace {

void ExpectSameLayers(const std::vector<LayerInfo>& got, const std::vector<LayerInfo>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].layer_id, want[i].layer_id);
    EXPECT_EQ(got[i].name, want[i].name) << i;
    EXPECT_EQ(got[i].shape, want[i].shape) << got[i].name;
    EXPECT_EQ(got[i].numel, want[i].numel) << got[i].name;
  }
}

TEST(Models, ResNet18HasPyTorchsParameterNamesAndShapes) {
  const auto model = MakeModel("resnet18", {3, 32, 32, 10});
  ExpectSameLayers(DescribeLayers(*model), synthetic::ResNet18Layers(10));
  EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST(Models, ResNet18TakesTheInputChannelCount) {
  const auto model = MakeModel("resnet18", {1, 28, 28, 10});
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  ASSERT_EQ(layers.size(), 62u);
  EXPECT_EQ(layers[0].shape, (std::vector<int64_t>{64, 1, 3, 3}));
  EXPECT_EQ(model->forward(torch::randn({2, 1, 28, 28})).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST(Models, MlpMatchesTheSyntheticMlp) {
  const auto model = MakeModel("mlp", {1, 28, 28, 10});
  ExpectSameLayers(DescribeLayers(*model), synthetic::MlpLayers());
}

TEST(Models, CnnClassifiesImages) {
  const auto model = MakeModel("cnn", {1, 28, 28, 10});
  EXPECT_EQ(model->forward(torch::randn({3, 1, 28, 28})).sizes(), (std::vector<int64_t>{3, 10}));
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  ASSERT_EQ(layers.size(), 8u);
  EXPECT_EQ(layers[0].name, "conv1.weight");
  EXPECT_EQ(layers[4].shape, (std::vector<int64_t>{128, 32 * 7 * 7}));
}

int64_t ParameterCount(const Model& model) {
  int64_t n = 0;
  for (const torch::Tensor& p : model.parameters()) n += p.numel();
  return n;
}

TEST(Models, CifarModelsHaveThePapersParameterCounts) {
  // Table 8 (CIFAR-10) and, for ResNet-18, Table 9 (CIFAR-100).
  EXPECT_EQ(ParameterCount(*MakeModel("resnet18", {3, 32, 32, 10})), 11173962);
  EXPECT_EQ(ParameterCount(*MakeModel("resnet18", {3, 32, 32, 100})), 11220132);
  EXPECT_EQ(ParameterCount(*MakeModel("vgg19bn", {3, 32, 32, 10})), 20565834);
}

TEST(Models, Vgg19BnIsSixteenConvolutionsWithBatchNormAndThreeLinearLayers) {
  const auto model = MakeModel("vgg19bn", {3, 32, 32, 10});
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  int convolutions = 0, norms = 0, linears = 0;
  for (const LayerInfo& l : layers) {
    if (l.shape.size() == 4) ++convolutions;
    if (l.name.find(".running_mean") != std::string::npos) ++norms;
    if (l.shape.size() == 2) ++linears;
  }
  EXPECT_EQ(convolutions, 16);
  EXPECT_EQ(linears, 3);
  // Named as PyTorch's nn.Sequential names them.
  EXPECT_EQ(layers.front().name, "features.0.weight");
  EXPECT_EQ(layers[2].name, "features.1.weight");  // the first BatchNorm
  EXPECT_EQ(layers.back().name, "classifier.6.bias");
  EXPECT_EQ(layers.back().shape, (std::vector<int64_t>{10}));
  EXPECT_EQ(norms, 0) << "buffers are not parameters";
  model->eval();
  EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
  // Fashion-MNIST's 28x28 images are padded to 32x32: same layers, same classifier.
  const auto padded = MakeModel("vgg19bn", {1, 28, 28, 10});
  padded->eval();
  EXPECT_EQ(padded->forward(torch::randn({2, 1, 28, 28})).sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(DescribeLayers(*padded).size(), layers.size());
  EXPECT_THROW(MakeModel("vgg19bn", {1, 24, 24, 10}), InputError);
}

TEST(Models, LstmLanguageModelPredictsEveryNextToken) {
  torch::manual_seed(1);
  const auto model = MakeModel("lstm", {1, 1, 1, 50}, ModelOptions().lstm_size(16).dropout(0));
  const std::vector<LayerInfo> layers = DescribeLayers(*model);
  std::vector<std::string> names;
  for (const LayerInfo& l : layers) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"encoder.weight", "rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0",
                                             "rnn.bias_hh_l0", "rnn.weight_ih_l1", "rnn.weight_hh_l1", "rnn.bias_ih_l1",
                                             "rnn.bias_hh_l1", "decoder.weight", "decoder.bias"}));
  EXPECT_EQ(layers[1].shape, (std::vector<int64_t>{4 * 16, 16}));
  // [streams, T] windows give one row of logits per (stream, position).
  const torch::Tensor tokens = torch::randint(0, 50, {3, 7}, torch::kInt64);
  const torch::Tensor first = model->forward(tokens);
  EXPECT_EQ(first.sizes(), (std::vector<int64_t>{21, 50}));
  // The hidden state is carried to the next window, until reset.
  const torch::Tensor carried = model->forward(tokens);
  EXPECT_FALSE(torch::allclose(first, carried));
  model->ResetState();
  EXPECT_TRUE(torch::allclose(first, model->forward(tokens)));
  // Carried state is detached: backward reaches only the current window.
  model->forward(tokens).sum().backward();
}

// Each worker seeds its default generator with WorkerSeed after the shared
// initial weights: dropout masks then differ between ranks (W workers are one
// batch of W x B, not W copies of the same mask) and repeat on every run.
TEST(Models, DropoutMasksDifferBetweenRanksAndRepeatPerRank) {
  torch::manual_seed(5);
  const auto model = MakeModel("lstm", {1, 1, 1, 50}, ModelOptions().lstm_size(16).dropout(0.5));
  model->train();
  const torch::Tensor tokens = torch::randint(0, 50, {4, 6}, torch::kInt64);
  auto output_on_rank = [&](int rank) {
    torch::manual_seed(WorkerSeed(5, rank));
    model->ResetState();
    return model->forward(tokens).detach().clone();
  };
  const torch::Tensor rank0 = output_on_rank(0);
  const torch::Tensor rank1 = output_on_rank(1);
  EXPECT_FALSE(torch::allclose(rank0, rank1)) << "ranks 0 and 1 drew the same dropout masks";
  EXPECT_TRUE(torch::equal(rank0, output_on_rank(0))) << "a rank's masks must repeat with its seed";
  // Distinct seeds for many ranks and for neighbouring run seeds.
  std::set<uint64_t> seeds;
  for (int64_t seed : {1, 2}) {
    for (int rank = 0; rank < 64; ++rank) seeds.insert(WorkerSeed(seed, rank));
  }
  EXPECT_EQ(seeds.size(), 128u);
}

TEST(Models, TiedLstmSharesTheEmbeddingAndListsItOnce) {
  const auto untied = MakeModel("lstm", {1, 1, 1, 50}, ModelOptions().lstm_size(16));
  const auto tied = MakeModel("lstm", {1, 1, 1, 50}, ModelOptions().lstm_size(16).tie_weights(true));
  EXPECT_EQ(ParameterCount(*untied) - ParameterCount(*tied), 50 * 16);
  const std::vector<LayerInfo> layers = DescribeLayers(*tied);
  EXPECT_EQ(layers.back().name, "decoder.bias");
  EXPECT_EQ(layers.size(), 10u);
  tied->forward(torch::randint(0, 50, {2, 5}, torch::kInt64)).sum().backward();
  // The embedding's gradient holds both uses: lookup rows and decoder.
  EXPECT_GT(tied->parameters()[0].grad().ne(0).sum().item<int64_t>(), 16 * 5);
}

TEST(Models, SameSeedSameWeights) {
  torch::manual_seed(5);
  const auto a = MakeModel("cnn", {1, 28, 28, 10});
  torch::manual_seed(5);
  const auto b = MakeModel("cnn", {1, 28, 28, 10});
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(a->parameters()[i], b->parameters()[i]));
  }
  EXPECT_THROW(MakeModel("vgg", {1, 28, 28, 10}), InputError);
  torch::manual_seed(5);
  const auto c = MakeModel("lstm", {1, 1, 1, 30}, ModelOptions().lstm_size(8));
  torch::manual_seed(5);
  const auto d = MakeModel("lstm", {1, 1, 1, 30}, ModelOptions().lstm_size(8));
  for (size_t i = 0; i < c->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(c->parameters()[i], d->parameters()[i]));
  }
}

}  // namespace
}  // namespace accordion
