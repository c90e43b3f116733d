// Calibrating a platform from measured collectives: latency and bandwidth
// per message-size segment, then a platform file the simulator reads.
#include <cstdio>

#include "simulator/alpha_beta_model.h"
#include "common/number_format.h"
#include "simulator/calibrator.h"

using namespace accordion;
using namespace accordion::sim;

int main() {
  // Stand-in measurements from a network that starts small messages slowly
  // (80 us, 2 Gb/s effective) and streams large ones well (30 us, 9 Gb/s).
  const AlphaBetaModel network({{0, 80e-6, 2e9 / 8}, {65536, 30e-6, 9e9 / 8}});
  const int world = 8;
  Calibrator calibrator(CalibratorOptions().boundaries({65536}));
  for (double bytes = 16384; bytes <= 1e9; bytes *= 2) {
    // As a trainer would record them: all-reduces of buckets, all-gathers of TopK payloads.
    calibrator.Add(CollectiveOp::kAllReduce, world, static_cast<int64_t>(bytes),
                   network.Time(CollectiveOp::kAllReduce, AllReduceAlgorithm::kRing, bytes, world));
    calibrator.Add(CollectiveOp::kAllGather, world, static_cast<int64_t>(bytes / 64),
                   network.Time(CollectiveOp::kAllGather, AllReduceAlgorithm::kRing, bytes / 64, world));
  }
  const Calibration fit = calibrator.Fit();
  for (const CalibrationSegment& s : fit.segments) {
    std::printf("messages from %7.0f bytes: latency %5.1f µs, bandwidth %5.2f Gb/s (%d samples)\n", s.min_message_bytes,
                s.latency_s * 1e6, accordion::GbpsFromBytesPerSecond(s.bandwidth_Bps), s.samples);
  }
  // The platform: a star whose links reproduce the fit, with one host per
  // rank of whatever run replays on it (accordion-sim calibrate writes it as
  // JSON for --platform).
  const PlatformSpec platform = fit.Platform();
  std::printf("platform: %s\n", platform.Describe(world).c_str());
  return 0;
}
