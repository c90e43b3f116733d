#include "simulator/calibrator.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/number_format.h"
#include "simulator/replay_engine.h"
#include "simulator/replay_input.h"
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
  if (!(options_.max_rms_error() > 0) || !std::isfinite(options_.max_rms_error())) {
    throw InputError("the largest rms error accepted must be a positive fraction (0.25: 25 %)");
  }
  if (!(options_.max_step_error() > 0) || !std::isfinite(options_.max_step_error())) {
    throw InputError("the largest step error accepted must be a positive fraction (0.1: 10 %)");
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
  s.bytes = static_cast<double>(bytes);
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
  const size_t first = samples_.size();
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
  for (size_t i = first; i < samples_.size(); ++i) samples_[i].from_trace = true;
  traces_.push_back(path);
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
  const std::string problem = InputFileProblem(path);
  if (!problem.empty()) throw InputError(path + ": cannot open: " + problem);
  if (IsSqliteDatabase(path)) {
    AddTrace(path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
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

// "1.5 KiB", "16 MiB": sizes as a person reads them in a message.
std::string SizeText(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return FormatNumber(bytes, 3) + " " + kUnits[unit];
}

std::string Percent(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100 << " %";
  return out.str();
}

std::string Millis(double s) {
  std::ostringstream out;
  out << std::setprecision(4) << s * 1e3 << " ms";
  return out.str();
}

// The fit's helpers below take Calibrator's private Sample (and its Parts)
// as a template parameter, so that they stay in this file rather than in
// the class's declaration.

// How many distinct largest-message sizes `bin`'s samples have.
template <typename Sample>
size_t DistinctSizes(const std::vector<Sample>& samples, const Bin& bin) {
  std::set<double> sizes;
  for (int i : bin.samples) sizes.insert(samples[i].message_bytes);
  return sizes.size();
}

// The message-size segments, each to get its own alpha and B: the bins
// between `boundaries` that have samples, each sample filed by its largest
// message. Two sizes at least tell latency from bandwidth, so a bin with
// fewer joins a neighbour (with a note). Throws InputError when even then
// the samples have fewer than two sizes.
template <typename Sample>
std::vector<Bin> SizeSegments(const std::vector<Sample>& samples, const std::vector<double>& boundaries,
                              std::vector<std::string>& notes) {
  std::vector<Bin> bins(1);
  for (double b : boundaries) {
    bins.back().hi = b;
    bins.push_back(Bin{b, std::numeric_limits<double>::infinity(), {}});
  }
  for (int i = 0; i < static_cast<int>(samples.size()); ++i) {
    for (Bin& bin : bins) {
      if (samples[i].message_bytes >= bin.lo && samples[i].message_bytes < bin.hi) bin.samples.push_back(i);
    }
  }
  bins.erase(std::remove_if(bins.begin(), bins.end(), [](const Bin& b) { return b.samples.empty(); }), bins.end());
  for (size_t k = 0; k < bins.size() && bins.size() > 1;) {
    if (DistinctSizes(samples, bins[k]) >= 2) {
      ++k;
      continue;
    }
    const size_t into = k + 1 < bins.size() ? k + 1 : k - 1;
    const std::string range = std::isfinite(bins[k].hi)
                                  ? "below " + std::to_string(static_cast<int64_t>(bins[k].hi)) + " bytes"
                                  : "from " + std::to_string(static_cast<int64_t>(bins[k].lo)) + " bytes up";
    notes.push_back("too few message sizes " + range + " for a segment of their own: merged with the " +
                    (k + 1 < bins.size() ? "next" : "previous"));
    bins[into].lo = std::min(bins[into].lo, bins[k].lo);
    bins[into].hi = std::max(bins[into].hi, bins[k].hi);
    bins[into].samples.insert(bins[into].samples.end(), bins[k].samples.begin(), bins[k].samples.end());
    bins.erase(bins.begin() + static_cast<std::ptrdiff_t>(k));
    k = 0;
  }
  if (bins.empty() || DistinctSizes(samples, bins.front()) < 2) {
    throw InputError(
        "the collectives have fewer than two distinct message sizes: latency and bandwidth "
        "cannot be told apart");
  }
  return bins;
}

// The weighted least-squares fit as it goes: the segments still in it,
// which of o and the alphas are still free (a pinned one is 0 and has no
// column), where each free coefficient's column is (-1: none) and, once
// solved, the coefficients: o, then alpha and 1/B of each segment.
struct SegmentFit {
  std::vector<Bin> bins;
  bool o_free = true;
  std::vector<bool> alpha_free;
  Eigen::Index columns = 0;
  Eigen::Index o_col = -1;
  std::vector<Eigen::Index> alpha_col, beta_col;
  Eigen::VectorXd theta;
};

// Numbers the free coefficients' columns, o's first, after a segment was
// left out or a coefficient pinned.
void LayOutColumns(SegmentFit& fit) {
  Eigen::Index cols = 0;
  fit.o_col = fit.o_free ? cols++ : -1;
  fit.alpha_col.assign(fit.bins.size(), -1);
  fit.beta_col.assign(fit.bins.size(), -1);
  for (size_t b = 0; b < fit.bins.size(); ++b) {
    if (fit.alpha_free[b]) fit.alpha_col[b] = cols++;
    fit.beta_col[b] = cols++;
  }
  fit.columns = cols;
}

// The bin whose alpha and B a round of `message_bytes` takes: as the
// written platform's segments will (AlphaBetaModel::SegmentOf), the last
// that starts at or below it, else the first.
size_t BinOf(const std::vector<Bin>& bins, double message_bytes) {
  size_t k = 0;
  while (k + 1 < bins.size() && message_bytes >= bins[k + 1].lo) ++k;
  return k;
}

// The design matrix of the bins in `which`, in bin order. Rows: their
// samples, weighted by 1/duration, so each row's residual is a relative
// error. Columns: as LayOutColumns numbered them; a round adds to the
// alpha and 1/B columns of its own message size's bin.
template <typename Sample>
Eigen::MatrixXd Design(const std::vector<Sample>& samples, const SegmentFit& fit, const std::vector<size_t>& which) {
  Eigen::Index n = 0;
  for (size_t b : which) n += static_cast<Eigen::Index>(fit.bins[b].samples.size());
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, fit.columns);
  Eigen::Index r = 0;
  for (size_t b : which) {
    for (int i : fit.bins[b].samples) {
      const Sample& s = samples[i];
      const double w = 1.0 / s.duration_s;
      if (fit.o_col >= 0) a(r, fit.o_col) = w;
      for (const auto& p : s.parts) {
        const size_t k = BinOf(fit.bins, p.message_bytes);
        if (fit.alpha_col[k] >= 0) a(r, fit.alpha_col[k]) += p.rounds * w;
        a(r, fit.beta_col[k]) += p.along_bytes * w;
      }
      ++r;
    }
  }
  return a;
}

// The least-squares theta of a * theta = 1 (each weighted duration).
// Columns differ by twelve orders of magnitude (seconds against bytes):
// solve on unit columns and scale back.
Eigen::VectorXd SolveOnUnitColumns(const Eigen::MatrixXd& a) {
  const Eigen::VectorXd y = Eigen::VectorXd::Ones(a.rows());  // duration * w
  Eigen::VectorXd scale(a.cols());
  for (Eigen::Index c = 0; c < a.cols(); ++c) scale(c) = a.col(c).norm() > 0 ? 1.0 / a.col(c).norm() : 1.0;
  const Eigen::MatrixXd scaled = a * scale.asDiagonal();
  return scale.asDiagonal() * Eigen::VectorXd(scaled.colPivHouseholderQr().solve(y));
}

// Whether some segment's samples take different round counts, which is
// what tells o from alpha.
template <typename Sample>
bool RoundsVary(const std::vector<Sample>& samples, const std::vector<Bin>& bins) {
  for (const Bin& bin : bins) {
    for (int i : bin.samples) {
      if (samples[i].rounds != samples[bin.samples.front()].rounds) return true;
    }
  }
  return false;
}

// o's column is the sum of the alpha columns divided by their round
// counts when every segment's samples take one round count: then the two
// cannot be told apart, and the constant goes to o (alpha pinned at 0, with
// a note).
template <typename Sample>
void PinAlphasIfCollinear(const std::vector<Sample>& samples, SegmentFit& fit, std::vector<std::string>& notes) {
  if (RoundsVary(samples, fit.bins) ||
      std::none_of(fit.alpha_free.begin(), fit.alpha_free.end(), [](bool f) { return f; })) {
    return;
  }
  std::fill(fit.alpha_free.begin(), fit.alpha_free.end(), false);
  notes.push_back(
      "every segment's collectives take the same number of rounds (one world size, one op), so the "
      "per-collective overhead o and the per-round latency alpha cannot be told apart: the constant is "
      "all in o (alpha = 0); measure at several world sizes to separate them");
}

// A segment whose durations do not grow with size (1/B not positive) has
// no bandwidth: leaves the first such out of the fit, with a note, and
// says whether there was one.
bool DropSegmentWithoutBandwidth(SegmentFit& fit, std::vector<std::string>& notes) {
  for (size_t b = 0; b < fit.bins.size(); ++b) {
    if (fit.theta(fit.beta_col[b]) > 0) continue;
    notes.push_back("durations do not grow with size between " + BytesText(fit.bins[b].lo) + " and " +
                    BytesText(fit.bins[b].hi) + " bytes: segment left out");
    fit.bins.erase(fit.bins.begin() + static_cast<std::ptrdiff_t>(b));
    fit.alpha_free.erase(fit.alpha_free.begin() + static_cast<std::ptrdiff_t>(b));
    return true;
  }
  return false;
}

// No cost is negative: pins the most negative of o and the alphas at 0,
// with a note naming its value, for a refit; says whether one was.
// `shortest`: the shortest sample's duration, which tells rounding from a
// cost.
bool PinMostNegative(SegmentFit& fit, double shortest, std::vector<std::string>& notes) {
  // Exact measurements leave o or alpha at +-1e-19 s rather than 0:
  // rounding, not a cost (nor a negative one).
  auto rounding = [&](Eigen::Index col) {
    if (col >= 0 && std::fabs(fit.theta(col)) < 1e-12 * shortest) fit.theta(col) = 0;
  };
  rounding(fit.o_col);
  for (Eigen::Index col : fit.alpha_col) rounding(col);
  // One at a time, the most negative first: pinning it changes the others.
  double worst = 0;
  int worst_bin = -2;  // -1: o
  if (fit.o_col >= 0 && fit.theta(fit.o_col) < worst) {
    worst = fit.theta(fit.o_col);
    worst_bin = -1;
  }
  for (size_t b = 0; b < fit.bins.size(); ++b) {
    if (fit.alpha_col[b] >= 0 && fit.theta(fit.alpha_col[b]) < worst) {
      worst = fit.theta(fit.alpha_col[b]);
      worst_bin = static_cast<int>(b);
    }
  }
  if (worst_bin == -2) return false;
  if (worst_bin == -1) {
    fit.o_free = false;
    notes.push_back("the per-collective overhead o came out negative (" + Micros(worst) +
                    "): refitted without it (o = 0)");
  } else {
    fit.alpha_free[static_cast<size_t>(worst_bin)] = false;
    notes.push_back("the per-round latency alpha of messages from " + BytesText(fit.bins[worst_bin].lo) +
                    " bytes came out negative (" + Micros(worst) + "): refitted without it (alpha = 0)");
  }
  return true;
}

// One weighted least-squares fit of o, shared, and each segment's alpha and
// 1/B, over every sample, refitted until every segment has a bandwidth and
// nothing is negative. The columns stay laid out as the final fit's, for
// Summarize. Notes each change; throws InputError when no segment is left.
template <typename Sample>
SegmentFit FitSegments(const std::vector<Sample>& samples, std::vector<Bin> bins, bool one_world_size,
                       std::vector<std::string>& notes) {
  SegmentFit fit;
  fit.bins = std::move(bins);
  fit.alpha_free.assign(fit.bins.size(), true);
  PinAlphasIfCollinear(samples, fit, notes);
  if (RoundsVary(samples, fit.bins) && one_world_size) {
    notes.push_back(
        "one world size: o and alpha are told apart only by the ops' different round counts; "
        "measure at several world sizes to separate them firmly");
  }
  double shortest = std::numeric_limits<double>::infinity();
  for (const Sample& s : samples) shortest = std::min(shortest, s.duration_s);
  for (;;) {
    std::vector<size_t> all(fit.bins.size());
    std::iota(all.begin(), all.end(), size_t{0});
    LayOutColumns(fit);
    fit.theta = SolveOnUnitColumns(Design(samples, fit, all));
    if (DropSegmentWithoutBandwidth(fit, notes)) {
      if (fit.bins.empty()) throw InputError("no segment could be fitted: " + notes.back());
      PinAlphasIfCollinear(samples, fit, notes);  // the segment left out may have been what told them apart
      continue;
    }
    if (!PinMostNegative(fit, shortest, notes)) break;
  }
  return fit;
}

// What the fit found, as Calibration reports it: o; per segment alpha, B
// and the rms relative error on its own samples; and, because a poor fit's
// cause shows in them (CheckFit), the whole fit's rms error, its rms error
// per world size, its collectives' sizes and how many came from traces.
// The first segment then starts at 0: the platform prices any size.
template <typename Sample>
void Summarize(const std::vector<Sample>& samples, const SegmentFit& fit, Calibration& cal) {
  cal.collective_overhead_s = fit.o_col >= 0 ? fit.theta(fit.o_col) : 0;
  double total_squares = 0;
  std::map<int, std::pair<double, int>> per_world;  // squares, samples
  std::set<double> all_sizes;
  for (size_t b = 0; b < fit.bins.size(); ++b) {
    const Eigen::MatrixXd a = Design(samples, fit, {b});
    const Eigen::VectorXd residual = a * fit.theta - Eigen::VectorXd::Ones(a.rows());
    total_squares += residual.squaredNorm();
    CalibrationSegment s;
    s.min_message_bytes = fit.bins[b].lo;
    s.max_message_bytes = fit.bins[b].hi;
    s.latency_s = fit.alpha_col[b] >= 0 ? fit.theta(fit.alpha_col[b]) : 0;
    s.bandwidth_Bps = 1.0 / fit.theta(fit.beta_col[b]);
    s.samples = static_cast<int>(fit.bins[b].samples.size());
    s.rms_relative_error = std::sqrt(residual.squaredNorm() / static_cast<double>(s.samples));
    std::set<double> sizes;
    for (size_t r = 0; r < fit.bins[b].samples.size(); ++r) {
      const Sample& sample = samples[fit.bins[b].samples[r]];
      sizes.insert(sample.bytes);
      auto& [squares, n] = per_world[sample.world_size];
      squares += residual(static_cast<Eigen::Index>(r)) * residual(static_cast<Eigen::Index>(r));
      ++n;
      if (sample.from_trace) ++cal.trace_samples;
    }
    s.sizes = static_cast<int>(sizes.size());
    s.smallest_bytes = *sizes.begin();
    s.largest_bytes = *sizes.rbegin();
    all_sizes.insert(sizes.begin(), sizes.end());
    cal.segments.push_back(s);
  }
  int fitted = 0;
  for (const CalibrationSegment& s : cal.segments) fitted += s.samples;
  cal.rms_relative_error = std::sqrt(total_squares / static_cast<double>(fitted));
  cal.sizes = static_cast<int>(all_sizes.size());
  cal.smallest_bytes = *all_sizes.begin();
  cal.largest_bytes = *all_sizes.rbegin();
  for (const auto& [world, squares_n] : per_world) {
    cal.rms_per_world_size[world] = std::sqrt(squares_n.first / static_cast<double>(squares_n.second));
  }
  cal.segments.front().min_message_bytes = 0;
}

// Given the links' nominal rate: 1/B = 1/rate + h, so what the links do
// not explain of the largest messages' time per byte is the hosts' (copies,
// reductions, the stack), which stays when the links get faster. Throws
// InputError when h would be implausibly large (a wrong rate).
void SplitLinkRate(double link_gbps, Calibration& cal) {
  cal.link_bandwidth_Bps = BytesPerSecondFromGbps(link_gbps);
  const double fitted_bw = cal.segments.back().bandwidth_Bps;
  if (fitted_bw < cal.link_bandwidth_Bps) {
    cal.host_s_per_byte = 1.0 / fitted_bw - 1.0 / cal.link_bandwidth_Bps;
    if (cal.host_s_per_byte >= 1e-6) {
      throw InputError("the fitted bandwidth is so far below the " + std::to_string(link_gbps) +
                       " Gb/s link rate that the hosts would cost a microsecond or more per byte: check "
                       "the link rate");
    }
  } else {
    cal.notes.push_back(
        "the fitted bandwidth is above the link rate given: the links keep the fitted "
        "bandwidth and the hosts' per-byte cost is 0");
  }
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
  std::vector<Bin> bins = SizeSegments(samples_, options_.boundaries(), cal.notes);
  const SegmentFit fit = FitSegments(samples_, std::move(bins), cal.samples_per_world_size.size() == 1, cal.notes);
  Summarize(samples_, fit, cal);
  if (options_.link_gbps() > 0) SplitLinkRate(options_.link_gbps(), cal);
  return cal;
}

// Below five sizes, or within a factor of 16, the fit has no stretch of
// sizes over which a transfer's time grows beyond the hosts' noise: a
// training trace's few small buckets (PowerSGD's 1.5-9 KB factors).
constexpr int kFewSizes = 5;
constexpr double kNarrowSizes = 16;
constexpr double kLargeCollective = 1 << 20;

void Calibrator::CheckFit(const Calibration& cal) const {
  const double limit = options_.max_rms_error();
  if (!(cal.rms_relative_error > limit)) return;
  int fitted = 0;
  for (const CalibrationSegment& s : cal.segments) fitted += s.samples;
  std::string cause;
  auto by_error = [](const auto& a, const auto& b) { return a.second < b.second; };
  const auto worst_world = std::max_element(cal.rms_per_world_size.begin(), cal.rms_per_world_size.end(), by_error);
  const auto best_world = std::min_element(cal.rms_per_world_size.begin(), cal.rms_per_world_size.end(), by_error);
  auto by_segment_error = [](const CalibrationSegment& a, const CalibrationSegment& b) {
    return a.rms_relative_error < b.rms_relative_error;
  };
  const auto worst_segment = std::max_element(cal.segments.begin(), cal.segments.end(), by_segment_error);
  const auto best_segment = std::min_element(cal.segments.begin(), cal.segments.end(), by_segment_error);
  // A world size or a size range is the likely cause where it alone misses,
  // or misses by half as much again as the best.
  auto stands_out = [limit](double worst, double best) { return best <= limit || worst >= 1.5 * best; };
  if (cal.sizes < kFewSizes || cal.largest_bytes < kNarrowSizes * cal.smallest_bytes) {
    const std::string where = cal.trace_samples < fitted ? ""
                              : traces_.size() > 1       ? " in training traces"
                                                         : " in a training trace";
    // Small collectives' times are the hosts' (Gloo's wake-ups, a core held
    // by backward); large ones of nearly one size cannot tell what a call
    // costs from what a byte costs.
    const bool small = cal.largest_bytes < kLargeCollective;
    cause = "too few distinct message sizes" + where + " (" + std::to_string(cal.sizes) + " sizes, " +
            SizeRangeText(cal.smallest_bytes, cal.largest_bytes) + "): " +
            (small ? "their times are dominated by host noise, not by the network"
                   : "too close together to tell what a collective costs from what a byte costs") +
            "; record a collective benchmark with accordion-bench-collectives (1 KiB to 16 MiB) and "
            "calibrate on it";
  } else if (worst_world->second > limit && stands_out(worst_world->second, best_world->second)) {
    cause = "the collectives at " + std::to_string(worst_world->first) + " ranks fit worst (" +
            Percent(worst_world->second) + " rms, " + Percent(best_world->second) + " at " +
            std::to_string(best_world->first) +
            " ranks): ranks that wait for a CPU (more ranks than free cores) take times no network model "
            "holds; benchmark with a core or a host per rank, or leave that world size out";
  } else if (worst_segment->rms_relative_error > limit &&
             stands_out(worst_segment->rms_relative_error, best_segment->rms_relative_error)) {
    cause = "collectives of " + SizeRangeText(worst_segment->smallest_bytes, worst_segment->largest_bytes) +
            " fit worst (" + Percent(worst_segment->rms_relative_error) + " rms, " +
            Percent(best_segment->rms_relative_error) + " for " +
            SizeRangeText(best_segment->smallest_bytes, best_segment->largest_bytes) +
            "): their times vary more than their sizes explain (a loaded host, a shared network); "
            "benchmark them on idle hosts with more --iters";
  } else {
    cause =
        "the times do not grow with size as o + k * alpha + bytes / B would (loaded hosts, a shared "
        "network, or another all-reduce than the " +
        DescribeAllReduce(cal.allreduce, cal.collective) +
        " assumed: --allreduce); benchmark on idle hosts with accordion-bench-collectives";
  }
  // The next 5 % up: what a user who accepts this fit would pass.
  const double accept = std::ceil(cal.rms_relative_error * 20) / 20;
  throw InputError("the fit misses its " + std::to_string(fitted) + " collectives by " +
                   Percent(cal.rms_relative_error) + " rms (refused above " + Percent(limit) + "): " + cause +
                   "; --max-rms-error " + FormatNumber(accept) + " accepts it anyway");
}

std::vector<SourceReplay> Calibrator::CheckPlatform(const PlatformSpec& platform) const {
  std::vector<SourceReplay> replays;
  for (const std::string& trace : traces_) {
    SourceReplay& s = replays.emplace_back();
    s.trace = trace;
    std::optional<ReplayInput> input;
    try {
      input.emplace(LoadReplayInput(trace));
    } catch (const InputError& e) {
      s.skipped = e.what();  // a trace of collectives only: the fit used it, no replay can
      continue;
    }
    ReplayResult r;
    try {
      // The all-reduce the fit assumed the samples ran, which the trace ran
      // too; the rest (host costs among them) as any replay has it.
      r = ReplayEngine(
              ReplayOptions().platform(platform).allreduce(options_.allreduce()).collective(options_.collective()))
              .Run(*input);
    } catch (const InputError& e) {
      throw InputError("the calibrated platform cannot replay " + trace + ": " + e.what());
    }
    if (!r.check) {
      s.skipped = "no sampled epochs to compare";
      continue;
    }
    s.workers = r.workers;
    s.epochs = r.check->epochs;
    s.measured_median_s = r.check->median_measured_iteration_s;
    s.replayed_median_s = r.check->median_simulated_iteration_s;
    s.relative_error = r.check->median_relative_error;
    if (std::fabs(s.relative_error) > options_.max_step_error()) {
      throw InputError("the calibrated platform does not give " + trace + " back: replayed on it at its " +
                       std::to_string(s.workers) + " workers, the median step takes " + Millis(s.replayed_median_s) +
                       " against " + Millis(s.measured_median_s) + " measured (" + (s.relative_error > 0 ? "+" : "") +
                       Percent(s.relative_error) + ", refused beyond " + Percent(options_.max_step_error()) +
                       "): the fitted network does not give this run's collectives the times its steps waited "
                       "for; calibrate on accordion-bench-collectives files measured on the same hosts");
    }
  }
  return replays;
}

std::string SizeRangeText(double smallest_bytes, double largest_bytes) {
  return smallest_bytes == largest_bytes ? SizeText(smallest_bytes)
                                         : SizeText(smallest_bytes) + " to " + SizeText(largest_bytes);
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
                      {"sizes", sizes},
                      {"smallest_bytes", smallest_bytes},
                      {"largest_bytes", largest_bytes},
                      {"notes", notes}};
  for (const auto& [world, e] : rms_per_world_size) {
    j["calibration"]["rms_relative_error_per_world_size"][std::to_string(world)] = e;
  }
  if (link_bandwidth_Bps > 0) {
    j["calibration"]["link_gbps"] = GbpsFromBytesPerSecond(link_bandwidth_Bps);
    j["calibration"]["host_ns_per_byte"] = host_s_per_byte * 1e9;
  }
  return j;
}

}  // namespace accordion::sim
