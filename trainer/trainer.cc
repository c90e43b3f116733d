#include "trainer/trainer.h"

#include <sqlite3.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "common/errors.h"
#include "common/progress_bar.h"
#include "common/version.h"
#include "trainer/checkpointer.h"
#include "trainer/datasets.h"
#include "trainer/distributed_sampler.h"
#include "trainer/gloo_communicator.h"
#include "trainer/gradient_exchange.h"
#include "trainer/models.h"
#include "trainer/torch_pch.h"
#include "trainer/trace_recorder.h"

namespace accordion {

namespace {

std::atomic<bool> g_stop{false};

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int64_t kEvalChunk = 1000;

std::string VersionsJson() {
  nlohmann::json j;
  j["toolkit"] = kVersion;
  j["libtorch"] = TORCH_VERSION;
  j["sqlite"] = sqlite3_libversion();
  j["compiler"] = __VERSION__;
  return j.dump();
}

void WriteState(torch::serialize::OutputArchive& a, const std::string& prefix, const AccordionState& s) {
  std::vector<int64_t> critical(s.critical.begin(), s.critical.end());
  a.write(prefix + ".next_epoch", torch::tensor(int64_t{s.next_epoch}));
  a.write(prefix + ".check_epoch", torch::tensor(int64_t{s.check_epoch}));
  a.write(prefix + ".critical", torch::tensor(critical, torch::kInt64));
  a.write(prefix + ".levels", torch::tensor(s.levels, torch::kFloat64));
  a.write(prefix + ".check_norms", torch::tensor(s.check_norms, torch::kFloat64));
}

std::vector<double> Doubles(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

AccordionState ReadState(torch::serialize::InputArchive& a, const std::string& prefix) {
  // A fresh tensor per key: reading into a defined tensor set_()s its
  // storage and keeps its dtype, reinterpreting the bits.
  auto get = [&](const char* key) {
    torch::Tensor t;
    a.read(prefix + key, t);
    return t;
  };
  AccordionState s;
  s.next_epoch = static_cast<int>(get(".next_epoch").item<int64_t>());
  s.check_epoch = static_cast<int>(get(".check_epoch").item<int64_t>());
  for (double c : Doubles(get(".critical"))) s.critical.push_back(c != 0);
  s.levels = Doubles(get(".levels"));
  s.check_norms = Doubles(get(".check_norms"));
  return s;
}

}  // namespace

void RequestStop() { g_stop.store(true); }
bool StopRequested() { return g_stop.load(); }

struct Trainer::State {
  TrainOptions o;
  WorkerEnvironment env;
  LevelPlan levels;
  std::unique_ptr<GlooCommunicator> comm;
  DataSplits data;
  std::shared_ptr<Model> model;
  std::vector<LayerInfo> layers;
  std::unique_ptr<torch::optim::SGD> optimizer;
  std::unique_ptr<GradientExchange> exchange;
  std::unique_ptr<AccordionController> controller;        // per layer
  std::unique_ptr<AccordionController> model_controller;  // whole model, for epochs.critical
  std::unique_ptr<DistributedSampler> sampler;
  std::unique_ptr<Checkpointer> checkpointer;
  std::unique_ptr<TraceRecorder> recorder;
  int start_epoch = 0;
  int64_t steps_done = 0;
  // Totals for the closing summary (this rank).
  double train_s = 0;        // inside training steps
  double bookkeeping_s = 0;  // Accordion's decisions (the exchange times its own share)
  int64_t samples = 0;       // global samples trained on

  bool leader() const { return comm->rank() == 0; }

