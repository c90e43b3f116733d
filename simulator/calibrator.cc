#include "simulator/calibrator.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/errors.h"
#include "traces/trace_reader.h"

namespace accordion::sim {

namespace {

struct Bin {
  double lo = 0;
  double hi = std::numeric_limits<double>::infinity();
  std::vector<int> samples;
};

}  // namespace

Calibrator::Calibrator(CalibratorOptions options) : options_(std::move(options)) {
  double previous = 0;
  for (double b : options_.boundaries()) {
    if (!(b > previous)) throw InputError("segment boundaries must be positive and increasing");
    previous = b;
  }
}

void Calibrator::Add(CollectiveOp op, int world_size, int64_t bytes, double duration_s) {
  if (world_size < 2)
    throw InputError("collectives of a single worker never cross a network: nothing to calibrate");
  if (world_size_ != 0 && world_size != world_size_) {
    throw InputError("calibration samples come from different world sizes");
  }
  world_size_ = world_size;
  if (bytes <= 0 || !(duration_s > 0) || !std::isfinite(duration_s)) {
    ++skipped_;
    return;
  }
  const std::vector<Round> rounds = CollectiveRounds(op, options_.allreduce(), bytes, world_size);
  Sample s;
  for (const Round& r : rounds) {
    s.rounds += 1;
    s.along_bytes += static_cast<double>(r.bytes);
    s.message_bytes = std::max(s.message_bytes, static_cast<double>(r.bytes));
  }
  s.duration_s = duration_s;
  samples_.push_back(s);
}

void Calibrator::AddTrace(const std::string& path) {
  auto reader = TraceReader::Open(path);
  const int world = reader->run().world_size;
  if (world < 2) {
    throw InputError(path + " was recorded by a single worker: its collectives never crossed a network");
  }
  struct Seen {
    CollectiveOp op;
    int64_t bytes;
    double duration_s;
  };
  std::map<std::tuple<int, int64_t, int>, Seen> collectives;
  reader->ForEachCollective([&](const CollectiveRecord& c) {
    const auto key = std::make_tuple(c.epoch, c.iteration, c.seq);
    auto it = collectives.find(key);
    if (it == collectives.end()) {
      collectives.emplace(key, Seen{c.op, c.bytes, c.duration_s});
    } else {
      it->second.duration_s = std::min(it->second.duration_s, c.duration_s);
    }
  });
  if (collectives.empty()) {
    throw InputError(path +
                     " has no measured collectives (the collectives table is empty): nothing to calibrate");
  }
  for (const auto& [key, c] : collectives) Add(c.op, world, c.bytes, c.duration_s);
}

Calibration Calibrator::Fit() const {
  Calibration cal;
  cal.world_size = world_size_;
  cal.samples = static_cast<int>(samples_.size());
  if (skipped_ > 0) {
    cal.notes.push_back(std::to_string(skipped_) + " collectives with no bytes or no duration were left out");
  }
  std::vector<Bin> bins(1);
  for (double b : options_.boundaries()) {
    bins.back().hi = b;
    bins.push_back(Bin{b, std::numeric_limits<double>::infinity(), {}});
  }
  for (int i = 0; i < static_cast<int>(samples_.size()); ++i) {
    for (Bin& bin : bins) {
      if (samples_[i].message_bytes >= bin.lo && samples_[i].message_bytes < bin.hi) bin.samples.push_back(i);
    }
  }
  auto distinct_sizes = [this](const Bin& b) {
    std::set<double> sizes;
    for (int i : b.samples) sizes.insert(samples_[i].message_bytes);
    return sizes.size();
  };
  bins.erase(std::remove_if(bins.begin(), bins.end(), [](const Bin& b) { return b.samples.empty(); }),
             bins.end());
  // Two sizes at least tell latency from bandwidth; a bin with fewer joins a neighbour.
  for (size_t k = 0; k < bins.size() && bins.size() > 1;) {
    if (distinct_sizes(bins[k]) >= 2) {
      ++k;
      continue;
    }
    const size_t into = k + 1 < bins.size() ? k + 1 : k - 1;
    cal.notes.push_back("too few message sizes below " +
                        std::to_string(static_cast<int64_t>(std::min(bins[k].hi, 1e18))) +
                        " bytes for a segment of their own: merged with the next");
    bins[into].lo = std::min(bins[into].lo, bins[k].lo);
    bins[into].hi = std::max(bins[into].hi, bins[k].hi);
    bins[into].samples.insert(bins[into].samples.end(), bins[k].samples.begin(), bins[k].samples.end());
    bins.erase(bins.begin() + static_cast<std::ptrdiff_t>(k));
    k = 0;
  }
  if (bins.empty() || distinct_sizes(bins.front()) < 2) {
    throw InputError(
        "the collectives have fewer than two distinct message sizes: latency and bandwidth "
        "cannot be told apart");
  }
  for (const Bin& bin : bins) {
    const auto n = static_cast<Eigen::Index>(bin.samples.size());
    Eigen::MatrixXd a(n, 2);
    Eigen::VectorXd y(n);
    for (Eigen::Index r = 0; r < n; ++r) {
      const int i = bin.samples[r];
      const double w = 1.0 / samples_[i].duration_s;
      a(r, 0) = samples_[i].rounds * w;
      a(r, 1) = samples_[i].along_bytes * w;
      y(r) = 1.0;  // duration * w
    }
    Eigen::Vector2d theta = a.colPivHouseholderQr().solve(y);
    if (theta(0) < 0) {
      // Latency cannot be negative: pin it at zero and refit the bandwidth alone.
      theta(0) = 0;
      theta(1) = a.col(1).dot(y) / a.col(1).squaredNorm();
    }
    if (!(theta(1) > 0)) {
      cal.notes.push_back("durations do not grow with size between " + std::to_string(bin.lo) + " and " +
                          std::to_string(bin.hi) + " bytes: segment left out");
      continue;
    }
    CalibrationSegment s;
    s.min_message_bytes = bin.lo;
    s.max_message_bytes = bin.hi;
    s.latency_s = theta(0);
    s.bandwidth_Bps = 1.0 / theta(1);
    s.samples = static_cast<int>(n);
    s.rms_relative_error = std::sqrt((a * theta - y).squaredNorm() / static_cast<double>(n));
    cal.segments.push_back(s);
  }
  if (cal.segments.empty()) throw InputError("no segment could be fitted: " + cal.notes.back());
  cal.segments.front().min_message_bytes = 0;
  return cal;
}

PlatformSpec Calibration::Platform() const {
  PlatformSpec spec;
  spec.topology = Topology::kStar;
  // No host count: the calibrated star grows to as many ranks as a replay asks for.
  spec.network = NetworkOptions::Exact();
  double alpha = 0;
  for (const CalibrationSegment& s : segments) {
    alpha = std::max(alpha, s.latency_s);
    spec.segments.push_back({s.min_message_bytes, s.latency_s, s.bandwidth_Bps});
  }
  // A star route crosses two links: each carries half the latency.
  spec.latency_s = alpha / 2;
  spec.bandwidth_Bps = segments.back().bandwidth_Bps;
  return spec;
}

nlohmann::json Calibration::PlatformJson(const std::string& source) const {
  nlohmann::json j = Platform().ToJson();
  for (size_t k = 0; k < segments.size(); ++k) {
    j["segments"][k]["samples"] = segments[k].samples;
    j["segments"][k]["rms_relative_error"] = segments[k].rms_relative_error;
  }
  j["calibration"] = {{"source", source}, {"world_size", world_size}, {"samples", samples}, {"notes", notes}};
  return j;
}

}  // namespace accordion::sim
