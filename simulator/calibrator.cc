#include "simulator/calibrator.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

#include "common/errors.h"
#include "common/number_format.h"
#include "traces/trace_reader.h"
#include "traces/trace_validator.h"

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
  if (!std::isfinite(options_.link_gbps()) || options_.link_gbps() < 0) {
    throw InputError("the link rate must be a positive number of Gb/s (or 0: unknown)");
  }
  options_.collective().Validate();
}

void Calibrator::Add(CollectiveOp op, int world_size, int64_t bytes, double duration_s) {
  if (world_size < 2) throw InputError("collectives of a single worker never cross a network: nothing to calibrate");
  if (bytes <= 0 || !(duration_s > 0) || !std::isfinite(duration_s)) {
    ++skipped_;
    return;
  }
  std::map<int64_t, Part> parts;
  for (const Round& r : CollectiveRounds(op, options_.allreduce(), bytes, world_size, options_.collective())) {
    Part& p = parts[r.bytes];
    p.message_bytes = static_cast<double>(r.bytes);
    p.rounds += 1;
    p.along_bytes += static_cast<double>(r.busiest) * static_cast<double>(r.bytes);
  }
  Sample s;
  s.world_size = world_size;
  for (const auto& [size, p] : parts) {
    s.rounds += p.rounds;
    s.message_bytes = std::max(s.message_bytes, p.message_bytes);
    s.parts.push_back(p);
  }
  s.duration_s = duration_s;
  samples_.push_back(s);
}

void Calibrator::AddTrace(const std::string& path) {
  ValidateTrace(path);  // what accordion-analyze validate refuses, no fit reads
  auto reader = TraceReader::Open(path);
  const int world = reader->run().world_size;
  if (world < 2) {
    throw InputError(path + " was recorded by a single worker: its collectives never crossed a network");
  }
  std::vector<CollectiveRecord> records;
  reader->ForEachCollective([&](const CollectiveRecord& c) { records.push_back(c); });
  if (records.empty()) {
    throw InputError(path + " has no measured collectives (the collectives table is empty): nothing to calibrate");
  }
  // Issue order within each rank's step.
  std::sort(records.begin(), records.end(), [](const CollectiveRecord& a, const CollectiveRecord& b) {
    return std::tie(a.epoch, a.iteration, a.rank, a.seq) < std::tie(b.epoch, b.iteration, b.rank, b.seq);
  });
  struct Seen {
    CollectiveOp op;
    int64_t bytes;
    double duration_s;
    bool queued;
  };
  std::map<std::tuple<int, int64_t, int>, Seen> collectives;
  double busy_until = 0;  // the latest end of this rank's earlier collectives in the step
  for (size_t i = 0; i < records.size(); ++i) {
    const CollectiveRecord& c = records[i];
    const bool first_of_step = i == 0 || records[i - 1].epoch != c.epoch || records[i - 1].iteration != c.iteration ||
                               records[i - 1].rank != c.rank;
    if (first_of_step) busy_until = -std::numeric_limits<double>::infinity();
    // Gloo runs collectives on worker threads: one issued while an earlier
    // one still ran waited behind it (or shared the links with it) for part
    // of its duration. The nanosecond absorbs rounding of start + duration.
    const bool queued = c.start_s < busy_until - 1e-9;
    busy_until = std::max(busy_until, c.start_s + c.duration_s);
    const auto key = std::make_tuple(c.epoch, c.iteration, c.seq);
    auto it = collectives.find(key);
    if (it == collectives.end()) {
      collectives.emplace(key, Seen{c.op, c.bytes, c.duration_s, queued});
    } else {
      // Queued on one rank delays it on all: the others wait for that rank.
      it->second.duration_s = std::min(it->second.duration_s, c.duration_s);
      it->second.queued = it->second.queued || queued;
    }
  }
  int queued = 0;
  for (const auto& [key, c] : collectives) {
    if (c.queued) {
      ++queued;
      continue;
    }
    try {
      Add(c.op, world, c.bytes, c.duration_s);
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
  }
  if (queued == static_cast<int>(collectives.size())) {
    throw InputError(path +
                     ": every collective was issued while an earlier one of its step was still running, "
                     "so none measures a transfer alone: nothing to calibrate");
  }
  queued_ += queued;
}

void Calibrator::AddBenchmark(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object() || j.value("format", std::string()) != "accordion-bench-collectives") {
    throw InputError(origin + ": not an accordion-bench-collectives file (its 'format' must say so)");
  }
  if (!j.contains("samples") || !j.at("samples").is_array() || j.at("samples").empty()) {
    throw InputError(origin + ": no 'samples' to calibrate on");
  }
  int index = 0;
  for (const nlohmann::json& s : j.at("samples")) {
    const std::string where = origin + ": sample " + std::to_string(index++);
    if (!s.is_object()) throw InputError(where + " is not a JSON object");
    auto number = [&](const char* key) {
      if (!s.contains(key) || !s.at(key).is_number()) throw InputError(where + ": '" + key + "' must be a number");
      return s.at(key).get<double>();
    };
    auto whole = [&](const char* key, double max) {
      const double v = number(key);
      if (v != std::floor(v) || v < 0 || v > max) throw InputError(where + ": '" + key + "' must be a whole number");
      return v;
    };
    if (!s.contains("op") || !s.at("op").is_string()) throw InputError(where + ": 'op' must be a string");
    const std::optional<CollectiveOp> op = ParseCollectiveOp(s.at("op").get<std::string>());
    if (!op) {
      throw InputError(where + ": unknown op '" + s.at("op").get<std::string>() +
                       "' (allreduce, allgather, broadcast)");
    }
    const auto world = static_cast<int>(whole("world_size", 1 << 20));
    const auto bytes = static_cast<int64_t>(whole("bytes", 1e15));
    const double median = number("median_s");
    if (!(median > 0) || !std::isfinite(median)) throw InputError(where + ": 'median_s' must be positive");
    try {
      Add(*op, world, bytes, median);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
  }
}

void Calibrator::AddFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  char head[16] = {};
  in.read(head, sizeof head);
  static constexpr char kSqlite[16] = "SQLite format 3";  // and its NUL: the file's first 16 bytes
  if (in.gcount() == 16 && std::equal(head, head + 16, kSqlite)) {
    in.close();
    AddTrace(path);
    return;
  }
  in.clear();
  in.seekg(0);
  char first = 0;
  while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  if (!in || first != '{') {
    throw InputError(path + ": neither a trace (SQLite) nor an accordion-bench-collectives JSON file");
  }
  in.seekg(0);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  AddBenchmark(j, path);
}

