// The datasets as tensors: CIFAR-10/100 directories written here, the
// paper's normalisation and augmentation, and what TrainingData hands each
// rank (batches, test share, the Hessian's fixed batch) for images and text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <torch/torch.h>

#include "common/errors.h"
#include "tests/support/run_command.h"
#include "tests/trainer/data_writers.h"
#include "tests/support/temp_dir_test.h"
#include "trainer/datasets.h"
#include "trainer/train_options.h"

namespace accordion {
namespace {

using test_support::TestPixel;

using Datasets = test_support::TempDirTest;

TEST_F(Datasets, CifarLoadsWithThePapersNormalisation) {
  test_support::WriteCifarDir(dir_, CifarVariant::kCifar10, 3, 4);
  const DataSplits d = LoadDataSplits("cifar10", dir_, 0);
  EXPECT_EQ(d.train.size(), 15);
  EXPECT_EQ(d.test.size(), 4);
  EXPECT_EQ(d.shape.channels, 3);
  EXPECT_EQ(d.shape.classes, 10);
  EXPECT_EQ(d.train.images.sizes(), (std::vector<int64_t>{15, 3, 32, 32}));
  const auto [x, y] = Gather(d.train, torch::tensor({7}, torch::kInt64));
  EXPECT_EQ(y[0].item<int64_t>(), 7);
  // Appendix A: per channel (pixel / 255 - mu) / sigma, mu = (.49, .48, .45), sigma = (.25, .24, .26).
  const double mean[] = {0.49, 0.48, 0.45}, sd[] = {0.25, 0.24, 0.26};
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(x[0][c][31][0].item<float>(), (TestPixel(7, c) / 255.0 - mean[c]) / sd[c], 1e-5) << c;
  }
  const DataSplits hundred = [&] {
    test_support::WriteCifarDir(dir_, CifarVariant::kCifar100, 6, 2);
    return LoadDataSplits("cifar100", dir_, 4);
  }();
  EXPECT_EQ(hundred.train.size(), 4);
  EXPECT_EQ(hundred.shape.classes, 100);
}

TEST_F(Datasets, AugmentationCropsAndFlipsTheSameWayForTheSameSampleAndEpoch) {
  Dataset d;
  d.mean = {0.5};
  d.std = {0.5};
  // One 1x6x6 image whose pixels count 0..35, normalised.
  d.images = torch::arange(36, torch::kFloat32).view({1, 1, 6, 6}).to(torch::kUInt8);
  d.labels = torch::zeros({1}, torch::kInt64);
  const torch::Tensor image = Normalised(d, d.images);
  const torch::Tensor black = torch::full({}, (0.0 - 0.5) / 0.5);
  std::set<std::string> outcomes;
  for (int64_t id = 0; id < 40; ++id) {
    const torch::Tensor a = Augment(d, image, {id}, 7, 3);
    EXPECT_TRUE(torch::equal(a, Augment(d, image, {id}, 7, 3))) << "same draw for the same sample and epoch";
    EXPECT_EQ(a.sizes(), image.sizes());
    // Every output pixel is an input pixel or padding.
    const torch::Tensor is_input = std::get<0>(torch::min(torch::abs(a.view({-1, 1}) - image.view({1, -1})), 1)) < 1e-6;
    const torch::Tensor is_padding = torch::abs(a.view({-1}) - black) < 1e-6;
    EXPECT_TRUE((is_input | is_padding).all().item<bool>());
    outcomes.insert(std::to_string(a.sum().item<float>()) + "/" + std::to_string(a[0][0][0][0].item<float>()));
  }
  EXPECT_GT(outcomes.size(), 10u) << "crops and flips should vary with the sample";
  EXPECT_FALSE(torch::equal(Augment(d, image, {1}, 7, 3), Augment(d, image, {1}, 7, 4)) &&
               torch::equal(Augment(d, image, {2}, 7, 3), Augment(d, image, {2}, 7, 4)) &&
               torch::equal(Augment(d, image, {3}, 7, 3), Augment(d, image, {3}, 7, 4)))
      << "another epoch, another draw";
}

TrainOptions ImageOptions(const std::string& dir) {
  TrainOptions o;
  o.dataset = "cifar10";
  o.data_dir = dir;
  o.seed = 4;
  return o;
}

TEST_F(Datasets, RanksShareStepsTestSetAndTheFixedHessianBatch) {
  test_support::WriteCifarDir(dir_, CifarVariant::kCifar10, 4, 5);
  const TrainOptions o = ImageOptions(dir_);
  auto one = TrainingData::Load(o, 1, 0);
  auto r0 = TrainingData::Load(o, 2, 0);
  auto r1 = TrainingData::Load(o, 2, 1);
  EXPECT_EQ(one->train_samples(), 20);
  for (auto* d : {one.get(), r0.get(), r1.get()}) d->StartEpoch(1, 8);
  EXPECT_EQ(one->steps(), 3);
  EXPECT_EQ(r0->steps(), 3);
  // A step's shares together are the one-process batch of that step.
  const Batch whole = one->TrainBatch(1);
  const torch::Tensor joined = torch::cat({r0->TrainBatch(1).inputs, r1->TrainBatch(1).inputs});
  EXPECT_TRUE(torch::equal(whole.inputs, joined));
  // A larger global batch: fewer, larger steps (the batch scheme's switch).
  one->StartEpoch(2, 16);
  EXPECT_EQ(one->steps(), 2);
  EXPECT_EQ(one->TrainBatch(0).count(), 16);
  // The test split, shared out in order.
  int64_t tested = 0;
  for (auto* d : {r0.get(), r1.get()}) d->ForEachTestBatch([&](const Batch& b) { tested += b.count(); });
  EXPECT_EQ(tested, 5);
  // The Hessian's batch: fixed, the same at every call, split over ranks.
  const Batch h = one->HessianBatch(6);
  EXPECT_EQ(h.count(), 6);
  EXPECT_TRUE(torch::equal(h.inputs, one->HessianBatch(6).inputs));
  EXPECT_TRUE(torch::equal(h.targets, torch::cat({r0->HessianBatch(6).targets, r1->HessianBatch(6).targets})));
  EXPECT_GT(std::set<int64_t>(h.targets.data_ptr<int64_t>(), h.targets.data_ptr<int64_t>() + 6).size(), 1u);
}

TEST_F(Datasets, TextIsCutIntoStreamsAndWindowsWithNextTokenTargets) {
  // Tokens: "w0 ... w9 <eos>" per line, 10 lines (110 tokens); last line validates.
  std::ofstream out(dir_ + "/text.txt");
  for (int line = 0; line < 10; ++line) {
    for (int w = 0; w < 10; ++w) out << "w" << w << (w < 9 ? " " : "\n");
  }
  out.close();
  TrainOptions o;
  o.model = "lstm";
  o.dataset = "tokens";
  o.data_file = dir_ + "/text.txt";
  o.valid_fraction = 0.1;
  o.batch_size = 4;
  o.bptt = 5;
  auto one = TrainingData::Load(o, 1, 0);
  auto r1 = TrainingData::Load(o, 2, 1);
  one->StartEpoch(0, 4);
  r1->StartEpoch(0, 4);
  // 99 training tokens -> 4 streams of 24; 23 predictions each in windows of 5.
  EXPECT_EQ(one->steps(), 5);
  EXPECT_EQ(one->train_samples(), 4 * 5);
  EXPECT_EQ(one->shape().classes, 12);  // <unk>, w0..w9, <eos>
  const Batch first = one->TrainBatch(0);
  EXPECT_EQ(first.inputs.sizes(), (std::vector<int64_t>{4, 5}));
  // Targets are the inputs shifted by one token, row-major.
  EXPECT_TRUE(torch::equal(first.targets.view({4, 5}).narrow(1, 0, 4), first.inputs.narrow(1, 1, 4)));
  const Batch last = one->TrainBatch(4);
  EXPECT_EQ(last.inputs.size(1), 3);  // 23 = 4 * 5 + 3
  // Rank 1 of 2 reads streams 2 and 3.
  EXPECT_TRUE(torch::equal(r1->TrainBatch(2).inputs, one->TrainBatch(2).inputs.narrow(0, 2, 2)));
  int64_t scored = 0;
  one->ForEachTestBatch([&](const Batch& b) { scored += b.count(); });
  // 11 validation tokens: 5 streams of 2 tokens, one prediction each.
  EXPECT_EQ(scored, 5);
  const Batch h = one->HessianBatch(3);
  EXPECT_EQ(h.inputs.sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE(torch::equal(h.targets.view({3, 5}).narrow(1, 0, 4), h.inputs.narrow(1, 1, 4)));
}

}  // namespace
}  // namespace accordion
