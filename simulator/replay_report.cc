#include "simulator/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>

#include <nlohmann/json.hpp>

#include "common/number_format.h"

namespace accordion::sim {

namespace {

const ScheduleProjection* Schedules(const ReplayResult& r, int i) {
  const ScheduleProjection* all[] = {&r.accordion, &r.static_low, &r.static_high};
  return all[i];
}

nlohmann::json EpochJson(const EpochProjection& e) {
  nlohmann::json j = {{"steps", e.steps},
                      {"global_batch", e.global_batch},
                      {"iteration_s", e.iteration_s},
                      {"compute_s", e.compute_s},
                      {"compress_s", e.compress_s},
                      {"exposed_comm_s", e.exposed_comm_s},
                      {"other_s", e.other_s},
                      {"time_s", e.time_s},
                      {"iteration_low_s", e.iteration_low_s},
                      {"iteration_high_s", e.iteration_high_s},
                      {"time_low_s", e.time_low_s},
                      {"time_high_s", e.time_high_s},
                      {"payload_bytes", e.payload_bytes},
                      {"wire_bytes", e.wire_bytes}};
  if (e.epoch >= 0) {
    j["epoch"] = e.epoch;
    j["low_layers"] = e.low_layers;
    j["pattern"] = e.pattern;
  }
  return j;
}

void CsvRow(std::ostream& out, const std::string& schedule, const EpochProjection& e) {
  out << schedule << ',' << (e.epoch >= 0 ? std::to_string(e.epoch) : "total") << ','
      << (e.epoch >= 0 ? std::to_string(e.low_layers) : "") << ','
      << (e.epoch >= 0 ? std::to_string(e.global_batch) : "") << ',' << e.steps << ',' << e.iteration_s << ','
      << e.compute_s << ',' << e.compress_s << ',' << e.exposed_comm_s << ',' << e.other_s << ',' << e.time_s << ','
      << e.payload_bytes << ',' << e.wire_bytes << ',' << (e.epoch >= 0 ? std::to_string(e.pattern) : "") << ','
      << e.time_low_s << ',' << e.time_high_s << '\n';
}

// `v` right-aligned in `width` characters with `precision` decimals, or in
// scientific notation where that would not leave a space before it: a table
// keeps its columns whatever the magnitude (a collective of 9e6 s).
std::string Column(double v, int width, int precision) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", precision, v);
  if (static_cast<int>(std::strlen(text)) >= width) std::snprintf(text, sizeof text, "%.*e", 3, v);
  std::string cell(text);
  return std::string(std::max(1, width - static_cast<int>(cell.size())), ' ') + cell;
}

}  // namespace

