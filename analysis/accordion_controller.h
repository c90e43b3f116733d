// AccordionController decides, epoch by epoch, which layers (or the whole
// model) are in a critical learning regime: the paper's Algorithm 1.
//
//   A layer is critical in epoch e+1 when, at a check (e % interval == 0),
//     | ||D_prev|| - ||D_curr|| | / ||D_prev|| >= eta
//   where D_curr is epoch e's accumulated raw gradient and D_prev the one of
//   epoch e - interval; a zero ||D_prev|| counts as critical. Epoch 0 and the
//   epochs up to the first comparison are critical. Between checks a
//   decision stands.
//
// After an LR decay (lr_next below lr_current, beyond rounding) every layer
// is critical for at least `interval` epochs from the first epoch at the new
// LR, whatever the check alignment: the paper treats the epochs after a decay
// as critical, and its reference code keeps low compression for about an
// interval because its next check compares against the norm from before the
// decay. Without the hold, a decay taking effect on a check epoch (decays at
// 150 and 250 with interval 10) would let that epoch's own check switch a
// layer back to high compression after one epoch. The one check inside the
// hold compares with the pre-decay norm as usual, and its verdict takes over
// when the hold ends.
//
// Critical layers use level_low (low compression, small batch), the others
// level_high. In whole-model mode (batch size) there is one group and the
// level never goes back from high to low: the batch only grows.
//
// The controller is a plain state machine: no LibTorch, no I/O. The trainer
// feeds it live, the analysis CLI and the simulator replay recorded norms.
//
// Thread safety: a controller is not thread-safe (EndEpoch and Restore
// change it): one thread drives each, and const reads from others need a
// lock held across those calls. IsLrDecay and WholeModelNorm are pure.
#ifndef ACCORDION_ANALYSIS_ACCORDION_CONTROLLER_H_
#define ACCORDION_ANALYSIS_ACCORDION_CONTROLLER_H_

#include <optional>
#include <vector>

#include "common/options.h"

namespace accordion {

enum class ControllerMode {
  kPerLayer,    // compression levels chosen per layer (PowerSGD, TopK)
  kWholeModel,  // one decision for the model (batch size), level only grows
};

class AccordionOptions {
 public:
  // Throws InputError naming the first bad option.
  void Validate() const;

  /// The relative change of a gradient norm that counts as critical. Default: 0.5.
  ACCORDION_ARG(double, eta) = 0.5;
  /// Epochs between regime checks. Default: 10.
  ACCORDION_ARG(int, interval) = 10;
  /// The level of critical layers (low compression). Default: 2 (PowerSGD rank 2).
  ACCORDION_ARG(double, level_low) = 2;
  /// The level of the other layers. Default: 1 (PowerSGD rank 1).
  ACCORDION_ARG(double, level_high) = 1;
  /// Per layer or whole model. Default: ControllerMode::kPerLayer.
  ACCORDION_ARG(ControllerMode, mode) = ControllerMode::kPerLayer;
};

// What the controller concluded at the end of one epoch.
struct AccordionDecision {
  int epoch = 0;         // the epoch that just ended
  bool checked = false;  // a regime check ran at this epoch
  bool lr_decay = false;
  // Per group where a check compared against a non-zero previous norm.
  std::vector<std::optional<double>> ratios;
  std::vector<bool> critical_next;  // regimes for epoch + 1
  std::vector<double> levels_next;  // levels for epoch + 1
};

// Everything needed to continue a run exactly (checkpoints).
struct AccordionState {
  int next_epoch = 0;
  std::vector<bool> critical;        // in force in next_epoch
  std::vector<bool> check_critical;  // what the last check found (all true before any)
  std::vector<double> levels;
  std::vector<double> check_norms;  // norms at the last check
  int check_epoch = -1;             // epoch of those norms, -1 if none yet
  // Last epoch every layer is held critical after an LR decay; -1 if none.
  int critical_through = -1;
};

class AccordionController {
 public:
  // `num_groups` is the number of layers, or 1 in whole-model mode.
  AccordionController(int num_groups, const AccordionOptions& options);

  // Regimes and levels for the epoch about to run (next_epoch()).
  const std::vector<bool>& critical() const { return state_.critical; }
  const std::vector<double>& levels() const { return state_.levels; }
  int next_epoch() const { return state_.next_epoch; }
  int num_groups() const { return static_cast<int>(state_.critical.size()); }
  const AccordionOptions& options() const { return options_; }

  // Ends epoch next_epoch() with its accumulated-gradient norms (one per
  // group), the LR used in it and the LR planned for the next one.
  AccordionDecision EndEpoch(const std::vector<double>& norms, double lr_current, double lr_next);

  const AccordionState& state() const { return state_; }
  // Throws InputError if `state` does not fit this controller.
  void Restore(const AccordionState& state);

 private:
  AccordionOptions options_;
  AccordionState state_;
};

// Whether going from lr_current to lr_next is a decay (beyond rounding).
bool IsLrDecay(double lr_current, double lr_next);

// The whole model's accumulated-gradient norm from its layers' norms.
double WholeModelNorm(const std::vector<double>& layer_norms);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_ACCORDION_CONTROLLER_H_
