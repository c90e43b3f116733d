#include "analysis/results_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
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
  if (m.has_ci()) s += " ± " + Fixed(m.half_width * scale, digits);
  return s;
}

std::string RatioText(const std::optional<double>& ratio) { return ratio ? Fixed(*ratio, 2) + "×" : "—"; }

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

bool TrainingKey::operator<(const TrainingKey& o) const {
  return std::tie(model, dataset, workers, epochs, batch_size, lr_schedule) <
         std::tie(o.model, o.dataset, o.workers, o.epochs, o.batch_size, o.lr_schedule);
}

bool TrainingKey::operator==(const TrainingKey& o) const { return !(*this < o) && !(o < *this); }

TrainingKey TrainingKeyOf(const TraceView& view) {
  const RunInfo& r = view.run;
  TrainingKey k;
  k.model = r.model;
  k.dataset = r.dataset;
  k.workers = r.world_size;
  // The epochs it trained: a run cut short reached its accuracy earlier,
  // and is no seed of the runs that went on (its row says incomplete).
  k.epochs = view.num_epochs();
  k.batch_size = r.batch_size;
  for (const EpochRecord& e : view.epochs) k.lr_schedule.push_back(Recorded(e.schedule_lr) ? e.schedule_lr : e.lr);
  return k;
}

bool SettingKey::operator<(const SettingKey& o) const {
  return std::tie(training, scheme, policy, level_low, level_high, eta, interval) <
         std::tie(o.training, o.scheme, o.policy, o.level_low, o.level_high, o.eta, o.interval);
}

SettingKey SettingKeyOf(const TraceView& view) {
  const RunInfo& r = view.run;
  SettingKey k;
  k.training = TrainingKeyOf(view);
  k.scheme = r.scheme;
  k.policy = r.policy;
  k.level_low = r.level_low;
  k.level_high = r.level_high;
  if (!DescriptionOf(r.policy).one_level()) {
    k.eta = r.eta;
    k.interval = r.interval;
  }
  return k;
}

MeanCi MeanWithCi95(const std::vector<double>& values) {
  MeanCi m;
  m.n = static_cast<int>(values.size());
  if (m.n == 0) return m;
  for (double v : values) m.mean += v;
  m.mean /= m.n;
  if (!m.has_ci()) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  const double sd = std::sqrt(ss / (m.n - 1));
  const int df = m.n - 1;
  const double t = df <= 30 ? kT95[df - 1] : 1.96;
  m.half_width = t * sd / std::sqrt(static_cast<double>(m.n));
  return m;
}

namespace {

// The rows' ratios: against the first static row of the same training and
// scheme (the paper's 1x row), and against the baseline of the same
// training - the row holding `pinned` (a trace) where it is of that
// training, else dense.
void SetRatios(std::vector<ResultsRow>& rows, const std::vector<TrainingKey>& training, const std::string& pinned) {
  auto ratio = [](const MeanCi& base, const MeanCi& row) { return row.mean > 0 ? base.mean / row.mean : 0; };
  auto holds = [&](const ResultsRow& row) {
    return !pinned.empty() && std::find(row.traces.begin(), row.traces.end(), pinned) != row.traces.end();
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResultsRow* base = nullptr;
    const ResultsRow* dense = nullptr;
    const ResultsRow* pin = nullptr;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (!(training[j] == training[i])) continue;
      const ResultsRow& cand = rows[j];
      if (base == nullptr && cand.scheme == rows[i].scheme && DescriptionOf(cand.policy).one_level()) base = &cand;
      if (dense == nullptr && DescriptionOf(cand.scheme).dense_baseline) dense = &cand;
      if (holds(cand)) pin = &cand;
    }
    if (base != nullptr) {
      rows[i].floats_ratio = ratio(base->floats, rows[i].floats);
      rows[i].seconds_ratio = ratio(base->seconds, rows[i].seconds);
    }
    const ResultsRow* against = pin != nullptr ? pin : dense;
    if (against != nullptr) {
      rows[i].baseline = against->setting;
      rows[i].is_baseline = against == &rows[i];
      rows[i].floats_vs_baseline = ratio(against->floats, rows[i].floats);
      rows[i].seconds_vs_baseline = ratio(against->seconds, rows[i].seconds);
    }
  }
}

}  // namespace

