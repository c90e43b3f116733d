#include <gtest/gtest.h>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/support/synthetic_trace.h"
#include "trainer/models.h"

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

TEST(Models, SameSeedSameWeights) {
  torch::manual_seed(5);
  const auto a = MakeModel("cnn", {1, 28, 28, 10});
  torch::manual_seed(5);
  const auto b = MakeModel("cnn", {1, 28, 28, 10});
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    EXPECT_TRUE(torch::equal(a->parameters()[i], b->parameters()[i]));
  }
  EXPECT_THROW(MakeModel("vgg", {1, 28, 28, 10}), InputError);
}

}  // namespace
}  // namespace accordion
