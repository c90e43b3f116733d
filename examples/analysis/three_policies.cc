// Three policies behind one interface: Accordion, AdaQS and Smith et al.
//
// The scenario: the run of embed_controller.cc again - 24 epochs, an LR that
// warms up over 3 epochs and drops 10x at epoch 16, gradients that fall
// quickly, settle, and fall again after the decay - now fed to the three
// adaptive policies the paper compares (Section 5.6), each through
// accordion::LevelPolicy:
//
//   Accordion switches PowerSGD between rank 2 (critical) and rank 1 from
//     the gradient norm's change at each check;
//   AdaQS starts at rank 1 and doubles the rank each time the gradients'
//     mean-to-standard-deviation ratio (MSDR) has halved since its last
//     switch, up to rank 4;
//   Smith et al. train the batch scheme: where the LR would decay they grow
//     the global batch by the decay's factor instead, up to 1024.
//
// The MSDR halves by the check at epoch 4 (AdaQS goes to rank 2) and again
// by the one at epoch 20, after the decay (rank 4); Smith's batch grows at
// the decay, capped at 8x. The lr column is the schedule's: under Smith the
// trainer runs at lr x batch / 128, so 0.08 from epoch 16 - the part of the
// decay the capped batch could not take.
#include <cmath>
#include <cstdio>
#include <memory>

#include "analysis/level_policy.h"

namespace {

double LearningRate(int epoch) {
  if (epoch < 3) return 0.1 * (epoch + 1) / 3;
  return epoch < 16 ? 0.1 : 0.01;
}

// The whole model's accumulated-gradient norm an epoch would measure.
double NormOf(int epoch) {
  double shape = 0.3 + 0.7 * std::exp(-epoch / 3.0);
  if (epoch >= 16) shape *= 0.4 + 0.6 * std::exp(-(epoch - 16) / 2.0);
  return shape;
}

}  // namespace

int main() {
  using namespace accordion;
  std::unique_ptr<LevelPolicy> accordion =
      MakeAccordionPolicy(1, AccordionOptions().eta(0.5).interval(4).level_low(2).level_high(1));
  std::unique_ptr<LevelPolicy> adaqs =
      MakeAdaqsPolicy(1, AdaqsOptions().factor(2).interval(4).level_low(4).level_high(1).scheme(Scheme::kPowerSgd));
  std::unique_ptr<LevelPolicy> smith = MakeSmithPolicy(SmithOptions().level_low(128).level_high(1024));

  std::printf("epoch  lr      accordion  adaqs  smith  msdr\n");
  for (int epoch = 0; epoch < 24; ++epoch) {
    // What one epoch measures: the norm of the summed gradient (Accordion),
    // the mean step gradient's norm and the steps' spread (AdaQS: their
    // ratio is the MSDR), and the schedule's LR now and next (Smith et al.).
    EpochSignals s;
    s.norms = {NormOf(epoch)};
    s.mean_norms = {NormOf(epoch) / 100};
    s.stds = {0.01};
    s.lr = LearningRate(epoch);
    s.lr_next = LearningRate(epoch + 1);
    std::printf("%5d  %.4f  rank %g     rank %g  %5g  %.2f\n", epoch, s.lr, accordion->levels()[0], adaqs->levels()[0],
                smith->levels()[0], s.mean_norms[0] / s.stds[0]);
    for (LevelPolicy* policy : {accordion.get(), adaqs.get(), smith.get()}) policy->EndEpoch(s);
  }
  return 0;
}
