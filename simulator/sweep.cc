#include "simulator/sweep.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/number_format.h"
#include "common/version.h"
#include "simulator/child_process.h"
#include "traces/scheme_description.h"

namespace accordion::sim {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SweepRow, bandwidth_gbps, latency_us, workers, eta, interval, level_low, level_high,
                                   accordion_s, static_low_s, static_high_s, accordion_exposed_comm_s,
                                   accordion_payload_bytes, distinct_patterns, accordion_low_s, accordion_high_s)

namespace {

// A row's fields, then the ratios people read first.
nlohmann::json RowJson(const SweepRow& r) {
  nlohmann::json j = r;
  j["speedup_vs_static_low"] = r.static_low_s / r.accordion_s;
  j["speedup_vs_static_high"] = r.static_high_s / r.accordion_s;
  return j;
}

constexpr const char* kCsvHeader =
    "bandwidth_gbps,latency_us,workers,eta,interval,level_low,level_high,accordion_s,static_low_s,"
    "static_high_s,speedup_vs_static_low,speedup_vs_static_high,accordion_exposed_comm_s,"
    "accordion_payload_bytes,distinct_patterns,accordion_low_s,accordion_high_s";

void WriteCsvRow(std::ostream& out, const SweepRow& r) {
  const auto precision = out.precision(10);
  out << r.bandwidth_gbps << ',' << r.latency_us << ',' << r.workers << ',' << r.eta << ',' << r.interval << ','
      << r.level_low << ',' << r.level_high << ',' << r.accordion_s << ',' << r.static_low_s << ',' << r.static_high_s
      << ',' << r.static_low_s / r.accordion_s << ',' << r.static_high_s / r.accordion_s << ','
      << r.accordion_exposed_comm_s << ',' << r.accordion_payload_bytes << ',' << r.distinct_patterns << ','
      << r.accordion_low_s << ',' << r.accordion_high_s << '\n';
  out.precision(precision);
}

}  // namespace

int64_t GridSize(const SweepGrid& g) {
  int64_t n = 1;
  for (const size_t size : {g.bandwidth_gbps.size(), g.latency_us.size(), g.workers.size(), g.eta.size(),
                            g.interval.size(), g.levels.size()}) {
    // Checked at each factor: a product of six dimensions overflows long before it is refused.
    n *= std::max<int64_t>(1, static_cast<int64_t>(std::min<size_t>(size, kMaxSweepPoints + 1)));
    if (n > kMaxSweepPoints) {
      throw InputError("the sweep's grid has more than " + std::to_string(kMaxSweepPoints) +
                       " points; sweep fewer values at once");
    }
  }
  return n;
}

SweepPoint GridPoint(const SweepGrid& g, int64_t index) {
  // Row-major: the last dimension (levels) varies fastest.
  SweepPoint p;
  auto take = [&index](const auto& values, auto& slot) {
    if (values.empty()) return;
    const auto n = static_cast<int64_t>(values.size());
    slot = values[static_cast<size_t>(index % n)];
    index /= n;
  };
  take(g.levels, p.levels);
  take(g.interval, p.interval);
  take(g.eta, p.eta);
  take(g.workers, p.workers);
  take(g.latency_us, p.latency_us);
  take(g.bandwidth_gbps, p.bandwidth_gbps);
  return p;
}

std::vector<SweepPoint> ExpandGrid(const SweepGrid& g) {
  std::vector<SweepPoint> points;
  const int64_t n = GridSize(g);
  for (int64_t i = 0; i < n; ++i) points.push_back(GridPoint(g, i));
  return points;
}

ReplayOptions OptionsAt(const ReplayOptions& base, const SweepPoint& p) {
  ReplayOptions o = base;
  PlatformSpec spec = base.platform();
  if ((p.bandwidth_gbps || p.latency_us) && spec.source == PlatformSource::kXmlFile) {
    throw InputError("bandwidth and latency cannot be swept on an XML platform; describe it with flags or JSON");
  }
  if (p.bandwidth_gbps) spec.bandwidth_Bps = BytesPerSecondFromGbps(*p.bandwidth_gbps);
  if (p.latency_us) spec.latency_s = *p.latency_us * 1e-6;
  o.platform(spec);
  if (p.workers) o.workers(*p.workers);
  // Not swept: the base's, which is the trace's own unless given.
  if (p.eta) o.eta(*p.eta);
  if (p.interval) o.interval(*p.interval);
  if (p.levels) o.level_low(p.levels->first).level_high(p.levels->second);
  return o;
}

