#include "trainer/models.h"

#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include <torch/script.h>
#include <torch/torch.h>

#include "common/errors.h"

namespace accordion {

namespace {

namespace nn = torch::nn;

class Mlp : public Model {
 public:
  explicit Mlp(const InputShape& s)
      : fc1_(register_module("fc1", nn::Linear(s.channels * s.height * s.width, 256))),
        fc2_(register_module("fc2", nn::Linear(256, 128))),
        fc3_(register_module("fc3", nn::Linear(128, s.classes))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(fc1_(x.flatten(1)));
    x = torch::relu(fc2_(x));
    return fc3_(x);
  }

 private:
  nn::Linear fc1_, fc2_, fc3_;
};

class Cnn : public Model {
 public:
  explicit Cnn(const InputShape& s)
      : conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(s.channels, 16, 5).padding(2)))),
        conv2_(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(16, 32, 5).padding(2)))),
        fc1_(register_module("fc1", nn::Linear(32 * (s.height / 4) * (s.width / 4), 128))),
        fc2_(register_module("fc2", nn::Linear(128, s.classes))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::max_pool2d(torch::relu(conv1_(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2_(x)), 2);
    x = torch::relu(fc1_(x.flatten(1)));
    return fc2_(x);
  }

 private:
  nn::Conv2d conv1_, conv2_;
  nn::Linear fc1_, fc2_;
};

nn::Conv2d Conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", Conv3x3(in, out, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", Conv3x3(out, out, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module(
          "shortcut",
          nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)), nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_(conv1_(x)));
    out = bn2_(conv2_(out));
    out += shortcut_ ? shortcut_->forward(x) : x;
    return torch::relu(out);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Sequential shortcut_{nullptr};
};

class ResNet18 : public Model {
 public:
  explicit ResNet18(const InputShape& s)
      : conv1_(register_module("conv1", Conv3x3(s.channels, 64, 1))),
        bn1_(register_module("bn1", nn::BatchNorm2d(64))) {
    int64_t in = 64;
    const int64_t widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
      nn::Sequential blocks;
      for (int b = 0; b < 2; ++b) {
        const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
        blocks->push_back(std::make_shared<BasicBlock>(in, widths[stage], stride));
        in = widths[stage];
      }
      stages_.push_back(register_module("layer" + std::to_string(stage + 1), blocks));
    }
    linear_ = register_module("linear", nn::Linear(512, s.classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn1_(conv1_(x)));
    for (auto& stage : stages_) x = stage->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return linear_(x);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  std::vector<nn::Sequential> stages_;
  nn::Linear linear_{nullptr};
};

// VGG-19 with batch norm as in the PyTorch CIFAR implementation the paper
// borrows (pytorch-vgg-cifar10): sixteen 3x3 convolutions with bias, each
// followed by BatchNorm and ReLU, five max-pools, then a 512-512-512-classes
// classifier with dropout. 32x32 inputs end the convolutions at 512 x 1 x 1.
// 28x28 images (Fashion-MNIST) are first padded by 2 on each side, as
// LeNet-5 padded MNIST; the padding is 0, the dataset's mean once normalised.
class Vgg19Bn : public Model {
 public:
  explicit Vgg19Bn(const InputShape& s) : pad_((kSide - s.height) / 2) {
    constexpr int64_t kPool = 0;
    const int64_t config[] = {64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
                              512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool};
    int64_t in = s.channels;
    for (int64_t width : config) {
      if (width == kPool) {
        features_->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
        continue;
      }
      features_->push_back(nn::Conv2d(nn::Conv2dOptions(in, width, 3).padding(1)));
      features_->push_back(nn::BatchNorm2d(width));
      features_->push_back(nn::Functional(torch::relu));
      in = width;
    }
    register_module("features", features_);
    classifier_->push_back(nn::Dropout(0.5));
    classifier_->push_back(nn::Linear(512, 512));
    classifier_->push_back(nn::Functional(torch::relu));
    classifier_->push_back(nn::Dropout(0.5));
    classifier_->push_back(nn::Linear(512, 512));
    classifier_->push_back(nn::Functional(torch::relu));
    classifier_->push_back(nn::Linear(512, s.classes));
    register_module("classifier", classifier_);
  }

  static constexpr int64_t kSide = 32;

  torch::Tensor forward(torch::Tensor x) override {
    if (pad_ > 0) x = torch::constant_pad_nd(x, {pad_, pad_, pad_, pad_});
    return classifier_->forward(features_->forward(x).flatten(1));
  }

