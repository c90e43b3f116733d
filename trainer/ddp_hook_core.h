// DdpHookCore: the C++ side of the Accordion communication hook for
// PyTorch's DistributedDataParallel (python/accordion/ddp.py): the same
// GradientExchange, compressors, controllers and trace recorder that
// accordion-train runs, fed by DDP's buckets instead of its own hooks.
//
// Per step: BeginStep (forward starts), EndForward (backward starts),
// GradientReady for every parameter as DDP hands its bucket over - the
// exchange's buckets start as they fill, exactly as in accordion-train, so
// the trace's collectives are the ones PlanStep describes - then
// FinishStep once DDP's last bucket is in; Gradient(layer) is then the
// average over ranks. EndEpoch runs the controllers on the epoch's
// gradient norms, writes the epoch into the trace (rank 0) and sets the
// next epoch's levels. Every method but Gradient and the accessors is
// collective where it communicates: all ranks call them in the same order.
//
// Every rank must be attached with the same settings (the scheme, levels,
// controller, bucket size, seed, probe and the model's parameters: compared
// once, when the core is built) and take the same steps: before each step,
// each end of an epoch and the close the ranks compare where they are
// (rank_agreement.h), so a rank with a step more, a missing end_epoch or
// another learning rate is an InputError on every rank instead of a hang.
// Settings only the writer needs (the trace, overwrite, the run's metadata,
// epochs, sample_iterations) are rank 0's: a trace given on rank 0 alone
// records the run, with every rank taking part in its collectives.
//
// Thread safety: not thread-safe. DDP calls its hook on autograd's thread
// while the training thread waits in backward(), so the calls never overlap.
#ifndef ACCORDION_TRAINER_DDP_HOOK_CORE_H_
#define ACCORDION_TRAINER_DDP_HOOK_CORE_H_

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "analysis/run_settings.h"
#include "common/options.h"
#include "trainer/accordion_run.h"
#include "trainer/rank_agreement.h"
#include "traces/records.h"

namespace accordion {

class Communicator;
class GradientExchange;
class TraceRecorder;

class DdpHookOptions {
  /// What every rank runs with and the trace records: scheme, policy,
  /// levels, Accordion's and AdaQS's settings, bucket, seed, probe, epochs
  /// and batch (analysis/run_settings.h, one table with accordion-train's
  /// flags). Default: RunSettings().
  ACCORDION_ARG(RunSettings, settings);
  /// The trace to write (rank 0); empty: record nothing. Default: "".
  ACCORDION_ARG(std::string, trace);
  /// Replace an existing trace (never one another run is writing). Default: false.
  ACCORDION_ARG(bool, overwrite) = false;
  /// What the trace's run row says about the training. Default: "custom".
  ACCORDION_ARG(std::string, model) = "custom";
  /// Default: "custom".
  ACCORDION_ARG(std::string, dataset) = "custom";
  /// Samples in one epoch of the training set. Default: 0 (unknown).
  ACCORDION_ARG(int64_t, train_samples) = 0;
  /// The configuration as the user gave it (JSON object). Default: "{}".
  ACCORDION_ARG(std::string, config_json) = "{}";
  /// How many of the ranks share a host. Default: 1.
  ACCORDION_ARG(int, ranks_per_node) = 1;
};

// What EndEpoch concluded, for the caller.
struct DdpEpochSummary {
  int epoch = 0;
  std::vector<double> grad_norms;   // per layer, the epoch's accumulated raw gradient
  std::vector<double> next_levels;  // per layer
  std::vector<bool> next_critical;  // per layer
  double floats_sent = 0;           // by one worker in the epoch
  int64_t next_batch_size = 0;      // the batch scheme's next global batch (else the run's)
  // Steps whose gradients were not finite (GradScaler skipped them): sent
  // and timed like any step, left out of the norms and error feedback.
  int64_t skipped_steps = 0;
};

class DdpHookCore {
 public:
  // `parameters` in registration order (module.parameters()), `names` the
  // same length. Collective: the ranks compare their settings, then rank 0
  // creates the trace. Throws InputError, on every rank alike, on options
  // that do not fit (on any rank), settings that differ between ranks or a
  // trace that cannot be created. `local_problem`: a problem the caller
  // found in its own checks (""), raised on every rank the same way.
  DdpHookCore(std::vector<torch::Tensor> parameters, std::vector<std::string> names, Communicator& comm,
              const DdpHookOptions& options, const std::string& local_problem = "");
  ~DdpHookCore();
  DdpHookCore(const DdpHookCore&) = delete;
  DdpHookCore& operator=(const DdpHookCore&) = delete;