std::vector<ResultsRow> BuildResultsTable(const std::vector<std::string>& trace_paths,
                                          const ResultsTableOptions& options) {
  if (trace_paths.empty()) throw InputError("no traces given");
  if (!options.baseline().empty() &&
      std::find(trace_paths.begin(), trace_paths.end(), options.baseline()) == trace_paths.end()) {
    throw InputError("the baseline " + options.baseline() + " is not one of the traces tabulated");
  }
  std::map<SettingKey, ResultsRow> groups;
  std::map<SettingKey, std::vector<double>> acc, floats, secs;
  for (const std::string& path : trace_paths) {
    const TraceView v = LoadTraceView(path);
    const RunInfo& r = v.run;
    const SettingKey key = SettingKeyOf(v);
    ResultsRow& row = groups[key];
    row.model = r.model;
    row.dataset = r.dataset;
    row.workers = key.training.workers;
    row.epochs = key.training.epochs;
    row.batch_size = key.training.batch_size;
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
    if (!v.epochs.empty() && Recorded(v.epochs.back().test_acc)) acc[key].push_back(v.epochs.back().test_acc);
    floats[key].push_back(f);
    secs[key].push_back(s);
  }
  std::vector<std::pair<SettingKey, ResultsRow>> keyed;
  for (auto& [key, row] : groups) {
    row.accuracy = MeanWithCi95(acc[key]);
    row.floats = MeanWithCi95(floats[key]);
    row.seconds = MeanWithCi95(secs[key]);
    keyed.emplace_back(key, row);
  }
  // Within a training and scheme: static rows by decreasing floats, then
  // Accordion, AdaQS and Smith et al.; the first static row is the 1x baseline.
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
    const ResultsRow& a = x.second;
    const ResultsRow& b = y.second;
    const auto block_a = std::tie(a.model, a.dataset, a.workers, a.epochs, a.batch_size);
    const auto block_b = std::tie(b.model, b.dataset, b.workers, b.epochs, b.batch_size);
    if (block_a != block_b) return block_a < block_b;
    if (!(x.first.training == y.first.training)) return x.first.training < y.first.training;
    if (a.scheme != b.scheme) return static_cast<int>(a.scheme) < static_cast<int>(b.scheme);
    if (a.policy != b.policy) return static_cast<int>(a.policy) < static_cast<int>(b.policy);
    return a.floats.mean > b.floats.mean;
  });
  std::vector<ResultsRow> rows;
  std::vector<TrainingKey> training;
  for (auto& [key, row] : keyed) {
    rows.push_back(std::move(row));
    training.push_back(key.training);
  }
  SetRatios(rows, training, options.baseline());
  return rows;
}

std::string BaselineHeader(const std::vector<ResultsRow>& rows) {
  std::string name;
  for (const ResultsRow& r : rows) {
    if (r.baseline.empty()) continue;
    if (!name.empty() && name != r.baseline) return "baseline";
    name = r.baseline;
  }
  return name.empty() ? "baseline" : name;
}

void WriteResultsMarkdown(const std::vector<ResultsRow>& rows, std::ostream& out) {
  bool any_dense = false;
  for (const ResultsRow& r : rows) any_dense = any_dense || r.floats_vs_baseline.has_value();
  const std::string vs = " vs " + BaselineHeader(rows) + " |";
  out << "| model | dataset | workers | epochs | scheme | setting | n | test accuracy (%) | floats sent (M) | (×) |"
      << (any_dense ? vs : "") << " time (s) | (×) |" << (any_dense ? vs : "") << "\n";
  out << "|---|---|---|---|---|---|---|---|---|---|" << (any_dense ? "---|" : "") << "---|---|"
      << (any_dense ? "---|" : "") << "\n";
  for (const ResultsRow& r : rows) {
    out << "| " << r.model << " | " << r.dataset << " | " << r.workers << " | " << r.epochs << " | "
        << ToString(r.scheme) << " | " << r.setting << (r.is_baseline ? " (baseline)" : "") << " | " << r.traces.size()
        << (r.incomplete ? " (" + std::to_string(r.incomplete) + " incomplete)" : "") << " | "
        << WithCi(r.accuracy, 100, 2) << AccuracyRuns(r) << " | " << WithCi(r.floats, 1e-6, 1) << " | "
        << RatioText(r.floats_ratio) << " |";
    if (any_dense) out << " " << RatioText(r.floats_vs_baseline) << " |";
    out << " " << WithCi(r.seconds, 1, 1) << " | " << RatioText(r.seconds_ratio) << " |";
    if (any_dense) out << " " << RatioText(r.seconds_vs_baseline) << " |";
    out << "\n";
  }
  out << "\nRuns are seeds of one row when model, dataset, workers, epochs, global batch, LR schedule, scheme, "
         "policy, levels (and a switching policy's eta and interval) agree; n is how many. Mean, and ± its 95 % "
         "confidence half-width (Student's t) from "
      << MeanCi::kMinRunsForCi
      << " runs on; floats are per worker. (×): the scheme's 1× row (its static setting that sends the most, same "
         "training) over this row's, — where the traces hold none"
      << (any_dense ? "; vs " + BaselineHeader(rows) +
                          ": the baseline row of the same training (the one pinned by --baseline, else dense) over "
                          "this row's"
                    : std::string())
      << ".\n";
}

