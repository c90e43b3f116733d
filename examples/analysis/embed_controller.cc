// Embedding AccordionController in your own training loop.
//
// The scenario: a three-layer model trains for 24 epochs with a learning
// rate that warms up over 3 epochs and drops 10x at epoch 16. We stand in for
// the training with made-up gradient norms that fall quickly at first, then
// settle, and fall again after the decay - the shape the paper's Figure 2a
// shows for ResNet-18. Each epoch we read the levels the controller chose
// (PowerSGD rank 2 in critical regimes, rank 1 elsewhere), "train" with
// them, and hand the controller the epoch's accumulated-gradient norms.
//
// The decay at 16 falls on a check epoch. That check sees little change
// (0.03), yet every layer stays at rank 2 through epochs 16-19: the epochs
// after a decay are critical, for at least one interval whatever the
// alignment. Epoch 20 follows the check's verdict; the check at 20, which
// compares with the norms of epoch 16, sees the post-decay fall and goes
// back to rank 2.
#include <cmath>
#include <cstdio>

#include "analysis/accordion_controller.h"

namespace {

// The learning rate of an epoch: warm-up, then a step decay at epoch 16.
double LearningRate(int epoch) {
  if (epoch < 3) return 0.1 * (epoch + 1) / 3;
  return epoch < 16 ? 0.1 : 0.01;
}

// What training would measure: ||sum of the epoch's raw gradients|| per layer.
double NormOf(int layer, int epoch) {
  double shape = 0.3 + 0.7 * std::exp(-epoch / 3.0);
  if (epoch >= 16) shape *= 0.4 + 0.6 * std::exp(-(epoch - 16) / 2.0);
  return (layer + 1) * shape;
}

}  // namespace

int main() {
  // The paper's settings except a shorter check interval for a short run.
  accordion::AccordionController controller(
      3, accordion::AccordionOptions().eta(0.5).interval(4).level_low(2).level_high(1));

  for (int epoch = 0; epoch < 24; ++epoch) {
    // 1. Train the epoch with each layer's rank from controller.levels(),
    //    summing every layer's raw gradient (before compression) as we go.
    std::printf("epoch %2d  lr %.4f  ranks", epoch, LearningRate(epoch));
    for (double rank : controller.levels()) std::printf(" %g", rank);

    // 2. At the end of the epoch, give the controller the norms of those sums
    //    (all-reduced, so every worker decides the same) and the LR to come.
    std::vector<double> norms;
    for (int layer = 0; layer < 3; ++layer) norms.push_back(NormOf(layer, epoch));
    const accordion::AccordionDecision d = controller.EndEpoch(norms, LearningRate(epoch), LearningRate(epoch + 1));

    // 3. It says why the next epoch's levels are what they are.
    if (d.checked && d.ratios[0]) std::printf("  | check: change %.2f", *d.ratios[0]);
    if (d.checked && !d.ratios[0]) std::printf("  | check: no baseline yet");
    if (d.lr_decay) std::printf("  | LR decays: critical");
    std::printf("\n");
  }
  return 0;
}
