#include "trainer/trainer.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "common/progress_bar.h"
#include "common/version.h"
#include "traces/scheme_description.h"
#include "trainer/accordion_run.h"
#include "trainer/error_profile.h"
#include "trainer/checkpointer.h"
#include "trainer/datasets.h"
#include "trainer/device_timing.h"
#include "trainer/divergence.h"
#include "trainer/gradient_exchange.h"
#include "trainer/hessian.h"
#include "trainer/launcher.h"
#include "trainer/models.h"
#include "trainer/torch_pch.h"
#include "trainer/trace_recorder.h"
#include "trainer/worker_connection.h"

namespace accordion {

namespace {

std::atomic<bool> g_stop{false};

// Steps between host reads of the running loss and accuracy: each read is a
// device synchronisation (on a GPU) and a small all-reduce that lets every
// rank agree on whether the run diverged. The epoch's last step is read too,
// in the all-reduce of the epoch's totals.
constexpr int64_t kReadEvery = 50;

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

torch::Device DeviceOf(const TrainOptions& o, const WorkerEnvironment& env) {
  if (o.device != "cuda") return torch::kCPU;
  if (!torch::cuda::is_available()) throw InputError("--device cuda: this LibTorch sees no CUDA device");
  const int gpus = static_cast<int>(torch::cuda::device_count());
  // NCCL refuses two ranks on one GPU; Gloo shares them round-robin.
  if (o.backend == "nccl" && env.local_rank >= gpus) {
    throw InputError("--backend nccl: LOCAL_RANK " + std::to_string(env.local_rank) + " but only " +
                     std::to_string(gpus) +
                     " GPU(s) on this node (NCCL needs one GPU per rank; --backend gloo "
                     "can share them)");
  }
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % gpus)};
}

}  // namespace

