#include "trainer/ddp_hook_core.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

#include "analysis/accordion_controller.h"
#include "analysis/communication_plan.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/version.h"
#include "traces/trace_writer.h"
#include "trainer/accordion_run.h"
#include "trainer/communicator.h"
#include "trainer/error_profile.h"
#include "trainer/gradient_exchange.h"
#include "trainer/network_probe.h"
#include "trainer/trace_recorder.h"

namespace accordion {

namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::vector<LayerInfo> LayersOf(const std::vector<torch::Tensor>& parameters, const std::vector<std::string>& names,
                                const DdpHookOptions& o) {
  if (parameters.size() != names.size()) throw InputError("one name per parameter");
  if (parameters.empty()) throw InputError("the model has no parameters that require a gradient");
  std::vector<LayerInfo> layers;
  for (size_t i = 0; i < parameters.size(); ++i) {
    LayerInfo l;
    l.layer_id = static_cast<int>(i);
    l.name = names[i];
    l.shape = parameters[i].sizes().vec();
    l.numel = parameters[i].numel();
    layers.push_back(std::move(l));
  }
  AnnotateLayers(o.settings().scheme, o.settings().level_low, o.settings().level_high, layers);
  return layers;
}

// The settings every rank must share, as the Python keywords name them
// (analysis/run_settings.h), and the model's parameters as "name [shape]".
std::string SharedSettingsJson(const DdpHookOptions& o, const std::vector<LayerInfo>& layers) {
  nlohmann::json j = SharedSettingsDigest(o.settings());
  nlohmann::json parameters = nlohmann::json::array();
  for (const LayerInfo& l : layers) {
    std::string shape;
    for (size_t d = 0; d < l.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(l.shape[d]);
    parameters.push_back(l.name + " [" + shape + "]");
  }
  j["parameters"] = std::move(parameters);
  return j.dump();
}

// What one rank brings to the agreement at attach.
struct AttachReport {
  std::string problem;   // its own checks' complaint, "" for none
  std::string settings;  // SharedSettingsJson
  bool trace = false;    // it was given a trace
  int epochs = 1;
  int sample_iterations = 0;

  std::string Encode() const {
    return nlohmann::json{{"problem", problem},
                          {"settings", settings},
                          {"trace", trace},
                          {"epochs", epochs},
                          {"sample_iterations", sample_iterations}}
        .dump();
  }
  static AttachReport Decode(const std::string& bytes) {
    const nlohmann::json j = nlohmann::json::parse(bytes);
    AttachReport r;
    r.problem = j.at("problem").get<std::string>();
    r.settings = j.at("settings").get<std::string>();
    r.trace = j.at("trace").get<bool>();
    r.epochs = j.at("epochs").get<int>();
    r.sample_iterations = j.at("sample_iterations").get<int>();
    return r;
  }
};

// The hook's settings under the keys accordion-train's ConfigJson gives
// them (one table, run_settings.h), the user's own `config` keys kept beside
// them, so that every reader finds a run's settings under one set of names
// whichever writer recorded it.
std::string HookConfigJson(const DdpHookOptions& o) {
  nlohmann::json config = nlohmann::json::parse(o.config_json(), nullptr, false);
  if (!config.is_object()) config = nlohmann::json::object();
  config.update(RecordedSettingsJson(o.settings()));
  return config.dump();
}

}  // namespace

DdpHookCore::DdpHookCore(std::vector<torch::Tensor> parameters, std::vector<std::string> names, Communicator& comm,
                         const DdpHookOptions& options, const std::string& local_problem)
    : comm_(comm), options_(options) {
  // Every rank reports its own problems and settings before any of them
  // raises: a rank that raised alone would leave its peers waiting in the
  // first collective (a hang), and one that went on with other settings
  // would abort inside the transport.
  AttachReport mine;
  mine.problem = local_problem;
  mine.trace = !options_.trace().empty();
  mine.epochs = options_.settings().epochs;
  mine.sample_iterations = options_.settings().sample_iterations;
  if (mine.problem.empty()) {
    try {
      CheckRunSettings(options_.settings(), SettingVocabulary::kKeywords);
      layers_ = LayersOf(parameters, names, options_);
    } catch (const InputError& e) {
      mine.problem = e.what();
    }
  }
  mine.settings = SharedSettingsJson(options_, layers_);
  std::vector<AttachReport> all;
  for (const std::string& bytes : AllGatherBytes(comm_, mine.Encode())) all.push_back(AttachReport::Decode(bytes));
  std::vector<std::string> problems, settings;
  for (const AttachReport& r : all) {
    problems.push_back(r.problem);
    settings.push_back(r.settings);
  }
  const std::string problem = ProblemsOfRanks(problems);
  if (!problem.empty()) throw InputError(problem);
  const std::string differences = SettingsDisagreement(settings);
  if (!differences.empty()) {
    throw InputError("the ranks were attached with settings that must be the same on every rank: " + differences);
  }
  std::vector<int> tracing_others;
  for (int r = 1; r < static_cast<int>(all.size()); ++r) {
    if (all[r].trace) tracing_others.push_back(r);
  }
  if (!all[0].trace && !tracing_others.empty()) {
    throw InputError("trace is given on " + DescribeRanks(tracing_others) +
                     " but not on rank 0, which writes it: give it on rank 0 (trace=path if rank == 0 else None)");
  }
  // What only the writer needs is rank 0's, on every rank.
  recording_ = all[0].trace;
  epochs_planned_ = all[0].epochs;
  RunSettings run_settings = options_.settings();
  run_settings.epochs = all[0].epochs;
  run_settings.sample_iterations = all[0].sample_iterations;
  options_.settings(run_settings);

  // Rank 0 creates the trace; every rank learns whether it could, so all
  // raise the same error instead of the others waiting in the probe.
  std::unique_ptr<TraceWriter> writer;
  std::string trace_problem;
  if (recording_ && comm_.rank() == 0) {
    RunInfo run;
    FillRunInfo(run_settings, run);
    run.model = options_.model();
    run.dataset = options_.dataset();
    run.train_samples = options_.train_samples();
    run.world_size = comm_.world_size();
    run.backend = comm_.backend();
    run.device = parameters[0].device().is_cuda() ? "cuda" : "cpu";
    run.config_json = HookConfigJson(options_);
    run.versions_json = RecordedVersionsJson();
    run.run_id = NewRunId();
    run.started_utc = UtcNow();
    run.writer = kWriterPythonHook;
    run.ranks_per_node = std::min(options_.ranks_per_node(), comm_.world_size());
    try {
      writer = TraceWriter::Create(options_.trace(), run, layers_, options_.overwrite());
    } catch (const std::exception& e) {
      trace_problem = e.what();
    }
  }
  if (recording_) {
    const std::vector<std::string> said = AllGatherBytes(comm_, trace_problem);
    if (!said[0].empty()) throw InputError(said[0]);
  }
  recorder_ = std::make_unique<TraceRecorder>(comm_, std::move(writer), recording_, run_settings.sample_iterations);

  exchange_ = std::make_unique<GradientExchange>(std::move(parameters), layers_, comm_,
                                                 ExchangeOptions()
                                                     .scheme(run_settings.scheme)
                                                     .bucket_bytes(BucketBytesOf(run_settings))
                                                     .seed(static_cast<uint64_t>(run_settings.seed))
                                                     .own_gradients(false));
  run_ = std::make_unique<AccordionRun>(run_settings, layers_, *exchange_, recording_ && comm_.rank() == 0);
  run_->StartEpoch(0);
  if (recording_ && run_settings.network_probe) {
    recorder_->ProbeNetwork(exchange_->Gradient(0).device(),
                            NetworkProbeOptions().budget_s(run_settings.network_probe_budget_s));
  }
  epoch_start_ = Clock::now();
}

DdpHookCore::~DdpHookCore() {
  // Dropped without close() (the script deleted the hook and its model, or
  // Python tore them down): the trace ends as interrupted with its finished
  // epochs, never "running". Writing the status is rank 0's alone: nothing
  // is sent, so a peer that is gone does not matter.
  if (finished_ || !recorder_) return;
  try {
    recorder_->Finish(RunStatus::kInterrupted);
  } catch (const std::exception&) {
    // A destructor cannot report; the trace keeps its last committed epoch.
  }
}

void DdpHookCore::BeginStep() {
  const Clock::time_point now = Clock::now();
  if (in_step_) return;  // a forward without backward (no_sync, evaluation under grad)
  if (finished_ && disagreement_.empty())
    throw InputError("a training step after the hook's run ended (close(), or a failure)");
  CloseStep(now);
  AgreeOnPhase(RankPhase::kStep, "");
  exchange_->BeginStep(recorder_->Samples(step_));
  gradients_seen_ = false;
  // After the agreement: its small all-gather is the hook's own
  // communication, not the model's forward, which the trace's forward_s is.
  step_start_ = Clock::now();
  iteration_ = IterationRecord();
  in_step_ = true;
}

void DdpHookCore::EndForward() {
  if (!in_step_) return;
  backward_start_ = Clock::now();
  iteration_.forward_s = Seconds(backward_start_ - step_start_);
  exchange_->BeginBackward(true);
}

void DdpHookCore::GradientReady(int layer, const torch::Tensor& grad) {
  if (layer < 0 || layer >= static_cast<int>(layers_.size())) throw std::out_of_range("no such layer");
  // DDP reduces after any forward run with grad mode on; a forward the
  // caller did not announce as a step (a wrapper left in eval mode, as
  // Lightning leaves DDP after validation) still gets its gradients
  // averaged, never dropped. Every rank's DDP calls the hook alike.
  if (!in_step_) BeginStep();
  gradients_seen_ = true;
  exchange_->GradientReady(layer, grad);
}

void DdpHookCore::FinishStep() {
  if (!in_step_) return;
  iteration_.backward_s = Seconds(Clock::now() - backward_start_);
  exchange_->FinishStep();
  const StepOutcome& outcome = exchange_->last_step();
  if (outcome.finite) {
    result_square_sum_ += outcome.result_square_sum;
  } else {
    ++skipped_steps_;
  }
  in_step_ = false;
  step_open_ = true;
}

void DdpHookCore::SetGradientScale(double scale) {
  if (in_step_) throw InputError("the loss scale can change between steps only");
  exchange_->set_gradient_scale(scale);
}

std::string DdpHookCore::HealthProblem(int64_t optimizer_steps) const {
  const std::string epoch = "epoch " + std::to_string(epoch_);
  if (optimizer_steps > 0 && step_ == 0) {
    return "the optimizer stepped " + std::to_string(optimizer_steps) + " time(s) in " + epoch +
           " but no gradient went through the Accordion hook: train through the DistributedDataParallel model "
           "the hook is attached to (not its .module)";
  }
  if (step_ > skipped_steps_ && result_square_sum_ == 0) {
    double local = 0;
    for (const torch::Tensor& sum : exchange_->RawGradientSums()) local += sum.norm().item<double>();
    if (local > 0) {
      return "the Accordion hook handed back all-zero averaged gradients in " + epoch +
             " while this rank's own were not zero: the hook is not exchanging this model's gradients";
    }
  }
  return "";
}

torch::Tensor DdpHookCore::Gradient(int layer) const { return exchange_->Gradient(layer); }

void DdpHookCore::CloseStep(Clock::time_point now) {
  if (!step_open_) return;
  step_open_ = false;
  const ExchangeTimings& ex = exchange_->timings();
  iteration_.epoch = epoch_;
  iteration_.iteration = step_;
  iteration_.rank = comm_.rank();
  iteration_.compress_s = ex.compress_s;
  iteration_.comm_s = ex.comm_s;
  iteration_.total_s = Seconds(now - step_start_);
  sums_.compute_s += iteration_.forward_s + iteration_.backward_s;
  sums_.compress_s += iteration_.compress_s;
  sums_.comm_s += iteration_.comm_s;
  if (recorder_->Samples(step_)) recorder_->AddIteration(iteration_, ex);
  ++step_;
}

DdpEpochSummary DdpHookCore::EndEpoch(double lr, double next_lr, double train_loss, double train_acc, double test_loss,
                                      double test_acc, int64_t optimizer_steps) {
  if (finished_ && disagreement_.empty())
    throw InputError("end_epoch after the hook's run ended (close(), or a failure)");
  // A training-mode forward that no backward followed (a loss computed for
  // a log, say) opened a step that never communicated: it is dropped.
  if (in_step_ && !gradients_seen_) in_step_ = false;
  // Problems of this rank's own travel with the agreement, so that every
  // rank raises instead of its peers waiting for it.
  // Every rank knows rank 0's epochs: this one raises on all alike.
  if (recording_ && epoch_ >= epochs_planned_) {
    throw InputError("end_epoch for epoch " + std::to_string(epoch_ + 1) + " of a run attached with epochs=" +
                     std::to_string(epochs_planned_) + ": give attach the number of epochs the run trains");
  }
  std::string problem;
  if (in_step_) {
    problem = "end_epoch during a step: call it after the epoch's last optimizer step";
  } else if (!(std::isfinite(lr) && lr >= 0 && std::isfinite(next_lr) && next_lr >= 0)) {
    problem = "lr and next_lr must be finite and not negative";
  }
  if (problem.empty()) CloseStep(Clock::now());
  if (problem.empty()) {
    problem = HealthProblem(optimizer_steps);
    if (!problem.empty() && !finished_) {
      // Never a complete trace of a run the hook did not serve.
      finished_ = true;
      recorder_->Finish(RunStatus::kFailed);
    }
  }
  // An epoch without a step would be a row of nothing (validate refuses
  // one): the caller's mistake, said before anything is recorded.
  if (problem.empty() && step_ == 0) {
    problem =
        "end_epoch before any step of epoch " + std::to_string(epoch_) + ": call it after the epoch's training steps";
  }
  AgreeOnPhase(RankPhase::kEndEpoch, problem, lr, next_lr);
  // Every step of the epoch was not finite: the model itself diverged (a
  // GradScaler's overflows are a few steps, never an epoch). The same count
  // on every rank: the steps' outcomes are.
  if (step_ > 0 && skipped_steps_ == step_) {
    Finish(RunStatus::kFailed);
    throw TrainingDiverged(
        "training diverged in epoch " + std::to_string(epoch_) + ": the gradients of all " + std::to_string(step_) +
        " steps were not finite" +
        (recording_ ? "; the trace keeps " + std::to_string(epoch_) + " finished epoch(s) and is marked failed" : ""));
  }
  AccordionRun::EpochEnd end;
  try {
    end = run_->EndEpoch(epoch_, lr, next_lr);
  } catch (const TrainingDiverged& e) {
    Finish(RunStatus::kFailed);
    throw TrainingDiverged(
        "training diverged in epoch " + std::to_string(epoch_) + ": " + e.what() +
        (recording_ ? "; the trace keeps " + std::to_string(epoch_) + " finished epoch(s) and is marked failed" : ""));
  }
  EpochData data;
  EpochRecord& rec = data.epoch;
  rec = sums_;
  rec.iterations = step_;
  rec.train_loss = train_loss;
  rec.train_acc = train_acc;
  rec.test_loss = test_loss;
  rec.test_acc = test_acc;
  rec.total_s = Seconds(Clock::now() - epoch_start_);
  run_->Record(end, data, *recorder_);

  DdpEpochSummary summary;
  summary.epoch = epoch_;
  summary.grad_norms = end.stats.norms;
  summary.floats_sent = data.epoch.floats_sent;
  summary.skipped_steps = skipped_steps_;
  summary.next_levels = run_->plan().layer_levels;
  summary.next_critical = run_->plan().critical;
  summary.next_batch_size = run_->global_batch();
  ++epoch_;
  step_ = 0;
  skipped_steps_ = 0;
  result_square_sum_ = 0;
  sums_ = EpochRecord();
  run_->StartEpoch(epoch_);
  epoch_start_ = Clock::now();
  return summary;
}

void DdpHookCore::Finish(RunStatus status) {
  if (finished_) return;
  // A complete run closes together: a rank that closes while a peer still
  // trains would otherwise leave that peer waiting.
  if (status == RunStatus::kComplete) {
    std::string problem;
    if (in_step_ && gradients_seen_) {
      problem = "close() during a step";
    } else {
      in_step_ = false;  // a forward no backward followed
      CloseStep(Clock::now());
    }
    AgreeOnPhase(RankPhase::kClose, problem);
    // Closed, all ranks together, before the planned epochs: the loop
    // stopped early on purpose, and the trace says so.
    if (epoch_ < epochs_planned_) status = RunStatus::kStoppedEarly;
  }
  finished_ = true;
  recorder_->Finish(status);
}

void DdpHookCore::AgreeOnPhase(RankPhase phase, const std::string& problem, double lr, double next_lr) {
  if (!disagreement_.empty()) throw InputError(disagreement_);
  PhaseReport mine;
  mine.phase = phase;
  mine.epoch = epoch_;
  mine.step = step_;
  mine.problem = !problem.empty();
  mine.lr = lr;
  mine.next_lr = next_lr;
  const std::vector<double> values = ToDoubles(mine);
  torch::Tensor send = torch::tensor(values, torch::kFloat64);
  torch::Tensor all = torch::empty({comm_.world_size(), kPhaseReportSize}, torch::kFloat64);
  comm_.AllGather(send, all)->Wait();
  std::vector<PhaseReport> reports;
  bool any_problem = false;
  for (int r = 0; r < comm_.world_size(); ++r) {
    const double* row = all[r].data_ptr<double>();
    reports.push_back(FromDoubles(std::vector<double>(row, row + kPhaseReportSize)));
    any_problem = any_problem || reports.back().problem;
  }
  // The ranks' own problems travel only when there are any: a step's
  // agreement is one small all-gather. Every rank raises; they stay in step.
  if (any_problem) throw InputError(ProblemsOfRanks(AllGatherBytes(comm_, problem)));
  const std::string said = PhaseDisagreement(reports);
  if (said.empty()) return;
  bool same_point = true;
  for (const PhaseReport& r : reports) {
    same_point = same_point && r.phase == mine.phase && r.epoch == mine.epoch && r.step == mine.step;
  }
  // Another learning rate: every rank raises at the same point, in step.
  if (same_point) throw InputError(said);
  // Ranks at different points have issued different collectives: nothing
  // more may be sent.
  disagreement_ = said;
  // Nothing more is sent: the trace keeps its finished epochs, marked failed.
  if (!finished_) {
    finished_ = true;
    recorder_->Finish(RunStatus::kFailed);
  }
  throw InputError(said);
}

}  // namespace accordion