namespace {

std::string Micros(double s) {
  std::ostringstream out;
  out << std::setprecision(4) << s * 1e6 << " us";
  return out.str();
}

std::string BytesText(double b) {
  return std::isfinite(b) ? std::to_string(static_cast<int64_t>(b)) : std::string("infinity");
}

}  // namespace

Calibration Calibrator::Fit() const {
  Calibration cal;
  cal.allreduce = options_.allreduce();
  cal.collective = options_.collective();
  cal.samples = static_cast<int>(samples_.size());
  if (samples_.empty()) throw InputError("no measured collectives to calibrate on");
  for (const Sample& s : samples_) {
    ++cal.samples_per_world_size[s.world_size];
    cal.world_size = std::max(cal.world_size, s.world_size);
  }
  if (skipped_ > 0) {
    cal.notes.push_back(std::to_string(skipped_) + " collectives with no bytes or no duration were left out");
  }
  if (queued_ > 0) {
    cal.notes.push_back(std::to_string(queued_) +
                        " trace collectives issued while an earlier one of their step still ran were left out "
                        "(their durations include waiting in Gloo's queue)");
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
  bins.erase(std::remove_if(bins.begin(), bins.end(), [](const Bin& b) { return b.samples.empty(); }), bins.end());
  // Two sizes at least tell latency from bandwidth; a bin with fewer joins a neighbour.
  for (size_t k = 0; k < bins.size() && bins.size() > 1;) {
    if (distinct_sizes(bins[k]) >= 2) {
      ++k;
      continue;
    }
    const size_t into = k + 1 < bins.size() ? k + 1 : k - 1;
    const std::string range = std::isfinite(bins[k].hi)
                                  ? "below " + std::to_string(static_cast<int64_t>(bins[k].hi)) + " bytes"
                                  : "from " + std::to_string(static_cast<int64_t>(bins[k].lo)) + " bytes up";
    cal.notes.push_back("too few message sizes " + range + " for a segment of their own: merged with the " +
                        (k + 1 < bins.size() ? "next" : "previous"));
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

  // o's column is the sum of the alpha columns divided by their round
  // counts when every segment's samples take one round count: then the two
  // cannot be told apart, and the constant goes to o.
  auto rounds_vary = [&] {
    for (const Bin& bin : bins) {
      for (int i : bin.samples) {
        if (samples_[i].rounds != samples_[bin.samples.front()].rounds) return true;
      }
    }
    return false;
  };
  std::vector<bool> alpha_free(bins.size(), true);
  bool o_free = true;
  auto pin_alphas_if_collinear = [&] {
    if (rounds_vary() || std::none_of(alpha_free.begin(), alpha_free.end(), [](bool f) { return f; })) return;
    std::fill(alpha_free.begin(), alpha_free.end(), false);
    cal.notes.push_back(
        "every segment's collectives take the same number of rounds (one world size, one op), so the "
        "per-collective overhead o and the per-round latency alpha cannot be told apart: the constant is "
        "all in o (alpha = 0); measure at several world sizes to separate them");
  };
  pin_alphas_if_collinear();
  if (rounds_vary() && cal.samples_per_world_size.size() == 1) {
    cal.notes.push_back(
        "one world size: o and alpha are told apart only by the ops' different round counts; "
        "measure at several world sizes to separate them firmly");
  }
  double shortest = std::numeric_limits<double>::infinity();
  for (const Sample& s : samples_) shortest = std::min(shortest, s.duration_s);

  // The bin whose alpha and B a round of `message_bytes` takes: as the
  // written platform's segments will (AlphaBetaModel::SegmentOf), the last
  // that starts at or below it, else the first.
  auto bin_of = [&bins](double message_bytes) {
    size_t k = 0;
    while (k + 1 < bins.size() && message_bytes >= bins[k + 1].lo) ++k;
    return k;
  };
  // Rows: samples, weighted by 1/duration, so each row's residual is a
  // relative error. Columns: o, then alpha and 1/B of each bin; pinned
  // coefficients have no column.
  Eigen::VectorXd theta;
  std::vector<Eigen::Index> alpha_col, beta_col;
  Eigen::Index o_col = -1;
  // The rows of the bins in `which`, in bin order.
  auto design = [&](const std::vector<size_t>& which) {
    Eigen::Index cols = 0;
    o_col = o_free ? cols++ : -1;
    alpha_col.assign(bins.size(), -1);
    beta_col.assign(bins.size(), -1);
    for (size_t b = 0; b < bins.size(); ++b) {
      if (alpha_free[b]) alpha_col[b] = cols++;
      beta_col[b] = cols++;
    }
    Eigen::Index n = 0;
    for (size_t b : which) n += static_cast<Eigen::Index>(bins[b].samples.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, cols);
    Eigen::Index r = 0;
    for (size_t b : which) {
      for (int i : bins[b].samples) {
        const Sample& s = samples_[i];
        const double w = 1.0 / s.duration_s;
        if (o_col >= 0) a(r, o_col) = w;
        for (const Part& p : s.parts) {
          const size_t k = bin_of(p.message_bytes);
          if (alpha_col[k] >= 0) a(r, alpha_col[k]) += p.rounds * w;
          a(r, beta_col[k]) += p.along_bytes * w;
        }
        ++r;
      }
    }
    return a;
  };
  for (;;) {
    std::vector<size_t> all(bins.size());
    std::iota(all.begin(), all.end(), size_t{0});
    const Eigen::MatrixXd a = design(all);
    const Eigen::VectorXd y = Eigen::VectorXd::Ones(a.rows());  // duration * w
    // Columns differ by twelve orders of magnitude (seconds against bytes):
    // solve on unit columns and scale back.
    Eigen::VectorXd scale(a.cols());
    for (Eigen::Index c = 0; c < a.cols(); ++c) scale(c) = a.col(c).norm() > 0 ? 1.0 / a.col(c).norm() : 1.0;
    const Eigen::MatrixXd scaled = a * scale.asDiagonal();
    theta = scale.asDiagonal() * Eigen::VectorXd(scaled.colPivHouseholderQr().solve(y));
    // A segment whose durations do not grow with size has no bandwidth.
    bool dropped = false;
    for (size_t b = 0; b < bins.size(); ++b) {
      if (theta(beta_col[b]) > 0) continue;
      cal.notes.push_back("durations do not grow with size between " + BytesText(bins[b].lo) + " and " +
                          BytesText(bins[b].hi) + " bytes: segment left out");
      bins.erase(bins.begin() + static_cast<std::ptrdiff_t>(b));
      alpha_free.erase(alpha_free.begin() + static_cast<std::ptrdiff_t>(b));
      dropped = true;
      break;
    }
    if (dropped) {
      if (bins.empty()) throw InputError("no segment could be fitted: " + cal.notes.back());
      pin_alphas_if_collinear();  // the segment left out may have been what told them apart
      continue;
    }
    // Exact measurements leave o or alpha at +-1e-19 s rather than 0:
    // rounding, not a cost (nor a negative one).
    auto rounding = [&](Eigen::Index col) {
      if (col >= 0 && std::fabs(theta(col)) < 1e-12 * shortest) theta(col) = 0;
    };
    rounding(o_col);
    for (Eigen::Index col : alpha_col) rounding(col);
    // The most negative of o and the alphas is pinned at 0, then refit.
    double worst = 0;
    int worst_bin = -2;  // -1: o
    if (o_col >= 0 && theta(o_col) < worst) {
      worst = theta(o_col);
      worst_bin = -1;
    }
    for (size_t b = 0; b < bins.size(); ++b) {
      if (alpha_col[b] >= 0 && theta(alpha_col[b]) < worst) {
        worst = theta(alpha_col[b]);
        worst_bin = static_cast<int>(b);
      }
    }
    if (worst_bin == -2) break;
    if (worst_bin == -1) {
      o_free = false;
      cal.notes.push_back("the per-collective overhead o came out negative (" + Micros(worst) +
                          "): refitted without it (o = 0)");
    } else {
      alpha_free[static_cast<size_t>(worst_bin)] = false;
      cal.notes.push_back("the per-round latency alpha of messages from " + BytesText(bins[worst_bin].lo) +
                          " bytes came out negative (" + Micros(worst) + "): refitted without it (alpha = 0)");
    }
  }

  cal.collective_overhead_s = o_col >= 0 ? theta(o_col) : 0;
  double total_squares = 0;
  for (size_t b = 0; b < bins.size(); ++b) {
    const Eigen::MatrixXd a = design({b});
    const Eigen::VectorXd residual = a * theta - Eigen::VectorXd::Ones(a.rows());
    total_squares += residual.squaredNorm();
    CalibrationSegment s;
    s.min_message_bytes = bins[b].lo;
    s.max_message_bytes = bins[b].hi;
    s.latency_s = alpha_col[b] >= 0 ? theta(alpha_col[b]) : 0;
    s.bandwidth_Bps = 1.0 / theta(beta_col[b]);
    s.samples = static_cast<int>(bins[b].samples.size());
    s.rms_relative_error = std::sqrt(residual.squaredNorm() / static_cast<double>(s.samples));
    cal.segments.push_back(s);
  }
  int fitted = 0;
  for (const CalibrationSegment& s : cal.segments) fitted += s.samples;
  cal.rms_relative_error = std::sqrt(total_squares / static_cast<double>(fitted));
  cal.segments.front().min_message_bytes = 0;

  if (options_.link_gbps() > 0) {
    // 1/B = 1/rate + h: what the links do not explain of the largest
    // messages' time per byte is the hosts' (copies, reductions, the stack).
    cal.link_bandwidth_Bps = BytesPerSecondFromGbps(options_.link_gbps());
    const double fitted_bw = cal.segments.back().bandwidth_Bps;
    if (fitted_bw < cal.link_bandwidth_Bps) {
      cal.host_s_per_byte = 1.0 / fitted_bw - 1.0 / cal.link_bandwidth_Bps;
      if (cal.host_s_per_byte >= 1e-6) {
        throw InputError("the fitted bandwidth is so far below the " + std::to_string(options_.link_gbps()) +
                         " Gb/s link rate that the hosts would cost a microsecond or more per byte: check "
                         "the link rate");
      }
    } else {
      cal.notes.push_back(
          "the fitted bandwidth is above the link rate given: the links keep the fitted "
          "bandwidth and the hosts' per-byte cost is 0");
    }
  }
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
  // With h the links carry their nominal rate and the platform adds h back
  // (1 / (1/rate + h) is the fitted bandwidth again); without it they carry
  // the fitted bandwidth itself.
  spec.bandwidth_Bps = host_s_per_byte > 0 ? link_bandwidth_Bps : segments.back().bandwidth_Bps;
  spec.host_s_per_byte = host_s_per_byte;
  spec.collective_overhead_s = collective_overhead_s;
  return spec;
}

nlohmann::json Calibration::PlatformJson(const std::string& source) const {
  nlohmann::json j = Platform().ToJson();
  for (size_t k = 0; k < segments.size(); ++k) {
    j["segments"][k]["samples"] = segments[k].samples;
    j["segments"][k]["rms_relative_error"] = segments[k].rms_relative_error;
  }
  nlohmann::json per_world = nlohmann::json::object();
  for (const auto& [world, n] : samples_per_world_size) per_world[std::to_string(world)] = n;
  j["calibration"] = {{"source", source},
                      {"allreduce", AllReduceJson(allreduce, collective)},
                      {"world_size", world_size},
                      {"samples", samples},
                      {"samples_per_world_size", per_world},
                      {"collective_overhead_us", collective_overhead_s * 1e6},
                      {"rms_relative_error", rms_relative_error},
                      {"notes", notes}};
  if (link_bandwidth_Bps > 0) {
    j["calibration"]["link_gbps"] = GbpsFromBytesPerSecond(link_bandwidth_Bps);
    j["calibration"]["host_ns_per_byte"] = host_s_per_byte * 1e9;
  }
  return j;
}

}  // namespace accordion::sim