namespace {

// A point's options, checked (platform, hosts for the workers). Each point
// runs its own patterns one at a time (jobs 1): the sweep runs points side
// by side (--jobs), or J points would start J x J processes.
ReplayOptions PlanPoint(const ReplayInput& input, const ReplayOptions& base, const SweepPoint& p) {
  ReplayOptions o = OptionsAt(base, p).jobs(1);
  o.platform().Validate();
  o.platform().HostCount(o.workers() > 0 ? o.workers() : input.view.run.world_size);
  return o;
}

ChildWork PointWork(const ReplayInput& input, const ReplayOptions& o) {
  return [&input, o] {
    const ReplayResult r = ReplayEngine(o).Run(input);
    SweepRow row;
    row.bandwidth_gbps = GbpsFromBytesPerSecond(o.platform().bandwidth_Bps);
    row.latency_us = o.platform().latency_s * 1e6;
    row.workers = r.workers;
    row.eta = r.eta;
    row.interval = r.interval;
    row.level_low = r.level_low;
    row.level_high = r.level_high;
    row.accordion_s = r.accordion.total.time_s;
    row.accordion_low_s = r.accordion.total.time_low_s;
    row.accordion_high_s = r.accordion.total.time_high_s;
    row.static_low_s = r.static_low.total.time_s;
    row.static_high_s = r.static_high.total.time_s;
    row.accordion_exposed_comm_s = r.accordion.total.exposed_comm_s;
    row.accordion_payload_bytes = r.accordion.total.payload_bytes;
    row.distinct_patterns = r.distinct_patterns;
    return RowJson(row).dump();
  };
}

}  // namespace

std::vector<ReplayOptions> PlanSweep(const ReplayInput& input, const ReplayOptions& base,
                                     const std::vector<SweepPoint>& points) {
  std::vector<ReplayOptions> options;
  for (const SweepPoint& p : points) options.push_back(PlanPoint(input, base, p));
  return options;
}

void CheckSweep(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid) {
  // Each level pair as --levels gave it, before any point runs: a replay
  // would refuse it with --low's words, after the sweep's header.
  const Scheme scheme = base.scheme().value_or(input.view.run.scheme);
  const SchemeDescription& description = DescriptionOf(scheme);
  for (const auto& [low, high] : grid.levels) {
    const std::string pair = "--levels " + FormatNumber(low) + ":" + FormatNumber(high);
    if (!description.has_levels()) {
      throw InputError(pair + ": " + ToString(scheme) + " communication has no levels to sweep");
    }
    for (const auto& [level, which] : {std::pair{low, "low"}, std::pair{high, "high"}}) {
      const std::string problem = LevelProblem(scheme, level);
      if (!problem.empty()) throw InputError(pair + ": the " + which + " level " + problem);
    }
    if (description.level_kind == LevelKind::kGlobalBatch && high < low) {
      throw InputError(pair +
                       ": the batch scheme grows the batch outside critical regimes, so HIGH must be the "
                       "larger batch");
    }
  }
  const int64_t n = GridSize(grid);
  for (int64_t i = 0; i < n; ++i) PlanPoint(input, base, GridPoint(grid, i));
}

std::vector<SweepRow> RunSweep(const ReplayInput& input, const std::vector<ReplayOptions>& options, int jobs,
                               const std::function<void(int, int)>& progress) {
  std::vector<ChildWork> work;
  for (const ReplayOptions& o : options) work.push_back(PointWork(input, o));
  const int total = static_cast<int>(work.size());
  std::vector<SweepRow> rows;
  for (const std::string& text : RunInChildProcesses(work, jobs, [&](int done) {
         if (progress) progress(done, total);
       })) {
    rows.push_back(nlohmann::json::parse(text).get<SweepRow>());
  }
  return rows;
}

void RunSweep(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid, int jobs,
              const std::function<void(const SweepRow&)>& row, const std::function<void(int64_t, int64_t)>& progress) {
  RunSweepShard(
      input, base, grid, SweepShard(), jobs, [&row](int64_t, const SweepRow& r) { row(r); }, progress);
}

