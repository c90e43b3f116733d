#include "trainer/datasets.h"

#include <torch/torch.h>

#include "common/errors.h"
#include "trainer/idx_file.h"

namespace accordion {

namespace {

constexpr int64_t kSyntheticTrain = 2048;
constexpr int64_t kSyntheticTest = 512;
// The synthetic set does not depend on --seed: runs with different seeds
// train on the same data.
constexpr uint64_t kSyntheticSeed = 20210401;

// Per-dataset pixel statistics, as torchvision's tutorials use them.
struct PixelStats {
  double mean;
  double std;
};

Dataset FromIdx(const std::string& images_path, const std::string& labels_path, PixelStats stats,
                int64_t limit) {
  const IdxArray images = ReadIdxFile(images_path);
  const IdxArray labels = ReadIdxFile(labels_path);
  CheckImagesAndLabels(images.header, labels.header);
  int64_t n = images.header.dims[0];
  if (limit > 0) n = std::min(n, limit);
  const int64_t rows = images.header.dims[1], cols = images.header.dims[2];
  Dataset d;
  torch::Tensor raw = torch::from_blob(const_cast<uint8_t*>(images.data.data()), {n, 1, rows, cols},
                                       torch::kUInt8);
  d.images = raw.to(torch::kFloat32).div_(255.0).sub_(stats.mean).div_(stats.std);
  d.labels = torch::from_blob(const_cast<uint8_t*>(labels.data.data()), {n}, torch::kUInt8)
                 .to(torch::kInt64);
  if (d.labels.max().item<int64_t>() >= 10) throw InputError(labels_path + ": labels beyond 9");
  return d;
}

// Ten classes, each a fixed random 28x28 pattern, seen through heavy noise:
// learnable in a few epochs, not in one step.
Dataset Synthetic(int64_t n, const torch::Tensor& templates, at::Generator& gen) {
  Dataset d;
  d.labels = torch::randint(0, 10, {n}, gen, torch::kInt64);
  d.images = (templates.index_select(0, d.labels) * 0.15 + torch::randn({n, 1, 28, 28}, gen))
                 .to(torch::kFloat32);
  return d;
}

}  // namespace

DataSplits LoadDataSplits(const std::string& dataset, const std::string& dir, int64_t limit_samples) {
  DataSplits s;
  if (dataset == "synthetic") {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(kSyntheticSeed);
    const torch::Tensor templates = torch::randn({10, 1, 28, 28}, gen);
    s.train = Synthetic(limit_samples > 0 ? limit_samples : kSyntheticTrain, templates, gen);
    s.test = Synthetic(kSyntheticTest, templates, gen);
    return s;
  }
  PixelStats stats{0.2860, 0.3530};  // Fashion-MNIST
  if (dataset == "mnist") stats = {0.1307, 0.3081};
  else if (dataset != "fashion-mnist") throw InputError("unknown dataset '" + dataset + "'");
  const IdxSplitFiles files = FindIdxSplitFiles(dir);
  s.train = FromIdx(files.train_images, files.train_labels, stats, limit_samples);
  s.test = FromIdx(files.test_images, files.test_labels, stats, 0);
  s.shape = {1, s.train.images.size(2), s.train.images.size(3), 10};
  return s;
}

std::pair<torch::Tensor, torch::Tensor> Gather(const Dataset& data, const torch::Tensor& ids) {
  return {data.images.index_select(0, ids), data.labels.index_select(0, ids)};
}

}  // namespace accordion
