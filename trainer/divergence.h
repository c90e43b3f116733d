// How the ranks agree that training diverged - a loss that is NaN or Inf -
// and where, without a collective per step: the trainer keeps each rank's
// first non-finite step on the device and the ranks compare them at the
// epoch loop's reads (every kReadEvery steps and at the epoch's end), so all
// stop at the same read and name the same step.
//
// A check is a sum of slots, one per rank: a rank puts its first bad step
// + 1 in its own slot and 0 elsewhere, so the all-reduced sum carries every
// rank's step exactly and the earliest is taken after it. The slots can ride
// in another all-reduce (the epoch's loss and accuracy totals).
#ifndef ACCORDION_TRAINER_DIVERGENCE_H_
#define ACCORDION_TRAINER_DIVERGENCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

class Communicator;

// This rank's slots of a divergence check, from its first step whose loss
// was not finite (-1: none).
std::vector<double> DivergenceSlots(const Communicator& comm, int64_t first_bad_step);

// Where the loss first became NaN or Inf, from the all-reduced slots of
// every rank: "epoch E, step S of N (the loss of rank R is not finite)" for
// the earliest step, on the lowest rank of those tied; "" if no rank had one.
std::string DescribeDivergence(int epoch, int64_t steps, const std::vector<double>& slots);

// A collective: where the loss first became NaN or Inf on any rank in this
// epoch ("" if nowhere), from each rank's `first_bad_step` (-1: none).
std::string AgreeOnDivergence(Communicator& comm, int epoch, int64_t steps, int64_t first_bad_step);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DIVERGENCE_H_
