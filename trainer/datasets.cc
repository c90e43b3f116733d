#include "trainer/datasets.h"

#include <algorithm>
#include <random>

#include <torch/torch.h>

#include "common/errors.h"
#include "trainer/cifar_file.h"
#include "trainer/distributed_sampler.h"
#include "trainer/idx_file.h"
#include "trainer/token_file.h"
#include "trainer/train_options.h"

namespace accordion {

namespace {

constexpr int64_t kSyntheticTrain = 2048;
constexpr int64_t kSyntheticTest = 512;
// The synthetic set does not depend on --seed: runs with different seeds
// train on the same data.
constexpr uint64_t kSyntheticSeed = 20210401;
// Test samples scored per forward pass.
constexpr int64_t kEvalChunk = 1000;
// A language model is scored on this many validation streams, whatever the
// number of workers (PyTorch's word_language_model uses 10), so the numbers
// do not depend on how the run is spread.
constexpr int64_t kEvalStreams = 10;
// Mixed into the seed for the Hessian's fixed batch, so it is not the first
// training batch of epoch 0.
constexpr uint64_t kHessianSalt = 0x48455353ull;  // "HESS"
constexpr int64_t kCropPadding = 4;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The first `count` ids of a permutation of [0, n) drawn from `seed`: our
// own Fisher-Yates over mt19937_64, the same on every machine.
std::vector<int64_t> SeededSubset(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed);
  count = std::min(count, n);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(n - i));
    std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(j)]);
  }
  ids.resize(static_cast<size_t>(count));
  return ids;
}

// [begin, end) of `rank`'s contiguous share of `n` items.
std::pair<int64_t, int64_t> ShareOf(int64_t n, int world_size, int rank) {
  return {n * rank / world_size, n * (rank + 1) / world_size};
}

// Pixel bytes (uint8) with the statistics that normalise them.
Dataset FromBytes(torch::Tensor images, torch::Tensor labels, std::vector<double> mean, std::vector<double> std) {
  Dataset d;
  d.images = std::move(images);
  d.labels = std::move(labels);
  d.mean = std::move(mean);
  d.std = std::move(std);
  return d;
}

Dataset FromIdx(const std::string& images_path, const std::string& labels_path, double mean, double std,
                int64_t limit) {
  const IdxArray images = ReadIdxFile(images_path);
  const IdxArray labels = ReadIdxFile(labels_path);
  CheckImagesAndLabels(images.header, labels.header);
  int64_t n = images.header.dims[0];
  if (limit > 0) n = std::min(n, limit);
  const int64_t rows = images.header.dims[1], cols = images.header.dims[2];
  torch::Tensor pixels =
      torch::from_blob(const_cast<uint8_t*>(images.data.data()), {n, 1, rows, cols}, torch::kUInt8).clone();
  torch::Tensor y = torch::from_blob(const_cast<uint8_t*>(labels.data.data()), {n}, torch::kUInt8).to(torch::kInt64);
  if (y.max().item<int64_t>() >= 10) throw InputError(labels_path + ": labels beyond 9");
  return FromBytes(pixels, y, {mean}, {std});
}

Dataset FromCifar(const std::vector<std::string>& paths, CifarVariant variant, int64_t limit) {
  CifarRecords r = ReadCifarFiles(paths, variant, limit);
  const int64_t n = r.size();
  torch::Tensor pixels =
      torch::from_blob(r.pixels.data(), {n, kCifarChannels, kCifarSide, kCifarSide}, torch::kUInt8).clone();
  torch::Tensor labels = torch::from_blob(r.labels.data(), {n}, torch::kUInt8).to(torch::kInt64);
  // The paper's channel statistics (appendix A).
  return FromBytes(pixels, labels, {0.49, 0.48, 0.45}, {0.25, 0.24, 0.26});
}

// Ten classes, each a fixed random 28x28 pattern, seen through heavy noise:
// learnable in a few epochs, not in one step.
Dataset Synthetic(int64_t n, const torch::Tensor& templates, at::Generator& gen) {
  Dataset d;
  d.labels = torch::randint(0, 10, {n}, gen, torch::kInt64);
  d.images = (templates.index_select(0, d.labels) * 0.15 + torch::randn({n, 1, 28, 28}, gen)).to(torch::kFloat32);
  return d;
}

class ImageData : public TrainingData {
 public:
  ImageData(DataSplits splits, const TrainOptions& o, int world_size, int rank)
      : splits_(std::move(splits)),
        world_size_(world_size),
        rank_(rank),
        seed_(static_cast<uint64_t>(o.seed)),
        augment_(o.augment) {}

  InputShape shape() const override { return splits_.shape; }
  int64_t train_samples() const override { return splits_.train.size(); }

  void StartEpoch(int epoch, int64_t global_batch) override {
    if (!sampler_ || global_batch != global_batch_) {
      sampler_ = std::make_unique<DistributedSampler>(train_samples(), global_batch, world_size_, rank_, seed_);
      global_batch_ = global_batch;
    }
    sampler_->SetEpoch(epoch);
    epoch_ = epoch;
  }

