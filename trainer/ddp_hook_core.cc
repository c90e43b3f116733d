#include "trainer/ddp_hook_core.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

#include "analysis/accordion_controller.h"
#include "analysis/communication_plan.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/version.h"
#include "traces/policy_description.h"
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
  AnnotateLayers(o.scheme(), o.level_low(), o.level_high(), layers);
  return layers;
}

// The checks accordion-train makes of the same choices, in the words of
// the Python keywords.
void CheckOptions(const DdpHookOptions& o) {
  const SchemeDescription& d = DescriptionOf(o.scheme().scheme());
  const std::string misfit = PolicyFitProblem(o.policy(), o.scheme().scheme());
  if (!misfit.empty()) throw InputError(misfit);
  if (!(o.msdr_factor() > 1) || !(o.msdr_factor() <= kMaxMsdrFactor)) {
    throw InputError("msdr_factor must be a number above 1 and at most " + FormatNumber(kMaxMsdrFactor) + ", got " +
                     FormatNumber(o.msdr_factor()));
  }
  if (DescriptionOf(o.policy()).one_level() && o.level_low() != o.level_high()) {
    throw InputError(std::string("policy ") + ToString(o.policy()) + " takes one level: low and high must be equal");
  }
  for (const auto& [level, name] : {std::pair{o.level_low(), "low"}, std::pair{o.level_high(), "high"}}) {
    if (!d.has_levels()) break;
    const std::string problem = LevelProblem(o.scheme().scheme(), level);
    if (!problem.empty()) throw InputError(std::string(name) + " " + problem);
  }
  // Critical regimes get the gentler level: a larger rank or fraction, the
  // smaller batch.
  if (d.level_kind == LevelKind::kGlobalBatch ? o.level_high() < o.level_low() : o.level_low() < o.level_high()) {
    throw InputError(std::string("low (") + (d.level_kind == LevelKind::kGlobalBatch ? "the batch" : "the level") +
                     " inside critical regimes) must " +
                     (d.level_kind == LevelKind::kGlobalBatch ? "not exceed high: the batch only grows"
                                                              : "compress no more than high: at least high") +
                     ", got low " + FormatNumber(o.level_low()) + " and high " + FormatNumber(o.level_high()));
  }
  if (d.has_levels()) {
    AccordionOptions()
        .eta(o.eta())
        .interval(o.interval())
        .level_low(o.level_low())
        .level_high(o.level_high())
        .mode(d.level_kind == LevelKind::kGlobalBatch ? ControllerMode::kWholeModel : ControllerMode::kPerLayer)
        .Validate();
  }
  if (o.bucket_bytes() < 1) throw InputError("bucket_mb must be above 0");
  if (o.sample_iterations() < 0) throw InputError("sample_iterations must be 0 or more");
  if (o.epochs() < 1) throw InputError("epochs must be 1 or more");
}

// The settings every rank must share, as the Python keywords name them, and
// the model's parameters as "name [shape]".
std::string SharedSettingsJson(const DdpHookOptions& o, const std::vector<LayerInfo>& layers) {
  nlohmann::json j;
  j["scheme"] = ToString(o.scheme().scheme());
  j["topk_dense_vectors"] = o.scheme().topk_dense_vectors();
  j["topk_error_feedback"] = o.scheme().topk_error_feedback();
  j["policy"] = ToString(o.policy());
  j["low"] = o.level_low();
  j["high"] = o.level_high();
  j["eta"] = o.eta();
  j["interval"] = o.interval();
  j["msdr_factor"] = o.msdr_factor();
  j["bucket_mb"] = static_cast<double>(o.bucket_bytes()) / (1024.0 * 1024.0);
  j["seed"] = o.seed();
  j["network_probe"] = o.network_probe();
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

// The hook's settings as accordion-train's ConfigJson names them (the
// user's own `config` keys kept beside them), so that every reader finds a
// run's settings under one set of names whichever writer recorded it.
std::string HookConfigJson(const DdpHookOptions& o) {
  nlohmann::json config = nlohmann::json::parse(o.config_json(), nullptr, false);
  if (!config.is_object()) config = nlohmann::json::object();
  config["scheme"] = ToString(o.scheme().scheme());
  config["policy"] = ToString(o.policy());
  config["level_low"] = o.level_low();
  config["level_high"] = o.level_high();
  config["eta"] = o.eta();
  config["interval"] = o.interval();
  config["msdr_factor"] = o.msdr_factor();
  config["bucket_mb"] = static_cast<double>(o.bucket_bytes()) / (1024.0 * 1024.0);
  config["seed"] = o.seed();
  config["trace_iterations"] = o.sample_iterations();
  config["no_network_probe"] = !o.network_probe();
  config["network_probe_budget_s"] = NetworkProbeOptions().budget_s();
  config["topk_dense_vectors"] = o.scheme().topk_dense_vectors();
  config["topk_error_feedback"] = o.scheme().topk_error_feedback();
  config["epochs"] = o.epochs();
  config["batch_size"] = o.batch_size();
  return config.dump();
}

}  // namespace

