#include "trainer/models.h"

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
          nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                         nn::BatchNorm2d(out)));
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

}  // namespace

std::shared_ptr<Model> MakeModel(const std::string& name, const InputShape& shape) {
  if (name == "mlp") return std::make_shared<Mlp>(shape);
  if (name == "cnn") return std::make_shared<Cnn>(shape);
  if (name == "resnet18") return std::make_shared<ResNet18>(shape);
  throw InputError("unknown model '" + name + "' (models: mlp, cnn, resnet18)");
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
