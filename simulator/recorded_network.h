// RecordedNetwork: the network a trace was recorded on, fitted from the
// collective probe its run made at start (NetworkProbeRecord). The probe's
// all-reduces and all-gathers ran alone on an idle network over a range of
// sizes, so a line through them tells the network's latency from its
// bandwidth where the training's own few, small, noisy collectives cannot.
//
// The fit is a star of the run's world size whose links give, under the
// alpha-beta ring formulas (alpha_beta_model.h), the probe's median times
// in the least-squares sense of relative error: alpha per message (two
// links of a star, so a link's latency is alpha / 2) and one bandwidth.
// The platform uses SimGrid's exact network setting (CM02, no TCP window,
// no cross-traffic), under which a simulation reproduces those formulas, so
// simulated and analytic replays see the same recorded network.
//
// A replay anchors on it (replay_engine.h): each recorded collective's host
// cost is what it measured less what this platform gives it.
#ifndef ACCORDION_SIMULATOR_RECORDED_NETWORK_H_
#define ACCORDION_SIMULATOR_RECORDED_NETWORK_H_

#include <optional>
#include <string>
#include <vector>

#include "simulator/platform.h"
#include "traces/records.h"

namespace accordion::sim {

struct RecordedNetwork {
  PlatformSpec platform;          // star, one host per rank, the fitted links
  int world_size = 0;             // ranks the probe ran on
  int sizes = 0;                  // distinct (op, bytes) probed
  double rms_relative_error = 0;  // of the fit over those medians
  // "probe of 14 sizes: 46.2 us per message, 9.41 Gb/s (rms 3.1 %)".
  std::string Describe() const;
};

// The fit of `probe` (one run's, on `world_size` ranks); nullopt when the
// probe is empty or holds fewer than two sizes of one op. Throws
// InputError when its times cannot be a network (none positive).
std::optional<RecordedNetwork> FitRecordedNetwork(const std::vector<NetworkProbeRecord>& probe, int world_size);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_RECORDED_NETWORK_H_