DdpHookCore::DdpHookCore(std::vector<torch::Tensor> parameters, std::vector<std::string> names, Communicator& comm,
                         const DdpHookOptions& options, const std::string& local_problem)
    : comm_(comm),
      options_(options),
      batch_scheme_(DescriptionOf(options.scheme().scheme()).level_kind == LevelKind::kGlobalBatch) {
  // Every rank reports its own problems and settings before any of them
  // raises: a rank that raised alone would leave its peers waiting in the
  // first collective (a hang), and one that went on with other settings
  // would abort inside the transport.
  AttachReport mine;
  mine.problem = local_problem;
  mine.trace = !options_.trace().empty();
  mine.epochs = options_.epochs();
  mine.sample_iterations = options_.sample_iterations();
  if (mine.problem.empty()) {
    try {
      CheckOptions(options_);
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
  options_.sample_iterations(all[0].sample_iterations);

  run_ = std::make_unique<AccordionRun>(
      AccordionRunOptions()
          .scheme(options_.scheme())
          .level_low(options_.level_low())
          .level_high(options_.level_high())
          .accordion(AccordionOptions().eta(options_.eta()).interval(options_.interval()))
          .policy(options_.policy())
          .msdr_factor(options_.msdr_factor()),
      static_cast<int>(layers_.size()));

  // Rank 0 creates the trace; every rank learns whether it could, so all
  // raise the same error instead of the others waiting in the probe.
  std::unique_ptr<TraceWriter> writer;
  std::string trace_problem;
  if (recording_ && comm_.rank() == 0) {
    RunInfo run;
    run.model = options_.model();
    run.dataset = options_.dataset();
    run.train_samples = options_.train_samples();
    run.scheme = options_.scheme().scheme();
    run.policy = options_.policy();
    run.level_low = options_.level_low();
    run.level_high = options_.level_high();
    run.eta = options_.eta();
    run.interval = options_.interval();
    run.msdr_factor = options_.msdr_factor();
    run.world_size = comm_.world_size();
    run.backend = comm_.backend();
    run.device = parameters[0].device().is_cuda() ? "cuda" : "cpu";
    run.batch_size = batch_scheme_ ? static_cast<int64_t>(options_.level_low()) : options_.batch_size();
    run.epochs_planned = options_.epochs();
    run.seed = static_cast<int64_t>(options_.seed());
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
  recorder_ = std::make_unique<TraceRecorder>(comm_, std::move(writer), recording_, options_.sample_iterations());

  exchange_ = std::make_unique<GradientExchange>(std::move(parameters), layers_, comm_,
                                                 ExchangeOptions()
                                                     .scheme(options_.scheme())
                                                     .bucket_bytes(options_.bucket_bytes())
                                                     .seed(options_.seed())
                                                     .own_gradients(false));
  plan_ = run_->CurrentPlan();
  exchange_->SetLevels(plan_.layer_levels, 0);
  if (recording_ && options_.network_probe()) {
    recorder_->ProbeNetwork(exchange_->Gradient(0).device(), NetworkProbeOptions());
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
  const RawGradientStatistics stats = exchange_->ReduceRawGradients();
  const std::vector<double>& norms = stats.norms;
  for (size_t l = 0; l < norms.size(); ++l) {
    if (std::isfinite(norms[l])) continue;
    Finish(RunStatus::kFailed);
    throw TrainingDiverged(
        "training diverged in epoch " + std::to_string(epoch_) + ": the accumulated gradient of " + layers_[l].name +
        " is not finite" +
        (recording_ ? "; the trace keeps " + std::to_string(epoch_) + " finished epoch(s) and is marked failed" : ""));
  }
  const double model_norm = WholeModelNorm(norms);
  EpochSignals signals;
  signals.norms = norms;
  signals.mean_norms = stats.mean_norms;
  signals.stds = stats.stds;
  signals.lr = lr;
  signals.lr_next = next_lr;
  const AccordionDecision decision = run_->EndEpoch(signals);

  EpochData data;
  EpochRecord& rec = data.epoch;
  rec = sums_;
  rec.epoch = epoch_;
  // The user's loop applies lr_scale (the batch scheme's factor) to the
  // schedule's LR it passes here: the trace records both.
  rec.lr = lr * (batch_scheme_ ? plan_.raw_gradient_weight : 1.0);
  rec.schedule_lr = lr;
  rec.batch_size = batch_scheme_ ? plan_.global_batch : options_.batch_size();
  rec.iterations = step_;
  rec.critical = plan_.model_critical;
  rec.model_grad_norm = model_norm;
  rec.train_loss = train_loss;
  rec.train_acc = train_acc;
  rec.test_loss = test_loss;
  rec.test_acc = test_acc;
  rec.total_s = Seconds(Clock::now() - epoch_start_);
  FillEpochLayerRecords(options_.scheme(), layers_, epoch_, plan_.layer_levels, plan_.critical, decision, stats, data);
  // At a regime check, on the rank that records: the error profile of the
  // epoch's global raw sums (error_profile.h).
  const std::vector<double> profiled =
      ErrorProfileLevels(options_.scheme().scheme(), {options_.level_low(), options_.level_high()});
  if (recording_ && comm_.rank() == 0 && !profiled.empty() && epoch_ % options_.interval() == 0) {
    data.error_profile = ProfileErrors(exchange_->RawGradientSums(), layers_, options_.scheme(), profiled, epoch_);
  }
  exchange_->ResetRawGradients();
  recorder_->EndEpoch(data);

  DdpEpochSummary summary;
  summary.epoch = epoch_;
  summary.grad_norms = norms;
  summary.floats_sent = rec.floats_sent;
  summary.skipped_steps = skipped_steps_;
  plan_ = run_->CurrentPlan();
  summary.next_levels = plan_.layer_levels;
  summary.next_critical = plan_.critical;
  summary.next_batch_size = batch_scheme_ ? plan_.global_batch : options_.batch_size();
  ++epoch_;
  step_ = 0;
  skipped_steps_ = 0;
  result_square_sum_ = 0;
  sums_ = EpochRecord();
  exchange_->SetLevels(plan_.layer_levels, epoch_);
  exchange_->set_raw_gradient_weight(plan_.raw_gradient_weight);
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
