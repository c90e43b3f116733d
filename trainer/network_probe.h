// The network probe a training run makes at start: after its ranks meet and
// before the first step, a few all-reduces and all-gathers over a ladder of
// sizes on the idle network, within a time budget. The trace keeps them
// (NetworkProbeRecord), so a replay can tell the recorded network's
// transfer cost from the hosts' and anchor itself on what the run measured
// (docs/simulator.md, "Anchored replay").
//
// The ladder goes on until two successive sizes take the same time per byte:
// a token-bucket shaper (a cloud instance's baseline rate with burst credits)
// lets messages inside its burst cross at the line rate, so a ladder that
// stopped there would report the burst's rate, not the sustained one.
#ifndef ACCORDION_TRAINER_NETWORK_PROBE_H_
#define ACCORDION_TRAINER_NETWORK_PROBE_H_

#include <cstdint>
#include <vector>

#include "common/options.h"
#include "traces/records.h"
#include "trainer/communicator.h"
#include "trainer/torch_pch.h"

namespace accordion {

class NetworkProbeOptions {
 public:
  /// Smallest message, bytes (all-gather: the whole output, as
  /// accordion-bench-collectives counts it). Default: 4096.
  ACCORDION_ARG(int64_t, min_bytes) = 4096;
  /// Largest message, bytes. Default: 64 MiB.
  ACCORDION_ARG(int64_t, max_bytes) = 64 << 20;
  /// Each size is the previous one times this. Default: 4.
  ACCORDION_ARG(int, factor) = 4;
  /// Timed runs per op and size, after one untimed. Default: 5.
  ACCORDION_ARG(int, repeats) = 5;
  /// The probe stops before a size whose runs would take it past this,
  /// judged from the size before (times the growth in bytes). A size past
  /// a shaper's burst can take longer than judged; the probe then stops
  /// after it. Default: 5.
  ACCORDION_ARG(double, budget_s) = 5;
  /// Sizes probed whatever the budget says: a line needs two, and a loaded
  /// host can make the smallest look slow. Default: 3.
  ACCORDION_ARG(int, min_sizes) = 3;
  /// The ladder ends once two successive sizes whose transfer shows take
  /// the same all-reduce time per byte (fastest run) within this fraction
  /// (AgreeWithin): a burst, if there is one, is used up. Default: 0.15.
  ACCORDION_ARG(double, agreement) = 0.15;
};

// Times all-reduce and all-gather at each size on `device` tensors; every
// rank must call it, and every rank returns the same records (the slowest
// rank's time per run). Sizes go up until two successive ones agree per byte
// (options.agreement) or the budget would be passed, so a slow network keeps
// its small sizes; past min_sizes, while a size takes less than twice the
// smallest (no transfer shows yet), the next is skipped. Nothing with one
// rank.
std::vector<NetworkProbeRecord> ProbeNetwork(Communicator& comm, torch::Device device,
                                             const NetworkProbeOptions& options = NetworkProbeOptions());

}  // namespace accordion

#endif  // ACCORDION_TRAINER_NETWORK_PROBE_H_
