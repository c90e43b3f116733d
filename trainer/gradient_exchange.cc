#include "trainer/gradient_exchange.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "trainer/powersgd_compressor.h"
#include "trainer/device_timing.h"
#include "trainer/gradient_moments.h"
#include "trainer/topk_compressor.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// |t|^2 as a float64 scalar on t's device: no host synchronisation, and no
// overflow where t's norm still fits a float.
torch::Tensor SquaredNorm(const torch::Tensor& t) { return t.norm().to(torch::kFloat64).square(); }

// The dtype a 16-bit cast sends (the scheme's WireFormat).
torch::ScalarType WireDtype(const SchemeDescription& d) {
  switch (d.wire) {
    case WireFormat::kFloat16:
      return torch::kHalf;
    case WireFormat::kBFloat16:
      return torch::kBFloat16;
    case WireFormat::kFloat32:
      break;
  }
  return torch::kFloat32;
}

// Runs `ready` after autograd accumulated a parameter's gradient. Our own
// FunctionPostHook rather than LambdaPostHook, whose constructor changed
// between LibTorch 1.13 and 2.x; the hook interface did not.
class GradientReadyHook : public torch::autograd::FunctionPostHook {
 public:
  explicit GradientReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    ready_();
    return outputs;
  }

 private:
  std::function<void()> ready_;
};

}  // namespace

class GradientExchange::Compressors {
 public:
  Compressors(const ExchangeOptions& o, torch::Device device)
      : powersgd(PowerSgdOptions().seed(o.seed()).epsilon(o.powersgd_epsilon()).device(device)),
        topk(o.scheme().topk_error_feedback()) {}
  PowerSgdCompressor powersgd;
  TopKCompressor topk;
};

struct GradientExchange::Flight {
  std::unique_ptr<CollectiveWork> work;
  size_t record = 0;  // index in timings_.collectives
  Clock::time_point start;
};

struct GradientExchange::Bucket {
  std::vector<int> dense_layers;       // sent in the dense all-reduce; first in the buffer
  std::vector<int> compressed_layers;  // PowerSGD low-rank or TopK-sparsified
  int64_t dense_numel = 0;
  torch::Tensor buffer;      // the gradients (each .grad is a view into it)
  torch::Tensor raw_sum;     // Accordion's accumulator, same layout, as of the last committed step
  torch::Tensor raw_staged;  // raw_sum with the running step's gradients added
  // The bucket's layers in buffer order, their flat views into the buffer
  // and their ids as a tensor: each step's squared norms go to raw_moments_.
  std::vector<torch::Tensor> layer_views;
  torch::Tensor layer_ids;
  // PowerSGD: P and Q factors of compressed_layers, concatenated.
  torch::Tensor p, q;
  struct Factors {
    int64_t rows, cols, rank, p_offset, q_offset;
  };
  std::vector<Factors> factors;  // indexed like compressed_layers
  torch::Tensor P(size_t i) const {
    const Factors& f = factors[i];
    return p.narrow(0, f.p_offset, f.rows * f.rank).view({f.rows, f.rank});
  }
  torch::Tensor Q(size_t i) const {
    const Factors& f = factors[i];
    return q.narrow(0, f.q_offset, f.cols * f.rank).view({f.cols, f.rank});
  }
  // Memories of layers that just stopped being compressed, sent with the
  // dense gradient at the next step (indexed like dense_layers).
  std::vector<torch::Tensor> folded_memory;
  // TopK: this rank's packed words and every rank's.
  torch::Tensor packed, gathered;
  std::vector<int64_t> packed_offset, k;
  // A 16-bit cast: the bucket's average in the wire format, summed in place.
  torch::Tensor wire;
  int pending = 0;  // gradients not ready yet in this step
  Flight dense, p_flight, q_flight, topk;
};

