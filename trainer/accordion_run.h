// AccordionRun: one rank's side of a recorded Accordion run, held by
// accordion-train (Trainer) and the DDP hook (DdpHookCore) alike, so that
// whichever writer records a run, the same code ends its epochs: the raw
// gradients reduced over the ranks, the divergence check, the decision
// (RunPlanner: the deciding LevelPolicy, as an offline replay takes it), the
// error profile at a regime check, the epoch's layer rows, the trace and the
// next epoch's levels on the exchange.
//
// Per epoch: StartEpoch, the writer's steps through the exchange, EndEpoch
// (collective), the writer's own measurements (loss, accuracy, evaluation,
// Hessian) into the epoch's record, Record (collective).
//
// Thread safety: not thread-safe; the training thread drives it.
#ifndef ACCORDION_TRAINER_ACCORDION_RUN_H_
#define ACCORDION_TRAINER_ACCORDION_RUN_H_

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/run_settings.h"
#include "traces/records.h"
#include "trainer/gradient_exchange.h"
#include "trainer/run_planner.h"

namespace accordion {

class TraceRecorder;

// An epoch's accumulated gradient is not finite: training diverged.
class TrainingDiverged : public std::runtime_error {
 public:
  explicit TrainingDiverged(const std::string& what) : std::runtime_error(what) {}
};

class AccordionRun {
 public:
  // What the end of an epoch found, for the writer's own records.
  struct EpochEnd {
    int epoch = 0;
    double lr = 0;          // the schedule's, before the batch factor
    RunPlanner::Plan plan;  // the epoch's; plan() is now the next one's
    RawGradientStatistics stats;
    AccordionDecision decision;
    std::vector<ErrorProfileRecord> error_profile;  // at a regime check, on the profiling rank
    double decide_s = 0;                            // the planner's share
    double profile_s = 0;                           // the error profile's
  };

  // `layers` describe the exchange's parameters; `exchange` outlives this.
  // `profiles_errors`: this rank measures the error profile at the regime
  // checks (rank 0 of a recorded run).
  AccordionRun(const RunSettings& settings, std::vector<LayerInfo> layers, GradientExchange& exchange,
               bool profiles_errors);
  ~AccordionRun();
  AccordionRun(const AccordionRun&) = delete;
  AccordionRun& operator=(const AccordionRun&) = delete;

  bool batch_scheme() const { return planner_.batch_scheme(); }
  // The running epoch's plan.
  const RunPlanner::Plan& plan() const { return plan_; }
  // The running epoch's global batch: the batch scheme's level, else the run's.
  int64_t global_batch() const;

  // Takes the planner's plan for `epoch` (a checkpoint may have restored its
  // policies) and sets its levels and raw-gradient weight on the exchange.
  void StartEpoch(int epoch);

  // Collective. Reduces the epoch's raw gradients over the ranks; throws
  // TrainingDiverged naming the first layer whose accumulated gradient is
  // not finite; feeds the planner the norms and moments with the schedule's
  // `lr` and `next_lr` (without any batch factor); at a regime check the
  // profiling rank measures the error profile on the global sums; the sums
  // are reset and plan() is the next epoch's.
  EpochEnd EndEpoch(int epoch, double lr, double next_lr);

  // Collective. Completes `data.epoch` (epoch, LR with and without the
  // batch factor, batch, regime, model norm) beside what the writer measured
  // (iterations, times, losses), adds the layer rows and the error profile
  // and writes the epoch through `recorder`.
  void Record(const EpochEnd& end, EpochData& data, TraceRecorder& recorder);

  // The planner's policies, for checkpoints (RunPlanner::Policies).
  std::vector<std::pair<std::string, LevelPolicy*>> Policies() { return planner_.Policies(); }

 private:
  RunSettings settings_;
  std::vector<LayerInfo> layers_;
  GradientExchange& exchange_;
  bool profiles_errors_;
  std::vector<double> profiled_levels_;  // empty: the scheme has no compression error
  RunPlanner planner_;
  RunPlanner::Plan plan_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_ACCORDION_RUN_H_
