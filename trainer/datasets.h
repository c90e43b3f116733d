// Datasets the trainer reads: MNIST-format IDX files (Fashion-MNIST, MNIST)
// and a synthetic set for tests. Everything is loaded into memory once,
// normalised, as float tensors: a batch is then one index_select.
#ifndef ACCORDION_TRAINER_DATASETS_H_
#define ACCORDION_TRAINER_DATASETS_H_

#include <cstdint>
#include <string>

#include <torch/types.h>

namespace accordion {

// What a model needs to know about its input.
struct InputShape {
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t classes = 10;
};

struct Dataset {
  torch::Tensor images;  // float32 [N, C, H, W], normalised
  torch::Tensor labels;  // int64 [N]
  int64_t size() const { return labels.size(0); }
};

struct DataSplits {
  Dataset train;
  Dataset test;
  InputShape shape;
};

// `dataset` is fashion-mnist, mnist or synthetic; `dir` holds the IDX files.
// With `limit_samples` > 0 only the first that many training samples are
// kept (the synthetic set then has exactly that many). Throws InputError.
DataSplits LoadDataSplits(const std::string& dataset, const std::string& dir, int64_t limit_samples);

// Inputs and labels of the samples `ids` (int64), ready for the model.
std::pair<torch::Tensor, torch::Tensor> Gather(const Dataset& data, const torch::Tensor& ids);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DATASETS_H_
