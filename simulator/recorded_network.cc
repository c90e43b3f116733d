#include "simulator/recorded_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "common/statistics.h"
#include "simulator/alpha_beta_model.h"

namespace accordion::sim {

namespace {

// The fastest bandwidth a fit may give, 10 TB/s: a probe whose times do not
// grow with size (all latency) says only that the network is fast.
constexpr double kMaxBandwidthBps = 1e13;
// Below PlatformSpec's limit on the hosts' cost per byte (1000 ns/B).
constexpr double kMaxHostSecondsPerByte = 999e-9;

struct ProbePoint {
  bool allreduce = false;
  double alpha_coefficient = 0;  // messages in a row: alpha's multiplier
  double beta_coefficient = 0;   // bytes through the busiest link: 1/B's multiplier
  double seconds = 0;            // the fastest of the repeats
};

std::vector<ProbePoint> PointsOf(const std::vector<NetworkProbeRecord>& probe, int world) {
  std::map<std::pair<CollectiveOp, int64_t>, std::vector<double>> times;
  for (const NetworkProbeRecord& r : probe) times[{r.op, r.bytes}].push_back(r.seconds);
  // The ring formulas' coefficients, read off the model rather than restated.
  const AlphaBetaModel per_message(1.0, 1e300), per_byte(0.0, 1.0);
  std::vector<ProbePoint> points;
  for (const auto& [key, seconds] : times) {
    const auto [op, bytes] = key;
    ProbePoint p;
    p.allreduce = op == CollectiveOp::kAllReduce;
    p.alpha_coefficient = per_message.Time(op, AllReduceAlgorithm::kRing, static_cast<double>(bytes), world);
    p.beta_coefficient = per_byte.Time(op, AllReduceAlgorithm::kRing, static_cast<double>(bytes), world);
    // The fastest repeat: what the network took. Above it is the hosts'
    // own delay (a worker not yet scheduled, a loaded core), which the
    // training's collectives carry as their residuals; a median lets it
    // into the fit, where a few milliseconds of it on small sizes read as
    // latency or hide the transfer.
    p.seconds = *std::min_element(seconds.begin(), seconds.end());
    if (p.seconds > 0) points.push_back(p);
  }
  return points;
}

}  // namespace

std::string RecordedNetwork::Describe() const {
  std::ostringstream out;
  out.precision(3);
  out << "probe of " << sizes << " sizes on " << world_size << " ranks: " << platform.latency_s * 2e6
      << " us per message, " << GbpsFromBytesPerSecond(platform.LinkBandwidth()) << " Gb/s";
  if (burst_bytes > 0) out << " sustained";
  if (platform.host_s_per_byte > 0) {
    out << " (links " << GbpsFromBytesPerSecond(platform.bandwidth_Bps) << " Gb/s, hosts "
        << platform.host_s_per_byte * 1e9 << " ns/B)";
  }
  out << " (rms " << rms_relative_error * 100 << " %)";
  if (burst_bytes > 0) {
    out << "; a shaper's burst: messages up to " << burst_bytes / 1024 << " KiB per link crossed ";
    if (burst_line_Bps > 0) {
      out << "at " << GbpsFromBytesPerSecond(burst_line_Bps) << " Gb/s";
    } else {
      out << "in their latency alone";
    }
  }
  if (!transfer_seen) out << "; no size probed showed its transfer: the bandwidth is a guess";
  if (transfer_seen && !sustained_seen) {
    out << "; its two largest sizes did not cross at the same rate: the sustained rate may be lower";
  }
  return out.str();
}

namespace {

// Least squares of relative error over `points` for alpha and 1/B; where
// one would go negative the other fits alone.
std::pair<double, double> FitRelative(const std::vector<ProbePoint>& points) {
  double aa = 0, ab = 0, bb = 0, a1 = 0, b1 = 0;
  for (const ProbePoint& p : points) {
    const double a = p.alpha_coefficient / p.seconds, b = p.beta_coefficient / p.seconds;
    aa += a * a;
    ab += a * b;
    bb += b * b;
    a1 += a;
    b1 += b;
  }
  const double det = aa * bb - ab * ab;
  double alpha = det > 0 ? (a1 * bb - b1 * ab) / det : -1;
  double beta = det > 0 ? (aa * b1 - ab * a1) / det : -1;
  if (alpha < 0 || beta <= 0) {
    const double beta_alone = bb > 0 ? b1 / bb : 0;
    if (alpha < 0 && beta_alone > 0) return {0.0, beta_alone};
    return {aa > 0 ? a1 / aa : 0.0, 0.0};
  }
  return {alpha, beta};
}

// How far apart, per byte, the sustained sizes may be.
constexpr double kSustainedAgreement = 0.25;
// How much faster per byte than the sustained rate a smaller size must have
// crossed to count as a burst.
constexpr double kBurstFactor = 2;

double PerByte(const ProbePoint& p) { return p.seconds / p.beta_coefficient; }

// The probe's points split at the top: `sustained` the largest ones, down to
// the first whose time per byte is not the largest's within
// kSustainedAgreement; `below` the rest.
void SplitAtTheTop(std::vector<ProbePoint> points, std::vector<ProbePoint>& sustained, std::vector<ProbePoint>& below) {
  std::sort(points.begin(), points.end(),
            [](const ProbePoint& a, const ProbePoint& b) { return a.beta_coefficient > b.beta_coefficient; });
  size_t i = 0;
  while (i < points.size() && points[i].beta_coefficient > 0 &&
         AgreeWithin(PerByte(points[i]), PerByte(points[0]), kSustainedAgreement)) {
    ++i;
  }
  sustained.assign(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(i));
  below.assign(points.begin() + static_cast<std::ptrdiff_t>(i), points.end());
}

// What a fit prices each point at.
struct Fit {
  double alpha = 0;
  double beta = 0;        // the sustained rate's seconds per byte
  double burst_beta = 0;  // within the burst (0: latency alone)
  double burst_bytes = 0;
  double sustained_from = 0;  // the smallest bytes coefficient among the sustained sizes
  bool sustained_seen = false;
  double Time(const ProbePoint& p) const {
    const bool in_burst = burst_bytes > 0 && p.beta_coefficient <= burst_bytes;
    return p.alpha_coefficient * alpha + p.beta_coefficient * (in_burst ? burst_beta : beta);
  }
};

Fit FitSustainedAndBurst(const std::vector<ProbePoint>& points) {
  std::vector<ProbePoint> sustained, below;
  SplitAtTheTop(points, sustained, below);
  Fit fit;
  int sustained_allreduces = 0;
  for (const ProbePoint& p : sustained) sustained_allreduces += p.allreduce ? 1 : 0;
  fit.sustained_seen = sustained_allreduces >= 2;
  fit.sustained_from = sustained.empty() ? 0 : sustained.back().beta_coefficient;
  fit.beta = FitRelative(sustained.size() >= 2 ? sustained : points).second;
  if (fit.beta <= 0) {
    const auto [alpha, beta] = FitRelative(points);
    fit.alpha = alpha;
    fit.beta = beta;
    return fit;
  }
  // A burst: the largest size below the sustained ones crossed much faster
  // per byte than the sustained rate allows, latency included.
  const std::vector<ProbePoint>& rest = below.empty() ? sustained : below;
  if (!below.empty()) {
    const ProbePoint& largest = below.front();
    if (kBurstFactor * largest.seconds < largest.beta_coefficient * fit.beta) {
      fit.burst_bytes = largest.beta_coefficient;
      fit.burst_beta = FitRelative(below).second;
    }
  }
  const double beta_below = fit.burst_bytes > 0 ? fit.burst_beta : fit.beta;
  std::vector<double> alphas;
  for (const ProbePoint& p : rest) {
    alphas.push_back(std::max(0.0, (p.seconds - p.beta_coefficient * beta_below) / p.alpha_coefficient));
  }
  fit.alpha = Median(alphas);
  return fit;
}

}  // namespace

std::optional<RecordedNetwork> FitRecordedNetwork(const std::vector<NetworkProbeRecord>& probe, int world_size,
                                                  std::optional<double> link_Bps) {
  if (probe.empty() || world_size < 2) return std::nullopt;
  const std::vector<ProbePoint> points = PointsOf(probe, world_size);
  if (points.empty()) throw InputError("the trace's network probe has no positive time");
  if (points.size() < 2) return std::nullopt;
  const Fit fit = FitSustainedAndBurst(points);
  const double alpha = fit.alpha, beta = std::max(fit.beta, 1 / kMaxBandwidthBps);

  RecordedNetwork n;
  n.world_size = world_size;
  n.sizes = static_cast<int>(points.size());
  double sum_sq = 0, transfer_sq = 0;
  int transfer_points = 0;
  for (const ProbePoint& p : points) {
    const double relative = (fit.Time(p) - p.seconds) / p.seconds;
    sum_sq += relative * relative;
    // The sizes the bandwidth was fitted from.
    if (p.beta_coefficient >= fit.sustained_from) {
      transfer_sq += relative * relative;
      ++transfer_points;
    }
  }
  n.rms_relative_error = std::sqrt(sum_sq / static_cast<double>(points.size()));
  n.rms_transfer_error = transfer_points > 0 ? std::sqrt(transfer_sq / transfer_points) : n.rms_relative_error;
  n.transfer_sizes = transfer_points > 0 ? transfer_points : n.sizes;
  double shortest = points.front().seconds, longest = 0;
  for (const ProbePoint& p : points) {
    shortest = std::min(shortest, p.seconds);
    longest = std::max(longest, p.seconds);
  }
  n.transfer_seen = longest >= 2 * shortest;
  n.sustained_seen = fit.sustained_seen;
  n.burst_bytes = fit.burst_bytes;
  n.burst_line_Bps = fit.burst_beta > 0 ? 1 / fit.burst_beta : 0;
  n.platform.topology = Topology::kStar;
  n.platform.bandwidth_Bps = 1 / beta;
  n.platform.latency_s = alpha / 2;  // a message crosses two links of the star
  n.platform.network = NetworkOptions::Exact();
  if (link_Bps) {
    // The link's rate is known: what the probe found slower is the hosts'
    // per-byte cost, which stays when the rate changes (PlatformSpec).
    n.platform.bandwidth_Bps = *link_Bps;
    n.platform.host_s_per_byte = std::clamp(beta - 1 / *link_Bps, 0.0, kMaxHostSecondsPerByte);
  }
  n.platform.Validate();
  return n;
}

double RecordedNetwork::RateUncertainty() const {
  return rms_transfer_error / std::sqrt(static_cast<double>(std::max(1, transfer_sizes)));
}

}  // namespace accordion::sim