void WriteReplayTable(const ReplayResult& r, std::ostream& out) {
  const auto flags = out.flags();
  const int L = static_cast<int>(r.profile.grad_ready_s.size());
  out << "Replay of " << r.trained_model << " from " << r.trace << (r.synthetic ? " (SYNTHETIC)" : "") << ", "
      << r.accordion.epochs.size() << " epochs, " << L << " layers\n";
  out << "cluster:  " << r.workers << " workers (trace: " << r.trace_workers << ") on " << r.platform << "\n";
  if (!r.shaper.empty()) out << "shaper:   token bucket on every link, " << r.shaper << "\n";
  out << "timing:   " << r.communication << "; " << r.timed_patterns << " iteration patterns timed ("
      << r.distinct_patterns << " distinct)\n";
  out << "setting:  " << ToString(r.scheme) << ", eta " << r.eta << ", check " << EveryEpochs(r.interval) << "\n";
  out << std::fixed << std::setprecision(2) << "step:     forward " << r.profile.forward_s * 1e3 << " ms, backward "
      << r.profile.backward_s * 1e3 << " ms, compression " << r.profile.compress_s * 1e3 << " ms, other "
      << r.profile.other_s * 1e3 << " ms at " << std::setprecision(0) << r.profile.per_worker_batch
      << " samples per worker\n";
  for (const BatchCompute& b : r.compute) {
    out << "pricing:  at " << FormatNumber(b.per_worker_batch) << " samples per worker, " << b.Describe(r.scheme)
        << "\n";
  }
  out << "\n";

  out << std::left << std::setw(30) << "schedule" << std::right << std::setw(12) << "time_s" << std::setw(12)
      << "compute_s" << std::setw(12) << "compress_s" << std::setw(12) << "exposed_s" << std::setw(14) << "bytes/worker"
      << std::setw(20) << "Accordion speedup" << std::setw(20) << "band_s (90 %)"
      << "\n";
  for (int i = 0; i < 3; ++i) {
    const ScheduleProjection& s = *Schedules(r, i);
    out << std::left << std::setw(30) << s.label << std::right << Column(s.total.time_s, 12, 1)
        << Column(s.total.compute_s, 12, 1) << Column(s.total.compress_s, 12, 1)
        << Column(s.total.exposed_comm_s, 12, 1) << std::scientific << std::setprecision(3) << std::setw(14)
        << s.total.payload_bytes << Column(i == 0 ? 1.0 : s.total.time_s / r.accordion.total.time_s, 19, 3) << "x"
        << std::setw(20) << s.total.time_band().Text() << "\n";
  }
  out << "\nband:     the range that held 90 % of the trace's recorded steps (5th to 95th percentile), carried "
         "through the model with each collective's network / host split at either end of its uncertainty; a "
         "total's band puts every step at that end\n";

  out << "\n"
      << std::setw(5) << "epoch" << std::setw(6) << "low" << std::setw(8) << "steps" << std::setw(11) << "iter_ms"
      << std::setw(12) << "time_s" << std::setw(12) << "exposed_s" << std::setw(14) << "static_low_s" << std::setw(15)
      << "static_high_s"
      << "\n";
  for (size_t e = 0; e < r.accordion.epochs.size(); ++e) {
    const EpochProjection& a = r.accordion.epochs[e];
    out << std::setw(5) << a.epoch << std::setw(6) << a.low_layers << std::setw(8) << a.steps
        << Column(a.iteration_s * 1e3, 11, 3) << Column(a.time_s, 12, 3) << Column(a.exposed_comm_s, 12, 3)
        << Column(r.static_low.epochs[e].time_s, 14, 3) << Column(r.static_high.epochs[e].time_s, 15, 3) << "\n";
  }
  if (r.check) {
    out << std::fixed << "\ncheck:    trace's own schedule at " << r.trace_workers << " workers: measured "
        << std::setprecision(3) << r.check->measured_iteration_s * 1e3 << " ms per step, replayed "
        << r.check->simulated_iteration_s * 1e3 << " ms (" << std::showpos << std::setprecision(1)
        << r.check->relative_error * 100 << std::noshowpos << " %) over " << r.check->epochs
        << " sampled epochs; median step " << r.check->median_measured_iteration_s * 1e3 << " ms, replayed "
        << r.check->median_simulated_iteration_s * 1e3 << " ms (" << std::showpos
        << r.check->median_relative_error * 100 << std::noshowpos << " %), band " << std::setprecision(3)
        << r.check->simulated_low_s * 1e3 << " - " << r.check->simulated_high_s * 1e3 << " ms ("
        << (r.check->median_in_band() ? "holds" : "misses") << " the measured median)\n";
  }
  for (const std::string& note : r.notes) out << "note: " << note << "\n";
  out.flags(flags);
}

void WriteReplayCsv(const ReplayResult& r, std::ostream& out) {
  const auto flags = out.flags();
  const auto precision = out.precision(10);
  out << "schedule,epoch,low_layers,global_batch,steps,iteration_s,compute_s,compress_s,exposed_comm_s,"
         "other_s,time_s,payload_bytes,wire_bytes,pattern,time_low_s,time_high_s\n";
  for (int i = 0; i < 3; ++i) {
    const ScheduleProjection& s = *Schedules(r, i);
    for (const EpochProjection& e : s.epochs) CsvRow(out, s.name, e);
  }
  for (int i = 0; i < 3; ++i) CsvRow(out, Schedules(r, i)->name, Schedules(r, i)->total);
  out.precision(precision);
  out.flags(flags);
}

