// The models accordion-train trains: an MLP, a small CNN and ResNet-18 (the
// CIFAR variant: 3x3 stem, no max-pool). Parameter names and order are
// PyTorch's, so traces from this trainer and from PyTorch runs line up
// (ResNet-18: conv1.weight, bn1.*, layer1.0.conv1.weight, ..., linear.bias).
#ifndef ACCORDION_TRAINER_MODELS_H_
#define ACCORDION_TRAINER_MODELS_H_

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "traces/records.h"
#include "trainer/datasets.h"

namespace accordion {

class Model : public torch::nn::Module {
 public:
  // Logits [batch, classes] for images [batch, C, H, W].
  virtual torch::Tensor forward(torch::Tensor images) = 0;
};

// "mlp" (784-256-128-10 on 28x28), "cnn" (two 5x5 convolutions, two linear
// layers) or "resnet18". Weights come from LibTorch's default initialisers
// and the global generator (seed it first). Throws InputError otherwise.
std::shared_ptr<Model> MakeModel(const std::string& name, const InputShape& shape);

// The model's parameters as trace layers (ids, names, shapes, numel), in
// parameters() order; the communication fields are left for AnnotateLayers.
std::vector<LayerInfo> DescribeLayers(const torch::nn::Module& model);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_MODELS_H_