  void Setup();
  void Broadcast(const std::vector<torch::Tensor>& tensors);
  void SaveCheckpoint(int epoch);
  void LoadCheckpoint();
  RunInfo MakeRunInfo() const;
  // Returns false when a stop was requested (the epoch is abandoned).
  bool TrainEpoch(int epoch, EpochData& data);
  std::pair<double, double> Evaluate();
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
  run.model = o.model;
  run.dataset = o.dataset;
  run.train_samples = data.train.size();
  run.scheme = levels.scheme;
  run.policy = levels.policy;
  run.level_low = levels.low;
  run.level_high = levels.high;
  run.eta = o.eta;
  run.interval = o.interval;
  run.world_size = comm->world_size();
  run.backend = comm->backend();
  run.device = "cpu";
  run.batch_size = o.batch_size;
  run.epochs_planned = o.epochs;
  run.seed = o.seed;
  run.config_json = ConfigJson(o);
  run.versions_json = VersionsJson();
  return run;
}

void Trainer::State::Setup() {
  levels = LevelsOf(o);
  torch::set_num_threads(ThreadsOf(o, env.local_world_size));
  comm = std::make_unique<GlooCommunicator>(GlooOptions()
                                                .rank(env.rank)
                                                .world_size(env.world_size)
                                                .master_addr(env.master_addr)
                                                .master_port(env.master_port)
                                                .bind_addr(o.bind_addr)
                                                .timeout(std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000))));
  if (o.batch_size % comm->world_size() != 0) {
    throw InputError("--batch-size " + std::to_string(o.batch_size) + " must split evenly over " +
                     std::to_string(comm->world_size()) + " workers");
  }
  data = LoadDataSplits(o.dataset, DataDirOf(o), o.limit_samples);
  torch::manual_seed(static_cast<uint64_t>(o.seed));
  model = MakeModel(o.model, data.shape);
  layers = DescribeLayers(*model);
  AnnotateLayers(levels.scheme, levels.low, levels.high, layers);
  // Identical initial weights (and BatchNorm statistics) everywhere.
  std::vector<torch::Tensor> state = model->parameters();
  for (const torch::Tensor& b : model->buffers()) state.push_back(b);
  Broadcast(state);

  optimizer = std::make_unique<torch::optim::SGD>(
      model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(o.momentum).nesterov(o.nesterov).weight_decay(o.weight_decay));
  exchange = std::make_unique<GradientExchange>(
      model->parameters(), layers, *comm,
      ExchangeOptions()
          .scheme(levels.scheme)
          .bucket_bytes(std::max<int64_t>(1, static_cast<int64_t>(o.bucket_mb * 1024 * 1024)))
          .seed(static_cast<uint64_t>(o.seed)));
  const AccordionOptions accordion =
      AccordionOptions().eta(o.eta).interval(o.interval).level_low(levels.low).level_high(levels.high);
  controller = std::make_unique<AccordionController>(static_cast<int>(layers.size()), accordion);
  model_controller = std::make_unique<AccordionController>(1, accordion);
  sampler = std::make_unique<DistributedSampler>(data.train.size(), o.batch_size, comm->world_size(),
                                                 comm->rank(), static_cast<uint64_t>(o.seed));
  if (!o.checkpoint_dir.empty()) {
    checkpointer = std::make_unique<Checkpointer>(o.checkpoint_dir, *comm, ConfigJson(o));
    if (o.resume) LoadCheckpoint();
  }
  std::unique_ptr<TraceWriter> writer;
  if (leader() && !o.trace.empty()) {
    writer = o.resume ? TraceWriter::Resume(o.trace, start_epoch)
                      : TraceWriter::Create(o.trace, MakeRunInfo(), layers, o.overwrite);
  }
  recorder = std::make_unique<TraceRecorder>(*comm, std::move(writer), !o.trace.empty(), o.trace_iterations);
}

void Trainer::State::SaveCheckpoint(int epoch) {
  checkpointer->Save(epoch, steps_done, [&](torch::serialize::OutputArchive& a) {
    torch::serialize::OutputArchive model_archive, optimizer_archive, exchange_archive;
    model->save(model_archive);
    optimizer->save(optimizer_archive);
    exchange->Save(exchange_archive);
    a.write("model", model_archive);
    a.write("optimizer", optimizer_archive);
    a.write("exchange", exchange_archive);
    WriteState(a, "controller", controller->state());
    WriteState(a, "model_controller", model_controller->state());
    a.write("rng", torch::globalContext().defaultGenerator(torch::kCPU).get_state());
  });
}

void Trainer::State::LoadCheckpoint() {
  const CheckpointManifest m = checkpointer->Load([&](torch::serialize::InputArchive& a) {
    torch::serialize::InputArchive model_archive, optimizer_archive, exchange_archive;
    a.read("model", model_archive);
    a.read("optimizer", optimizer_archive);
    a.read("exchange", exchange_archive);
    model->load(model_archive);
    optimizer->load(optimizer_archive);
    exchange->Load(exchange_archive);
    controller->Restore(ReadState(a, "controller"));
    model_controller->Restore(ReadState(a, "model_controller"));
    torch::Tensor rng;
    a.read("rng", rng);
    at::Generator generator = torch::globalContext().defaultGenerator(torch::kCPU);
    generator.set_state(rng);
  });
  start_epoch = m.epoch + 1;
  steps_done = m.steps_done;
}