  int64_t steps() const override { return sampler_->steps_per_epoch(); }

  Batch TrainBatch(int64_t step) const override {
    const std::vector<int64_t> ids = sampler_->Batch(step);
    auto [x, y] = Gather(splits_.train, torch::tensor(ids, torch::kInt64));
    if (augment_) x = Augment(splits_.train, x, ids, seed_, epoch_);
    return {x, y};
  }

  void ForEachTestBatch(const std::function<void(const Batch&)>& fn) const override {
    const Dataset& test = splits_.test;
    const auto [begin, end] = ShareOf(test.size(), world_size_, rank_);
    for (int64_t at = begin; at < end; at += kEvalChunk) {
      const int64_t len = std::min(kEvalChunk, end - at);
      fn({Normalised(test, test.images.narrow(0, at, len)), test.labels.narrow(0, at, len)});
    }
  }

  Batch HessianBatch(int64_t size) const override {
    const std::vector<int64_t> all = SeededSubset(train_samples(), size, seed_ ^ kHessianSalt);
    const auto [begin, end] = ShareOf(static_cast<int64_t>(all.size()), world_size_, rank_);
    const std::vector<int64_t> mine(all.begin() + begin, all.begin() + end);
    auto [x, y] = Gather(splits_.train, torch::tensor(mine, torch::kInt64));
    return {x, y};
  }

 private:
  DataSplits splits_;
  int world_size_;
  int rank_;
  uint64_t seed_;
  bool augment_;
  int epoch_ = 0;
  int64_t global_batch_ = 0;
  std::unique_ptr<DistributedSampler> sampler_;
};

// A token stream cut into `streams` rows read side by side, as PyTorch's
// word_language_model "batchifies" it: row s is the s-th contiguous piece.
torch::Tensor Streams(const std::vector<int64_t>& tokens, int64_t streams) {
  const int64_t length = static_cast<int64_t>(tokens.size()) / streams;
  return torch::tensor(tokens, torch::kInt64).narrow(0, 0, streams * length).view({streams, length});
}

// Window [at, at + len) of `rows` and the tokens that follow each position.
Batch Window(const torch::Tensor& rows, int64_t at, int64_t len) {
  return {rows.narrow(1, at, len).contiguous(), rows.narrow(1, at + 1, len).reshape({-1})};
}

class TokenData : public TrainingData {
 public:
  TokenData(TokenCorpus corpus, const TrainOptions& o, int world_size, int rank)
      : vocabulary_(static_cast<int64_t>(corpus.vocabulary.size())),
        streams_(o.batch_size),
        bptt_(o.bptt),
        world_size_(world_size),
        rank_(rank),
        seed_(static_cast<uint64_t>(o.seed)),
        train_tokens_(torch::tensor(corpus.train, torch::kInt64)) {
    const torch::Tensor all = Streams(corpus.train, streams_);
    if (all.size(1) < 2) throw InputError("too few training tokens for --batch-size streams of 2 tokens");
    const auto [begin, end] = ShareOf(streams_, world_size_, rank_);
    rows_ = all.narrow(0, begin, end - begin);
    steps_ = (all.size(1) - 1 + bptt_ - 1) / bptt_;
    const int64_t eval_streams =
        std::max<int64_t>(1, std::min<int64_t>(kEvalStreams, static_cast<int64_t>(corpus.valid.size()) / 2));
    const torch::Tensor valid = Streams(corpus.valid, eval_streams);
    const auto [vb, ve] = ShareOf(eval_streams, world_size_, rank_);
    valid_rows_ = valid.narrow(0, vb, ve - vb);
  }

  InputShape shape() const override { return {1, 1, 1, vocabulary_}; }
  int64_t train_samples() const override { return streams_ * steps_; }

  void StartEpoch(int, int64_t global_batch) override {
    if (global_batch != streams_) throw std::logic_error("a language model's batch is its fixed token streams");
  }
  int64_t steps() const override { return steps_; }

  Batch TrainBatch(int64_t step) const override {
    const int64_t at = step * bptt_;
    return Window(rows_, at, std::min<int64_t>(bptt_, rows_.size(1) - 1 - at));
  }

  void ForEachTestBatch(const std::function<void(const Batch&)>& fn) const override {
    if (valid_rows_.size(0) == 0) return;
    for (int64_t at = 0; at + 1 < valid_rows_.size(1); at += bptt_) {
      fn(Window(valid_rows_, at, std::min<int64_t>(bptt_, valid_rows_.size(1) - 1 - at)));
    }
  }

