#include "trainer/accordion_run.h"

#include <chrono>
#include <cmath>

#include "trainer/error_profile.h"
#include "trainer/trace_recorder.h"

namespace accordion {

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

AccordionRun::AccordionRun(const RunSettings& settings, std::vector<LayerInfo> layers, GradientExchange& exchange,
                           bool profiles_errors)
    : settings_(settings),
      layers_(std::move(layers)),
      exchange_(exchange),
      profiles_errors_(profiles_errors),
      profiled_levels_(ErrorProfileLevels(settings.scheme.scheme(), {settings.level_low, settings.level_high})),
      planner_(settings, static_cast<int>(layers_.size())),
      plan_(planner_.CurrentPlan()) {}

AccordionRun::~AccordionRun() = default;

int64_t AccordionRun::global_batch() const { return batch_scheme() ? plan_.global_batch : settings_.batch_size; }

void AccordionRun::StartEpoch(int epoch) {
  // From the planner itself: a checkpoint may have restored its policies
  // since the last decision.
  plan_ = planner_.CurrentPlan();
  exchange_.SetLevels(plan_.layer_levels, epoch);
  exchange_.set_raw_gradient_weight(plan_.raw_gradient_weight);
}

AccordionRun::EpochEnd AccordionRun::EndEpoch(int epoch, double lr, double next_lr) {
  EpochEnd end;
  end.epoch = epoch;
  end.lr = lr;
  end.plan = plan_;
  end.stats = exchange_.ReduceRawGradients();
  // A gradient can overflow in the epoch's last step before any loss shows it.
  for (size_t l = 0; l < end.stats.norms.size(); ++l) {
    if (!std::isfinite(end.stats.norms[l])) {
      throw TrainingDiverged("the accumulated gradient of " + layers_[l].name + " is not finite");
    }
  }
  const Clock::time_point decide = Clock::now();
  // The planner sees the schedule's LR without the batch factor, so a batch
  // that grows is not read as an LR change; a replay of the recorded
  // (scaled) LRs reaches the same verdicts, as the factor only ever grows
  // together with a non-critical verdict.
  EpochSignals signals;
  signals.norms = end.stats.norms;
  signals.mean_norms = end.stats.mean_norms;
  signals.stds = end.stats.stds;
  signals.lr = lr;
  signals.lr_next = next_lr;
  end.decision = planner_.EndEpoch(signals);
  end.decide_s = Since(decide);
  // The profiling rank alone, at the regime checks: the others wait for it
  // at the next collective, so its cost is the run's (docs/policies.md).
  if (profiles_errors_ && !profiled_levels_.empty() && epoch % settings_.interval == 0) {
    const Clock::time_point profile = Clock::now();
    end.error_profile = ProfileErrors(exchange_.RawGradientSums(), layers_, settings_.scheme, profiled_levels_, epoch);
    end.profile_s = Since(profile);
  }
  exchange_.ResetRawGradients();
  plan_ = planner_.CurrentPlan();
  return end;
}

void AccordionRun::Record(const EpochEnd& end, EpochData& data, TraceRecorder& recorder) {
  EpochRecord& rec = data.epoch;
  rec.epoch = end.epoch;
  rec.schedule_lr = end.lr;
  rec.lr = end.lr * (batch_scheme() ? end.plan.raw_gradient_weight : 1.0);
  rec.batch_size = batch_scheme() ? end.plan.global_batch : settings_.batch_size;
  rec.critical = end.plan.model_critical;
  rec.model_grad_norm = WholeModelNorm(end.stats.norms);
  FillEpochLayerRecords(settings_.scheme, layers_, end.epoch, end.plan.layer_levels, end.plan.critical, end.decision,
                        end.stats, data);
  data.error_profile = end.error_profile;
  recorder.EndEpoch(data);
}

}  // namespace accordion