GradientExchange::GradientExchange(std::vector<torch::Tensor> parameters, std::vector<LayerInfo> layers,
                                   Communicator& comm, const ExchangeOptions& options)
    : parameters_(std::move(parameters)),
      layers_(std::move(layers)),
      comm_(comm),
      options_(options),
      compressor_(DescriptionOf(options.scheme().scheme()).compressor),
      device_(parameters_.empty() ? torch::Device(torch::kCPU) : parameters_[0].device()),
      compressors_(std::make_unique<Compressors>(options, device_)) {
  if (parameters_.size() != layers_.size()) throw std::logic_error("one LayerInfo per parameter");
  buckets_ = AssignBuckets(layers_, options_.bucket_bytes());
  bucket_of_.assign(layers_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (int l : buckets_[b].layers) bucket_of_[static_cast<size_t>(l)] = static_cast<int>(b);
  }
  timings_.grad_ready_s.assign(layers_.size(), 0.0);
  slots_.resize(layers_.size());
  raw_moments_ = torch::zeros({static_cast<int64_t>(layers_.size()) + 1},
                              torch::TensorOptions().dtype(torch::kFloat64).device(device_));
  step_moments_ = torch::zeros_like(raw_moments_);
  if (!options_.own_gradients()) return;
  for (size_t l = 0; l < parameters_.size(); ++l) {
    std::shared_ptr<torch::autograd::Node> acc = torch::autograd::impl::grad_accumulator(parameters_[l]);
    const int layer = static_cast<int>(l);
    // Runs after autograd accumulated the parameter's gradient into .grad.
    hook_keys_.push_back(
        acc->add_post_hook(std::make_unique<GradientReadyHook>([this, layer] { OnGradientReady(layer); })));
    accumulators_.push_back(std::move(acc));
  }
}

GradientExchange::~GradientExchange() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
}

torch::Tensor GradientExchange::GradView(int layer) const {
  return options_.own_gradients() ? parameters_[static_cast<size_t>(layer)].grad() : slots_[static_cast<size_t>(layer)];
}

void GradientExchange::GradientReady(int layer, const torch::Tensor& grad) {
  if (options_.own_gradients()) throw std::logic_error("GradientExchange::GradientReady without own_gradients(false)");
  if (!in_step_) return;
  torch::Tensor slot = slots_.at(static_cast<size_t>(layer));
  slot.copy_(grad.reshape(slot.sizes()));
  OnGradientReady(layer);
}

torch::Tensor GradientExchange::Gradient(int layer) const { return slots_.at(static_cast<size_t>(layer)); }

void GradientExchange::SetLevels(const std::vector<double>& levels, int epoch) {
  if (levels.size() != layers_.size()) throw std::logic_error("one level per layer");
  if (!state_.empty() && levels == levels_) return;
  levels_ = levels;
  // Raw sums survive a relayout: copy them over layer by layer.
  std::vector<torch::Tensor> raw;
  if (!state_.empty()) raw = RawGradientSums();
  const std::vector<PlannedCollective> plan = PlanStep(options_.scheme(), layers_, buckets_, levels_);
  std::vector<std::unique_ptr<Bucket>> next;
  for (size_t b = 0; b < buckets_.size(); ++b) next.push_back(std::make_unique<Bucket>());
  for (const PlannedCollective& c : plan) {
    Bucket& bucket = *next[static_cast<size_t>(c.bucket)];
    if (c.kind == CollectiveKind::kDense) {
      bucket.dense_layers = c.layers;
    } else {
      bucket.compressed_layers = c.layers;  // the same in each of the bucket's compressed collectives
    }
  }
  const int world = comm_.world_size();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = *next[b];
    int64_t offset = 0;
    std::vector<std::pair<int, int64_t>> placed;
    for (int l : bucket.dense_layers) {
      placed.emplace_back(l, offset);
      offset += layers_[static_cast<size_t>(l)].numel;
    }
    bucket.dense_numel = offset;
    for (int l : bucket.compressed_layers) {
      placed.emplace_back(l, offset);
      offset += layers_[static_cast<size_t>(l)].numel;
    }
    bucket.buffer = torch::zeros({offset}, device_);
    bucket.raw_sum = torch::zeros({offset}, device_);
    bucket.raw_staged = torch::empty({offset}, device_);
    std::vector<int64_t> ids;
    for (const auto& [l, at] : placed) {
      const LayerInfo& info = layers_[static_cast<size_t>(l)];
      bucket.layer_views.push_back(bucket.buffer.narrow(0, at, info.numel));
      ids.push_back(l);
      slots_[static_cast<size_t>(l)] = bucket.buffer.narrow(0, at, info.numel).view(info.shape);
      if (options_.own_gradients()) parameters_[static_cast<size_t>(l)].mutable_grad() = slots_[static_cast<size_t>(l)];
      if (!raw.empty()) bucket.raw_sum.narrow(0, at, info.numel).copy_(raw[static_cast<size_t>(l)].reshape({-1}));
    }
    bucket.layer_ids = torch::tensor(ids, torch::TensorOptions().dtype(torch::kLong).device(device_));
    if (compressor_ == Compressor::kLowRank) {
      int64_t p_size = 0, q_size = 0;
      for (int l : bucket.compressed_layers) {
        const MatrixView m = MatrixViewOf(layers_[static_cast<size_t>(l)].shape);
        const int rank = static_cast<int>(levels_[static_cast<size_t>(l)]);
        compressors_->powersgd.SetRank(l, m.rows, m.cols, rank, epoch);
        bucket.factors.push_back({m.rows, m.cols, rank, p_size, q_size});
        p_size += m.rows * rank;
        q_size += m.cols * rank;
      }
      bucket.p = torch::empty({p_size}, device_);
      bucket.q = torch::empty({q_size}, device_);
      for (int l : bucket.dense_layers) bucket.folded_memory.push_back(compressors_->powersgd.TakeMemory(l));
    } else if (compressor_ == Compressor::kSparse) {
      int64_t words = 0;
      for (int l : bucket.compressed_layers) {
        const int64_t k = TopKCount(layers_[static_cast<size_t>(l)].numel, levels_[static_cast<size_t>(l)]);
        bucket.packed_offset.push_back(words);
        bucket.k.push_back(k);
        words += 2 * k;
      }
      bucket.packed = torch::empty({words}, device_);
      bucket.gathered = torch::empty({world, words}, device_);
    } else if (compressor_ == Compressor::kCast16) {
      const torch::ScalarType wire = WireDtype(DescriptionOf(options_.scheme().scheme()));
      bucket.wire = torch::empty({offset}, torch::TensorOptions().device(device_).dtype(wire));
    }
  }
  state_ = std::move(next);
}

