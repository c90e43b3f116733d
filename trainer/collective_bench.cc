#include "trainer/collective_bench.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/statistics.h"
#include "common/version.h"

namespace accordion {

namespace {

constexpr int64_t kFloatBytes = 4;
// Buffers are allocated once at the largest size (twice for all-gather's
// output): beyond this a typo, not a benchmark.
constexpr int64_t kMaxBytes = int64_t{8} << 30;

}  // namespace

int64_t ParseByteSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M" || suffix == "m") shift = 20;
  if (suffix == "G" || suffix == "g") shift = 30;
  if (digits == 0 || digits > 12 || shift < 0) {
    throw InputError("'" + text + "' is not a size in bytes (a whole number, optionally with K, M or G)");
  }
  const int64_t value = std::stoll(text.substr(0, digits));
  if (value > (std::numeric_limits<int64_t>::max() >> shift)) throw InputError("'" + text + "' is too large");
  return value << shift;
}

std::string ByteSizeText(int64_t bytes) {
  for (const auto& [shift, suffix] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}}) {
    if (bytes != 0 && bytes % (int64_t{1} << shift) == 0) return std::to_string(bytes >> shift) + suffix;
  }
  return std::to_string(bytes);
}

void CollectiveBenchOptions::Validate() const {
  if (ops_.empty()) throw InputError("--ops needs at least one of allreduce, allgather, broadcast");
  if (min_bytes_ < kFloatBytes) throw InputError("--min-bytes must be at least 4 (one float32)");
  if (max_bytes_ < min_bytes_) throw InputError("--max-bytes must not be below --min-bytes");
  if (max_bytes_ > kMaxBytes) throw InputError("--max-bytes must be at most 8G");
  if (factor_ < 2) throw InputError("--factor must be at least 2");
  if (warmup_ < 0) throw InputError("--warmup must be zero or more");
  if (iters_ < 1) throw InputError("--iters must be at least 1");
  if (backend_ != "gloo" && backend_ != "nccl") throw InputError("unknown backend '" + backend_ + "' (gloo, nccl)");
}

std::vector<int64_t> CollectiveBenchOptions::Sizes() const {
  std::vector<int64_t> sizes;
  for (int64_t s = min_bytes_; s <= max_bytes_; s *= factor_) {
    sizes.push_back(s);
    if (s > max_bytes_ / factor_) break;  // the next would overflow or pass the end
  }
  return sizes;
}

BenchShape ShapeOf(CollectiveOp op, int64_t size_bytes, int world) {
  BenchShape s;
  s.op = op;
  s.world_size = world;
  if (op == CollectiveOp::kAllGather) {
    s.elements_per_rank = std::max<int64_t>(1, size_bytes / (kFloatBytes * world));
    s.bytes = s.elements_per_rank * kFloatBytes;
    s.size_bytes = s.bytes * world;
  } else {
    s.elements_per_rank = std::max<int64_t>(1, size_bytes / kFloatBytes);
    s.bytes = s.elements_per_rank * kFloatBytes;
    s.size_bytes = s.bytes;
  }
  s.count = s.size_bytes / kFloatBytes;
  return s;
}

double BusBandwidthFactor(CollectiveOp op, int world) {
  const double n = world;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::kAllGather:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
      return 1;
  }
  return 1;
}

double BenchResult::algbw_GBps() const {
  return median_s > 0 ? static_cast<double>(shape.size_bytes) / median_s / 1e9 : 0;
}
double BenchResult::busbw_GBps() const { return algbw_GBps() * BusBandwidthFactor(shape.op, shape.world_size); }

BenchResult Summarise(const BenchShape& shape, const std::vector<std::vector<double>>& seconds) {
  if (seconds.empty() || seconds.front().empty()) throw std::invalid_argument("Summarise: no timings");
  const size_t iterations = seconds.front().size();
  std::vector<double> slowest(iterations, 0);
  for (const std::vector<double>& rank : seconds) {
    if (rank.size() != iterations) throw std::invalid_argument("Summarise: ranks timed different iterations");
    for (size_t i = 0; i < iterations; ++i) slowest[i] = std::max(slowest[i], rank[i]);
  }
  BenchResult r;
  r.shape = shape;
  r.iterations = static_cast<int>(iterations);
  r.min_s = *std::min_element(slowest.begin(), slowest.end());
  r.median_s = Median(slowest);
  return r;
}

std::string BenchTableHeader(const CollectiveBenchOptions& options, int world) {
  char line[256];
  std::string text;
  std::snprintf(line, sizeof line,
                "# accordion-bench-collectives %s: %s, %d ranks, float32, %d warm-up + %d timed iterations per "
                "size\n",
                kVersion, options.backend().c_str(), world, options.warmup(), options.iters());
  text += line;
  text +=
      "# time: issue to completion after a barrier, the slowest rank's per iteration; median (min) over "
      "iterations\n"
      "# algbw = size / time; busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather), 1 (broadcast);\n"
      "# allgather's size and count are its whole output (n x one rank's payload), as in nccl-tests\n";
  std::snprintf(line, sizeof line, "%12s %12s %7s %10s %11s %11s %11s %11s\n", "size(B)", "count", "type", "op",
                "time(us)", "min(us)", "algbw(GB/s)", "busbw(GB/s)");
  text += line;
  return text;
}

std::string BenchTableRow(const BenchResult& r) {
  char line[256];
  std::snprintf(line, sizeof line, "%12lld %12lld %7s %10s %11.1f %11.1f %11.3f %11.3f\n",
                static_cast<long long>(r.shape.size_bytes), static_cast<long long>(r.shape.count), "float",
                ToString(r.shape.op), r.median_s * 1e6, r.min_s * 1e6, r.algbw_GBps(), r.busbw_GBps());
  return line;
}

nlohmann::json BenchJson(const CollectiveBenchOptions& options, int world, const std::vector<BenchResult>& results) {
  nlohmann::json samples = nlohmann::json::array();
  for (const BenchResult& r : results) {
    samples.push_back({{"op", ToString(r.shape.op)},
                       {"world_size", r.shape.world_size},
                       {"bytes", r.shape.bytes},
                       {"size_bytes", r.shape.size_bytes},
                       {"count", r.shape.count},
                       {"median_s", r.median_s},
                       {"min_s", r.min_s},
                       {"iterations", r.iterations},
                       {"algbw_gbytes_per_s", r.algbw_GBps()},
                       {"busbw_gbytes_per_s", r.busbw_GBps()}});
  }
  return {{"format", "accordion-bench-collectives"},
          {"version", kVersion},
          {"backend", options.backend()},
          {"world_size", world},
          {"dtype", "float32"},
          {"warmup", options.warmup()},
          {"iters", options.iters()},
          {"bytes_convention",
           "bytes: the buffer for allreduce and broadcast, one rank's payload for allgather (as accordion-sim "
           "calibrate counts them); size_bytes and count: nccl-tests' (allgather: the whole output)"},
          {"timing", "median_s, min_s: over iterations of the slowest rank's issue-to-completion time after a barrier"},
          {"samples", samples}};
}

}  // namespace accordion