uint64_t WorkerSeed(int64_t seed, int rank) {
  // SplitMix64 of the seed and the rank: distinct, well-mixed streams per
  // rank, the same for a rank on every run with this seed.
  uint64_t z = static_cast<uint64_t>(seed) + 0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(rank) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void RequestStop() { g_stop.store(true); }
bool StopRequested() { return g_stop.load(); }

struct Trainer::State {
  TrainOptions o;
  WorkerEnvironment env;
  RunSettings settings;  // RunSettingsOf(o): what the trace, exchange and controllers take
  torch::Device device = torch::kCPU;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<TrainingData> data;
  std::shared_ptr<Model> model;
  std::vector<LayerInfo> layers;
  std::unique_ptr<torch::optim::SGD> optimizer;
  std::unique_ptr<GradientExchange> exchange;
  // Each epoch's plan and its end (accordion_run.h), as the DDP hook's.
  std::unique_ptr<AccordionRun> accordion_run;
  std::unique_ptr<HessianEigenEstimator> hessian;
  std::unique_ptr<Checkpointer> checkpointer;
  std::unique_ptr<TraceRecorder> recorder;
  int64_t rank_micro_batch = 0;  // this rank's rows of one forward/backward pass
  int start_epoch = 0;
  int64_t steps_done = 0;
  std::string run_id;  // this run's (rank 0's), kept across resumes
  // Totals for the closing summary (this rank).
  double train_s = 0;          // inside training steps
  double bookkeeping_s = 0;    // Accordion's decisions (the exchange times its own share)
  double error_profile_s = 0;  // the error profile at the checks (rank 0)
  int64_t samples = 0;         // global samples (language model: tokens) trained on

  bool leader() const { return comm->rank() == 0; }

  // In this order: the data's shape sizes the model, the model's layers
  // shape the exchange and the controllers, a checkpoint restores into all
  // of them, and a resumed trace continues after the checkpoint's epoch.
  void Setup();
  void Connect();           // and checks that every worker was given the same flags
  void BuildModel();        // with the same initial weights on every rank
  void BuildOptimizer();    // and the gradient exchange
  void BuildControllers();  // the AccordionRun and the Hessian estimator
  void StartOrResume();     // the run id and, on --resume, the checkpoint
  void OpenTrace();
  void Broadcast(const std::vector<torch::Tensor>& tensors);
  // The live objects a checkpoint saves and restores.
  RankState Checkpointed();
  RunInfo MakeRunInfo() const;
  enum class EpochEnd { kFinished, kStopped, kDiverged };
  // kStopped: a stop was requested; kDiverged: the loss became NaN or Inf on
  // some rank (`diverged_at` says where). The epoch is abandoned in both.
  EpochEnd TrainEpoch(int epoch, EpochData& data);
  // An epoch's running sums, kept on the device between the host's reads (a
  // read synchronises with a GPU). The first step whose loss is not finite
  // is kept there too, so a divergence is reported where it happened.
  struct EpochSums {
    explicit EpochSums(torch::Device device)
        : loss(torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kFloat64))),
          correct(torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kInt64))),
          first_bad_step(torch::full({}, -1, torch::TensorOptions().device(device).dtype(torch::kInt64))) {}
    torch::Tensor loss;            // summed over the targets
    torch::Tensor correct;         // predictions
    torch::Tensor first_bad_step;  // whose loss is not finite; -1: none yet
    double count = 0;              // targets
  };
  // Trains `step`, adds it to `sums` and its times to `rec` and the trace.
  void TrainStepAndTally(int epoch, int64_t step, EpochSums& sums, EpochRecord& rec);
  // One optimizer step on `batch`: forward and backward per micro-batch,
  // the exchange, clipping, the update. Returns the step's summed loss (on
  // the device), adds its correct predictions to `correct` and its forward
  // and backward times to `it`.
  torch::Tensor TrainStep(const Batch& batch, bool sampled, IterationRecord& it, torch::Tensor& correct);
  std::string diverged_at;  // where the run diverged (divergence.h); "" while it has not
  // AgreeOnDivergence (divergence.h) and, if no rank diverged, the epoch's training loss
  // and accuracy into `rec` and its samples into `samples`: one collective.
  std::string AgreeOnEpochTotals(int epoch, int64_t steps, const EpochSums& sums, EpochRecord& rec);
  std::pair<double, double> Evaluate();
  // The top Hessian eigenvalue (and per block) on the fixed batch.
  std::vector<HessianRecord> EstimateHessian(int epoch);
  // The epoch loop, from start_epoch; returns Run()'s exit code. An epoch
  // is planned (levels, batch, LR from the controllers' last decision),
  // trained, decided on (the controllers see its gradient norms), evaluated,
  // recorded and checkpointed, in that order.
  int RunEpochs();
  // Sets the running plan's levels, the LR with its batch factor and the
  // data's batch for `epoch`.
  void StartEpoch(int epoch);
  void PrintEpoch(const RunPlanner::Plan& plan, const EpochData& epoch_data) const;
  void PrintSummary() const;
  // Ends a run stopped during `epoch`: trace interrupted, kExitInterrupted.
  int EndInterrupted(int epoch);
  // Ends a run whose `epoch` diverged: trace failed, kExitDiverged.
  int EndDiverged(int epoch);
};

Trainer::Trainer(TrainOptions options, WorkerEnvironment env) : s_(std::make_unique<State>()) {
  s_->o = std::move(options);
  s_->env = env;
}

Trainer::~Trainer() = default;

void Trainer::State::Broadcast(const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::vector<std::unique_ptr<CollectiveWork>> works;
  for (const torch::Tensor& t : tensors) works.push_back(comm->Broadcast(t.detach(), 0));
  for (auto& w : works) w->Wait();
}

RunInfo Trainer::State::MakeRunInfo() const {
  RunInfo run;
  FillRunInfo(settings, run);
  run.model = ModelLabel(o.model);  // "torchscript:net.pt" for a file; config_json has the path
  run.dataset = o.dataset;
  run.train_samples = data->train_samples();
  run.world_size = comm->world_size();
  run.backend = comm->backend();
  run.device = o.device;
  run.config_json = ConfigJson(o);
  run.versions_json = RecordedVersionsJson();
  run.run_id = run_id;
  run.writer = kWriterTrainer;
  run.ranks_per_node = std::min(env.local_world_size, run.world_size);
  return run;
}

