#include "analysis/results_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/schedule_report.h"
#include "analysis/trace_view.h"
#include "common/errors.h"
#include "traces/policy_description.h"

namespace accordion {

namespace {

// Two-sided 95 % Student t quantiles for 1..30 degrees of freedom.
constexpr double kT95[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                           2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                           2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string WithCi(const MeanCi& m, double scale, int digits) {
  if (m.n == 0) return "—";  // no run recorded it
  std::string s = Fixed(m.mean * scale, digits);
  if (m.n > 1) s += " ± " + Fixed(m.half_width * scale, digits);
  return s;
}

// " (2 of 3 runs)" where some runs of the row recorded no test accuracy.
std::string AccuracyRuns(const ResultsRow& r) {
  if (r.accuracy.n == 0 || r.accuracy.n == static_cast<int>(r.traces.size())) return "";
  return " (" + std::to_string(r.accuracy.n) + " of " + std::to_string(r.traces.size()) + " runs)";
}

// A CSV field: the value, or empty where no run recorded it.
std::string OrEmpty(const MeanCi& m, double value) {
  if (m.n == 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

}  // namespace

std::string SettingName(Scheme scheme, Policy policy, double level_low, double level_high) {
  const std::string levels = PolicyLevelsText(policy, scheme, level_low, level_high);
  if (DescriptionOf(policy).one_level()) return levels;
  return std::string(DescriptionOf(policy).title) + " (" + levels + ")";
}

SettingKey SettingKeyOf(const RunInfo& r) {
  return {r.model, r.dataset, static_cast<int>(r.scheme), static_cast<int>(r.policy), r.level_low, r.level_high};
}

MeanCi MeanWithCi95(const std::vector<double>& values) {
  MeanCi m;
  m.n = static_cast<int>(values.size());
  if (m.n == 0) return m;
  for (double v : values) m.mean += v;
  m.mean /= m.n;
  if (m.n < 2) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  const double sd = std::sqrt(ss / (m.n - 1));
  const int df = m.n - 1;
  const double t = df <= 30 ? kT95[df - 1] : 1.96;
  m.half_width = t * sd / std::sqrt(static_cast<double>(m.n));
  return m;
}

std::vector<ResultsRow> BuildResultsTable(const std::vector<std::string>& trace_paths) {
  if (trace_paths.empty()) throw InputError("no traces given");
  std::map<SettingKey, ResultsRow> groups;
  std::map<SettingKey, std::vector<double>> acc, floats, secs;
  for (const std::string& path : trace_paths) {
    const TraceView v = LoadTraceView(path);
    const RunInfo& r = v.run;
    const SettingKey key = SettingKeyOf(r);
    ResultsRow& row = groups[key];
    row.model = r.model;
    row.dataset = r.dataset;
    row.scheme = r.scheme;
    row.policy = r.policy;
    row.level_low = r.level_low;
    row.level_high = r.level_high;
    row.setting = SettingName(r.scheme, r.policy, r.level_low, r.level_high);
    row.traces.push_back(path);
    if (r.status != RunStatus::kComplete && r.status != RunStatus::kStoppedEarly) ++row.incomplete;
    double f = 0, s = 0;
    for (const EpochRecord& e : v.epochs) {
      f += e.floats_sent;
      s += e.total_s;
    }
    // A run that recorded no test accuracy (kNotRecorded) is left out of
    // the mean, not counted as 0.
    if (Recorded(v.epochs.back().test_acc)) acc[key].push_back(v.epochs.back().test_acc);
    floats[key].push_back(f);
    secs[key].push_back(s);
  }
  std::vector<ResultsRow> rows;
  for (auto& [key, row] : groups) {
    row.accuracy = MeanWithCi95(acc[key]);
    row.floats = MeanWithCi95(floats[key]);
    row.seconds = MeanWithCi95(secs[key]);
    rows.push_back(row);
  }
  // Within a (model, dataset, scheme) block: static rows by decreasing floats,
  // then Accordion, AdaQS and Smith et al.; the first static row is the 1x baseline.
  std::sort(rows.begin(), rows.end(), [](const ResultsRow& a, const ResultsRow& b) {
    const auto block_a = std::tie(a.model, a.dataset, a.scheme);
    const auto block_b = std::tie(b.model, b.dataset, b.scheme);
    if (block_a != block_b) return block_a < block_b;
    if (a.policy != b.policy) return static_cast<int>(a.policy) < static_cast<int>(b.policy);
    return a.floats.mean > b.floats.mean;
  });
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultsRow* base = nullptr;
    for (const ResultsRow& cand : rows) {
      if (cand.model == rows[i].model && cand.dataset == rows[i].dataset && cand.scheme == rows[i].scheme &&
          DescriptionOf(cand.policy).one_level()) {
        base = &cand;
        break;
      }
    }
    if (!base) base = &rows[i];
    rows[i].floats_ratio = rows[i].floats.mean > 0 ? base->floats.mean / rows[i].floats.mean : 0;
    rows[i].seconds_ratio = rows[i].seconds.mean > 0 ? base->seconds.mean / rows[i].seconds.mean : 0;
  }
  return rows;
}

void WriteResultsMarkdown(const std::vector<ResultsRow>& rows, std::ostream& out) {
  out << "| model | dataset | scheme | setting | runs | test accuracy (%) | floats sent (M) | "
         "| time (s) | |\n";
  out << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ResultsRow& r : rows) {
    out << "| " << r.model << " | " << r.dataset << " | " << ToString(r.scheme) << " | " << r.setting << " | "
        << r.traces.size() << (r.incomplete ? " (" + std::to_string(r.incomplete) + " incomplete)" : "") << " | "
        << WithCi(r.accuracy, 100, 2) << AccuracyRuns(r) << " | " << WithCi(r.floats, 1e-6, 1) << " | ("
        << Fixed(r.floats_ratio, 2) << "×) | " << WithCi(r.seconds, 1, 1) << " | (" << Fixed(r.seconds_ratio, 2)
        << "×) |\n";
  }
  out << "\nMean ± 95 % confidence half-width over the runs of each setting (Student's t); "
         "floats are per worker; (×) is the 1× row's value divided by this row's.\n";
}

void WriteResultsCsv(const std::vector<ResultsRow>& rows, std::ostream& out) {
  out << "model,dataset,scheme,policy,level_low,level_high,setting,runs,incomplete,"
         "accuracy_mean,accuracy_ci95,floats_mean,floats_ci95,floats_ratio,seconds_mean,"
         "seconds_ci95,seconds_ratio\n";
  for (const ResultsRow& r : rows) {
    out << r.model << ',' << r.dataset << ',' << ToString(r.scheme) << ',' << ToString(r.policy) << ',' << r.level_low
        << ',' << r.level_high << ",\"" << r.setting << "\"," << r.traces.size() << ',' << r.incomplete << ','
        << OrEmpty(r.accuracy, r.accuracy.mean) << ',' << OrEmpty(r.accuracy, r.accuracy.half_width) << ','
        << r.floats.mean << ',' << r.floats.half_width << ',' << r.floats_ratio << ',' << r.seconds.mean << ','
        << r.seconds.half_width << ',' << r.seconds_ratio << '\n';
  }
}

void WriteResultsJson(const std::vector<ResultsRow>& rows, std::ostream& out) {
  nlohmann::json doc = nlohmann::json::array();
  // No run of the setting recorded it: null, not a mean of 0.
  auto ci = [](const MeanCi& m) {
    return m.n == 0 ? nlohmann::json(nullptr) : nlohmann::json{{"mean", m.mean}, {"ci95", m.half_width}, {"n", m.n}};
  };
  for (const ResultsRow& r : rows) {
    doc.push_back({{"model", r.model},
                   {"dataset", r.dataset},
                   {"scheme", ToString(r.scheme)},
                   {"policy", ToString(r.policy)},
                   {"level_low", r.level_low},
                   {"level_high", r.level_high},
                   {"setting", r.setting},
                   {"traces", r.traces},
                   {"incomplete", r.incomplete},
                   {"accuracy", ci(r.accuracy)},
                   {"floats", ci(r.floats)},
                   {"floats_ratio", r.floats_ratio},
                   {"seconds", ci(r.seconds)},
                   {"seconds_ratio", r.seconds_ratio}});
  }
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