void GradientExchange::BeginStep(bool exact_ready_times) {
  if (state_.empty()) throw std::logic_error("GradientExchange: SetLevels before the first step");
  exact_ready_times_ = exact_ready_times;
  step_start_ = Clock::now();
  timings_.collectives.clear();
  timings_.compress_s = 0;
  timings_.comm_s = 0;
  std::fill(timings_.grad_ready_s.begin(), timings_.grad_ready_s.end(), 0.0);
  for (size_t b = 0; b < state_.size(); ++b) {
    state_[b]->buffer.zero_();
    state_[b]->pending = static_cast<int>(buckets_[b].layers.size());
  }
  next_launch_ = 0;
  step_moments_.zero_();
  result_squares_.clear();
  check_squares_.clear();
  backward_start_ = step_start_;
  in_step_ = true;
  communicating_ = true;
}

void GradientExchange::BeginBackward(bool last_micro_batch) {
  backward_start_ = Clock::now();
  communicating_ = last_micro_batch;
}

void GradientExchange::OnGradientReady(int layer) {
  // Gradients outside a step (a Hessian estimate's double backward) and
  // those of a step's earlier micro-batches only accumulate.
  if (!in_step_ || !communicating_) return;
  if (exact_ready_times_) WaitForDevice(device_);
  timings_.grad_ready_s[static_cast<size_t>(layer)] = Seconds(Clock::now() - backward_start_);
  --state_[static_cast<size_t>(bucket_of_[static_cast<size_t>(layer)])]->pending;
  // Buckets start in order on every rank, whatever order they complete in.
  while (next_launch_ < static_cast<int>(state_.size()) && state_[static_cast<size_t>(next_launch_)]->pending == 0) {
    Launch(next_launch_++);
  }
}

void GradientExchange::Start(Flight& flight, std::unique_ptr<CollectiveWork> work, CollectiveKind kind, int bucket,
                             int64_t bytes, Clock::time_point start) {
  flight.work = std::move(work);
  flight.start = start;
  flight.record = timings_.collectives.size();
  CollectiveRecord r;
  r.seq = static_cast<int>(flight.record);
  r.op = DescriptionOf(kind).op;
  r.bucket = bucket;
  r.tag = ToString(kind);
  r.bytes = bytes;
  r.start_s = Seconds(start - step_start_);
  timings_.collectives.push_back(std::move(r));
}

