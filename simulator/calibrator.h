// Calibrator fits what one collective costs to measured collectives and
// turns the fit into a platform.
//
// Each sample is one collective: its op, the world size, its bytes and how
// long it took. Under the chosen all-reduce algorithm (any of
// AllReduceAlgorithm, with its CollectiveOptions) a collective is a known
// number of rounds k, each of messages of m bytes, so it should take
//
//   o + k * alpha + along_bytes / B
//
// along_bytes: the sum over rounds of what the busiest rank sends or
// receives, busiest * m (k * m for a ring; NCCL's channels and trees send
// several messages side by side) - the alpha-beta model's price of a round,
// so a platform fitted here gives the samples back. A round takes the alpha
// and B of its own message size's segment: an NCCL pipeline's waves carry
// messages of several sizes.
//
// o is the software cost of one collective (issuing it, Gloo's or NCCL's
// bookkeeping, waking the waiter), paid once whatever the world size; alpha
// is the cost of one round (a message through the stack and the wire); B is
// the effective bandwidth. They are kept apart because they scale apart: a
// fit that folds o into alpha multiplies a per-call cost by the rounds, so a
// 2-rank calibration's alpha of 488 us became a second per all-reduce at 1024
// ranks. The model is linear in (o, alpha, 1/B): one weighted least-squares
// fit (Eigen), o shared by all samples, alpha and B per message-size segment,
// weighted by 1/duration so that small and large collectives count alike.
// Different ops share the fit: they are different (k, m) of the same links.
//
// What tells o from alpha is samples with different round counts: several
// world sizes (or ops whose round counts differ). Where every segment's
// samples take the same number of rounds (one world size, one op), o and
// k * alpha are the same column; the constant then goes to o and alpha is 0,
// and a note says so. No coefficient may be negative: one that comes out
// negative is pinned at 0 and the others refitted, with a note.
#ifndef ACCORDION_SIMULATOR_CALIBRATOR_H_
#define ACCORDION_SIMULATOR_CALIBRATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/options.h"
#include "simulator/collectives.h"
#include "simulator/platform.h"
#include "traces/records.h"

namespace accordion::sim {

struct CalibrationSegment {
  double min_message_bytes = 0;
  double max_message_bytes = 0;  // exclusive; infinity for the last
  double latency_s = 0;          // alpha, per round, end to end
  double bandwidth_Bps = 0;      // effective bandwidth B
  int samples = 0;
  double rms_relative_error = 0;  // of the fit on its own samples
  // The collectives fitted here: how many distinct sizes, the smallest and
  // the largest, in bytes as Calibrator::Add counts them.
  int sizes = 0;
  double smallest_bytes = 0;
  double largest_bytes = 0;
};

struct Calibration {
  int world_size = 0;                         // the largest measured
  std::map<int, int> samples_per_world_size;  // world size -> collectives
  double collective_overhead_s = 0;           // o
  std::vector<CalibrationSegment> segments;   // fitted ones, by size
  // The links' nominal rate (CalibratorOptions::link_gbps; 0: not given) and
  // the hosts' per-byte cost h it reveals: 1/B = 1/rate + h for the
  // largest-message segment's B.
  double link_bandwidth_Bps = 0;
  double host_s_per_byte = 0;
  std::vector<std::string> notes;  // segments merged, samples skipped, coefficients pinned
  // The all-reduce the samples were taken to have run (CalibratorOptions).
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::kRing;
  CollectiveOptions collective;
  int samples = 0;
  double rms_relative_error = 0;  // of the whole fit
  // What tells a fit's error from the network's: its collectives' sizes
  // (as in CalibrationSegment), the error per world size, and how many
  // samples came from training traces (whose small collectives carry their
  // hosts' noise).
  int sizes = 0;
  double smallest_bytes = 0;
  double largest_bytes = 0;
  std::map<int, double> rms_per_world_size;
  int trace_samples = 0;
  // A star with one host per rank of whatever replays on it (CM02, no TCP
  // window, no cross-traffic: the measurements already contain those) whose
  // links reproduce the fit, with o as its collective overhead. With a link
  // rate, the links carry that rate and h (PlatformSpec::host_s_per_byte),
  // so a replay that changes the bandwidth keeps the hosts' cost.
  PlatformSpec Platform() const;
  nlohmann::json PlatformJson(const std::string& source) const;
};

class CalibratorOptions {
  /// Upper bounds of the segments but the last, in message bytes.
  /// Default: {65536, 4194304}.
  ACCORDION_ARG(std::vector<double>, boundaries) = {65536, 4194304};
  /// The algorithm the samples' collectives ran. Default: AllReduceAlgorithm::kRing.
  ACCORDION_ARG(AllReduceAlgorithm, allreduce) = AllReduceAlgorithm::kRing;
  /// Its settings (NCCL's chunks and channels, ranks per node), as the
  /// samples ran it. Default: CollectiveOptions().
  ACCORDION_ARG(CollectiveOptions, collective);
  /// The nominal rate of the links the samples crossed (a NIC's speed, a tc
  /// rate), Gb/s; 0: unknown. Only with it can the fitted bandwidth be split
  /// into the links' rate and the hosts' per-byte cost. Default: 0.
  ACCORDION_ARG(double, link_gbps) = 0;
  /// The largest rms relative error of a fit CheckFit accepts: beyond a
  /// quarter, the samples' times are not the network's (host noise, CPU-
  /// bound ranks, too few sizes) and a platform fitted to them projects
  /// nothing. Default: 0.25.
  ACCORDION_ARG(double, max_rms_error) = 0.25;
  /// How far a calibrated platform's replay of a source trace (its median
  /// step) may be from what the trace measured, relative. Default: 0.1.
  ACCORDION_ARG(double, max_step_error) = 0.1;
};

// A calibrated platform replaying one of its source traces at the trace's
// own workers, scheme and levels (ReplayOptions' defaults otherwise).
struct SourceReplay {
  std::string trace;
  std::string skipped;  // why replay could not load it; empty when replayed
  int workers = 0;
  int epochs = 0;                // sampled epochs compared
  double measured_median_s = 0;  // median over them of the mean step
  double replayed_median_s = 0;
  double relative_error = 0;  // (replayed - measured) / measured
};

// "1.5 KiB to 9 KiB": a range of collective sizes as calibrate prints it.
std::string SizeRangeText(double smallest_bytes, double largest_bytes);

class Calibrator {
 public:
  explicit Calibrator(CalibratorOptions options = CalibratorOptions());