 private:
  int64_t pad_;
  nn::Sequential features_, classifier_;
};

// A decoder tied to the embedding owns only its bias (named decoder.bias,
// as PyTorch names it): LibTorch lists a shared tensor once per module that
// registers it, and the trainer must see every parameter exactly once.
class TiedDecoderImpl : public nn::Module {
 public:
  explicit TiedDecoderImpl(int64_t vocabulary) : bias(register_parameter("bias", torch::zeros({vocabulary}))) {}
  torch::Tensor bias;
};
TORCH_MODULE(TiedDecoder);

// The word-level language model of PyTorch's word_language_model example:
// embedding, a 2-layer LSTM, a linear decoder (optionally sharing the
// embedding's weights), dropout after the embedding and each LSTM layer.
class LstmLanguageModel : public Model {
 public:
  LstmLanguageModel(const InputShape& s, const ModelOptions& o)
      : encoder_(register_module("encoder", nn::Embedding(s.classes, o.lstm_size()))),
        rnn_(register_module(
            "rnn",
            nn::LSTM(
                nn::LSTMOptions(o.lstm_size(), o.lstm_size()).num_layers(2).dropout(o.dropout()).batch_first(true)))),
        dropout_(register_module("drop", nn::Dropout(o.dropout()))) {
    torch::NoGradGuard no_grad;
    encoder_->weight.uniform_(-0.1, 0.1);
    if (o.tie_weights()) {
      tied_decoder_ = register_module("decoder", TiedDecoder(s.classes));
    } else {
      decoder_ = register_module("decoder", nn::Linear(o.lstm_size(), s.classes));
      decoder_->weight.uniform_(-0.1, 0.1);
      decoder_->bias.zero_();
    }
  }

  torch::Tensor forward(torch::Tensor tokens) override {
    torch::Tensor x = dropout_(encoder_(tokens));
    // The state carried over is detached: backprop stops at the window's start.
    const bool carry = state_ && std::get<0>(*state_).size(1) == tokens.size(0);
    auto output =
        carry ? rnn_(x, std::make_tuple(std::get<0>(*state_).detach(), std::get<1>(*state_).detach())) : rnn_(x);
    state_ = std::get<1>(output);
    torch::Tensor h = dropout_(std::get<0>(output)).reshape({-1, rnn_->options.hidden_size()});
    return decoder_ ? decoder_(h) : torch::linear(h, encoder_->weight, tied_decoder_->bias);
  }

  void ResetState() override { state_.reset(); }

 private:
  nn::Embedding encoder_;
  nn::LSTM rnn_;
  nn::Dropout dropout_;
  nn::Linear decoder_{nullptr};
  TiedDecoder tied_decoder_{nullptr};
  std::optional<std::tuple<torch::Tensor, torch::Tensor>> state_;
};

// A user's TorchScript module as a Model. nn::Module names no parameter
// with a dot, so the module's hierarchy is mirrored by empty modules that
// register its tensors (the same tensors, not copies) under the last part of
// their names: named_parameters() then gives back "fc1.weight", and
// save() / load() / to() / the optimizer act on the tensors forward() reads.
class TorchScriptModel : public Model {
 public:
  explicit TorchScriptModel(torch::jit::Module module) : module_(std::move(module)) {
    std::unordered_set<const void*> seen;  // a tied weight is listed by each module holding it
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      if (!seen.insert(p.value.unsafeGetTensorImpl()).second) continue;
      const auto [owner, leaf] = OwnerOf(p.name);
      if (p.value.requires_grad()) {
        owner->register_parameter(leaf, p.value);
      } else {
        owner->register_buffer(leaf, p.value);  // frozen: shared at start, never exchanged
      }
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
      if (!seen.insert(b.value.unsafeGetTensorImpl()).second) continue;
      const auto [owner, leaf] = OwnerOf(b.name);
      owner->register_buffer(leaf, b.value);
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    c10::IValue out = module_.forward({std::move(x)});
    if (!out.isTensor()) throw InputError("its forward() returned a " + out.tagKind() + ", not a tensor of logits");
    return out.toTensor();
  }

  void train(bool on = true) override {
    Model::train(on);
    module_.train(on);
  }

  bool HasForward() const { return module_.find_method("forward").has_value(); }

 private:
  // The mirror module that holds `dotted`'s tensor, and the tensor's own name.
  std::pair<torch::nn::Module*, std::string> OwnerOf(const std::string& dotted) {
    torch::nn::Module* owner = this;
    std::string path;
    size_t begin = 0;
    for (size_t dot = dotted.find('.'); dot != std::string::npos; dot = dotted.find('.', begin)) {
      const std::string part = dotted.substr(begin, dot - begin);
      path += (path.empty() ? "" : ".") + part;
      auto& child = mirrors_[path];
      if (!child) child = owner->register_module(part, std::make_shared<torch::nn::Module>());
      owner = child.get();
      begin = dot + 1;
    }
    return {owner, dotted.substr(begin)};
  }

