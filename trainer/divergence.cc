#include "trainer/divergence.h"

#include "trainer/communicator.h"

namespace accordion {

std::vector<double> DivergenceSlots(const Communicator& comm, int64_t first_bad_step) {
  std::vector<double> slots(static_cast<size_t>(comm.world_size()), 0.0);
  slots[static_cast<size_t>(comm.rank())] = static_cast<double>(first_bad_step + 1);
  return slots;
}

std::string DescribeDivergence(int epoch, int64_t steps, const std::vector<double>& slots) {
  int64_t bad_step = -1;
  int bad_rank = -1;
  for (size_t r = 0; r < slots.size(); ++r) {
    const auto at = static_cast<int64_t>(slots[r]) - 1;
    if (at >= 0 && (bad_step < 0 || at < bad_step)) {
      bad_step = at;
      bad_rank = static_cast<int>(r);
    }
  }
  if (bad_step < 0) return "";
  return "epoch " + std::to_string(epoch + 1) + ", step " + std::to_string(bad_step + 1) + " of " +
         std::to_string(steps) + " (the loss of rank " + std::to_string(bad_rank) + " is not finite)";
}

std::string AgreeOnDivergence(Communicator& comm, int epoch, int64_t steps, int64_t first_bad_step) {
  // Every rank reads at the same steps and learns every rank's first
  // non-finite step: all agree whether to stop, and where.
  return DescribeDivergence(epoch, steps, AllReduceSumDoubles(comm, DivergenceSlots(comm, first_bad_step)));
}

}  // namespace accordion
