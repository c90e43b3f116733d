#include "simulator/sweep.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "simulator/child_process.h"

namespace accordion::sim {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SweepRow, bandwidth_gbps, latency_us, workers, eta, interval, level_low,
                                   level_high, accordion_s, static_low_s, static_high_s,
                                   accordion_exposed_comm_s, accordion_payload_bytes, distinct_patterns)

namespace {

// A dimension with no values still contributes one (empty) choice.
template <typename T>
std::vector<std::optional<T>> Choices(const std::vector<T>& values) {
  if (values.empty()) return {std::nullopt};
  return std::vector<std::optional<T>>(values.begin(), values.end());
}

// A row's fields, then the ratios people read first.
nlohmann::json RowJson(const SweepRow& r) {
  nlohmann::json j = r;
  j["speedup_vs_static_low"] = r.static_low_s / r.accordion_s;
  j["speedup_vs_static_high"] = r.static_high_s / r.accordion_s;
  return j;
}

}  // namespace

std::vector<SweepPoint> ExpandGrid(const SweepGrid& g) {
  std::vector<SweepPoint> points;
  for (const auto& bw : Choices(g.bandwidth_gbps)) {
    for (const auto& lat : Choices(g.latency_us)) {
      for (const auto& w : Choices(g.workers)) {
        for (const auto& eta : Choices(g.eta)) {
          for (const auto& interval : Choices(g.interval)) {
            for (const auto& levels : Choices(g.levels))
              points.push_back({bw, lat, w, eta, interval, levels});
          }
        }
      }
    }
  }
  return points;
}

ReplayOptions OptionsAt(const ReplayOptions& base, const SweepPoint& p) {
  ReplayOptions o = base;
  PlatformSpec spec = base.platform();
  if ((p.bandwidth_gbps || p.latency_us) && spec.topology == Topology::kXml) {
    throw InputError(
        "bandwidth and latency cannot be swept on an XML platform; describe it with flags or JSON");
  }
  if (p.bandwidth_gbps) spec.bandwidth_Bps = *p.bandwidth_gbps * 1e9 / 8;
  if (p.latency_us) spec.latency_s = *p.latency_us * 1e-6;
  o.platform(spec);
  if (p.workers) o.workers(*p.workers);
  if (p.eta) o.eta(*p.eta);
  if (p.interval) o.interval(*p.interval);
  if (p.levels) o.level_low(p.levels->first).level_high(p.levels->second);
  return o;
}

std::vector<ReplayOptions> PlanSweep(const ReplayInput& input, const ReplayOptions& base,
                                     const std::vector<SweepPoint>& points) {
  std::vector<ReplayOptions> options;
  for (const SweepPoint& p : points) {
    // The sweep runs points side by side (--jobs); each point times its
    // patterns one after another, or J points would start J x J processes.
    options.push_back(OptionsAt(base, p).jobs(1));
    const ReplayOptions& o = options.back();
    o.platform().Validate();
    o.platform().HostCount(o.workers() > 0 ? o.workers() : input.view.run.world_size);
  }
  return options;
}

std::vector<SweepRow> RunSweep(const ReplayInput& input, const std::vector<ReplayOptions>& options, int jobs,
                               const std::function<void(int, int)>& progress) {
  std::vector<ChildWork> work;
  for (const ReplayOptions& o : options) {
    work.push_back([&input, o] {
      const ReplayResult r = ReplayEngine(o).Run(input);
      SweepRow row;
      row.bandwidth_gbps = o.platform().bandwidth_Bps * 8 / 1e9;
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
    });
  }
  const int total = static_cast<int>(work.size());
  std::vector<SweepRow> rows;
  for (const std::string& text : RunInChildProcesses(work, jobs, [&](int done) {
         if (progress) progress(done, total);
       })) {
    rows.push_back(nlohmann::json::parse(text).get<SweepRow>());
  }
  return rows;
}

void WriteSweepCsv(const std::vector<SweepRow>& rows, std::ostream& out) {
  const auto precision = out.precision(10);
  out << "bandwidth_gbps,latency_us,workers,eta,interval,level_low,level_high,accordion_s,static_low_s,"
         "static_high_s,speedup_vs_static_low,speedup_vs_static_high,accordion_exposed_comm_s,"
         "accordion_payload_bytes,distinct_patterns\n";
  for (const SweepRow& r : rows) {
    out << r.bandwidth_gbps << ',' << r.latency_us << ',' << r.workers << ',' << r.eta << ',' << r.interval
        << ',' << r.level_low << ',' << r.level_high << ',' << r.accordion_s << ',' << r.static_low_s << ','
        << r.static_high_s << ',' << r.static_low_s / r.accordion_s << ',' << r.static_high_s / r.accordion_s
        << ',' << r.accordion_exposed_comm_s << ',' << r.accordion_payload_bytes << ',' << r.distinct_patterns
        << '\n';
  }
  out.precision(precision);
}

nlohmann::json SweepJson(const std::vector<SweepRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const SweepRow& r : rows) j.push_back(RowJson(r));
  return j;
}

}  // namespace accordion::sim