void RunSweepShard(const ReplayInput& input, const ReplayOptions& base, const SweepGrid& grid, const SweepShard& shard,
                   int jobs, const std::function<void(int64_t, const SweepRow&)>& row,
                   const std::function<void(int64_t, int64_t)>& progress) {
  const int64_t total = shard.Points(GridSize(grid));
  RunInChildProcesses(
      total, [&](int64_t n) { return PointWork(input, PlanPoint(input, base, GridPoint(grid, shard.PointAt(n)))); },
      jobs,
      [&](int64_t n, const std::string& text) {
        row(shard.PointAt(n), nlohmann::json::parse(text).get<SweepRow>());
        if (progress) progress(n + 1, total);
      });
}

// ---- Slices -----------------------------------------------------------------

int64_t SweepShard::Points(int64_t grid_points) const {
  return index > grid_points ? 0 : (grid_points - index) / count + 1;
}

namespace {

// A count or an ID: digits only (no sign, no spaces), at most 18 of them.
std::optional<int64_t> ParseCount(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return std::stoll(text);
}

}  // namespace

std::optional<SweepShard> ParseShard(const std::string& text) {
  if (text == "off") return std::nullopt;
  const std::string origin = "--shard " + text;
  const size_t slash = text.find('/');
  const std::optional<int64_t> k = ParseCount(text.substr(0, slash));
  const std::optional<int64_t> n = slash == std::string::npos ? std::nullopt : ParseCount(text.substr(slash + 1));
  if (!k || !n) throw InputError(origin + ": give K/N, slice K of N (1 <= K <= N), or off");
  if (*n < 1) throw InputError(origin + ": N, the number of slices, must be at least 1");
  if (*k < 1 || *k > *n) {
    throw InputError(origin + ": slices are numbered 1 to N, so K must be between 1 and " + std::to_string(*n));
  }
  return SweepShard{*k, *n, origin};
}