void WriteResultsCsv(const std::vector<ResultsRow>& rows, std::ostream& out) {
  out << "model,dataset,workers,epochs,batch_size,scheme,policy,level_low,level_high,setting,runs,incomplete,"
         "accuracy_mean,accuracy_ci95,floats_mean,floats_ci95,floats_ratio,baseline,floats_vs_baseline,seconds_mean,"
         "seconds_ci95,seconds_ratio,seconds_vs_baseline\n";
  // A confidence half-width only from kMinRunsForCi runs on; empty below.
  auto ci = [](const MeanCi& m) { return m.has_ci() ? OrEmpty(m, m.half_width) : std::string(); };
  auto opt = [](const std::optional<double>& v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", v.value_or(0));
    return v ? std::string(buf) : std::string();
  };
  for (const ResultsRow& r : rows) {
    out << r.model << ',' << r.dataset << ',' << r.workers << ',' << r.epochs << ',' << r.batch_size << ','
        << ToString(r.scheme) << ',' << ToString(r.policy) << ',' << r.level_low << ',' << r.level_high << ",\""
        << r.setting << "\"," << r.traces.size() << ',' << r.incomplete << ',' << OrEmpty(r.accuracy, r.accuracy.mean)
        << ',' << ci(r.accuracy) << ',' << r.floats.mean << ',' << ci(r.floats) << ',' << opt(r.floats_ratio) << ','
        << "\"" << r.baseline << "\"," << opt(r.floats_vs_baseline) << ',' << r.seconds.mean << ',' << ci(r.seconds)
        << ',' << opt(r.seconds_ratio) << ',' << opt(r.seconds_vs_baseline) << '\n';
  }
}

void WriteResultsJson(const std::vector<ResultsRow>& rows, std::ostream& out) {
  nlohmann::json doc = nlohmann::json::array();
  // No run of the setting recorded it: null, not a mean of 0.
  auto ci = [](const MeanCi& m) {
    if (m.n == 0) return nlohmann::json(nullptr);
    return nlohmann::json{
        {"mean", m.mean}, {"ci95", m.has_ci() ? nlohmann::json(m.half_width) : nlohmann::json(nullptr)}, {"n", m.n}};
  };
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const ResultsRow& r : rows) {
    doc.push_back({{"model", r.model},
                   {"dataset", r.dataset},
                   {"workers", r.workers},
                   {"epochs", r.epochs},
                   {"batch_size", r.batch_size},
                   {"scheme", ToString(r.scheme)},
                   {"policy", ToString(r.policy)},
                   {"level_low", r.level_low},
                   {"level_high", r.level_high},
                   {"setting", r.setting},
                   {"traces", r.traces},
                   {"incomplete", r.incomplete},
                   {"accuracy", ci(r.accuracy)},
                   {"floats", ci(r.floats)},
                   {"floats_ratio", opt(r.floats_ratio)},
                   {"baseline", r.baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.baseline)},
                   {"is_baseline", r.is_baseline},
                   {"floats_vs_baseline", opt(r.floats_vs_baseline)},
                   {"seconds", ci(r.seconds)},
                   {"seconds_ratio", opt(r.seconds_ratio)},
                   {"seconds_vs_baseline", opt(r.seconds_vs_baseline)}});
  }
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
