// What one step of gradient compression and Accordion's bookkeeping cost,
// per tensor, on ResNet-18's and the MLP's shapes: PowerSGD's three phases,
// TopK's selection, and the raw-gradient accumulation Accordion (and AdaQS's
// moments) add to every step; and what one Hessian-vector product of the eigenvalue
// estimate costs per model. Figures only; compare_with_ddp.py measures
// whole runs.
#include <benchmark/benchmark.h>

#include <torch/torch.h>

#include "trainer/gradient_moments.h"
#include "trainer/models.h"
#include "trainer/powersgd_compressor.h"
#include "trainer/topk_compressor.h"

namespace accordion {
namespace {

// (rows, cols): MLP fc1 (256 x 784), ResNet-18 layer3 conv (256 x 2304),
// layer4 conv (512 x 4608).
void Shapes(benchmark::internal::Benchmark* b) {
  for (const auto& [rows, cols] : {std::pair{256, 784}, {256, 2304}, {512, 4608}}) b->Args({rows, cols});
}

void BM_PowerSgdStep(benchmark::State& state) {
  torch::set_num_threads(1);
  const int64_t rows = state.range(0), cols = state.range(1), rank = 2;
  PowerSgdCompressor c(PowerSgdOptions().seed(1));
  c.SetRank(0, rows, cols, static_cast<int>(rank), 0);
  torch::Tensor grad = torch::randn({rows, cols}), out = torch::empty({rows, cols});
  torch::Tensor p = torch::empty({rows, rank}), q = torch::empty({cols, rank});
  for (auto _ : state) {
    c.ComputeP(0, grad, p);
    c.ComputeQ(0, p, q);
    c.Decompress(0, p, q, 2, out);
    c.Commit(0, q);
  }
  state.SetBytesProcessed(state.iterations() * rows * cols * 4);
}
BENCHMARK(BM_PowerSgdStep)->Apply(Shapes)->Unit(benchmark::kMicrosecond);

void BM_TopKCompress(benchmark::State& state) {
  torch::set_num_threads(1);
  const int64_t numel = state.range(0) * state.range(1), k = numel / 10;  // TopK 10 %
  TopKCompressor c;
  torch::Tensor grad = torch::randn({numel}), packed = torch::empty({2 * k});
  for (auto _ : state) {
    c.Compress(0, grad, k, packed);
    c.Commit(0);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * state.range(1) * 4);
}
BENCHMARK(BM_TopKCompress)->Apply(Shapes)->Unit(benchmark::kMicrosecond);

// Accordion's per-step cost: one add of the bucket's raw gradients into the
// epoch's accumulator (GradientExchange::Launch).
void BM_AccordionAccumulate(benchmark::State& state) {
  torch::set_num_threads(1);
  const int64_t numel = state.range(0) * state.range(1);
  torch::Tensor sum = torch::zeros({numel}), grad = torch::randn({numel});
  for (auto _ : state) sum.add_(grad);
  state.SetBytesProcessed(state.iterations() * numel * 4);
}
BENCHMARK(BM_AccordionAccumulate)->Apply(Shapes)->Unit(benchmark::kMicrosecond);

// AdaQS's per-step cost beside it: the squared norms of a bucket of
// `layers` tensors of the shape into the epoch's moments.
void BM_AdaqsMoments(benchmark::State& state) {
  torch::set_num_threads(1);
  const int64_t numel = state.range(0) * state.range(1), layers = 6;
  const torch::Tensor buffer = torch::randn({numel * layers});
  std::vector<torch::Tensor> views;
  for (int64_t l = 0; l < layers; ++l) views.push_back(buffer.narrow(0, l * numel, numel));
  const torch::Tensor ids = torch::arange(layers, torch::kLong);
  torch::Tensor moments = torch::zeros({layers + 1}, torch::kFloat64);
  for (auto _ : state) AccumulateSquaredNorms(views, ids, 1.0, moments);
  state.SetBytesProcessed(state.iterations() * numel * layers * 4);
}
BENCHMARK(BM_AdaqsMoments)->Apply(Shapes)->Unit(benchmark::kMicrosecond);

// One power iteration of HessianEigenEstimator: a double backward through
// the model on the fixed batch (args: model, batch), in eval mode.
void BM_HessianVectorProduct(benchmark::State& state) {
  torch::set_num_threads(1);
  const char* names[] = {"mlp", "cnn", "resnet18"};
  const std::string name = names[state.range(0)];
  const int64_t batch = state.range(1);
  const InputShape shape = name == "resnet18" ? InputShape{3, 32, 32, 10} : InputShape{1, 28, 28, 10};
  torch::manual_seed(1);
  const auto model = MakeModel(name, shape);
  model->eval();
  const torch::Tensor x = torch::randn({batch, shape.channels, shape.height, shape.width});
  const torch::Tensor y = torch::randint(0, 10, {batch}, torch::kInt64);
  const std::vector<torch::Tensor> params = model->parameters();
  const torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
  const std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, params, {}, true, true);
  std::vector<torch::Tensor> v;
  for (const torch::Tensor& p : params) v.push_back(torch::randn_like(p));
  for (auto _ : state) {
    benchmark::DoNotOptimize(torch::autograd::grad(grads, params, v, /*retain_graph=*/true));
  }
  state.SetLabel(name + ", batch " + std::to_string(batch));
}
BENCHMARK(BM_HessianVectorProduct)->Args({0, 512})->Args({1, 512})->Args({2, 32})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accordion

BENCHMARK_MAIN();
