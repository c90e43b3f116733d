// Calibrator fits a latency and an effective bandwidth per message-size
// segment to measured collectives, and turns the fit into a platform.
//
// Each sample is one collective: its op, the world size, its bytes and how
// long it took. Under the chosen all-reduce algorithm a collective is a known
// number of rounds k of messages of m bytes, so it should take
// k * alpha + k * m / B (rounds of unequal size: the sum of their bytes): a
// linear model in (alpha, 1/B), fitted by least squares (Eigen) on the
// samples whose message size falls in the segment, weighted by 1/duration so
// that small and large collectives count alike. Different ops
// share one fit: they are different (k, m) of the same links.
#ifndef ACCORDION_SIMULATOR_CALIBRATOR_H_
#define ACCORDION_SIMULATOR_CALIBRATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "simulator/collectives.h"
#include "simulator/platform.h"
#include "traces/records.h"

namespace accordion::sim {

struct CalibrationSegment {
  double min_message_bytes = 0;
  double max_message_bytes = 0;  // exclusive; infinity for the last
  double latency_s = 0;          // alpha, end to end
  double bandwidth_Bps = 0;      // effective bandwidth B
  int samples = 0;
  double rms_relative_error = 0;  // of the fit on its own samples
};

struct Calibration {
  int world_size = 0;
  std::vector<CalibrationSegment> segments;  // fitted ones, by size
  std::vector<std::string> notes;            // segments merged, samples skipped
  int samples = 0;
  // A star of world_size hosts whose links reproduce the fit (CM02, no TCP
  // window, no cross-traffic: the measurements already contain those).
  PlatformSpec Platform() const;
  nlohmann::json PlatformJson(const std::string& source) const;
};

class CalibratorOptions {
 public:
  // Upper bounds of the segments but the last, in message bytes.
  CalibratorOptions& boundaries(std::vector<double> v) { boundaries_ = std::move(v); return *this; }
  CalibratorOptions& allreduce(AllReduceAlgorithm v) { allreduce_ = v; return *this; }
  const std::vector<double>& boundaries() const { return boundaries_; }
  AllReduceAlgorithm allreduce() const { return allreduce_; }

 private:
  std::vector<double> boundaries_ = {65536, 4194304};
  AllReduceAlgorithm allreduce_ = AllReduceAlgorithm::kRing;
};

class Calibrator {
 public:
  explicit Calibrator(CalibratorOptions options = CalibratorOptions());

  void Add(CollectiveOp op, int world_size, int64_t bytes, double duration_s);
  // The collectives a trace recorded. Ranks see the same collective with
  // different waits for the others; per collective the shortest duration
  // (the rank that arrived last) is the network's time.
  void AddTrace(const std::string& path);

  // Throws InputError when nothing can be fitted.
  Calibration Fit() const;

 private:
  struct Sample {
    double rounds = 0;         // k
    double along_bytes = 0;    // bytes along the rounds: k * m for a ring
    double message_bytes = 0;  // the largest message, which picks the segment
    double duration_s = 0;
  };
  CalibratorOptions options_;
  int world_size_ = 0;
  std::vector<Sample> samples_;
  int skipped_ = 0;
};

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_CALIBRATOR_H_