void GradientExchange::Wait(Flight& flight) {
  if (!flight.work) return;
  const Clock::time_point t = Clock::now();
  flight.work->Wait();
  timings_.comm_s += Seconds(Clock::now() - t);
  timings_.collectives[flight.record].duration_s = std::max(0.0, Seconds(flight.work->completed_at() - flight.start));
  flight.work.reset();
}

void GradientExchange::StartDense(int b) {
  Bucket& bucket = *state_[static_cast<size_t>(b)];
  if (bucket.dense_numel == 0) return;
  const Clock::time_point t = Clock::now();
  Start(bucket.dense, comm_.AllReduceSum(bucket.buffer.narrow(0, 0, bucket.dense_numel)), CollectiveKind::kDense, b,
        4 * bucket.dense_numel, t);
}

void GradientExchange::FinishDense(int b) {
  Bucket& bucket = *state_[static_cast<size_t>(b)];
  Wait(bucket.dense);
  if (bucket.dense_numel == 0) return;
  torch::Tensor average = bucket.buffer.narrow(0, 0, bucket.dense_numel);
  average.div_(comm_.world_size());
  result_squares_.push_back(SquaredNorm(average));
}

void GradientExchange::Launch(int b) {
  Bucket& bucket = *state_[static_cast<size_t>(b)];
  Clock::time_point t = Clock::now();
  // Staged, not added in place: a step that turns out not finite leaves
  // the sums as they were. Counted in the gradients' own units (unscaled).
  torch::add_out(bucket.raw_staged, bucket.raw_sum, bucket.buffer, raw_weight_ / gradient_scale_);
  // AdaQS's moments: each layer's squared norm this step, weighted alike.
  AccumulateSquaredNorms(bucket.layer_views, bucket.layer_ids, raw_weight_ / (gradient_scale_ * gradient_scale_),
                         step_moments_);
  bookkeeping_s_ += Seconds(Clock::now() - t);
  switch (compressor_) {
    case Compressor::kNone:
      t = Clock::now();
      Start(bucket.dense, comm_.AllReduceSum(bucket.buffer), CollectiveKind::kDense, b, 4 * bucket.buffer.numel(), t);
      break;
    case Compressor::kLowRank: {
      // Kept until the step is committed: a skipped step sends it again.
      for (size_t i = 0; i < bucket.dense_layers.size(); ++i) {
        const torch::Tensor& memory = bucket.folded_memory[i];
        if (memory.defined()) GradView(bucket.dense_layers[i]).add_(memory.view_as(GradView(bucket.dense_layers[i])));
      }
      StartDense(b);
      if (bucket.compressed_layers.empty()) break;
      WaitForDevice(device_);
      t = Clock::now();
      for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
        const int l = bucket.compressed_layers[i];
        compressors_->powersgd.ComputeP(l, GradView(l), bucket.P(i));
      }
      WaitForDevice(device_);
      const Clock::time_point sent = Clock::now();
      timings_.compress_s += Seconds(sent - t);
      Start(bucket.p_flight, comm_.AllReduceSum(bucket.p), CollectiveKind::kPowerSgdP, b, 4 * bucket.p.numel(), sent);
      break;
    }
    case Compressor::kSparse: {
      StartDense(b);
      if (bucket.compressed_layers.empty()) break;
      WaitForDevice(device_);
      t = Clock::now();
      for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
        const int l = bucket.compressed_layers[i];
        compressors_->topk.Compress(l, GradView(l), bucket.k[i],
                                    bucket.packed.narrow(0, bucket.packed_offset[i], 2 * bucket.k[i]));
      }
      WaitForDevice(device_);
      const Clock::time_point sent = Clock::now();
      timings_.compress_s += Seconds(sent - t);
      Start(bucket.topk, comm_.AllGather(bucket.packed, bucket.gathered), CollectiveKind::kTopK, b,
            4 * bucket.packed.numel(), sent);
      break;
    }
    case Compressor::kCast16: {
      // Exactly as PyTorch's fp16/bf16_compress_hook: cast, then divided by
      // the workers in 16 bits, so that the sum stays where the average is
      // and a run matches one with PyTorch's hook bit for bit.
      WaitForDevice(device_);
      t = Clock::now();
      bucket.wire.copy_(bucket.buffer);
      bucket.wire.div_(comm_.world_size());
      WaitForDevice(device_);
      const Clock::time_point sent = Clock::now();
      timings_.compress_s += Seconds(sent - t);
      Start(bucket.dense, comm_.AllReduceSum(bucket.wire), CollectiveKind::kCast16, b, 2 * bucket.wire.numel(), sent);
      break;
    }
  }
}