  void BeginStep();
  void EndForward();
  // DDP hands a gradient over. A step no training forward announced (DDP
  // reduces whenever grad mode was on in its forward, whatever its
  // .training says) begins here.
  void GradientReady(int layer, const torch::Tensor& grad);
  void FinishStep();
  torch::Tensor Gradient(int layer) const;
  // The loss scale of the coming step's gradients (GradScaler's), so that
  // the norms Accordion compares are the unscaled ones. Between steps.
  void SetGradientScale(double scale);

  // Collective. `lr` is the epoch's LR, `next_lr` the next one's (an LR
  // decay holds every layer critical, as in accordion-train). Throws
  // TrainingDiverged when a layer's accumulated gradient is not finite.
  // `optimizer_steps`: the steps this rank's optimizer took in the epoch
  // (-1: not known). The hook checks its own health: an epoch in which the
  // optimizer stepped but no gradient went through the hook, or whose
  // averages were all zero while this rank's gradients were not, is an
  // InputError on every rank and the trace is marked failed.
  DdpEpochSummary EndEpoch(double lr, double next_lr, double train_loss, double train_acc, double test_loss,
                           double test_acc, int64_t optimizer_steps = -1);
  // Marks the trace finished: complete, or interrupted (kept epochs only).
  // kComplete is collective (the ranks agree that all close after the same
  // epoch); the others are not, so a rank whose peer failed can still end.
  // kComplete before the planned epochs is recorded as kStoppedEarly.
  void Finish(RunStatus status);

  const std::vector<LayerInfo>& layers() const { return layers_; }
  const std::vector<double>& levels() const { return run_->plan().layer_levels; }
  int epoch() const { return epoch_; }
  int64_t step() const { return step_; }
  // Between a step's start (BeginStep, or its first gradient) and FinishStep.
  bool in_step() const { return in_step_; }
  bool recording() const { return recording_; }

 private:
  using Clock = std::chrono::steady_clock;
  void CloseStep(Clock::time_point now);
  // Collective: every rank says where it is (and whether it found
  // `problem`); throws InputError on every rank when they disagree, after
  // marking the trace failed. Throws at once once the ranks have disagreed.
  void AgreeOnPhase(RankPhase phase, const std::string& problem, double lr = 0, double next_lr = 0);

  Communicator& comm_;
  DdpHookOptions options_;
  bool recording_ = false;  // rank 0 was given a trace
  std::vector<LayerInfo> layers_;
  std::unique_ptr<GradientExchange> exchange_;
  std::unique_ptr<TraceRecorder> recorder_;
  std::unique_ptr<AccordionRun> run_;  // after what it drives: destroyed first
  int epochs_planned_ = 1;             // rank 0's
  std::string disagreement_;           // why the ranks stopped; "" while they agree
  int epoch_ = 0;
  int64_t step_ = 0;
  bool in_step_ = false, step_open_ = false, finished_ = false;
  bool gradients_seen_ = false;  // in the running step
  // The running epoch's steps whose results were not finite, and the sum
  // of squares of the finite ones' results (zero: the hook handed back zeros).
  int64_t skipped_steps_ = 0;
  double result_square_sum_ = 0;
  // What the health check says about the running epoch ("" if healthy).
  std::string HealthProblem(int64_t optimizer_steps) const;
  Clock::time_point step_start_, backward_start_, epoch_start_;
  IterationRecord iteration_;
  EpochRecord sums_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DDP_HOOK_CORE_H_
