// The models accordion-train trains: an MLP, a small CNN, the CIFAR variants
// of ResNet-18 (3x3 stem, no max-pool) and VGG-19 with batch norm, and a
// 2-layer LSTM language model. Parameter names and order are those of the
// PyTorch implementations the paper used, so traces from this trainer and
// from PyTorch runs line up (ResNet-18: conv1.weight, bn1.*,
// layer1.0.conv1.weight, ..., linear.bias; VGG: features.0.weight, ...,
// classifier.6.bias; LSTM: encoder.weight, rnn.weight_ih_l0, ..., decoder.*).
// For CIFAR-10 ResNet-18 has 11,173,962 and VGG-19-BN 20,565,834 parameters,
// the paper's Table 8. A user's own model comes as a TorchScript file
// (LoadTorchScriptModel).
#ifndef ACCORDION_TRAINER_MODELS_H_
#define ACCORDION_TRAINER_MODELS_H_

#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "common/options.h"
#include "traces/records.h"
#include "trainer/datasets.h"
#include "trainer/train_options.h"

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
// the global generator (seed it first). A TorchScript file (IsModelFile in
// train_options.h) is LoadTorchScriptModel's. Throws InputError otherwise.
std::shared_ptr<Model> MakeModel(const std::string& name, const InputShape& shape,
                                 const ModelOptions& options = ModelOptions());

// The TorchScript module at `path` (torch.jit.script(model).save(path) in
// Python), loaded on the CPU with torch::jit::load and seen as a Model: its
// parameters are the module's trainable ones (requires_grad), in
// named_parameters() order, under its names (fc1.weight, layers.0.bias, ...),
// each once (a tied weight is listed where it first appears); its buffers and
// frozen parameters are buffers (broadcast and checkpointed, never
// exchanged). The tensors are the module's own: the optimizer, to(),
// checkpoint loads change what its forward() uses. train() / eval() reach
// the module's `training` flags. Its weights are the file's (the seed does
// not draw them). Throws InputError when the file cannot be loaded, has no
// forward() or no trainable parameter.
std::shared_ptr<Model> LoadTorchScriptModel(const std::string& path);

// One training step's forward and backward of `model` on `batch`, as the
// trainer takes it, checked: forward() must run and return float logits
// [batch.count(), shape.classes], and every parameter must get a gradient
// (the gradient exchange waits for each). Throws InputError, one line,
// starting with `what` (e.g. "--model net.pt"). Leaves gradients behind.
void CheckModelTrains(Model& model, const Batch& batch, const InputShape& shape, const std::string& what);

// --model FILE checked before any worker starts (by the launcher, or rank 0
// under torchrun): loads it and the dataset as rank 0 of `world_size` sees
// it, and runs CheckModelTrains on its first training batch. Throws
// InputError.
void CheckModelFile(const TrainOptions& options, int world_size);

// The model's parameters as trace layers (ids, names, shapes, numel), in
// parameters() order; the communication fields are left for AnnotateLayers.
std::vector<LayerInfo> DescribeLayers(const torch::nn::Module& model);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_MODELS_H_