bool Trainer::State::TrainEpoch(int epoch, EpochData& data_out) {
  const int64_t steps = sampler->steps_per_epoch();
  std::unique_ptr<ProgressBar> bar;
  if (leader()) {
    bar = std::make_unique<ProgressBar>("epoch " + std::to_string(epoch + 1) + "/" + std::to_string(o.epochs), steps);
  }
  model->train();
  double loss_sum = 0, correct = 0, count = 0;
  EpochRecord& rec = data_out.epoch;
  for (int64_t step = 0; step < steps; ++step) {
    // A stop request abandons the running epoch at once: its rows are not
    // written, so no rank needs to agree on where it stopped.
    if (StopRequested()) {
      if (bar) bar->Finish("stopped");
      return false;
    }
    const Clock::time_point t0 = Clock::now();
    const std::vector<int64_t> ids = sampler->Batch(step);
    auto [x, y] = Gather(data.train, torch::tensor(ids, torch::kInt64));
    exchange->BeginStep();
    const Clock::time_point t_forward = Clock::now();
    torch::Tensor logits = model->forward(x);
    torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
    const Clock::time_point t_backward = Clock::now();
    exchange->BeginBackward();
    loss.backward();
    const Clock::time_point t_exchange = Clock::now();
    exchange->FinishStep();
    optimizer->step();
    const Clock::time_point t_end = Clock::now();
    const double n = static_cast<double>(ids.size());
    loss_sum += loss.item<double>() * n;
    correct += static_cast<double>((logits.argmax(1) == y).sum().item<int64_t>());
    count += n;
    const ExchangeTimings& ex = exchange->timings();
    IterationRecord it;
    it.epoch = epoch;
    it.iteration = step;
    it.forward_s = std::chrono::duration<double>(t_backward - t_forward).count();
    it.backward_s = std::chrono::duration<double>(t_exchange - t_backward).count();
    it.compress_s = ex.compress_s;
    it.comm_s = ex.comm_s;
    it.total_s = std::chrono::duration<double>(t_end - t0).count();
    rec.compute_s += it.forward_s + it.backward_s;
    rec.compress_s += it.compress_s;
    rec.comm_s += it.comm_s;
    train_s += it.total_s;
    if (recorder->Samples(step)) recorder->AddIteration(it, ex);
    ++steps_done;
    if (bar) bar->Update(step + 1, "loss " + std::to_string(loss_sum / count).substr(0, 6));
  }
  if (bar) bar->Finish();
  const std::vector<double> totals = AllReduceSumDoubles(*comm, {loss_sum, correct, count});
  rec.train_loss = totals[0] / totals[2];
  rec.train_acc = totals[1] / totals[2];
  samples += static_cast<int64_t>(totals[2]);
  rec.iterations = steps;
  return true;
}

