// What one step of gradient compression and Accordion's bookkeeping cost,
// per tensor, on ResNet-18's and the MLP's shapes: PowerSGD's three phases,
// TopK's selection, and the raw-gradient accumulation Accordion adds to
// every step. Figures only; compare_with_ddp.py measures whole runs.
#include <benchmark/benchmark.h>

#include <torch/torch.h>

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
  }
  state.SetBytesProcessed(state.iterations() * rows * cols * 4);
}
BENCHMARK(BM_PowerSgdStep)->Apply(Shapes)->Unit(benchmark::kMicrosecond);

void BM_TopKCompress(benchmark::State& state) {
  torch::set_num_threads(1);
  const int64_t numel = state.range(0) * state.range(1), k = numel / 10;  // TopK 10 %
  TopKCompressor c;
  torch::Tensor grad = torch::randn({numel}), packed = torch::empty({2 * k});
  for (auto _ : state) c.Compress(0, grad, k, packed);
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

}  // namespace
}  // namespace accordion

BENCHMARK_MAIN();