  // One measured collective; samples may come from any number of world
  // sizes. `bytes` as the trace counts them: the buffer for all-reduce and
  // broadcast, one rank's payload for all-gather.
  void Add(CollectiveOp op, int world_size, int64_t bytes, double duration_s);
  // The collectives a trace recorded. Ranks see the same collective with
  // different waits for the others; per collective the shortest duration
  // (the rank that arrived last) is the network's time. A collective issued
  // on some rank before that rank's earlier collectives of the step had all
  // ended waited in Gloo's queue for part of its duration: it is left out.
  void AddTrace(const std::string& path);
  // The samples of an accordion-bench-collectives --out file (its median
  // time per size and op). `origin` names it in errors.
  void AddBenchmark(const nlohmann::json& j, const std::string& origin);
  // A trace or a benchmark file, told apart by content (SQLite's header or
  // JSON). Throws InputError for anything else.
  void AddFile(const std::string& path);

  // Throws InputError when nothing can be fitted.
  Calibration Fit() const;
  // Throws InputError when `cal` misses its samples by more than
  // max_rms_error: one line naming the rms error and its likely cause.
  void CheckFit(const Calibration& cal) const;
  // Replays every source trace that replay can load on `platform`; throws
  // InputError, one line, when one's median step is further than
  // max_step_error from what it measured: a platform that cannot give its
  // own run back projects nothing.
  std::vector<SourceReplay> CheckPlatform(const PlatformSpec& platform) const;

 private:
  // A collective's rounds of one message size.
  struct Part {
    double message_bytes = 0;  // m, which picks the segment whose alpha and B these rounds take
    double rounds = 0;
    double along_bytes = 0;  // the busiest rank's bytes over these rounds
  };
  struct Sample {
    int world_size = 0;
    double bytes = 0;  // the collective's, as Add was given them
    bool from_trace = false;
    double rounds = 0;         // k
    double message_bytes = 0;  // the largest message, which files the sample under a segment
    std::vector<Part> parts;   // by message size
    double duration_s = 0;
  };
  CalibratorOptions options_;
  std::vector<Sample> samples_;
  std::vector<std::string> traces_;  // AddTrace's, for CheckPlatform
  int skipped_ = 0;
  int queued_ = 0;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_CALIBRATOR_H_
