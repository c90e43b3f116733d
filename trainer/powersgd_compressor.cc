#include "trainer/powersgd_compressor.h"

#include <torch/torch.h>

#include "common/errors.h"

namespace accordion {

namespace {

torch::Tensor RandomColumns(int64_t rows, int64_t cols, uint64_t seed, int layer, int epoch) {
  // Every rank derives the same stream from (seed, layer, epoch).
  const uint64_t mixed = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(layer) << 32) ^
                         static_cast<uint64_t>(epoch + 1) * 0xBF58476D1CE4E5B9ull;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(mixed);
  return torch::randn({rows, cols}, gen);
}

std::string Key(int layer, const char* what) { return "powersgd." + std::to_string(layer) + "." + what; }

}  // namespace

void GramSchmidt(torch::Tensor matrix, double epsilon) {
  const int64_t r = matrix.size(1);
  for (int64_t i = 0; i < r; ++i) {
    torch::Tensor col = matrix.narrow(1, i, 1);
    col.div_(col.norm().add_(epsilon));
    if (i + 1 < r) {
      torch::Tensor rest = matrix.narrow(1, i + 1, r - i - 1);
      rest.sub_(col.mm(col.t().mm(rest)));
    }
  }
}

PowerSgdCompressor::LayerState& PowerSgdCompressor::State(int layer) {
  auto it = layers_.find(layer);
  if (it == layers_.end() || !it->second.q.defined()) {
    throw std::logic_error("PowerSGD: layer " + std::to_string(layer) + " has no rank");
  }
  return it->second;
}

void PowerSgdCompressor::SetRank(int layer, int64_t rows, int64_t cols, int rank, int epoch) {
  if (rank < 1 || rows < 1 || cols < 1) throw InputError("PowerSGD needs a rank >= 1 and a matrix");
  const int64_t r = std::min<int64_t>({rank, rows, cols});
  LayerState& st = layers_[layer];
  if (!st.memory.defined()) st.memory = torch::zeros({rows, cols}, options_.device());
  if (st.q.defined() && st.q.size(0) == cols && st.q.size(1) == r) return;
  torch::Tensor q = torch::empty({cols, r}, options_.device());
  int64_t keep = 0;
  if (st.q.defined() && st.q.size(0) == cols) {
    keep = std::min(st.q.size(1), r);
    q.narrow(1, 0, keep).copy_(st.q.narrow(1, 0, keep));
  }
  if (keep < r) q.narrow(1, keep, r - keep).copy_(RandomColumns(cols, r - keep, options_.seed(), layer, epoch));
  st.q = q;
}

int64_t PowerSgdCompressor::rank_of(int layer) const {
  auto it = layers_.find(layer);
  return it == layers_.end() || !it->second.q.defined() ? 0 : it->second.q.size(1);
}

torch::Tensor PowerSgdCompressor::q(int layer) const {
  auto it = layers_.find(layer);
  return it == layers_.end() ? torch::Tensor() : it->second.q;
}

void PowerSgdCompressor::ComputeP(int layer, const torch::Tensor& grad, torch::Tensor p) {
  LayerState& st = State(layer);
  if (!st.staged.defined() || !st.staged.sizes().equals(st.memory.sizes())) st.staged = torch::empty_like(st.memory);
  torch::add_out(st.staged, st.memory, grad.view(st.memory.sizes()));
  torch::mm_out(p, st.staged, st.q);
}

void PowerSgdCompressor::ComputeQ(int layer, torch::Tensor p, torch::Tensor q) {
  LayerState& st = State(layer);
  GramSchmidt(p, options_.epsilon());
  torch::mm_out(q, st.staged.t(), p);
}

void PowerSgdCompressor::Decompress(int layer, const torch::Tensor& p, torch::Tensor q, int world_size,
                                    torch::Tensor grad) {
  LayerState& st = State(layer);
  q.div_(world_size);
  torch::Tensor out = grad.view(st.memory.sizes());
  torch::mm_out(out, p, q.t());
  st.staged.sub_(out);
}

void PowerSgdCompressor::Commit(int layer, const torch::Tensor& q) {
  LayerState& st = State(layer);
  std::swap(st.memory, st.staged);
  st.q.copy_(q);
}

void PowerSgdCompressor::ScaleMemories(double factor) {
  for (auto& [layer, st] : layers_) {
    if (st.memory.defined()) st.memory.mul_(factor);
  }
}

torch::Tensor PowerSgdCompressor::TakeMemory(int layer) {
  auto it = layers_.find(layer);
  if (it == layers_.end() || !it->second.memory.defined()) return {};
  torch::Tensor memory = std::move(it->second.memory);
  it->second.memory = torch::Tensor();
  it->second.staged = torch::Tensor();
  return memory;
}

void PowerSgdCompressor::Save(torch::serialize::OutputArchive& archive) const {
  std::vector<int64_t> ids;
  for (const auto& [layer, st] : layers_) {
    ids.push_back(layer);
    if (st.memory.defined()) archive.write(Key(layer, "memory"), st.memory);
    if (st.q.defined()) archive.write(Key(layer, "q"), st.q);
  }
  archive.write("powersgd.layers", torch::tensor(ids, torch::kInt64));
}

void PowerSgdCompressor::Load(torch::serialize::InputArchive& archive) {
  layers_.clear();
  torch::Tensor ids;
  archive.read("powersgd.layers", ids);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int layer = static_cast<int>(ids[i].item<int64_t>());
    LayerState& st = layers_[layer];
    // Fresh tensors: try_read into a defined tensor would reuse its dtype.
    torch::Tensor memory, q;
    if (archive.try_read(Key(layer, "memory"), memory)) st.memory = memory.clone();
    if (archive.try_read(Key(layer, "q"), q)) st.q = q.clone();
  }
}

}  // namespace accordion