void Trainer::State::Setup() {
  settings = RunSettingsOf(o);
  torch::set_num_threads(ThreadsOf(o, env.local_world_size));
  device = DeviceOf(o, env);
  Connect();
  data = TrainingData::Load(o, comm->world_size(), comm->rank());
  BuildModel();
  BuildOptimizer();
  BuildControllers();
  StartOrResume();
  OpenTrace();
}

void Trainer::State::Connect() {
  comm = ConnectWorker(o.backend, env, o.bind_addr, o.timeout_s);
  // Workers started by hand (torchrun, Slurm) may have been given different
  // flags; they would train an epoch and then hang on mismatched collectives.
  if (comm->world_size() > 1) {
    const std::string mismatch = RankConfigMismatch(AllGatherBytes(*comm, ConfigJson(o)));
    if (!mismatch.empty()) throw InputError(mismatch);
  }
  // Checked again here: under torchrun nobody knew the world size before.
  const int64_t split = GlobalMicroBatchOf(o);
  if (split % comm->world_size() != 0) {
    const bool batch_scheme = DescriptionOf(settings.scheme.scheme()).level_kind == LevelKind::kGlobalBatch;
    throw InputError(std::string(batch_scheme ? "the micro-batch " : "--batch-size ") + std::to_string(split) +
                     " must split evenly over " + std::to_string(comm->world_size()) + " workers");
  }
  rank_micro_batch = split / comm->world_size();
}

void Trainer::State::BuildModel() {
  torch::manual_seed(static_cast<uint64_t>(o.seed));
  model = MakeModel(o.model, data->shape(),
                    ModelOptions().lstm_size(o.lstm_size).dropout(o.dropout).tie_weights(o.tie_weights));
  model->to(device);
  layers = DescribeLayers(*model);
  AnnotateLayers(settings.scheme, settings.level_low, settings.level_high, layers);
  // Identical initial weights (and BatchNorm statistics) everywhere.
  std::vector<torch::Tensor> state = model->parameters();
  for (const torch::Tensor& b : model->buffers()) state.push_back(b);
  Broadcast(state);
  // From here each rank draws its own stream: with one seed everywhere every
  // worker would drop the same units, and W workers would not be one batch.
  // A checkpoint restores each rank's own generator state (StartOrResume).
  torch::manual_seed(WorkerSeed(o.seed, comm->rank()));
}

void Trainer::State::BuildOptimizer() {
  optimizer = std::make_unique<torch::optim::SGD>(
      model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay));
  exchange = std::make_unique<GradientExchange>(model->parameters(), layers, *comm,
                                                ExchangeOptions()
                                                    .scheme(settings.scheme)
                                                    .bucket_bytes(BucketBytesOf(settings))
                                                    .seed(static_cast<uint64_t>(settings.seed)));
}

void Trainer::State::BuildControllers() {
  // Rank 0 of a recorded run profiles the compression error at the checks.
  accordion_run = std::make_unique<AccordionRun>(settings, layers, *exchange, leader() && !o.trace.empty());
  if (o.hessian_every > 0) {
    hessian = std::make_unique<HessianEigenEstimator>(HessianOptions(o.hessian).seed(static_cast<uint64_t>(o.seed)),
                                                      comm.get());
  }
}

void Trainer::State::StartOrResume() {
  if (o.resume) {
    const std::optional<CheckpointManifest> m = ReadCheckpointManifest(o.checkpoint_dir);
    if (!m) throw InputError("--resume: no checkpoint in " + o.checkpoint_dir);
    run_id = m->run_id;  // empty for a checkpoint older than run ids
  } else {
    const char* given = std::getenv(kRunIdVariable);  // set by our launcher
    run_id = given != nullptr && *given != '\0' ? given : NewRunId();
  }
  if (!o.checkpoint_dir.empty()) {
    checkpointer = std::make_unique<Checkpointer>(o.checkpoint_dir, *comm, ConfigJson(o), run_id);
    if (o.resume) {
      const CheckpointManifest m = checkpointer->Load(Checkpointed());
      start_epoch = m.epoch + 1;
      steps_done = m.steps_done;
    }
  }
}

