// SYNTHETIC traces for tests, examples and benchmarks: shaped like real
// models (ResNet-18's 62 parameter tensors, a small MLP), with gradient norms
// that fall fast after the start and after each LR decay, as in the paper's
// Figure 2a. No training produced them and run.synthetic says so.
#ifndef ACCORDION_TESTS_SUPPORT_SYNTHETIC_TRACE_H_
#define ACCORDION_TESTS_SUPPORT_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion::synthetic {

// The 62 parameter tensors of ResNet-18 (CIFAR variant: 3x3 stem, no max
// pool), in PyTorch's parameters() order.
std::vector<LayerInfo> ResNet18Layers(int num_classes = 10);
// A 784-256-128-10 MLP: 6 tensors.
std::vector<LayerInfo> MlpLayers();

// The run of a trace a test writes by hand: an MLP on `dataset`, the rest
// of RunInfo at its defaults for the test to set as it needs.
RunInfo MlpRun(const std::string& dataset, int64_t train_samples, int64_t batch_size, int epochs_planned);

struct SyntheticTraceOptions {
  std::string model = "resnet18";  // resnet18 or mlp
  int epochs = 30;
  int world_size = 4;
  Scheme scheme = Scheme::kPowerSgd;
  Policy policy = Policy::kAccordion;
  double level_low = 2;
  double level_high = 1;
  double eta = 0.5;
  int interval = 10;
  int64_t batch_size = 512;  // global
  int64_t train_samples = 50000;
  double base_lr = 0.1;
  int warmup_epochs = 5;
  std::vector<int> decay_epochs = {20};  // LR / 10 from each of these on
  int sampled_iterations = 2;            // per-iteration rows per epoch and rank
  uint64_t seed = 1;
  RunStatus final_status = RunStatus::kComplete;
  // run.writer: kWriterSynthetic, or another writer a test stands in for
  // (kWriterPythonHook). run.synthetic stays true.
  std::string writer = kWriterSynthetic;
  // false: every epoch's test loss and accuracy kNotRecorded, as the Python
  // hook writes them when the script gives none.
  bool record_test_metrics = true;
};

// The LR of `epoch` under the options' warm-up and step decay.
double SyntheticLr(const SyntheticTraceOptions& options, int epoch);

// Writes a complete synthetic trace to `path` (replacing any file there).
void WriteSyntheticTrace(const std::string& path, const SyntheticTraceOptions& options);

}  // namespace accordion::synthetic

#endif  // ACCORDION_TESTS_SUPPORT_SYNTHETIC_TRACE_H_
