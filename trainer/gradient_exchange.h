// GradientExchange: the gradient communication of one optimizer step,
// bucket by bucket, exactly as analysis' PlanStep describes it (same
// buckets, collectives, tags and bytes - the simulator models that plan),
// overlapped with the backward pass.
//
// Every parameter's .grad is a view into its bucket's flat buffer, so
// autograd accumulates straight into what is sent. A post-hook on each
// parameter's gradient accumulator marks it ready; once all of a bucket's
// gradients are, the bucket's first collectives start (buckets start in
// order, so all ranks issue collectives alike):
//   dense:    all-reduce of the bucket;
//   PowerSGD: all-reduce of the tensors it sends dense, then of the P
//             factors; Q follows once P is back, after backward;
//   TopK:     all-reduce of the tensors it sends dense (1-D ones with
//             topk_dense_vectors), then all-gather of values and int32
//             indices of the rest.
// FinishStep() waits, decompresses and leaves every .grad holding the
// average over ranks. The exchange also sums each layer's raw gradient
// (before error feedback and compression) for Accordion.
//
// A step whose gradients are not finite on some rank (fp16 under a loss
// scale that overflowed: GradScaler skips such a step) gives a non-finite
// average on every rank, as plain DDP does, so the scaler on each rank sees
// it and skips. Every collective carries what any rank put in (a sum with
// Inf or NaN stays so; TopK picks NaN and Inf first), so the ranks tell it
// from the results they share, without a collective of its own. Such a step
// changes no state: error-feedback memories, warm Qs and the raw sums are
// staged during the step and kept only when its results are finite.
//
// Gradient accumulation (the batch scheme's large batches, DDP's no_sync):
// a step may run several backward passes; gradients add up in the buckets
// and only the last pass - BeginBackward(/*last_micro_batch=*/true) -
// starts the collectives, so a step is one all-reduce whatever its batch.
//
// Thread safety: not thread-safe; one training thread calls its methods.
// The gradient hooks run during backward() on autograd's thread for the
// device (the calling thread itself on CPU) while the caller is blocked in
// backward(), so they never run concurrently with the methods below.
#ifndef ACCORDION_TRAINER_GRADIENT_EXCHANGE_H_
#define ACCORDION_TRAINER_GRADIENT_EXCHANGE_H_

#include <chrono>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "common/options.h"
#include "traces/records.h"
#include "traces/scheme_description.h"
#include "trainer/communicator.h"