  Batch HessianBatch(int64_t size) const override {
    // `size` windows of bptt tokens at seeded offsets into the training text.
    const int64_t total = train_tokens_.size(0);
    const int64_t len = std::min<int64_t>(bptt_, total - 1);
    std::mt19937_64 rng(seed_ ^ kHessianSalt);
    std::vector<int64_t> starts(static_cast<size_t>(size));
    for (int64_t& s : starts) s = static_cast<int64_t>(rng() % static_cast<uint64_t>(total - len));
    const auto [begin, end] = ShareOf(size, world_size_, rank_);
    std::vector<torch::Tensor> inputs, targets;
    for (int64_t i = begin; i < end; ++i) {
      inputs.push_back(train_tokens_.narrow(0, starts[static_cast<size_t>(i)], len));
      targets.push_back(train_tokens_.narrow(0, starts[static_cast<size_t>(i)] + 1, len));
    }
    if (inputs.empty()) return {torch::empty({0, len}, torch::kInt64), torch::empty({0}, torch::kInt64)};
    return {torch::stack(inputs), torch::stack(targets).reshape({-1})};
  }

 private:
  int64_t vocabulary_;
  int64_t streams_;
  int64_t bptt_;
  int world_size_;
  int rank_;
  uint64_t seed_;
  torch::Tensor train_tokens_;
  torch::Tensor rows_;        // this rank's training streams
  torch::Tensor valid_rows_;  // this rank's validation streams
  int64_t steps_ = 0;
};

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
  if (dataset == "cifar10" || dataset == "cifar100") {
    const CifarVariant variant = dataset == "cifar10" ? CifarVariant::kCifar10 : CifarVariant::kCifar100;
    const CifarSplitFiles files = FindCifarFiles(dir, variant);
    s.train = FromCifar(files.train, variant, limit_samples);
    s.test = FromCifar({files.test}, variant, 0);
    s.shape = {kCifarChannels, kCifarSide, kCifarSide, CifarClasses(variant)};
    return s;
  }
  double mean = 0.2860, std = 0.3530;  // Fashion-MNIST, as torchvision's tutorials use it
  if (dataset == "mnist") {
    mean = 0.1307;
    std = 0.3081;
  } else if (dataset != "fashion-mnist") {
    throw InputError("unknown dataset '" + dataset + "'");
  }
  const IdxSplitFiles files = FindIdxSplitFiles(dir);
  s.train = FromIdx(files.train_images, files.train_labels, mean, std, limit_samples);
  s.test = FromIdx(files.test_images, files.test_labels, mean, std, 0);
  s.shape = {1, s.train.images.size(2), s.train.images.size(3), 10};
  return s;
}

torch::Tensor Normalised(const Dataset& data, const torch::Tensor& raw) {
  if (raw.scalar_type() != torch::kUInt8) return raw;
  const int64_t c = raw.size(1);
  const torch::Tensor mean = torch::tensor(data.mean, torch::kFloat32).view({1, c, 1, 1});
  const torch::Tensor std = torch::tensor(data.std, torch::kFloat32).view({1, c, 1, 1});
  return (raw.to(torch::kFloat32).div_(255.0) - mean).div_(std);
}

std::pair<torch::Tensor, torch::Tensor> Gather(const Dataset& data, const torch::Tensor& ids) {
  return {Normalised(data, data.images.index_select(0, ids)), data.labels.index_select(0, ids)};
}

torch::Tensor Augment(const Dataset& data, const torch::Tensor& images, const std::vector<int64_t>& ids, uint64_t seed,
                      int epoch) {
  const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  // What a black (0) pixel becomes once normalised: the padding's colour.
  torch::Tensor black = torch::zeros({c});
  for (int64_t i = 0; i < c && static_cast<size_t>(i) < data.mean.size(); ++i) {
    black[i] = -data.mean[static_cast<size_t>(i)] / data.std[static_cast<size_t>(i)];
  }
  torch::Tensor padded = black.view({1, c, 1, 1}).expand({n, c, h + 2 * kCropPadding, w + 2 * kCropPadding}).clone();
  padded.narrow(2, kCropPadding, h).narrow(3, kCropPadding, w).copy_(images);
  torch::Tensor out = torch::empty_like(images);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = SplitMix64(SplitMix64(seed ^ (static_cast<uint64_t>(epoch) << 32)) ^
                                  static_cast<uint64_t>(ids[static_cast<size_t>(i)]));
    const int64_t dy = static_cast<int64_t>(r % (2 * kCropPadding + 1));
    const int64_t dx = static_cast<int64_t>((r >> 8) % (2 * kCropPadding + 1));
    torch::Tensor crop = padded[i].narrow(1, dy, h).narrow(2, dx, w);
    out[i].copy_((r >> 16) & 1 ? crop.flip({2}) : crop);
  }
  return out;
}

std::unique_ptr<TrainingData> TrainingData::Load(const TrainOptions& o, int world_size, int rank) {
  if (o.dataset == "tokens") {
    return std::make_unique<TokenData>(ReadTokenCorpus(TokenCorpusOptionsOf(o)), o, world_size, rank);
  }
  return std::make_unique<ImageData>(LoadDataSplits(o.dataset, DataDirOf(o), o.limit_samples), o, world_size, rank);
}

}  // namespace accordion