void GradientExchange::FinishStep() {
  in_step_ = false;
  // A parameter that got no gradient leaves its bucket pending: send it anyway.
  while (next_launch_ < static_cast<int>(state_.size())) Launch(next_launch_++);
  const int world = comm_.world_size();
  switch (compressor_) {
    case Compressor::kNone:
      for (auto& bucket : state_) {
        Wait(bucket->dense);
        bucket->buffer.div_(world);
        result_squares_.push_back(SquaredNorm(bucket->buffer));
      }
      break;
    case Compressor::kLowRank:
      // Q's all-reduces need the summed P: start them all, then finish each bucket.
      for (size_t b = 0; b < state_.size(); ++b) {
        Bucket& bucket = *state_[b];
        if (bucket.compressed_layers.empty()) continue;
        Wait(bucket.p_flight);
        check_squares_.push_back(SquaredNorm(bucket.p));
        WaitForDevice(device_);
        const Clock::time_point t = Clock::now();
        for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
          compressors_->powersgd.ComputeQ(bucket.compressed_layers[i], bucket.P(i), bucket.Q(i));
        }
        WaitForDevice(device_);
        const Clock::time_point sent = Clock::now();
        timings_.compress_s += Seconds(sent - t);
        Start(bucket.q_flight, comm_.AllReduceSum(bucket.q), CollectiveKind::kPowerSgdQ, static_cast<int>(b),
              4 * bucket.q.numel(), sent);
      }
      for (size_t b = 0; b < state_.size(); ++b) {
        FinishDense(static_cast<int>(b));
        Bucket& bucket = *state_[b];
        if (bucket.compressed_layers.empty()) continue;
        Wait(bucket.q_flight);
        result_squares_.push_back(SquaredNorm(bucket.q));
        WaitForDevice(device_);
        const Clock::time_point t = Clock::now();
        for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
          const int l = bucket.compressed_layers[i];
          compressors_->powersgd.Decompress(l, bucket.P(i), bucket.Q(i), world, GradView(l));
        }
        WaitForDevice(device_);
        timings_.compress_s += Seconds(Clock::now() - t);
      }
      break;
    case Compressor::kSparse:
      for (size_t b = 0; b < state_.size(); ++b) {
        FinishDense(static_cast<int>(b));
        Bucket& bucket = *state_[b];
        Wait(bucket.topk);
        // The values, not the indices' bits: those may read as NaN.
        for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
          result_squares_.push_back(SquaredNorm(bucket.gathered.narrow(1, bucket.packed_offset[i], bucket.k[i])));
        }
        WaitForDevice(device_);
        const Clock::time_point t = Clock::now();
        for (size_t i = 0; i < bucket.compressed_layers.size(); ++i) {
          TopKCompressor::Decompress(bucket.gathered.narrow(1, bucket.packed_offset[i], 2 * bucket.k[i]),
                                     GradView(bucket.compressed_layers[i]));
        }
        WaitForDevice(device_);
        timings_.compress_s += Seconds(Clock::now() - t);
      }
      break;
    case Compressor::kCast16:
      for (auto& bucket : state_) {
        Wait(bucket->dense);
        const Clock::time_point t = Clock::now();
        bucket->buffer.copy_(bucket->wire);  // back to float32: already the average
        timings_.compress_s += Seconds(Clock::now() - t);
        result_squares_.push_back(SquaredNorm(bucket->buffer));
      }
      break;
  }
  Commit();
}

