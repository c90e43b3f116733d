// CollectiveBench: what accordion-bench-collectives measures and how it
// reports it (sizes, per-iteration timing across ranks, nccl-tests' table and
// bandwidths, the JSON accordion-sim calibrate reads). No LibTorch here; the
// tool runs the collectives through the trainer's Communicator.
//
// Sizes follow nccl-tests: the swept size is the all-reduce's and the
// broadcast's buffer and the all-gather's whole output (world x one rank's
// payload). The JSON's "bytes" follow the simulator's convention instead
// (simulator/collectives.h): the buffer for all-reduce and broadcast, one
// rank's payload for all-gather.
#ifndef ACCORDION_TRAINER_COLLECTIVE_BENCH_H_
#define ACCORDION_TRAINER_COLLECTIVE_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/options.h"
#include "traces/records.h"

namespace accordion {

// "4096", "1K", "64M", "1G" (K = 1024): bytes. Throws InputError.
int64_t ParseByteSize(const std::string& text);
// The way back, with the largest suffix that divides: 65536 is "64K", so
// help shows a default as a user would type it.
std::string ByteSizeText(int64_t bytes);

class CollectiveBenchOptions {
 public:
  void Validate() const;  // throws InputError naming the first problem
  // min_bytes, min_bytes * factor, ... while not above max_bytes.
  std::vector<int64_t> Sizes() const;

  /// The collectives to time. Default: all-reduce, all-gather, broadcast.
  ACCORDION_ARG(std::vector<CollectiveOp>, ops) = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                                                   CollectiveOp::kBroadcast};
  /// Smallest size timed, bytes. Default: 1024.
  ACCORDION_ARG(int64_t, min_bytes) = 1024;
  /// Largest size timed, bytes. Default: 64 << 20 (64 MiB).
  ACCORDION_ARG(int64_t, max_bytes) = 64 << 20;
  /// Growth from one size to the next. Default: 4.
  ACCORDION_ARG(int, factor) = 4;
  /// Untimed runs per size. Default: 3.
  ACCORDION_ARG(int, warmup) = 3;
  /// Timed runs per size. Default: 10.
  ACCORDION_ARG(int, iters) = 10;
  /// The communication backend, gloo or nccl. Default: "gloo".
  ACCORDION_ARG(std::string, backend) = "gloo";
  /// How long the rendezvous and then each collective may take before the
  /// run fails, seconds (the communicator's timeout). Default: 120.
  ACCORDION_ARG(double, timeout_s) = 120;
};

// One op at one swept size on `world` ranks, in float32 elements.
struct BenchShape {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int world_size = 1;
  int64_t elements_per_rank = 0;  // the buffer one rank passes in
  int64_t size_bytes = 0;         // nccl-tests' size (all-gather: the whole output)
  int64_t count = 0;              // nccl-tests' count: size_bytes / 4
  int64_t bytes = 0;              // the simulator's bytes (all-gather: one rank's payload)
};
// Rounds down to whole elements (whole per-rank payloads for all-gather),
// at least one element per rank.
BenchShape ShapeOf(CollectiveOp op, int64_t size_bytes, int world);

// nccl-tests' bus bandwidth over algorithm bandwidth: 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, 1 for broadcast.
double BusBandwidthFactor(CollectiveOp op, int world);

struct BenchResult {
  BenchShape shape;
  double median_s = 0;  // over iterations of the slowest rank's time
  double min_s = 0;
  int iterations = 0;
  double algbw_GBps() const;  // size_bytes / median_s, in 1e9 B/s
  double busbw_GBps() const;
};

// `seconds[rank][iteration]`, each from issue to completion on that rank.
// The ranks left a barrier together, so an iteration took as long as its
// slowest rank; the median and the minimum are over iterations.
BenchResult Summarise(const BenchShape& shape, const std::vector<std::vector<double>>& seconds);

// The table rank 0 prints: comment lines saying what was run, a header, and
// one row per result.
std::string BenchTableHeader(const CollectiveBenchOptions& options, int world);
std::string BenchTableRow(const BenchResult& r);

// The --out file without its "calibration" (added by the tool when the
// simulator is built): {"format": "accordion-bench-collectives", ...,
// "samples": [...]}. Calibrator::AddBenchmark reads it.
nlohmann::json BenchJson(const CollectiveBenchOptions& options, int world, const std::vector<BenchResult>& results);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_COLLECTIVE_BENCH_H_