std::pair<double, double> Trainer::State::Evaluate() {
  // Rank 0's BatchNorm statistics for everyone (what DDP's buffer broadcast
  // achieves), then each rank scores a contiguous share of the test set.
  Broadcast(model->buffers());
  torch::NoGradGuard no_grad;
  model->eval();
  const int64_t n = data.test.size();
  const int64_t share = (n + comm->world_size() - 1) / comm->world_size();
  const int64_t begin = std::min(n, share * comm->rank());
  const int64_t end = std::min(n, begin + share);
  double loss = 0, correct = 0;
  for (int64_t at = begin; at < end; at += kEvalChunk) {
    const int64_t len = std::min(kEvalChunk, end - at);
    const torch::Tensor x = data.test.images.narrow(0, at, len);
    const torch::Tensor y = data.test.labels.narrow(0, at, len);
    const torch::Tensor logits = model->forward(x);
    loss += torch::nn::functional::cross_entropy(
                logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                .item<double>();
    correct += static_cast<double>((logits.argmax(1) == y).sum().item<int64_t>());
  }
  const std::vector<double> totals = AllReduceSumDoubles(*comm, {loss, correct});
  return {totals[0] / static_cast<double>(n), totals[1] / static_cast<double>(n)};
}

int Trainer::Run() {
  State& s = *s_;
  s.Setup();
  const int L = static_cast<int>(s.layers.size());
  for (int epoch = s.start_epoch; epoch < s.o.epochs; ++epoch) {
    const Clock::time_point epoch_start = Clock::now();
    // Levels and regimes in force during this epoch; a static run keeps its
    // one level but the controller still says what Accordion would do.
    const std::vector<double> levels = s.controller->levels();
    const std::vector<bool> critical = s.controller->critical();
    const bool model_critical = s.model_controller->critical()[0];
    s.exchange->SetLevels(levels, epoch);
    const double lr = LearningRate(s.o, epoch);
    for (auto& group : s.optimizer->param_groups()) group.options().set_lr(lr);
    s.sampler->SetEpoch(epoch);

    EpochData data;
    if (!s.TrainEpoch(epoch, data)) {
      s.recorder->Finish(RunStatus::kInterrupted);
      if (s.leader()) {
        std::printf("interrupted during epoch %d; %d finished epoch(s) kept%s\n", epoch + 1, epoch,
                    s.o.trace.empty() ? "" : ", trace marked interrupted");
      }
      return kExitInterrupted;
    }
    const std::vector<double> norms = s.exchange->TakeGlobalRawGradientNorms();
    const Clock::time_point t_bookkeeping = Clock::now();
    const double lr_next = LearningRate(s.o, epoch + 1);
    const AccordionDecision decision = s.controller->EndEpoch(norms, lr, lr_next);
    s.model_controller->EndEpoch({WholeModelNorm(norms)}, lr, lr_next);
    s.bookkeeping_s += Since(t_bookkeeping);

    const auto [test_loss, test_acc] = s.Evaluate();
    EpochRecord& rec = data.epoch;
    rec.epoch = epoch;
    rec.lr = lr;
    rec.batch_size = s.o.batch_size;
    rec.critical = model_critical;
    rec.model_grad_norm = WholeModelNorm(norms);
    rec.test_loss = test_loss;
    rec.test_acc = test_acc;
    int low_layers = 0;
    for (int l = 0; l < L; ++l) {
      EpochLayerRecord r;
      r.epoch = epoch;
      r.layer_id = l;
      r.grad_norm = norms[static_cast<size_t>(l)];
      r.ratio = decision.ratios[static_cast<size_t>(l)];
      r.critical = critical[static_cast<size_t>(l)];
      r.level = levels[static_cast<size_t>(l)];
      r.floats_sent = FloatsPerStep(s.levels.scheme, s.layers[static_cast<size_t>(l)].shape, r.level) *
                      static_cast<double>(rec.iterations);
      rec.floats_sent += r.floats_sent;
      low_layers += r.level == s.levels.low ? 1 : 0;
      data.layers.push_back(r);
    }
    rec.total_s = Since(epoch_start);
    s.recorder->EndEpoch(data);
    if (s.checkpointer) s.SaveCheckpoint(epoch);
    if (s.leader()) {
      const std::string levels_note =
          s.levels.scheme == Scheme::kDense
              ? ""
              : "  low level on " + std::to_string(low_layers) + "/" + std::to_string(L) + " layers";
      std::printf("epoch %d/%d  lr %.4g  train loss %.4f acc %.4f  test loss %.4f acc %.4f%s  "
                  "%.4g floats sent  %.1f s\n",
                  epoch + 1, s.o.epochs, lr, rec.train_loss, rec.train_acc, rec.test_loss, rec.test_acc,
                  levels_note.c_str(), rec.floats_sent, rec.total_s);
      std::fflush(stdout);
    }
  }
  s.recorder->Finish(RunStatus::kComplete);
  if (s.leader()) {
    const double bookkeeping = s.bookkeeping_s + s.exchange->bookkeeping_s();
    std::printf("done: %d epochs, %.1f samples/s in training steps, Accordion bookkeeping %.3f%% of "
                "step time%s%s\n",
                s.o.epochs - s.start_epoch, s.train_s > 0 ? static_cast<double>(s.samples) / s.train_s : 0.0,
                s.train_s > 0 ? 100.0 * bookkeeping / s.train_s : 0.0, s.o.trace.empty() ? "" : ", trace ",
                s.o.trace.c_str());
  }
  return 0;
}

}  // namespace accordion
