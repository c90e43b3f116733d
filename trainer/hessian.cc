#include "trainer/hessian.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include <torch/torch.h>

#include "common/errors.h"

namespace accordion {

namespace {

double Dot(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += (a[i].to(torch::kFloat64) * b[i].to(torch::kFloat64)).sum().item<double>();
  return sum;
}

// A random unit vector shaped like `parameters`, the same on every rank.
std::vector<torch::Tensor> StartingVector(const std::vector<torch::Tensor>& parameters, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<torch::Tensor> v;
  for (const torch::Tensor& p : parameters) {
    v.push_back(torch::randn(p.sizes(), gen, torch::kFloat32).to(p.options()));
  }
  const double norm = std::sqrt(Dot(v, v));
  for (torch::Tensor& t : v) t.div_(norm);
  return v;
}

}  // namespace

std::vector<ParameterBlock> TopLevelBlocks(const std::vector<std::pair<std::string, torch::Tensor>>& named) {
  std::vector<ParameterBlock> blocks;
  for (const auto& [name, tensor] : named) {
    const std::string block = name.substr(0, name.find('.'));
    auto it = std::find_if(blocks.begin(), blocks.end(), [&](const ParameterBlock& b) { return b.name == block; });
    if (it == blocks.end()) it = blocks.insert(blocks.end(), ParameterBlock{block, {}});
    it->parameters.push_back(tensor);
  }
  return blocks;
}

HessianEigenEstimator::HessianEigenEstimator(const HessianOptions& options, Communicator* comm)
    : options_(options), comm_(comm) {
  if (!(options_.tolerance() > 0)) throw InputError("the Hessian estimate's tolerance must be > 0");
  if (options_.max_iterations() < 1) throw InputError("the Hessian estimate needs at least one iteration");
}

std::vector<torch::Tensor> HessianEigenEstimator::Product(const std::vector<torch::Tensor>& grads,
                                                          const std::vector<torch::Tensor>& parameters,
                                                          const std::vector<torch::Tensor>& v) const {
  // Only gradients that carry a graph can be differentiated again; the
  // others (parameters this shard's loss does not reach) contribute zero.
  std::vector<torch::Tensor> outputs, grad_outputs;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined() && grads[i].requires_grad()) {
      outputs.push_back(grads[i]);
      grad_outputs.push_back(v[i]);
    }
  }
  std::vector<torch::Tensor> hv;
  if (!outputs.empty()) {
    hv = torch::autograd::grad(outputs, parameters, grad_outputs, /*retain_graph=*/true,
                               /*create_graph=*/false, /*allow_unused=*/true);
  } else {
    hv.resize(parameters.size());
  }
  for (size_t i = 0; i < hv.size(); ++i) {
    if (!hv[i].defined()) hv[i] = torch::zeros_like(parameters[i]);
  }
  if (comm_ != nullptr && comm_->world_size() > 1) {
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& t : hv) flat.push_back(t.reshape({-1}));
    torch::Tensor all = torch::cat(flat);
    comm_->AllReduceSum(all)->Wait();
    int64_t at = 0;
    for (torch::Tensor& t : hv) {
      t = all.narrow(0, at, t.numel()).view(t.sizes());
      at += t.numel();
    }
  }
  return hv;
}

HessianEstimate HessianEigenEstimator::Estimate(const torch::Tensor& loss, const std::vector<torch::Tensor>& parameters,
                                                const std::string& block) const {
  const auto start = std::chrono::steady_clock::now();
  if (parameters.empty()) throw std::logic_error("Hessian estimate over no parameters");
  std::vector<torch::Tensor> grads;
  if (loss.requires_grad()) {
    grads = torch::autograd::grad({loss}, parameters, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                  /*create_graph=*/true, /*allow_unused=*/true);
  } else {
    grads.resize(parameters.size());  // an empty shard: nothing to differentiate
  }
  HessianEstimate e;
  e.block = block;
  std::vector<torch::Tensor> v = StartingVector(parameters, options_.seed());
  std::optional<double> previous;
  while (e.iterations < options_.max_iterations()) {
    const std::vector<torch::Tensor> hv = Product(grads, parameters, v);
    ++e.iterations;
    e.eigenvalue = Dot(v, hv);  // Rayleigh quotient: v has unit norm
    const double norm = std::sqrt(Dot(hv, hv));
    if (norm == 0) {
      e.converged = true;  // H v = 0: v is in the null space, lambda is 0
      break;
    }
    for (size_t i = 0; i < v.size(); ++i) v[i] = hv[i] / norm;
    if (previous && std::fabs(e.eigenvalue - *previous) <= options_.tolerance() * std::fabs(*previous)) {
      e.converged = true;
      break;
    }
    previous = e.eigenvalue;
  }
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return e;
}

std::vector<HessianEstimate> HessianEigenEstimator::EstimateModule(torch::nn::Module& module,
                                                                   const std::function<torch::Tensor()>& loss,
                                                                   bool per_block) const {
  const bool was_training = module.is_training();
  module.eval();
  std::vector<HessianEstimate> out;
  try {
    const auto start = std::chrono::steady_clock::now();
    const torch::Tensor value = loss();
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.push_back(Estimate(value, module.parameters()));
    out.back().seconds += build_s;
    if (per_block) {
      std::vector<std::pair<std::string, torch::Tensor>> named;
      for (const auto& item : module.named_parameters()) named.emplace_back(item.key(), item.value());
      for (const ParameterBlock& block : TopLevelBlocks(named)) {
        out.push_back(Estimate(value, block.parameters, block.name));
      }
    }
  } catch (...) {
    module.train(was_training);
    throw;
  }
  module.train(was_training);
  return out;
}

}  // namespace accordion