std::optional<SweepShard> ShardFromSlurm(const std::function<const char*(const char*)>& getenv) {
  auto get = [&getenv](const char* name) -> std::optional<std::string> {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
  const std::optional<std::string> id_text = get("SLURM_ARRAY_TASK_ID");
  const std::optional<std::string> count_text = get("SLURM_ARRAY_TASK_COUNT");
  if (!id_text && !count_text) return std::nullopt;
  const std::string fix = "; give --shard K/N (or --shard off for the whole grid)";
  if (!id_text || !count_text) {
    throw InputError(std::string(id_text ? "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not"
                                         : "SLURM_ARRAY_TASK_COUNT is set but SLURM_ARRAY_TASK_ID is not") +
                     fix);
  }
  const std::optional<std::string> min_text = get("SLURM_ARRAY_TASK_MIN");
  if (!min_text) throw InputError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not" + fix);
  const std::optional<std::string> step_text = get("SLURM_ARRAY_TASK_STEP");
  const std::optional<std::string> max_text = get("SLURM_ARRAY_TASK_MAX");
  auto number = [&fix](const char* name, const std::string& text) {
    const std::optional<int64_t> v = ParseCount(text);
    if (!v) throw InputError(std::string(name) + "='" + text + "' is not a Slurm array index or count" + fix);
    return *v;
  };
  const int64_t id = number("SLURM_ARRAY_TASK_ID", *id_text);
  const int64_t count = number("SLURM_ARRAY_TASK_COUNT", *count_text);
  const int64_t min = number("SLURM_ARRAY_TASK_MIN", *min_text);
  const int64_t step = step_text ? number("SLURM_ARRAY_TASK_STEP", *step_text) : 1;
  const std::string array = "Slurm array task " + *id_text + " (SLURM_ARRAY_TASK_MIN=" + *min_text +
                            (max_text ? " _MAX=" + *max_text : "") + (step_text ? " _STEP=" + *step_text : "") +
                            " _COUNT=" + *count_text + ")";
  // An array of one task is how Slurm re-runs one failed task
  // (sbatch --array=5): taken as slice 1/1 it would run the whole grid.
  if (count == 1) throw InputError(array + ": an array of one task does not say which slice it is" + fix);
  // Tasks MIN, MIN+STEP, ..., MAX in ID order are slices 1..COUNT; a list
  // of IDs (--array=1,3,7) is not such a range and its slices are unknown.
  const bool evenly = step >= 1 && count >= 1 && id >= min && (id - min) % step == 0 && (id - min) / step < count &&
                      (!max_text || number("SLURM_ARRAY_TASK_MAX", *max_text) == min + (count - 1) * step);
  if (!evenly) throw InputError(array + ": the array's task IDs are not MIN, MIN+STEP, ..., MAX" + fix);
  const int64_t k = (id - min) / step + 1;
  return SweepShard{k, count, array + " = slice " + std::to_string(k) + "/" + std::to_string(count)};
}

void CheckShard(const SweepShard& shard, int64_t grid_points) {
  if (shard.count > grid_points) {
    throw InputError(shard.origin + ": the grid has " + std::to_string(grid_points) + " point" +
                     (grid_points == 1 ? "" : "s") + ", too few for " + std::to_string(shard.count) +
                     " slices; run at most " + std::to_string(grid_points));
  }
}

namespace {

// FNV-1a, 64 bits: not a cryptographic hash - it tells a user's slices of
// different sweeps apart, it does not defend against forgery.
class Fnv1a {
 public:
  void Add(const char* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= static_cast<unsigned char>(data[i]);
      hash_ *= 0x100000001b3ULL;
    }
  }
  void Add(const std::string& text) { Add(text.data(), text.size()); }
  std::string Hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016" PRIx64, hash_);
    return text;
  }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

std::string HashFile(const std::string& path) {
  const std::string problem = InputFileProblem(path);
  if (!problem.empty()) throw InputError(path + ": cannot read: " + problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read");
  Fnv1a h;
  std::vector<char> buffer(1 << 20);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    h.Add(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(path + ": cannot read");
  return h.Hex();
}

std::string HashJson(const nlohmann::json& j) {
  Fnv1a h;
  h.Add(j.dump());
  return h.Hex();
}

}  // namespace

SweepIdentity IdentifySweep(const std::string& trace_path, const ReplayOptions& base, const SweepGrid& grid) {
  SweepIdentity id;
  id.trace = HashFile(trace_path);
  id.grid = HashJson({{"bandwidth_gbps", grid.bandwidth_gbps},
                      {"latency_us", grid.latency_us},
                      {"workers", grid.workers},
                      {"eta", grid.eta},
                      {"interval", grid.interval},
                      {"levels", grid.levels}});
  // Every option that can change a row; jobs, timeout_s and cancel cannot.
  // An option added to ReplayOptions belongs here too.
  nlohmann::json platform = base.platform().ToJson();
  if (base.platform().source == PlatformSource::kXmlFile) platform["xml"] = HashFile(base.platform().xml_path);
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  id.options = HashJson({{"platform", platform},
                         {"workers", base.workers()},
                         {"scheme", base.scheme() ? nlohmann::json(ToString(*base.scheme())) : nlohmann::json()},
                         {"eta", optional(base.eta())},
                         {"interval", optional(base.interval())},
                         {"level_low", optional(base.level_low())},
                         {"level_high", optional(base.level_high())},
                         {"model", ToString(base.timing())},
                         {"allreduce", AllReduceJson(base.allreduce(), base.collective())},
                         {"fidelity", ToString(base.fidelity())},
                         {"memoise", base.memoise()},
                         {"bucket_bytes", optional(base.bucket_bytes())},
                         {"straggler_cv", base.straggler_cv()},
                         {"overhead", base.overhead() == OverheadSource::kTrace ? "trace" : "platform"},
                         {"anchor", base.anchor()},
                         {"recorded_bandwidth_gbps", optional(base.recorded_bandwidth_gbps())},
                         {"recorded_latency_us", optional(base.recorded_latency_us())},
                         {"burst_bytes", optional(base.burst_bytes())},
                         {"line_gbps", optional(base.line_gbps())}});
  return id;
}

SweepSliceWriter::SweepSliceWriter(std::ostream& out, const SweepShard& shard, int64_t grid_points,
                                   const SweepIdentity& identity)
    : out_(out) {
  out_ << "# accordion-sim " << kVersion << " sweep slice " << shard.index << '/' << shard.count << " of "
       << grid_points << " points; trace " << identity.trace << ", grid " << identity.grid << ", options "
       << identity.options << "\npoint," << kCsvHeader << '\n';
}

void SweepSliceWriter::Add(int64_t point, const SweepRow& row) {
  out_ << point << ',';
  WriteCsvRow(out_, row);
}

namespace {

// What a slice's first line says.
struct SliceHeader {
  std::string version;
  int64_t index = 0, count = 0, points = 0;
  SweepIdentity identity;
};

// Reads one slice file, checking each row as it goes: SweepSliceWriter's
// format, each row the slice's next point.
class SliceReader {
 public:
  explicit SliceReader(std::string path) : path_(std::move(path)) {
    const std::string problem = InputFileProblem(path_);
    if (!problem.empty()) throw InputError(path_ + ": cannot read: " + problem);
    in_.open(path_);
    if (!in_) throw InputError(path_ + ": cannot read (" + std::strerror(errno) + ")");
    static const std::regex kFirst(
        "# accordion-sim (\\S+) sweep slice ([0-9]{1,18})/([0-9]{1,18}) of ([0-9]{1,18}) points; "
        "trace ([0-9a-f]{16}), grid ([0-9a-f]{16}), options ([0-9a-f]{16})");
    std::string line;
    std::smatch m;
    if (!Line(&line) || !std::regex_match(line, m, kFirst)) {
      throw InputError(path_ + " is not a sweep slice (accordion-sim sweep --shard writes them)");
    }
    h_ = {m[1], std::stoll(m[2]), std::stoll(m[3]), std::stoll(m[4]), {m[5], m[6], m[7]}};
    if (h_.index < 1 || h_.index > h_.count || h_.count > h_.points || h_.points > kMaxSweepPoints) {
      throw InputError(path_ + ": slice " + std::to_string(h_.index) + "/" + std::to_string(h_.count) + " of " +
                       std::to_string(h_.points) + " points is not a slice of a sweep");
    }
    if (!Line(&line) || line != std::string("point,") + kCsvHeader) {
      throw InputError(path_ + ": the second line is not the sweep's columns");
    }
  }

  const SliceHeader& header() const { return h_; }
  const std::string& path() const { return path_; }
  // Rows the slice holds.
  int64_t rows() const { return SweepShard{h_.index, h_.count, ""}.Points(h_.points); }

  // The next row, without its point, which must be grid point `expected`.
  std::string Next(int64_t expected) {
    std::string line;
    const std::string where = path_ + ": row " + std::to_string(read_ + 1);
    if (!Line(&line)) {
      throw InputError(path_ + " ends after " + std::to_string(read_) + " of its " + std::to_string(rows()) +
                       " rows (an unfinished slice?)");
    }
    static const auto kCommas = std::count(kCsvHeader, kCsvHeader + std::strlen(kCsvHeader), ',') + 1;
    const size_t comma = line.find(',');
    const std::optional<int64_t> point = ParseCount(line.substr(0, comma));
    if (comma == std::string::npos || !point || std::count(line.begin(), line.end(), ',') != kCommas) {
      throw InputError(where + " is not a row of the sweep");
    }
    if (*point != expected) {
      const int64_t owner = *point % h_.count + 1;
      throw InputError(where + " is point " + std::to_string(*point) +
                       (owner != h_.index || *point >= h_.points
                            ? ", which is not one of slice " + std::to_string(h_.index) + "/" +
                                  std::to_string(h_.count) + "'s points"
                            : " where point " + std::to_string(expected) + " belongs (rows repeated or out of order)"));
    }
    ++read_;
    return line.substr(comma + 1);
  }

  // After the slice's last row: nothing more.
  void ExpectEnd() {
    std::string line;
    if (Line(&line)) {
      throw InputError(path_ + " has rows past slice " + std::to_string(h_.index) + "/" + std::to_string(h_.count) +
                       "'s " + std::to_string(rows()) + " (from other slices?)");
    }
  }

 private:
  // A whole line: one cut short (no '\n') is a file still being written.
  bool Line(std::string* line) {
    if (!std::getline(in_, *line)) {
      if (in_.bad()) throw InputError(path_ + ": cannot read");
      return false;
    }
    if (in_.eof()) throw InputError(path_ + ": the last line is cut short (an unfinished slice?)");
    return true;
  }

  std::string path_;
  std::ifstream in_;
  SliceHeader h_;
  int64_t read_ = 0;
};

std::string SliceName(const SliceHeader& h) { return std::to_string(h.index) + "/" + std::to_string(h.count); }

// Which part of two slices' first lines says they are of different sweeps.
std::string Difference(const SliceHeader& a, const SliceHeader& b) {
  if (a.version != b.version) return "accordion-sim versions (" + a.version + ", " + b.version + ")";
  if (a.identity.trace != b.identity.trace) return "traces";
  if (a.identity.grid != b.identity.grid || a.points != b.points) return "grids";
  if (a.identity.options != b.identity.options) return "options";
  if (a.count != b.count) return "slice counts (" + std::to_string(a.count) + ", " + std::to_string(b.count) + ")";
  return "";
}

// Every slice is open at once while the rows interleave: a big job array
// has more slices than the usual soft limit of 1024 open files.
void AllowOpenFiles(size_t files) {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const rlim_t wanted = static_cast<rlim_t>(files) + 64;
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

void MergeSweepSlices(const std::vector<std::string>& paths, std::ostream& out) {
  if (paths.empty()) throw InputError("no slices to merge");
  // The first lines first: slices of another sweep, given twice or missing
  // are found before any row is read.
  std::vector<std::string> by_index;  // [index - 1]: the slice's file
  SliceHeader first;
  for (const std::string& path : paths) {
    const SliceHeader h = SliceReader(path).header();
    if (by_index.empty()) {
      first = h;
      by_index.resize(static_cast<size_t>(h.count));
    }
    const std::string difference = Difference(first, h);
    if (!difference.empty()) {
      throw InputError(paths.front() + " and " + path + " are slices of different sweeps: their " + difference +
                       " differ");
    }
    std::string& slot = by_index[static_cast<size_t>(h.index - 1)];
    if (!slot.empty()) throw InputError("slice " + SliceName(h) + " is given twice: " + slot + " and " + path);
    slot = path;
  }
  std::string missing;
  int64_t missing_count = 0;
  for (size_t i = 0; i < by_index.size(); ++i) {
    if (!by_index[i].empty()) continue;
    if (++missing_count <= 10) missing += (missing.empty() ? "" : ", ") + std::to_string(i + 1);
  }
  if (missing_count > 0) {
    throw InputError(std::to_string(missing_count) + " of the sweep's " + std::to_string(first.count) +
                     " slices missing: " + missing + (missing_count > 10 ? ", ..." : "") + " (of " +
                     std::to_string(first.points) + " points; slices are numbered 1 to " + std::to_string(first.count) +
                     ")");
  }
  // Every row of every slice, checked before anything is written.
  for (const std::string& path : by_index) {
    SliceReader slice(path);
    for (int64_t n = 0; n < slice.rows(); ++n) slice.Next(SweepShard{slice.header().index, first.count, ""}.PointAt(n));
    slice.ExpectEnd();
  }
  AllowOpenFiles(by_index.size());
  std::vector<std::unique_ptr<SliceReader>> slices;
  for (const std::string& path : by_index) slices.push_back(std::make_unique<SliceReader>(path));
  out << kCsvHeader << '\n';
  for (int64_t point = 0; point < first.points; ++point) {
    out << slices[static_cast<size_t>(point % first.count)]->Next(point) << '\n';
  }
  for (const auto& slice : slices) slice->ExpectEnd();
}

SweepWriter::SweepWriter(std::ostream& out, bool json) : out_(out), json_(json) {
  if (!json_) out_ << kCsvHeader << '\n';
}

void SweepWriter::Add(const SweepRow& r) {
  if (json_) {
    // dump(1) of the whole array indents each row one step further.
    std::string text = RowJson(r).dump(1);
    std::string indented = " ";
    for (const char c : text) indented += c == '\n' ? std::string("\n ") : std::string(1, c);
    out_ << (rows_ == 0 ? "[\n" : ",\n") << indented;
  } else {
    WriteCsvRow(out_, r);
  }
  ++rows_;
}

void SweepWriter::Finish() {
  if (json_) out_ << (rows_ == 0 ? "[]\n" : "\n]\n");
}

void WriteSweepCsv(const std::vector<SweepRow>& rows, std::ostream& out) {
  SweepWriter writer(out, /*json=*/false);
  for (const SweepRow& r : rows) writer.Add(r);
  writer.Finish();
}

nlohmann::json SweepJson(const std::vector<SweepRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const SweepRow& r : rows) j.push_back(RowJson(r));
  return j;
}

}  // namespace accordion::sim