void Trainer::State::OpenTrace() {
  std::unique_ptr<TraceWriter> writer;
  if (leader() && !o.trace.empty()) {
    writer = o.resume ? TraceWriter::Resume(o.trace, start_epoch, run_id)
                      : TraceWriter::Create(o.trace, MakeRunInfo(), layers, o.overwrite);
  }
  recorder = std::make_unique<TraceRecorder>(*comm, std::move(writer), !o.trace.empty(), o.trace_iterations);
  // A resumed trace keeps the probe of its first start.
  if (!o.resume && !o.no_network_probe) {
    recorder->ProbeNetwork(device, NetworkProbeOptions().budget_s(o.network_probe_budget_s));
  }
}

RankState Trainer::State::Checkpointed() {
  return {model.get(), optimizer.get(), exchange.get(), accordion_run->Policies(), device};
}

torch::Tensor Trainer::State::TrainStep(const Batch& batch, bool sampled, IterationRecord& it, torch::Tensor& correct) {
  const auto n = static_cast<double>(batch.count());
  // A step larger than the micro-batch is several backward passes whose
  // gradients accumulate; only the last one communicates (no_sync). Each
  // pass's mean loss is weighted by its share of the step, so the sum is
  // the gradient of the whole step's mean loss.
  const int64_t rows = batch.inputs.size(0);
  const int64_t passes = std::max<int64_t>(1, (rows + rank_micro_batch - 1) / rank_micro_batch);
  // Image targets are one per row; a language model's are rows x T.
  const int64_t per_row = rows > 0 ? batch.count() / rows : 1;
  exchange->BeginStep(/*exact_ready_times=*/sampled);
  torch::Tensor step_loss = torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kFloat64));
  for (int64_t pass = 0; pass < passes; ++pass) {
    const int64_t begin = pass * rank_micro_batch;
    const int64_t len = passes == 1 ? rows : std::min(rank_micro_batch, rows - begin);
    const torch::Tensor x = batch.inputs.narrow(0, begin, len).to(device);
    const torch::Tensor y = batch.targets.narrow(0, begin * per_row, len * per_row).to(device);
    // On a GPU each clock read waits for the device (device_timing.h).
    WaitForDevice(device);
    const Clock::time_point t_forward = Clock::now();
    torch::Tensor logits = model->forward(x);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    WaitForDevice(device);
    const Clock::time_point t_backward = Clock::now();
    exchange->BeginBackward(/*last_micro_batch=*/pass + 1 == passes);
    (passes == 1 ? loss : loss * (static_cast<double>(y.numel()) / n)).backward();
    WaitForDevice(device);
    it.forward_s += std::chrono::duration<double>(t_backward - t_forward).count();
    it.backward_s += std::chrono::duration<double>(Clock::now() - t_backward).count();
    torch::NoGradGuard no_grad;
    step_loss.add_(loss.detach().to(torch::kFloat64), static_cast<double>(y.numel()));
    correct.add_((logits.argmax(1) == y).sum());
  }
  exchange->FinishStep();
  if (o.clip > 0) torch::nn::utils::clip_grad_norm_(model->parameters(), o.clip);
  optimizer->step();
  return step_loss;
}