namespace torch::serialize {
class InputArchive;
class OutputArchive;
}  // namespace torch::serialize
namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace accordion {

class ExchangeOptions {
  /// The scheme with TopK's choices (dense vectors, error feedback).
  /// Default: CommunicationScheme().
  ACCORDION_ARG(CommunicationScheme, scheme);
  /// Gradient bucket size, bytes. Default: kDefaultBucketBytes.
  ACCORDION_ARG(int64_t, bucket_bytes) = kDefaultBucketBytes;
  /// PowerSGD's shared Q seed. Default: 0.
  ACCORDION_ARG(uint64_t, seed) = 0;
  /// PowerSgdOptions::epsilon. Default: 1e-8.
  ACCORDION_ARG(double, powersgd_epsilon) = 1e-8;
  /// true: every parameter's .grad becomes a view into the exchange's
  /// buckets and autograd hooks say when each is ready. false: the caller
  /// hands each gradient in (GradientReady) and reads the average back
  /// (Gradient) - a DDP communication hook, where DDP owns the gradients.
  /// Default: true.
  ACCORDION_ARG(bool, own_gradients) = true;
};

// Whether the last step's results were finite (the same on every rank), and
// a number that is zero exactly when the average it handed back is zero
// everywhere: the sum of the squares of what the collectives returned.
struct StepOutcome {
  bool finite = true;
  double result_square_sum = 0;
};

// What one step did, for the trace's per-iteration tables.
struct ExchangeTimings {
  std::vector<double> grad_ready_s;  // per layer, since BeginBackward()
  // op, bucket, tag, bytes, start_s (since BeginStep()) and duration_s;
  // seq is the issue order. epoch, iteration and rank are left to the caller.
  std::vector<CollectiveRecord> collectives;
  double compress_s = 0;  // compression and decompression
  double comm_s = 0;      // blocked waiting for collectives in FinishStep()
};

// An epoch's raw gradients over all ranks, per layer. With g one rank's
// raw gradient of one step (weighted as set_raw_gradient_weight says) over
// the epoch's steps and every rank: the norm of their sum, and AdaQS's
// moments |E[g]| and sqrt(E[|g - E[g]|^2]) (EpochLayerRecord).
struct RawGradientStatistics {
  std::vector<double> norms;
  std::vector<double> mean_norms;
  std::vector<double> stds;
};

class GradientExchange {
 public:
  // `layers` describe `parameters` (DescribeLayers order).
  GradientExchange(std::vector<torch::Tensor> parameters, std::vector<LayerInfo> layers, Communicator& comm,
                   const ExchangeOptions& options);
  ~GradientExchange();
  GradientExchange(const GradientExchange&) = delete;
  GradientExchange& operator=(const GradientExchange&) = delete;

  // Levels (one per layer) from `epoch` on; call between steps only.
  void SetLevels(const std::vector<double>& levels, int epoch);

  // Zeroes the gradients; the step's clock starts. On a GPU the exchange
  // waits for the device wherever a compression time ends
  // (device_timing.h); with `exact_ready_times` it also waits for each
  // gradient before stamping its ready time, which costs a wait per layer:
  // the trainer asks for it on the steps the trace samples.
  void BeginStep(bool exact_ready_times = false);
  // A backward pass starts now. Only the step's last one communicates
  // (grad-ready offsets count from its start); earlier ones accumulate.
  void BeginBackward(bool last_micro_batch = true);
  // After backward: completes every bucket; .grad holds the rank average.
  // Commits the step's state only if its results are finite (StepOutcome).
  // Throws CommunicationError when a peer failed.
  void FinishStep();
  const StepOutcome& last_step() const { return last_step_; }
  // Without own_gradients: `grad` (shaped like the layer's parameter) is
  // the layer's gradient of this step, copied in; its bucket starts once
  // all of the bucket's gradients are in. After FinishStep, Gradient(layer)
  // is the rank average (a view into the exchange's buffer).
  void GradientReady(int layer, const torch::Tensor& grad);
  torch::Tensor Gradient(int layer) const;
  const ExchangeTimings& timings() const { return timings_; }

  // Per layer (shaped like the parameter): raw gradients summed over the
  // steps since the last reset, this rank only.
  std::vector<torch::Tensor> RawGradientSums() const;
  // Adds the sums over all ranks (one all-reduce per bucket and one for the
  // moments, so every rank gets the same numbers): RawGradientSums() then
  // hold the global sums, until ResetRawGradients() starts them afresh.
  RawGradientStatistics ReduceRawGradients();
  void ResetRawGradients();
  // ReduceRawGradients' norms, then ResetRawGradients.
  std::vector<double> TakeGlobalRawGradientNorms();
  // Seconds spent on that Accordion bookkeeping so far.
  double bookkeeping_s() const { return bookkeeping_s_; }
  // Each step's gradient enters the raw sums times this weight (1 by
  // default). The batch scheme counts a step at batch B as B / B_low steps
  // at the low batch, so the epoch's norm does not shrink because the batch
  // grew and its steps became fewer.
  void set_raw_gradient_weight(double weight) { raw_weight_ = weight; }
  // The loss scale the coming step's gradients carry (GradScaler's; 1 by
  // default). The raw sums count g / scale, so a change of scale is no
  // change of the norms Accordion compares; error-feedback memories are
  // kept in the gradients' units and rescaled when the scale changes.
  // Call between steps only.
  void set_gradient_scale(double scale);

  const std::vector<GradientBucket>& buckets() const { return buckets_; }

  // Error-feedback memories and warm Qs of this rank.
  void Save(torch::serialize::OutputArchive& archive) const;
  void Load(torch::serialize::InputArchive& archive);

 private:
  struct Bucket;
  struct Flight;
  class Compressors;
  using Clock = std::chrono::steady_clock;

  void Relayout();
  void OnGradientReady(int layer);
  void Launch(int bucket);
  // The bucket's dense all-reduce (PowerSGD's and TopK's uncompressed
  // tensors), if it has any; and after it, their average.
  void StartDense(int bucket);
  void FinishDense(int bucket);
  // Records the collective `work` runs; the kind gives its op and tag.
  void Start(Flight& flight, std::unique_ptr<CollectiveWork> work, CollectiveKind kind, int bucket, int64_t bytes,
             Clock::time_point start);
  void Wait(Flight& flight);
  torch::Tensor GradView(int layer) const;

  std::vector<torch::Tensor> parameters_;
  std::vector<LayerInfo> layers_;
  Communicator& comm_;
  ExchangeOptions options_;
  Compressor compressor_;  // the scheme's: what the exchange runs
  torch::Device device_;   // the parameters': buffers and compressor state live there
  std::vector<GradientBucket> buckets_;
  std::vector<int> bucket_of_;        // layer -> bucket
  std::vector<torch::Tensor> slots_;  // layer -> its gradient's place in its bucket's buffer
  std::vector<double> levels_;
  std::vector<std::unique_ptr<Bucket>> state_;
  std::unique_ptr<Compressors> compressors_;
  // The hooked gradient accumulators: held, or autograd would make new
  // ones without our hooks.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;
  int next_launch_ = 0;
  bool in_step_ = false;  // between BeginStep and FinishStep
  bool exact_ready_times_ = false;
  bool communicating_ = false;  // the running backward pass is the step's last
  double raw_weight_ = 1;
  double gradient_scale_ = 1;
  StepOutcome last_step_;
  // The step's results, reduced as they arrive: squares of what came back
  // (zero iff the average is zero) and of the P factors (finite or not).
  std::vector<torch::Tensor> result_squares_, check_squares_;
  // This step's share of raw_moments_, added in when the step is committed.
  torch::Tensor step_moments_;
  void Commit();
  // float64, per layer the weighted sum of its squared step norms, then a
  // slot for the step count (raw_steps_, filled in before the all-reduce):
  // this rank's until ReduceRawGradients.
  torch::Tensor raw_moments_;
  double raw_steps_ = 0;  // weighted steps since the last reset
  Clock::time_point step_start_, backward_start_;
  ExchangeTimings timings_;
  double bookkeeping_s_ = 0;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_GRADIENT_EXCHANGE_H_
