#include "simulator/sweep.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/number_format.h"
#include "simulator/child_process.h"

namespace accordion::sim {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SweepRow, bandwidth_gbps, latency_us, workers, eta, interval, level_low, level_high,
                                   accordion_s, static_low_s, static_high_s, accordion_exposed_comm_s,
                                   accordion_payload_bytes, distinct_patterns)

namespace {

// A row's fields, then the ratios people read first.
nlohmann::json RowJson(const SweepRow& r) {
  nlohmann::json j = r;
  j["speedup_vs_static_low"] = r.static_low_s / r.accordion_s;
  j["speedup_vs_static_high"] = r.static_high_s / r.accordion_s;
  return j;
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
  if ((p.bandwidth_gbps || p.latency_us) && spec.topology == Topology::kXml) {
    throw InputError("bandwidth and latency cannot be swept on an XML platform; describe it with flags or JSON");
  }
  if (p.bandwidth_gbps) spec.bandwidth_Bps = BytesPerSecondFromGbps(*p.bandwidth_gbps);
  if (p.latency_us) spec.latency_s = *p.latency_us * 1e-6;
  o.platform(spec);
  if (p.workers) o.workers(*p.workers);
  AccordionOptions accordion = base.accordion();
  if (p.eta) accordion.eta(*p.eta);
  if (p.interval) accordion.interval(*p.interval);
  o.accordion(accordion);
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
  const int64_t total = GridSize(grid);
  RunInChildProcesses(
      total, [&](int64_t i) { return PointWork(input, PlanPoint(input, base, GridPoint(grid, i))); }, jobs,
      [&](int64_t i, const std::string& text) {
        row(nlohmann::json::parse(text).get<SweepRow>());
        if (progress) progress(i + 1, total);
      });
}

SweepWriter::SweepWriter(std::ostream& out, bool json) : out_(out), json_(json) {
  if (!json_) {
    out_ << "bandwidth_gbps,latency_us,workers,eta,interval,level_low,level_high,accordion_s,static_low_s,"
            "static_high_s,speedup_vs_static_low,speedup_vs_static_high,accordion_exposed_comm_s,"
            "accordion_payload_bytes,distinct_patterns\n";
  }
}

void SweepWriter::Add(const SweepRow& r) {
  if (json_) {
    // dump(1) of the whole array indents each row one step further.
    std::string text = RowJson(r).dump(1);
    std::string indented = " ";
    for (const char c : text) indented += c == '\n' ? std::string("\n ") : std::string(1, c);
    out_ << (rows_ == 0 ? "[\n" : ",\n") << indented;
  } else {
    const auto precision = out_.precision(10);
    out_ << r.bandwidth_gbps << ',' << r.latency_us << ',' << r.workers << ',' << r.eta << ',' << r.interval << ','
         << r.level_low << ',' << r.level_high << ',' << r.accordion_s << ',' << r.static_low_s << ','
         << r.static_high_s << ',' << r.static_low_s / r.accordion_s << ',' << r.static_high_s / r.accordion_s << ','
         << r.accordion_exposed_comm_s << ',' << r.accordion_payload_bytes << ',' << r.distinct_patterns << '\n';
    out_.precision(precision);
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
