// The data accordion-train reads, and each rank's view of it.
//
// Image sets - MNIST-format IDX files (Fashion-MNIST, MNIST), binary CIFAR-10
// and CIFAR-100, a synthetic set for tests - load into memory once (CIFAR as
// bytes, normalised per batch: a quarter of the memory), so a batch is one
// index_select. A word-level text file feeds the LSTM language model.
//
// TrainingData is what the trainer asks of either kind: this rank's batches
// of an epoch at a given global batch, its share of the test split, and its
// share of the fixed batch the Hessian estimate uses.
#ifndef ACCORDION_TRAINER_DATASETS_H_
#define ACCORDION_TRAINER_DATASETS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace accordion {

struct TrainOptions;

// What a model needs to know about its input.
struct InputShape {
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t classes = 10;  // labels; for a language model, the vocabulary size
};

struct Dataset {
  // [N, C, H, W]: uint8 pixels (normalised by Normalised()), or float32
  // values already normalised.
  torch::Tensor images;
  torch::Tensor labels;  // int64 [N]
  // Per channel, for uint8 images: (pixel / 255 - mean) / std.
  std::vector<double> mean, std;
  int64_t size() const { return labels.size(0); }
};

struct DataSplits {
  Dataset train;
  Dataset test;
  InputShape shape;
};

// `dataset` is fashion-mnist, mnist, cifar10, cifar100 or synthetic; `dir`
// holds its files. With `limit_samples` > 0 only the first that many training
// samples are kept (the synthetic set then has exactly that many). CIFAR is
// normalised with the paper's channel statistics (appendix A). Throws
// InputError.
DataSplits LoadDataSplits(const std::string& dataset, const std::string& dir, int64_t limit_samples);

// Float32 model inputs from `raw`, rows of data.images.
torch::Tensor Normalised(const Dataset& data, const torch::Tensor& raw);

// Normalised inputs and labels of the samples `ids` (int64).
std::pair<torch::Tensor, torch::Tensor> Gather(const Dataset& data, const torch::Tensor& ids);

// The paper's CIFAR augmentation on normalised `images` [n, C, H, W]: a
// random crop of the image padded by 4 black pixels, flipped horizontally
// with probability 1/2. The draw depends on (seed, epoch, sample id) only, so
// it does not change with the number of workers or across a resume.
torch::Tensor Augment(const Dataset& data, const torch::Tensor& images, const std::vector<int64_t>& ids, uint64_t seed,
                      int epoch);

// One rank's inputs and next-step targets.
struct Batch {
  torch::Tensor inputs;   // images [n, C, H, W]; token ids [streams, T]
  torch::Tensor targets;  // int64 [n]; next tokens [streams * T] (row-major)
  int64_t count() const { return targets.defined() ? targets.numel() : 0; }
};

class TrainingData {
 public:
  // Loads `options`' dataset for `rank` of `world_size`. Throws InputError.
  static std::unique_ptr<TrainingData> Load(const TrainOptions& options, int world_size, int rank);
  virtual ~TrainingData() = default;

  virtual InputShape shape() const = 0;
  // What the trace calls train_samples: images, or for a language model the
  // (stream, window) sequences of one epoch - so that analysis'
  // StepsPerEpoch(train_samples, batch, world) equals the epoch's steps.
  virtual int64_t train_samples() const = 0;

  // Reshuffles for `epoch`; its steps carry `global_batch` samples.
  virtual void StartEpoch(int epoch, int64_t global_batch) = 0;
  virtual int64_t steps() const = 0;
  // This rank's share of step `step` of the current epoch.
  virtual Batch TrainBatch(int64_t step) const = 0;
  // This rank's share of the test split, in order (a language model carries
  // its hidden state from one call to the next).
  virtual void ForEachTestBatch(const std::function<void(const Batch&)>& fn) const = 0;
  // This rank's share of a fixed batch of `size` training samples
  // (sequences), drawn from the run's seed: the same at every call.
  virtual Batch HessianBatch(int64_t size) const = 0;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DATASETS_H_
