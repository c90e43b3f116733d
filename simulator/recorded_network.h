// RecordedNetwork: the network a trace was recorded on, fitted from the
// collective probe its run made at start (NetworkProbeRecord). The probe's
// all-reduces and all-gathers ran alone on an idle network over a range of
// sizes, so a line through them tells the network's latency from its
// bandwidth where the training's own few, small, noisy collectives cannot.
//
// The fit is a star of the run's world size whose links give, under the
// alpha-beta ring formulas (alpha_beta_model.h), each size's fastest repeat.
// The bandwidth is the sustained rate: a least-squares fit (of relative
// error) over the largest sizes, those that take the same time per byte
// as the largest within 25 %. Smaller sizes that crossed faster than that
// rate allows were inside a token-bucket shaper's burst (tc's tbf, a cloud
// instance's burst credits): they give the line rate and the burst's size,
// kept beside the platform. Alpha per message is the median of what the
// transfer leaves over the sizes below the sustained ones (two links of a
// star: a link's latency is alpha / 2).
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
  // The same over the sizes the bandwidth was fitted from (the sustained
  // ones): what a what-if at another rate rests on. The smaller sizes'
  // misses are a busy host's waits or a half-used burst, which the
  // training's collectives carry as host costs.
  double rms_transfer_error = 0;
  int transfer_sizes = 0;  // how many sizes that rms is over
  // The sustained rate's relative uncertainty: the rms over those sizes
  // less what their number averages out (rms / sqrt(n)). A replay's band
  // moves this share of the recorded collectives' time between network and
  // host (replay_engine.h).
  double RateUncertainty() const;
  // Whether the largest size took at least twice the smallest: without, the
  // probe saw latency (or a busy host) only, and its bandwidth is a guess.
  bool transfer_seen = true;
  // Whether at least two sizes agreed per byte at the top of the probe:
  // without, its largest size may still have ridden a burst, and the
  // sustained rate may be lower than the platform's.
  bool sustained_seen = true;
  // A shaper's burst, where smaller sizes crossed at least twice as fast
  // per byte as the sustained rate: their rate (bytes per second through a
  // link; 0 when they were all latency, too fast to tell) and the largest
  // of them in bytes through a link. burst_bytes 0: no burst seen.
  double burst_line_Bps = 0;
  double burst_bytes = 0;
  // The fit's rms relative error over the sustained sizes above which
  // a replay warns that it may not be the network the run saw.
  static constexpr double kHighRms = 0.25;
  // "probe of 14 sizes on 2 ranks: 46.2 us per message, 9.41 Gb/s (rms 3.1 %)",
  // with the burst where one was seen.
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