  torch::jit::Module module_;
  std::map<std::string, std::shared_ptr<torch::nn::Module>> mirrors_;  // by dotted path
};

// One line of what LibTorch said. An error inside a TorchScript forward()
// comes with the script's traceback; its last line is the exception raised
// ("RuntimeError: mat1 and mat2 shapes cannot be multiplied ...").
std::string OneLine(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    lines.push_back(line.substr(first, last - first + 1));
  }
  if (lines.empty()) return "no message";
  const bool traceback = text.find("Traceback of TorchScript") != std::string::npos;
  return traceback ? lines.back() : lines.front();
}

std::string ShapeText(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d > 0 ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

}  // namespace

std::shared_ptr<Model> LoadTorchScriptModel(const std::string& path) {
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const std::exception& e) {
    throw InputError("--model " + path + " is not a TorchScript file torch::jit::load can read (" + OneLine(e) +
                     "); write one with torch.jit.script(model).save(path) (torch.save files are not TorchScript)");
  }
  auto model = std::make_shared<TorchScriptModel>(std::move(module));
  if (!model->HasForward()) throw InputError("--model " + path + " has no forward() method");
  if (model->parameters().empty()) {
    throw InputError("--model " + path + " has no trainable parameters (none with requires_grad) to train");
  }
  return model;
}

void CheckModelTrains(Model& model, const Batch& batch, const InputShape& shape, const std::string& what) {
  const std::string input = "a batch of inputs " + ShapeText(batch.inputs) + " (" +
                            std::string(c10::toString(batch.inputs.scalar_type())) + ")";
  model.train();
  model.ResetState();
  torch::Tensor logits;
  try {
    logits = model.forward(batch.inputs);
  } catch (const InputError& e) {
    throw InputError(what + ": on " + input + " " + e.what());
  } catch (const std::exception& e) {
    throw InputError(what + ": forward() fails on " + input + ": " + OneLine(e));
  }
  const std::vector<int64_t> want = {batch.count(), shape.classes};
  if (!logits.defined() || !logits.is_floating_point() || logits.sizes().vec() != want) {
    const std::string got = !logits.defined()
                                ? std::string("an undefined tensor")
                                : ShapeText(logits) + " (" + std::string(c10::toString(logits.scalar_type())) + ")";
    throw InputError(what + ": forward() returns " + got + " on " + input + "; the trainer needs float logits [" +
                     std::to_string(want[0]) + ", " + std::to_string(want[1]) +
                     "]: one row per target, one column per class");
  }
  try {
    torch::nn::functional::cross_entropy(logits, batch.targets).backward();
  } catch (const std::exception& e) {
    throw InputError(what + ": backward through the cross-entropy of its logits fails: " + OneLine(e));
  }
  for (const auto& p : model.named_parameters()) {
    if (!p.value().grad().defined()) {
      throw InputError(what + ": parameter " + p.key() +
                       " gets no gradient from the loss (unused by forward()?); every trainable parameter's "
                       "gradient is exchanged: remove it or freeze it (requires_grad_(False)) before exporting");
    }
  }
}

void CheckModelFile(const TrainOptions& options, int world_size) {
  const std::shared_ptr<Model> model = LoadTorchScriptModel(options.model);
  const std::unique_ptr<TrainingData> data = TrainingData::Load(options, world_size, 0);
  data->StartEpoch(0, GlobalMicroBatchOf(options));
  if (data->steps() == 0) return;  // nothing to train on; the trainer says so
  CheckModelTrains(*model, data->TrainBatch(0), data->shape(), "--model " + options.model);
}

std::shared_ptr<Model> MakeModel(const std::string& name, const InputShape& shape, const ModelOptions& options) {
  if (IsModelFile(name)) return LoadTorchScriptModel(name);
  if (name == "mlp") return std::make_shared<Mlp>(shape);
  if (name == "cnn") return std::make_shared<Cnn>(shape);
  if (name == "resnet18") return std::make_shared<ResNet18>(shape);
  if (name == "vgg19bn") {
    if (shape.height != shape.width || (shape.height != 32 && shape.height != 28)) {
      throw InputError("vgg19bn needs 32x32 or 28x28 images, not " + std::to_string(shape.height) + "x" +
                       std::to_string(shape.width));
    }
    return std::make_shared<Vgg19Bn>(shape);
  }
  if (name == "lstm") return std::make_shared<LstmLanguageModel>(shape, options);
  throw InputError("unknown model '" + name + "' (models: mlp, cnn, resnet18, vgg19bn, lstm)");
}

std::vector<LayerInfo> DescribeLayers(const torch::nn::Module& model) {
  std::vector<LayerInfo> layers;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    LayerInfo l;
    l.layer_id = static_cast<int>(layers.size());
    l.name = item.key();
    l.shape = item.value().sizes().vec();
    l.numel = item.value().numel();
    layers.push_back(std::move(l));
  }
  return layers;
}

}  // namespace accordion
