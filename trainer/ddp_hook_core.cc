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
#include "trainer/communicator.h"
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
  if (o.policy() == Policy::kAccordion && !d.has_levels()) {
    throw InputError(std::string("policy 'accordion' needs a compressing scheme, not '") +
                     ToString(o.scheme().scheme()) + "'");
  }
  if (o.policy() == Policy::kStatic && o.level_low() != o.level_high()) {
    throw InputError("a static policy takes one level: low and high must be equal");
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

}  // namespace

DdpHookCore::DdpHookCore(std::vector<torch::Tensor> parameters, std::vector<std::string> names, Communicator& comm,
                         const DdpHookOptions& options)
    : comm_(comm),
      options_(options),
      batch_scheme_(DescriptionOf(options.scheme().scheme()).level_kind == LevelKind::kGlobalBatch),
      recording_(!options.trace().empty()) {
  CheckOptions(options_);
  layers_ = LayersOf(parameters, names, options_);
  const auto L = static_cast<int>(layers_.size());
  const AccordionOptions accordion = AccordionOptions()
                                         .eta(options_.eta())
                                         .interval(options_.interval())
                                         .level_low(options_.level_low())
                                         .level_high(options_.level_high());
  controller_ = batch_scheme_ ? std::make_unique<AccordionController>(
                                    1, AccordionOptions(accordion).mode(ControllerMode::kWholeModel))
                              : std::make_unique<AccordionController>(L, accordion);
  model_controller_ = std::make_unique<AccordionController>(1, accordion);

  // Rank 0 creates the trace; every rank learns whether it could, so all
  // raise the same error instead of the others waiting in the probe.
  std::unique_ptr<TraceWriter> writer;
  std::string problem;
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
    run.world_size = comm_.world_size();
    run.backend = comm_.backend();
    run.device = parameters[0].device().is_cuda() ? "cuda" : "cpu";
    run.batch_size = batch_scheme_ ? static_cast<int64_t>(options_.level_low()) : options_.batch_size();
    run.epochs_planned = options_.epochs();
    run.seed = static_cast<int64_t>(options_.seed());
    nlohmann::json config = nlohmann::json::parse(options_.config_json(), nullptr, false);
    if (!config.is_object()) config = nlohmann::json::object();
    config["bucket_mb"] = static_cast<double>(options_.bucket_bytes()) / (1024.0 * 1024.0);
    run.config_json = config.dump();
    run.versions_json = RecordedVersionsJson();
    run.run_id = NewRunId();
    run.started_utc = UtcNow();
    run.writer = kWriterPythonHook;
    run.ranks_per_node = std::min(options_.ranks_per_node(), comm_.world_size());
    try {
      writer = TraceWriter::Create(options_.trace(), run, layers_, options_.overwrite());
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  if (recording_) {
    const std::vector<std::string> said = AllGatherBytes(comm_, problem);
    if (!said[0].empty()) throw InputError(said[0]);
  }
  recorder_ = std::make_unique<TraceRecorder>(comm_, std::move(writer), recording_, options_.sample_iterations());

  exchange_ = std::make_unique<GradientExchange>(std::move(parameters), layers_, comm_,
                                                 ExchangeOptions()
                                                     .scheme(options_.scheme())
                                                     .bucket_bytes(options_.bucket_bytes())
                                                     .seed(options_.seed())
                                                     .own_gradients(false));
  AdoptControllerLevels();
  exchange_->SetLevels(levels_, 0);
  if (recording_ && options_.network_probe()) {
    recorder_->ProbeNetwork(exchange_->Gradient(0).device(), NetworkProbeOptions());
  }
  epoch_start_ = Clock::now();
}

DdpHookCore::~DdpHookCore() = default;

void DdpHookCore::BeginStep() {
  const Clock::time_point now = Clock::now();
  if (in_step_) return;  // a forward without backward (no_sync, evaluation under grad)
  CloseStep(now);
  exchange_->BeginStep(recorder_->Samples(step_));
  gradients_seen_ = false;
  step_start_ = now;
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
  gradients_seen_ = true;
  exchange_->GradientReady(layer, grad);
}

void DdpHookCore::FinishStep() {
  if (!in_step_) return;
  iteration_.backward_s = Seconds(Clock::now() - backward_start_);
  exchange_->FinishStep();
  in_step_ = false;
  step_open_ = true;
}

torch::Tensor DdpHookCore::Gradient(int layer) const { return exchange_->Gradient(layer); }

void DdpHookCore::AdoptControllerLevels() {
  // The batch scheme's one decision holds for every layer.
  const std::vector<double>& decided = controller_->levels();
  const std::vector<bool>& critical = controller_->critical();
  levels_ = batch_scheme_ ? std::vector<double>(layers_.size(), decided[0]) : decided;
  critical_ = batch_scheme_ ? std::vector<bool>(layers_.size(), critical[0]) : critical;
}

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
                                      double test_acc) {
  if (finished_) throw std::logic_error("end_epoch after finish");
  // Checked on every rank before any collective, so all raise alike.
  if (recording_ && epoch_ >= options_.epochs()) {
    throw InputError("end_epoch for epoch " + std::to_string(epoch_ + 1) + " of a run attached with epochs=" +
                     std::to_string(options_.epochs()) + ": give attach the number of epochs the run trains");
  }
  // A training-mode forward that no backward followed (a loss computed for
  // a log, say) opened a step that never communicated: it is dropped.
  if (in_step_ && !gradients_seen_) in_step_ = false;
  if (in_step_) throw InputError("end_epoch during a step: call it after the epoch's last optimizer step");
  CloseStep(Clock::now());
  if (!(std::isfinite(lr) && lr >= 0 && std::isfinite(next_lr) && next_lr >= 0)) {
    throw InputError("lr and next_lr must be finite and not negative");
  }
  const std::vector<double> norms = exchange_->TakeGlobalRawGradientNorms();
  for (size_t l = 0; l < norms.size(); ++l) {
    if (std::isfinite(norms[l])) continue;
    Finish(RunStatus::kFailed);
    throw TrainingDiverged(
        "training diverged in epoch " + std::to_string(epoch_) + ": the accumulated gradient of " + layers_[l].name +
        " is not finite" +
        (recording_ ? "; the trace keeps " + std::to_string(epoch_) + " finished epoch(s) and is marked failed" : ""));
  }
  const double model_norm = WholeModelNorm(norms);
  const AccordionDecision decision =
      controller_->EndEpoch(batch_scheme_ ? std::vector<double>{model_norm} : norms, lr, next_lr);
  const bool model_critical = model_controller_->critical()[0];
  model_controller_->EndEpoch({model_norm}, lr, next_lr);

  EpochData data;
  EpochRecord& rec = data.epoch;
  rec = sums_;
  rec.epoch = epoch_;
  rec.lr = lr;
  rec.batch_size = batch_scheme_ ? static_cast<int64_t>(levels_[0]) : options_.batch_size();
  rec.iterations = step_;
  rec.critical = model_critical;
  rec.model_grad_norm = model_norm;
  rec.train_loss = train_loss;
  rec.train_acc = train_acc;
  rec.test_loss = test_loss;
  rec.test_acc = test_acc;
  rec.total_s = Seconds(Clock::now() - epoch_start_);
  FillEpochLayerRecords(options_.scheme(), layers_, epoch_, levels_, critical_, decision, norms, batch_scheme_, data);
  recorder_->EndEpoch(data);

  DdpEpochSummary summary;
  summary.epoch = epoch_;
  summary.grad_norms = norms;
  summary.floats_sent = rec.floats_sent;
  AdoptControllerLevels();
  summary.next_levels = levels_;
  summary.next_critical = critical_;
  summary.next_batch_size = batch_scheme_ ? static_cast<int64_t>(levels_[0]) : options_.batch_size();
  ++epoch_;
  step_ = 0;
  sums_ = EpochRecord();
  exchange_->SetLevels(levels_, epoch_);
  // A step at a grown batch counts as that many steps at the low batch
  // (as in accordion-train), so the epoch's norm does not shrink with it.
  exchange_->set_raw_gradient_weight(batch_scheme_ ? levels_[0] / options_.level_low() : 1.0);
  epoch_start_ = Clock::now();
  return summary;
}

void DdpHookCore::Finish(RunStatus status) {
  if (finished_) return;
  finished_ = true;
  recorder_->Finish(status);
}

}  // namespace accordion