void GradientExchange::Commit() {
  const Clock::time_point t = Clock::now();
  // Both sums in one read from the device: one synchronisation per step.
  auto sum = [](const std::vector<torch::Tensor>& squares, const torch::Tensor& zero) {
    return squares.empty() ? zero : torch::stack(squares).sum();
  };
  const torch::Tensor zero = torch::zeros({}, step_moments_.options());
  const torch::Tensor both = torch::stack({sum(result_squares_, zero), sum(check_squares_, zero)}).cpu();
  const double results = both[0].item<double>(), checks = both[1].item<double>();
  last_step_.finite = std::isfinite(results) && std::isfinite(checks);
  last_step_.result_square_sum = results;
  if (last_step_.finite) {
    for (auto& bucket : state_) {
      std::swap(bucket->raw_sum, bucket->raw_staged);
      for (torch::Tensor& memory : bucket->folded_memory) memory = torch::Tensor();
      for (size_t i = 0; i < bucket->compressed_layers.size(); ++i) {
        const int l = bucket->compressed_layers[i];
        if (compressor_ == Compressor::kLowRank) compressors_->powersgd.Commit(l, bucket->Q(i));
        if (compressor_ == Compressor::kSparse) compressors_->topk.Commit(l);
      }
    }
    raw_moments_.add_(step_moments_);
    raw_steps_ += raw_weight_;
  }
  bookkeeping_s_ += Seconds(Clock::now() - t);
}

void GradientExchange::set_gradient_scale(double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) throw InputError("the loss scale must be a finite number above 0");
  if (scale == gradient_scale_) return;
  // Memories owed from earlier steps are in the old scale's units.
  const double factor = scale / gradient_scale_;
  compressors_->powersgd.ScaleMemories(factor);
  compressors_->topk.ScaleResiduals(factor);
  for (auto& bucket : state_) {
    for (torch::Tensor& memory : bucket->folded_memory) {
      if (memory.defined()) memory.mul_(factor);
    }
  }
  gradient_scale_ = scale;
}

std::vector<torch::Tensor> GradientExchange::RawGradientSums() const {
  std::vector<torch::Tensor> sums(layers_.size());
  for (const auto& bucket : state_) {
    int64_t offset = 0;
    for (const std::vector<int>* group : {&bucket->dense_layers, &bucket->compressed_layers}) {
      for (int l : *group) {
        const LayerInfo& info = layers_[static_cast<size_t>(l)];
        sums[static_cast<size_t>(l)] = bucket->raw_sum.narrow(0, offset, info.numel).view(info.shape);
        offset += info.numel;
      }
    }
  }
  return sums;
}

RawGradientStatistics GradientExchange::ReduceRawGradients() {
  const Clock::time_point t = Clock::now();
  std::vector<std::unique_ptr<CollectiveWork>> works;
  for (auto& bucket : state_) works.push_back(comm_.AllReduceSum(bucket->raw_sum));
  const auto L = static_cast<int64_t>(layers_.size());
  raw_moments_[L].fill_(raw_steps_);  // the step count travels with the moments
  works.push_back(comm_.AllReduceSum(raw_moments_));
  for (auto& w : works) w->Wait();
  const torch::Tensor moments = raw_moments_.cpu();
  // Every rank counted the same steps: the all-reduced count is world x steps.
  const double samples = moments[L].item<double>();
  RawGradientStatistics stats;
  const std::vector<torch::Tensor> sums = RawGradientSums();
  for (int64_t l = 0; l < L; ++l) {
    const double norm = sums[static_cast<size_t>(l)].norm().item<double>();
    stats.norms.push_back(norm);
    if (samples <= 0) {
      stats.mean_norms.push_back(0);
      stats.stds.push_back(0);
      continue;
    }
    const double mean_norm = norm / samples;
    const double mean_square = moments[l].item<double>() / samples;
    stats.mean_norms.push_back(mean_norm);
    stats.stds.push_back(std::sqrt(std::max(0.0, mean_square - mean_norm * mean_norm)));
  }
  bookkeeping_s_ += Seconds(Clock::now() - t);
  return stats;
}

void GradientExchange::ResetRawGradients() {
  for (auto& bucket : state_) bucket->raw_sum.zero_();
  raw_moments_.zero_();
  raw_steps_ = 0;
}

std::vector<double> GradientExchange::TakeGlobalRawGradientNorms() {
  const std::vector<double> norms = ReduceRawGradients().norms;
  ResetRawGradients();
  return norms;
}

void GradientExchange::Save(torch::serialize::OutputArchive& archive) const {
  compressors_->powersgd.Save(archive);
  compressors_->topk.Save(archive);
}

void GradientExchange::Load(torch::serialize::InputArchive& archive) {
  compressors_->powersgd.Load(archive);
  compressors_->topk.Load(archive);
}

}  // namespace accordion
