// RecordedNetwork: the network a trace was recorded on, fitted from the
// collective probe its run made at start (NetworkProbeRecord). The probe's
// all-reduces and all-gathers ran alone on an idle network over a range of
// sizes, so a line through them tells the network's latency from its
// bandwidth where the training's own few, small, noisy collectives cannot.
//
// The fit is a star of the run's world size whose links give, under the
// alpha-beta ring formulas (alpha_beta_model.h), each size's fastest repeat:
// the bandwidth from the largest sizes (least squares of relative error
// over those within 16x of the largest; a shaper passes small messages in
// its burst at line rate), then alpha per message, the median over every
// size of what the transfer leaves (two links of a star: a link's latency
// is alpha / 2).
// The platform uses SimGrid's exact network setting (CM02, no TCP window,
// no cross-traffic), under which a simulation reproduces those formulas, so
// simulated and analytic replays see the same recorded network.
//
// A replay anchors on it (replay_engine.h): each recorded collective's host
// cost is what it measured less what this platform gives it.
//
// Thread-safe: FitRecordedNetwork is a pure function; RecordedNetwork a value.
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
  double rms_relative_error = 0;  // of the fit over those fastest times
  // Whether the largest size took at least twice the smallest: without, the
  // probe saw latency (or a busy host) only, and its bandwidth is a guess.
  bool transfer_seen = true;
  // "probe of 14 sizes: 46.2 us per message, 9.41 Gb/s (rms 3.1 %)".
  std::string Describe() const;
};

// The fit of `probe` (one run's, on `world_size` ranks); nullopt when the
// probe is empty or holds fewer than two sizes. With `link_Bps`, the rate
// the links were known to run at: the platform's links get it, and what the
// probe found slower becomes the hosts' cost per byte (host_s_per_byte),
// which stays when a what-if changes the rate. Throws InputError when its
// times cannot be a network (none positive).
std::optional<RecordedNetwork> FitRecordedNetwork(const std::vector<NetworkProbeRecord>& probe, int world_size,
                                                  std::optional<double> link_Bps = std::nullopt);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_RECORDED_NETWORK_H_
