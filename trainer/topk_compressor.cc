#include "trainer/topk_compressor.h"

#include <torch/torch.h>

namespace accordion {

void TopKCompressor::Compress(int layer, const torch::Tensor& grad, int64_t k, torch::Tensor packed) {
  const torch::Tensor flat = grad.reshape({-1});
  torch::Tensor acc = flat;
  if (error_feedback_) {
    torch::Tensor& residual = residuals_[layer];
    if (!residual.defined()) residual = torch::zeros_like(flat);
    torch::Tensor& staged = staged_[layer];
    if (!staged.defined() || staged.numel() != flat.numel()) staged = torch::empty_like(flat);
    acc = torch::add_out(staged, residual, flat);
  }
  // sorted=false: the order of the kept entries does not matter to the sum.
  const torch::Tensor idx = std::get<1>(acc.abs().topk(k, /*dim=*/0, /*largest=*/true, /*sorted=*/false));
  packed.narrow(0, 0, k).copy_(acc.index_select(0, idx));
  packed.narrow(0, k, k).view(torch::kInt32).copy_(idx);
  if (error_feedback_) acc.index_fill_(0, idx, 0.0);
}

void TopKCompressor::Decompress(const torch::Tensor& gathered, torch::Tensor grad) {
  const int64_t world = gathered.size(0);
  const int64_t k = gathered.size(1) / 2;
  const torch::Tensor values = gathered.narrow(1, 0, k).reshape({-1});
  const torch::Tensor indices =
      gathered.narrow(1, k, k).contiguous().view(torch::kInt32).reshape({-1}).to(torch::kInt64);
  torch::Tensor flat = grad.view({-1});
  flat.zero_();
  flat.index_add_(0, indices, values);
  flat.div_(static_cast<double>(world));
}

void TopKCompressor::Commit(int layer) {
  if (!error_feedback_) return;
  auto it = staged_.find(layer);
  if (it != staged_.end()) std::swap(residuals_[layer], it->second);
}

void TopKCompressor::ScaleResiduals(double factor) {
  for (auto& [layer, r] : residuals_) {
    if (r.defined()) r.mul_(factor);
  }
}

torch::Tensor TopKCompressor::residual(int layer) const {
  auto it = residuals_.find(layer);
  return it == residuals_.end() ? torch::Tensor() : it->second;
}

void TopKCompressor::Save(torch::serialize::OutputArchive& archive) const {
  std::vector<int64_t> ids;
  for (const auto& [layer, r] : residuals_) {
    ids.push_back(layer);
    archive.write("topk." + std::to_string(layer) + ".residual", r);
  }
  archive.write("topk.layers", torch::tensor(ids, torch::kInt64));
}

void TopKCompressor::Load(torch::serialize::InputArchive& archive) {
  residuals_.clear();
  torch::Tensor ids;
  archive.read("topk.layers", ids);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int layer = static_cast<int>(ids[i].item<int64_t>());
    torch::Tensor t;
    archive.read("topk." + std::to_string(layer) + ".residual", t);
    residuals_[layer] = t.clone();
  }
}

}  // namespace accordion
