// Sweeps: one replay per point of bandwidth x latency x workers x eta x
// interval x levels, each point in its own process (one SimGrid engine per
// process), up to `jobs` at a time, one result row per point.
//
// Thread safety: the grid and option functions are pure; RunSweep and
// RunSweepShard fork from the calling thread (child_process.h) and may run in
// several threads at once; a SweepWriter or SweepSliceWriter is one thread's.
#ifndef ACCORDION_SIMULATOR_SWEEP_H_
#define ACCORDION_SIMULATOR_SWEEP_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
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
  // Accordion's prediction band (EpochProjection::time_low_s / _high_s).
  double accordion_low_s = 0;
  double accordion_high_s = 0;
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

// One slice of a sweep's grid, so that one sweep can run on many machines
// (a Slurm job array) and `merge` can join the slices into the CSV one
// process would have written. Slice `index` of `count` (1-based, as Slurm
// arrays and people count) holds points index-1, index-1+count, ... of the
// grid: round-robin, because grid order keeps the slow points (the largest
// worker counts) together, and contiguous blocks would give them to a few
// slices.
struct SweepShard {
  int64_t index = 1;
  int64_t count = 1;
  std::string origin;  // where it came from, for messages: "--shard 2/3", "SLURM_ARRAY_TASK_ID=7 ..."

  // Points of a grid of `grid_points` that fall in this slice.
  int64_t Points(int64_t grid_points) const;
  // The grid index of the slice's `n`th point.
  int64_t PointAt(int64_t n) const { return index - 1 + n * count; }
};

// --shard's text: "K/N" with 1 <= K <= N; "off" (the whole grid, whatever
// the environment says) is nullopt. Throws InputError.
std::optional<SweepShard> ParseShard(const std::string& text);

// The slice a Slurm job array task runs, from SLURM_ARRAY_TASK_ID, _COUNT,
// _MIN (and _STEP and _MAX when set): the array's tasks in ID order are
// slices 1..COUNT, whatever ID the array starts at (--array=0-7, 1-8 and
// 0-14:2 all make 8 slices). nullopt outside a job array. Throws InputError
// when the variables do not describe such an array (a list like
// --array=1,3,7 does not). `getenv` is the environment's lookup.
std::optional<SweepShard> ShardFromSlurm(const std::function<const char*(const char*)>& getenv);

// Throws InputError unless every slice of `shard.count` gets a point of the grid.
void CheckShard(const SweepShard& shard, int64_t grid_points);

// RunSweep over one slice: `row(point, row)` in grid order, `progress(done,
// total)` counting the slice's points.
void RunSweepShard(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid, const SweepShard& shard,
                   int jobs, const std::function<void(int64_t, const SweepRow&)>& row,
                   const std::function<void(int64_t, int64_t)>& progress = {});

// What makes slices parts of one sweep, each a hash (16 hex digits): the
// trace's bytes (copies of it on other machines agree, paths need not), the
// grid, and every option that changes a row - not --jobs, --sim-timeout or
// where the output goes. An XML platform counts by its file's bytes too.
struct SweepIdentity {
  std::string trace;
  std::string grid;
  std::string options;
};
SweepIdentity IdentifySweep(const std::string& trace_path, const ReplayOptions& base, const SweepGrid& grid);

// A slice's file is the sweep's CSV with a first line that says which
// slice of which sweep it is, and each row's grid index in front:
//
//   # accordion-sim 0.9.0 sweep slice 2/3 of 8 points; trace 1f..., grid 9a..., options 3c...
//   point,bandwidth_gbps,latency_us,...
//   1,1,5,...
//
// so that `merge` can check that its slices belong together, that none is
// missing or given twice and that no row is out of place, and then write
// the rows after their index in grid order: the one-process sweep's CSV,
// byte for byte.
class SweepSliceWriter {
 public:
  SweepSliceWriter(std::ostream& out, const SweepShard& shard, int64_t grid_points, const SweepIdentity& identity);
  void Add(int64_t point, const SweepRow& row);

 private:
  std::ostream& out_;
};

// Joins slice files into the one-process sweep's CSV. Every file is read
// and checked before the first byte goes to `out`: slices of one sweep
// (same tool version, trace, grid and options), each of 1..N once, each
// with exactly its own rows in order. Throws InputError naming the file and
// the problem.
void MergeSweepSlices(const std::vector<std::string>& paths, std::ostream& out);

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