Trainer::State::EpochEnd Trainer::State::TrainEpoch(int epoch, EpochData& data_out) {
  const int64_t steps = data->steps();
  std::unique_ptr<ProgressBar> bar;
  if (leader()) {
    bar = std::make_unique<ProgressBar>("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(o.epochs), steps);
  }
  auto diverged = [&] {
    if (bar) bar->Finish("diverged");
    return EpochEnd::kDiverged;
  };
  model->train();
  model->ResetState();
  EpochSums sums(device);
  std::string loss_note;
  for (int64_t step = 0; step < steps; ++step) {
    // A stop request abandons the running epoch at once: its rows are not
    // written, so no rank needs to agree on where it stopped.
    if (StopRequested()) {
      if (bar) bar->Finish("stopped");
      return EpochEnd::kStopped;
    }
    TrainStepAndTally(epoch, step, sums, data_out.epoch);
    if (bar) bar->Update(step + 1, loss_note);
    // The last step's read is the one of the epoch's totals, below.
    if ((step + 1) % kReadEvery != 0 || step + 1 == steps) continue;
    diverged_at = AgreeOnDivergence(*comm, epoch, steps, sums.first_bad_step.item<int64_t>());
    if (!diverged_at.empty()) return diverged();
    loss_note = "loss " + std::to_string(sums.loss.item<double>() / sums.count).substr(0, 6);
  }
  diverged_at = AgreeOnEpochTotals(epoch, steps, sums, data_out.epoch);
  if (!diverged_at.empty()) return diverged();
  if (bar) bar->Finish();
  data_out.epoch.iterations = steps;
  return EpochEnd::kFinished;
}

void Trainer::State::TrainStepAndTally(int epoch, int64_t step, EpochSums& sums, EpochRecord& rec) {
  const Clock::time_point t0 = Clock::now();
  const Batch batch = data->TrainBatch(step);
  IterationRecord it;
  const torch::Tensor step_loss = TrainStep(batch, recorder->Samples(step), it, sums.correct);
  WaitForDevice(device);
  const Clock::time_point t_end = Clock::now();
  {
    torch::NoGradGuard no_grad;
    sums.loss.add_(step_loss);
    sums.first_bad_step.masked_fill_(sums.first_bad_step.lt(0).logical_and(step_loss.isfinite().logical_not()), step);
  }
  sums.count += static_cast<double>(batch.count());
  const ExchangeTimings& ex = exchange->timings();
  it.epoch = epoch;
  it.iteration = step;
  it.compress_s = ex.compress_s;
  it.comm_s = ex.comm_s;
  it.total_s = std::chrono::duration<double>(t_end - t0).count();
  rec.compute_s += it.forward_s + it.backward_s;
  rec.compress_s += it.compress_s;
  rec.comm_s += it.comm_s;
  train_s += it.total_s;
  if (recorder->Samples(step)) recorder->AddIteration(it, ex);
  ++steps_done;
}

std::string Trainer::State::AgreeOnEpochTotals(int epoch, int64_t steps, const EpochSums& sums, EpochRecord& rec) {
  // The epoch's last divergence check rides in the totals' all-reduce: one
  // small collective ends an epoch, not two. The totals are sums but the
  // check wants the earliest bad step over the ranks, a minimum; with a slot
  // per rank (divergence.h) the sum carries every rank's step exactly, so
  // the minimum - and the rank the message names - is taken after the sum.
  // A non-finite loss total is then harmless: it is not read on divergence.
  std::vector<double> values = {sums.loss.item<double>(), static_cast<double>(sums.correct.item<int64_t>()),
                                sums.count};
  const std::vector<double> slots = DivergenceSlots(*comm, sums.first_bad_step.item<int64_t>());
  values.insert(values.end(), slots.begin(), slots.end());
  values = AllReduceSumDoubles(*comm, values);
  std::string diverged = DescribeDivergence(epoch, steps, std::vector<double>(values.begin() + 3, values.end()));
  if (!diverged.empty()) return diverged;
  rec.train_loss = values[0] / values[2];
  rec.train_acc = values[1] / values[2];
  samples += static_cast<int64_t>(values[2]);
  return "";
}

std::pair<double, double> Trainer::State::Evaluate() {
  torch::NoGradGuard no_grad;
  model->eval();
  model->ResetState();
  // Summed on the device, read once.
  const auto on_device = torch::TensorOptions().device(device);
  torch::Tensor loss = torch::zeros({}, on_device.dtype(torch::kFloat64));
  torch::Tensor correct = torch::zeros({}, on_device.dtype(torch::kInt64));
  double count = 0;
  data->ForEachTestBatch([&](const Batch& b) {
    const torch::Tensor y = b.targets.to(device);
    const torch::Tensor logits = model->forward(b.inputs.to(device));
    loss.add_(torch::nn::functional::cross_entropy(
                  logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                  .to(torch::kFloat64));
    correct.add_((logits.argmax(1) == y).sum());
    count += static_cast<double>(b.count());
  });
  const std::vector<double> totals =
      AllReduceSumDoubles(*comm, {loss.item<double>(), static_cast<double>(correct.item<int64_t>()), count});
  return {totals[0] / totals[2], totals[1] / totals[2]};
}

std::vector<HessianRecord> Trainer::State::EstimateHessian(int epoch) {
  // Eval mode (BatchNorm's running statistics - rank 0's, broadcast before
  // evaluation - and no dropout) and a fresh LSTM state, on the fixed batch.
  model->ResetState();
  const Batch batch = data->HessianBatch(o.hessian_batch);
  const double total = AllReduceSumDoubles(*comm, {static_cast<double>(batch.count())})[0];
  auto loss = [&] {
    if (batch.count() == 0) return torch::zeros({}, torch::TensorOptions().device(device));
    // This shard's part of the whole fixed batch's mean loss: the ranks'
    // Hessian-vector products then add up to the whole batch's.
    return torch::nn::functional::cross_entropy(
               model->forward(batch.inputs.to(device)), batch.targets.to(device),
               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
           total;
  };
  // cuDNN has no double backward for its RNN kernels: estimate without it
  // (on CPU this changes nothing).
  const bool cudnn = at::globalContext().userEnabledCuDNN();
  at::globalContext().setUserEnabledCuDNN(false);
  std::vector<HessianEstimate> estimates;
  try {
    estimates = hessian->EstimateModule(*model, loss, o.hessian_blocks);
  } catch (...) {
    at::globalContext().setUserEnabledCuDNN(cudnn);
    throw;
  }
  at::globalContext().setUserEnabledCuDNN(cudnn);
  std::vector<HessianRecord> out;
  for (const HessianEstimate& e : estimates) out.push_back({epoch, e.block, e.eigenvalue, e.iterations, e.seconds});
  model->ResetState();
  return out;
}

int Trainer::Run() {
  s_->Setup();
  try {
    return s_->RunEpochs();
  } catch (const CommunicationError&) {
    // After Ctrl-C a peer that stopped first leaves mid-collective: that is
    // the stop, not a failure. The finished epochs stay; say so in the trace.
    if (!StopRequested()) throw;
    s_->recorder->Finish(RunStatus::kInterrupted);
    if (s_->leader()) {
      std::printf("interrupted; the finished epochs are kept%s\n",
                  s_->o.trace.empty() ? "" : ", trace marked interrupted");
    }
    return kExitInterrupted;
  }
}

int Trainer::State::EndDiverged(int epoch) {
  recorder->Finish(RunStatus::kFailed);
  if (leader()) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "accordion-train: error: training diverged at %s; %d finished epoch(s) kept%s; "
                 "try a smaller --lr or a longer --warmup-epochs\n",
                 diverged_at.c_str(), epoch, o.trace.empty() ? "" : ", trace marked failed");
    std::fflush(stderr);
  }
  return kExitDiverged;
}

int Trainer::State::RunEpochs() {
  for (int epoch = start_epoch; epoch < o.epochs; ++epoch) {
    const Clock::time_point epoch_start = Clock::now();
    StartEpoch(epoch);
    const RunPlanner::Plan plan = accordion_run->plan();
    EpochData epoch_data;
    const EpochEnd end = TrainEpoch(epoch, epoch_data);
    if (end == EpochEnd::kStopped) return EndInterrupted(epoch);
    if (!diverged_at.empty()) return EndDiverged(epoch);
    AccordionRun::EpochEnd decided;
    try {
      decided = accordion_run->EndEpoch(epoch, LearningRate(o, epoch), LearningRate(o, epoch + 1));
    } catch (const TrainingDiverged& e) {
      // The same on every rank: the norms are the reduced ones.
      diverged_at = "epoch " + std::to_string(epoch + 1) + " (" + e.what() + ")";
      return EndDiverged(epoch);
    }
    bookkeeping_s += decided.decide_s;
    error_profile_s += decided.profile_s;

    // Rank 0's BatchNorm statistics for everyone (what DDP's buffer
    // broadcast achieves) before evaluating and estimating the Hessian.
    Broadcast(model->buffers());
    std::tie(epoch_data.epoch.test_loss, epoch_data.epoch.test_acc) = Evaluate();
    // The Hessian estimate is an observation, not training: its cost is in
    // the hessian table, not in the epoch's time.
    epoch_data.epoch.total_s = Since(epoch_start);
    if (hessian && epoch % o.hessian_every == 0) epoch_data.hessian = EstimateHessian(epoch);
    accordion_run->Record(decided, epoch_data, *recorder);
    if (checkpointer) checkpointer->Save(epoch, steps_done, Checkpointed());
    if (leader()) PrintEpoch(plan, epoch_data);
  }
  recorder->Finish(RunStatus::kComplete);
  if (leader()) PrintSummary();
  return 0;
}

void Trainer::State::StartEpoch(int epoch) {
  accordion_run->StartEpoch(epoch);
  const int64_t global_batch = accordion_run->global_batch();
  const double lr = ScaledLearningRate(o, epoch, static_cast<double>(global_batch));
  for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
  data->StartEpoch(epoch, global_batch);
}

void Trainer::State::PrintEpoch(const RunPlanner::Plan& plan, const EpochData& epoch_data) const {
  const EpochRecord& rec = epoch_data.epoch;
  std::string note;
  if (accordion_run->batch_scheme()) {
    note = "  batch " + std::to_string(plan.global_batch);
  } else if (DescriptionOf(settings.scheme.scheme()).has_levels()) {
    const auto low_layers = std::count(plan.layer_levels.begin(), plan.layer_levels.end(), settings.level_low);
    note = "  low level on " + std::to_string(low_layers) + "/" + std::to_string(layers.size()) + " layers";
  }
  if (!epoch_data.hessian.empty()) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "  hessian %.4g (%d it)", epoch_data.hessian[0].eigenvalue,
                  epoch_data.hessian[0].iterations);
    note += buf;
  }
  std::printf(
      "epoch %d/%d  lr %.4g  train loss %.4f acc %.4f  test loss %.4f acc %.4f%s  "
      "%.4g floats sent  %.1f s\n",
      rec.epoch + 1, o.epochs, rec.lr, rec.train_loss, rec.train_acc, rec.test_loss, rec.test_acc, note.c_str(),
      rec.floats_sent, rec.total_s);
  std::fflush(stdout);
}

void Trainer::State::PrintSummary() const {
  const double bookkeeping = bookkeeping_s + exchange->bookkeeping_s();
  std::printf(
      "done: %d epochs, %.1f %s/s in training steps, Accordion bookkeeping %.3f%% of "
      "step time, error profile %.3f%%%s%s\n",
      o.epochs - start_epoch, train_s > 0 ? static_cast<double>(samples) / train_s : 0.0,
      o.dataset == "tokens" ? "tokens" : "samples", train_s > 0 ? 100.0 * bookkeeping / train_s : 0.0,
      train_s > 0 ? 100.0 * error_profile_s / train_s : 0.0, o.trace.empty() ? "" : ", trace ", o.trace.c_str());
}

int Trainer::State::EndInterrupted(int epoch) {
  recorder->Finish(RunStatus::kInterrupted);
  if (leader()) {
    std::printf("interrupted during epoch %d; %d finished epoch(s) kept%s\n", epoch + 1, epoch,
                o.trace.empty() ? "" : ", trace marked interrupted");
  }
  return kExitInterrupted;
}

}  // namespace accordion
