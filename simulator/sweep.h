// Sweeps: one replay per point of bandwidth x latency x workers x eta x
// interval x levels, each point in its own process (one SimGrid engine per
// process), up to `jobs` at a time, one result row per point.
#ifndef ACCORDION_SIMULATOR_SWEEP_H_
#define ACCORDION_SIMULATOR_SWEEP_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "simulator/replay_engine.h"

namespace accordion::sim {

// An empty dimension keeps the base options' value.
struct SweepGrid {
  std::vector<double> bandwidth_gbps;
  std::vector<double> latency_us;
  std::vector<int> workers;
  std::vector<double> eta;
  std::vector<int> interval;
  std::vector<std::pair<double, double>> levels;  // (low, high)
};

struct SweepPoint {
  std::optional<double> bandwidth_gbps;
  std::optional<double> latency_us;
  std::optional<int> workers;
  std::optional<double> eta;
  std::optional<int> interval;
  std::optional<std::pair<double, double>> levels;
};

// The largest grid a sweep runs: a million points, each a replay in its own
// process, is days of work already; the count is checked before anything
// is allocated, and memory does not grow with it (RunSweep streams).
inline constexpr int64_t kMaxSweepPoints = 1000000;

// Points in the grid, counted without expanding it; throws InputError above
// kMaxSweepPoints.
int64_t GridSize(const SweepGrid& grid);
// The point at `index` (0 <= index < GridSize) in ExpandGrid's order.
SweepPoint GridPoint(const SweepGrid& grid, int64_t index);

// Points in row-major order over the dimensions as listed above.
std::vector<SweepPoint> ExpandGrid(const SweepGrid& grid);
ReplayOptions OptionsAt(const ReplayOptions& base, const SweepPoint& point);

struct SweepRow {
  double bandwidth_gbps = 0;
  double latency_us = 0;
  int workers = 0;
  double eta = 0;
  int interval = 0;
  double level_low = 0;
  double level_high = 0;
  double accordion_s = 0;
  double static_low_s = 0;
  double static_high_s = 0;
  double accordion_exposed_comm_s = 0;
  double accordion_payload_bytes = 0;
  int distinct_patterns = 0;
};

// The options of every point, checked (platform, hosts for the workers)
// before anything runs: a bad point stops the sweep before it starts. Each
// point runs its own patterns one at a time (jobs 1): the parallelism is
// RunSweep's, across points.
std::vector<ReplayOptions> PlanSweep(const ReplayInput& input, const ReplayOptions& base,
                                     const std::vector<SweepPoint>& points);

// PlanSweep's checks over the whole grid, without keeping the options.
void CheckSweep(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid);

// Runs every point of the grid, at most `jobs` at a time, and hands each
// row to `row` in grid order as soon as it and the rows before it are done
// (a sweep's output grows as it runs); memory does not grow with the grid.
// `progress(done, total)` after each row.
void RunSweep(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid, int jobs,
              const std::function<void(const SweepRow&)>& row,
              const std::function<void(int64_t, int64_t)>& progress = {});

// Writes rows as they come, as CSV or as a JSON array: the same text as
// WriteSweepCsv() or SweepJson().dump(1) of all of them.
class SweepWriter {
 public:
  SweepWriter(std::ostream& out, bool json);
  void Add(const SweepRow& row);
  void Finish();  // the JSON array's end

 private:
  std::ostream& out_;
  bool json_;
  int64_t rows_ = 0;
};

// `progress(done, total)` after each point.
std::vector<SweepRow> RunSweep(const ReplayInput& input, const std::vector<ReplayOptions>& points, int jobs,
                               const std::function<void(int, int)>& progress = {});

void WriteSweepCsv(const std::vector<SweepRow>& rows, std::ostream& out);
nlohmann::json SweepJson(const std::vector<SweepRow>& rows);

}  // namespace accordion::sim

#endif  // ACCORDION_SIMULATOR_SWEEP_H_