nlohmann::json ReplayJson(const ReplayResult& r) {
  nlohmann::json j;
  j["trace"] = r.trace;
  j["synthetic"] = r.synthetic;
  j["model"] = r.trained_model;
  j["trace_workers"] = r.trace_workers;
  j["workers"] = r.workers;
  j["platform"] = r.platform;
  j["communication"] = r.communication;
  j["shaper"] = r.shaper.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.shaper);
  j["collective_overhead_s"] = r.collective_overhead_s;
  j["timing"] = ToString(r.timing);
  j["communication_model"] = ToString(r.timing);  // "timing"'s name before 0.2, kept for one release
  j["allreduce"] = AllReduceJson(r.allreduce, r.collective);
  j["scheme"] = ToString(r.scheme);
  j["eta"] = r.eta;
  j["interval"] = r.interval;
  j["level_low"] = r.level_low;
  j["level_high"] = r.level_high;
  j["bucket_bytes"] = r.bucket_bytes;
  j["step"] = {{"per_worker_batch", r.profile.per_worker_batch},
               {"forward_s", r.profile.forward_s},
               {"backward_s", r.profile.backward_s},
               {"compress_s", r.profile.compress_s},
               {"other_s", r.profile.other_s}};
  j["timed_patterns"] = r.timed_patterns;
  j["distinct_patterns"] = r.distinct_patterns;
  for (int i = 0; i < 3; ++i) {
    const ScheduleProjection& s = *Schedules(r, i);
    nlohmann::json epochs = nlohmann::json::array();
    for (const EpochProjection& e : s.epochs) epochs.push_back(EpochJson(e));
    j["schedules"][s.name] = {{"label", s.label}, {"total", EpochJson(s.total)}, {"epochs", epochs}};
  }
  j["speedup_vs_static_low"] = r.speedup_vs_low();
  j["speedup_vs_static_high"] = r.speedup_vs_high();
  if (r.check) {
    j["measured_vs_replayed"] = {{"epochs", r.check->epochs},
                                 {"measured_iteration_s", r.check->measured_iteration_s},
                                 {"replayed_iteration_s", r.check->simulated_iteration_s},
                                 {"relative_error", r.check->relative_error},
                                 {"median_measured_iteration_s", r.check->median_measured_iteration_s},
                                 {"median_replayed_iteration_s", r.check->median_simulated_iteration_s},
                                 {"median_relative_error", r.check->median_relative_error},
                                 {"replayed_low_s", r.check->simulated_low_s},
                                 {"replayed_high_s", r.check->simulated_high_s},
                                 {"median_measured_in_band", r.check->median_in_band()}};
  }
  // How each batch's compute and compression inside backward were priced.
  auto estimate = [](const SharedEstimate& e) {
    return nlohmann::json{{"shared", e.shared},
                          {"mean_s", e.mean_s},
                          {"within_sd_s", e.within_sd_s},
                          {"effect", std::isfinite(e.effect) ? nlohmann::json(e.effect) : nlohmann::json()}};
  };
  j["compute"] = nlohmann::json::array();
  for (const BatchCompute& b : r.compute) {
    nlohmann::json levels = nlohmann::json::array();
    for (const LevelCompute& l : b.levels) {
      levels.push_back({{"levels", l.levels},
                        {"steps", l.steps},
                        {"compute_s", l.compute.mean_s},
                        {"compute_sd_s", l.compute.sd_s},
                        {"compression_s", l.compression.mean_s},
                        {"compression_sd_s", l.compression.sd_s}});
    }
    j["compute"].push_back({{"per_worker_batch", b.per_worker_batch},
                            {"compute", estimate(b.compute)},
                            {"compression", estimate(b.compression)},
                            {"levels", levels}});
  }
  j["notes"] = r.notes;
  return j;
}

}  // namespace accordion::sim
