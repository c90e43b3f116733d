// The models accordion-train trains: an MLP, a small CNN, the CIFAR variants
// of ResNet-18 (3x3 stem, no max-pool) and VGG-19 with batch norm, and a
// 2-layer LSTM language model. Parameter names and order are those of the
// PyTorch implementations the paper used, so traces from this trainer and
// from PyTorch runs line up (ResNet-18: conv1.weight, bn1.*,
// layer1.0.conv1.weight, ..., linear.bias; VGG: features.0.weight, ...,
// classifier.6.bias; LSTM: encoder.weight, rnn.weight_ih_l0, ..., decoder.*).
// For CIFAR-10 ResNet-18 has 11,173,962 and VGG-19-BN 20,565,834 parameters,
// the paper's Table 8.
#ifndef ACCORDION_TRAINER_MODELS_H_
#define ACCORDION_TRAINER_MODELS_H_

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "common/options.h"
#include "traces/records.h"
#include "trainer/datasets.h"

namespace accordion {

class Model : public torch::nn::Module {
 public:
  // Logits, one row per target: [batch, classes] for images [batch, C, H,
  // W]; [streams * T, vocabulary] for token windows [streams, T] (row-major,
  // as Batch::targets).
  virtual torch::Tensor forward(torch::Tensor inputs) = 0;
  // A language model carries its hidden state from one window to the next,
  // detached (truncated backprop through time); this forgets it. Called at
  // the start of every epoch, evaluation and Hessian estimate.
  virtual void ResetState() {}
};

// What the LSTM language model is built with.
class ModelOptions {
  /// The LSTM's width (embedding = hidden width). Default: 650.
  ACCORDION_ARG(int64_t, lstm_size) = 650;
  /// Dropout probability. Default: 0.4.
  ACCORDION_ARG(double, dropout) = 0.4;
  /// Share the embedding and output weights. Default: false.
  ACCORDION_ARG(bool, tie_weights) = false;
};

// "mlp" (784-256-128-10 on 28x28), "cnn" (two 5x5 convolutions, two linear
// layers), "resnet18", "vgg19bn" (32x32 inputs) or "lstm" (shape.classes is
// the vocabulary). Weights come from LibTorch's default initialisers (the
// LSTM's embedding and decoder: uniform in +-0.1, as PyTorch's example) and
// the global generator (seed it first). Throws InputError otherwise.
std::shared_ptr<Model> MakeModel(const std::string& name, const InputShape& shape,
                                 const ModelOptions& options = ModelOptions());

// The model's parameters as trace layers (ids, names, shapes, numel), in
// parameters() order; the communication fields are left for AnnotateLayers.
std::vector<LayerInfo> DescribeLayers(const torch::nn::Module& model);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_MODELS_H_
