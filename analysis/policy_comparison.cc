#include "analysis/policy_comparison.h"

#include <algorithm>
#include <iomanip>

#include <nlohmann/json.hpp>

#include "common/number_format.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

int LevelChanges(const Schedule& s) {
  int changes = 0;
  for (int e = 1; e < s.num_epochs(); ++e) changes += s.levels[e] != s.levels[e - 1] ? 1 : 0;
  return changes;
}

PolicyRow MakeRow(const TraceView& view, std::string name, std::string label, Schedule schedule) {
  PolicyRow row;
  row.name = std::move(name);
  row.label = std::move(label);
  row.schedule = std::move(schedule);
  row.cost = CostOf(view, row.schedule);
  row.error = ErrorProxyOf(view, row.schedule);
  row.level_changes = LevelChanges(row.schedule);
  return row;
}

// A time ratio, "1.93x" (or the sign `times` gives); "—" where either side is missing.
std::string Ratio(std::optional<double> numerator, std::optional<double> denominator, const std::string& times = "x") {
  if (!numerator || !denominator || !(*denominator > 0)) return "—";
  return FormatPrintf("%.2f", *numerator / *denominator) + times;
}

std::optional<double> Speedup(const PolicyRow* against, const PolicyRow& row) {
  if (against == nullptr || !against->projected_s || !row.projected_s || !(*row.projected_s > 0)) return std::nullopt;
  return *against->projected_s / *row.projected_s;
}

// The fastest projected row of the other kind than `row`'s (compressed or
// whole-gradient); nullptr where none is.
const PolicyRow* FastestOfOtherKind(const PolicyComparison& c, const PolicyRow& row) {
  const std::vector<PolicyRow>& other = row.whole_gradient ? c.rows : c.whole_gradient;
  const PolicyRow* best = nullptr;
  for (const PolicyRow& r : other) {
    if (r.projected_s && (best == nullptr || *r.projected_s < *best->projected_s)) best = &r;
  }
  return best;
}

}  // namespace

const PolicyRow* PolicyComparison::dense() const {
  for (const PolicyRow& row : whole_gradient) {
    if (row.whole_gradient && DescriptionOf(*row.whole_gradient).dense_baseline) return &row;
  }
  return nullptr;
}

const PolicyRow* PolicyComparison::fastest() const {
  const PolicyRow* best = nullptr;
  for (const std::vector<PolicyRow>* list : {&whole_gradient, &rows}) {
    for (const PolicyRow& row : *list) {
      if (row.projected_s && (best == nullptr || *row.projected_s < *best->projected_s)) best = &row;
    }
  }
  return best;
}

namespace {

bool SameTraining(const RunInfo& a, const RunInfo& b, int a_epochs, int b_epochs) {
  return a.model == b.model && a.dataset == b.dataset && a.world_size == b.world_size && a.batch_size == b.batch_size &&
         a.train_samples == b.train_samples && a_epochs == b_epochs;
}

// Whether `run` ran `row`'s setting of comparison `c`.
bool RanSetting(const PolicyComparison& c, const PolicyRow& row, const RunInfo& run) {
  if (row.whole_gradient) return run.scheme == *row.whole_gradient;
  if (run.scheme != c.scheme) return false;
  const AccordionOptions& a = c.settings.accordion();
  const PolicyDescription& policy = DescriptionOf(run.policy);
  if (row.name == "static-low" || row.name == "static-high") {
    const double level = row.name == "static-low" ? a.level_low() : a.level_high();
    return policy.one_level() && run.level_low == level && run.level_high == level;
  }
  if (row.name != policy.name || run.level_low != a.level_low() || run.level_high != a.level_high()) return false;
  return run.interval == a.interval() && run.eta == a.eta();
}

}  // namespace

bool AnyRecordedAccuracy(const PolicyComparison& c) {
  for (const std::vector<PolicyRow>* list : {&c.rows, &c.whole_gradient}) {
    for (const PolicyRow& row : *list) {
      if (row.recorded_accuracy) return true;
    }
  }
  return false;
}

std::string RecordedAccuracyText(const PolicyRow& row) {
  if (!row.recorded_accuracy) return "—";
  std::string text = FormatPrintf("%.2f %%", *row.recorded_accuracy * 100);
  if (row.recorded_runs > 1) text += " (n " + std::to_string(row.recorded_runs) + ")";
  return text;
}

std::vector<bool> AddRecordedAccuracy(PolicyComparison& c, const TraceView& view,
                                      const std::vector<const TraceView*>& runs) {
  // One run once: the same trace given twice (the compared one among
  // --runs) is one seed, not two. A run_id names a run; older traces have
  // none. first[i]: the index of the run runs[i] repeats (itself if none).
  std::vector<size_t> first(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    first[i] = i;
    for (size_t j = 0; j < i; ++j) {
      const bool same_id = !runs[i]->run.run_id.empty() && runs[i]->run.run_id == runs[j]->run.run_id;
      if (runs[i] == runs[j] || same_id) {
        first[i] = first[j];
        break;
      }
    }
  }
  std::vector<bool> counted(runs.size(), false);
  for (std::vector<PolicyRow>* list : {&c.rows, &c.whole_gradient}) {
    for (PolicyRow& row : *list) {
      double sum = 0;
      int n = 0;
      for (size_t i = 0; i < runs.size(); ++i) {
        const TraceView& r = *runs[i];
        if (first[i] != i || r.epochs.empty() || !SameTraining(view.run, r.run, view.num_epochs(), r.num_epochs())) {
          continue;
        }
        if (!RanSetting(c, row, r.run) || !Recorded(r.epochs.back().test_acc)) continue;
        sum += r.epochs.back().test_acc;
        ++n;
        counted[i] = true;
      }
      row.recorded_runs = n;
      row.recorded_accuracy = n > 0 ? std::optional<double>(sum / n) : std::nullopt;
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) counted[i] = counted[first[i]];
  return counted;
}

std::string FastestSummary(const PolicyComparison& c, const std::string& times) {
  const PolicyRow* fastest = c.fastest();
  if (fastest == nullptr || c.whole_gradient.empty()) return {};
  const PolicyRow* other = FastestOfOtherKind(c, *fastest);
  const PolicyRow* dense = c.dense();
  if (other == nullptr && fastest != dense) other = dense;
  std::string text = fastest->label;
  if (other != nullptr) {
    text += ", " + Ratio(other->projected_s, fastest->projected_s, times) + " faster than " + other->label;
    // Within the prediction bands, the ratio is no ranking.
    if (fastest->projected_band && other->projected_band && fastest->projected_band->Overlaps(*other->projected_band)) {
      text += " - but their bands overlap (" + fastest->projected_band->Text() + " s against " +
              other->projected_band->Text() + " s): not distinguishable on this trace";
    }
  }
  return text;
}

std::vector<Policy> DefaultPolicies(Scheme scheme) {
  if (!DescriptionOf(scheme).has_levels()) return {};
  std::vector<Policy> out;
  for (const PolicyDescription& d : AllPolicies()) {
    if (d.critical_regimes) out.push_back(d.policy);
  }
  if (const auto baseline = BaselinePolicyFor(scheme)) out.push_back(*baseline);
  return out;
}

std::string PolicyLabel(Policy policy, Scheme scheme, double level_low, double level_high) {
  return std::string(DescriptionOf(policy).title) + " " + PolicyLevelsText(policy, scheme, level_low, level_high);
}

PolicyComparison ComparePolicies(const TraceView& view, Scheme scheme, const PolicySettings& settings,
                                 const std::vector<Policy>& policies) {
  if (!DescriptionOf(scheme).has_levels()) {
    throw InputError(std::string(ToString(scheme)) + " communication has no levels: no policy has anything to choose");
  }
  PolicyComparison c;
  c.scheme = scheme;
  c.settings = settings;
  const double low = settings.accordion().level_low(), high = settings.accordion().level_high();
  c.rows.push_back(MakeRow(view, "static-low", "static " + LevelName(scheme, low), StaticSchedule(view, scheme, low)));
  c.rows.push_back(
      MakeRow(view, "static-high", "static " + LevelName(scheme, high), StaticSchedule(view, scheme, high)));
  const bool asked = !policies.empty();
  for (Policy policy : asked ? policies : DefaultPolicies(scheme)) {
    if (DescriptionOf(policy).one_level()) continue;  // both static rows are there
    const std::string why = PolicyFitProblem(policy, scheme);
    if (!why.empty()) {
      if (asked) throw InputError(why);
      c.notes.push_back(why);
      continue;
    }
    const std::string missing = MissingSignal(view, policy);
    if (!missing.empty()) {
      if (asked) throw InputError(missing);
      c.notes.push_back(missing);
      continue;
    }
    c.rows.push_back(MakeRow(view, ToString(policy), PolicyLabel(policy, scheme, low, high),
                             DerivePolicySchedule(view, scheme, PolicySettings(settings).policy(policy))));
  }
  for (const PolicyRow& row : c.rows) {
    if (!row.error || !row.error->beyond_profile) continue;
    c.notes.push_back(
        "the error of levels above the profiled ones is interpolated to 0 where a layer travels whole "
        "(PowerSGD: a rank that no longer compresses it; TopK: 100 %), not measured");
    break;
  }
  if (c.rows.front().error == std::nullopt && InSet(DescriptionOf(scheme), SchemeSet::kCompressing)) {
    c.notes.push_back(view.run.scheme != scheme
                          ? std::string("no error proxy: the trace profiled ") + ToString(view.run.scheme) +
                                "'s errors, not " + ToString(scheme) + "'s"
                          : "no error proxy: the trace has no error profile (schema v4 records one at each check)");
  }
  return c;
}

void WritePolicyTable(const PolicyComparison& c, std::ostream& out) {
  const PolicyRow* base = c.rows.empty() ? nullptr : &c.baseline();
  const PolicyRow* dense = c.dense();
  const bool projected = c.fastest() != nullptr;
  // Without policies (a dense trace) nothing is against static low.
  out << std::left << std::setw(38) << "policy" << std::right << std::setw(14) << "floats/worker";
  if (base != nullptr) out << std::setw(10) << "vs low";
  out << std::setw(11) << "error" << std::setw(15) << "error (crit.)" << std::setw(9) << "changes";
  if (projected) out << std::setw(14) << "projected s" << std::setw(18) << "band s (90 %)";
  if (projected && base != nullptr) out << std::setw(10) << "speedup";
  if (projected && dense != nullptr) out << std::setw(10) << "vs dense";
  const bool accuracy = AnyRecordedAccuracy(c);
  if (accuracy) out << std::setw(16) << "accuracy (run)";
  out << '\n';
  auto write = [&](const PolicyRow& row) {
    out << std::left << std::setw(38) << row.label << std::right << std::setw(14)
        << FormatPrintf("%.4g", row.cost.total_floats);
    if (base != nullptr) {
      out << std::setw(10)
          << (row.cost.total_floats > 0 ? FormatPrintf("%.2fx", base->cost.total_floats / row.cost.total_floats)
                                        : "n/a");
    }
    out << std::setw(11) << (row.error ? FormatPrintf("%.4f", row.error->mean) : "—  ") << std::setw(15)
        << (row.error && row.error->critical_mean ? FormatPrintf("%.4f", *row.error->critical_mean) : "—  ")
        << std::setw(9) << row.level_changes;
    if (projected) {
      out << std::setw(14) << (row.projected_s ? FormatPrintf("%.4g", *row.projected_s) : "—  ") << std::setw(18)
          << (row.projected_band ? row.projected_band->Text() : "—  ");
    }
    if (projected && base != nullptr) {
      const std::optional<double> speedup = Speedup(base, row);
      out << std::setw(10) << (speedup ? FormatPrintf("%.2fx", *speedup) : "—");
    }
    if (projected && dense != nullptr) {
      const std::optional<double> vs_dense = Speedup(dense, row);
      out << std::setw(10) << (vs_dense ? FormatPrintf("%.2fx", *vs_dense) : "—");
    }
    if (accuracy) out << std::setw(16) << RecordedAccuracyText(row);
    out << '\n';
  };
  for (const PolicyRow& row : c.rows) write(row);
  for (const PolicyRow& row : c.whole_gradient) write(row);
  out << "\n(";
  if (base != nullptr) out << "vs low: static low's floats over the policy's - how many times less it sends; ";
  out << "error: mean relative compression error of the layers at the chosen levels, from the trace's error "
         "profile; crit.: over the epochs the run found critical; a proxy, not an accuracy";
  if (!c.whole_gradient.empty()) {
    out << "; dense, fp16 and bf16 send every gradient every step, the casts in 16 bits: floats count the wire's "
           "bytes / 4, so a cast's are half of dense's";
  }
  if (projected) {
    out << "; band: the range that held 90 % of the trace's recorded steps, carried through the model (every "
           "step at that end)";
  }
  if (projected && base != nullptr) out << "; speedup: static low's time over the row's";
  if (projected && dense != nullptr) out << "; vs dense: dense's time over the row's";
  if (accuracy) {
    out << "; accuracy (run): the final test accuracy recorded runs of the row's setting reached, their mean "
           "over n runs (seeds) where more than one";
  }
  out << ")\n";
  if (const std::string fastest = FastestSummary(c); !fastest.empty()) out << "fastest: " << fastest << '\n';
  for (const std::string& note : c.notes) out << "note: " << note << '\n';
}

void WritePolicyCsv(const PolicyComparison& c, std::ostream& out) {
  // scheme and speedup_vs_dense after the label: the columns from
  // floats_per_worker on keep their places counted from the end.
  out << "policy,label,scheme,speedup_vs_dense,recorded_accuracy,recorded_runs,floats_per_worker,"
         "saving_vs_static_low,error_proxy,critical_error_proxy,level_changes,projected_s,projected_low_s,projected_"
         "high_s\n";
  const PolicyRow* base = c.rows.empty() ? nullptr : &c.baseline();
  auto write = [&](const PolicyRow& row) {
    out << row.name << ",\"" << row.label << "\"," << ToString(row.whole_gradient.value_or(c.scheme)) << ','
        << std::setprecision(17);
    if (const std::optional<double> vs_dense = Speedup(c.dense(), row)) out << *vs_dense;
    out << ',';
    if (row.recorded_accuracy) out << *row.recorded_accuracy;
    out << ',' << row.recorded_runs << ',' << row.cost.total_floats << ',';
    if (base != nullptr && row.cost.total_floats > 0) out << base->cost.total_floats / row.cost.total_floats;
    out << ',';
    if (row.error) out << row.error->mean;
    out << ',';
    if (row.error && row.error->critical_mean) out << *row.error->critical_mean;
    out << ',' << row.level_changes << ',';
    if (row.projected_s) out << *row.projected_s;
    out << ',';
    if (row.projected_band) out << row.projected_band->low_s;
    out << ',';
    if (row.projected_band) out << row.projected_band->high_s;
    out << '\n';
  };
  for (const PolicyRow& row : c.rows) write(row);
  for (const PolicyRow& row : c.whole_gradient) write(row);
}

void WritePolicyJson(const PolicyComparison& c, std::ostream& out) {
  using nlohmann::json;
  json doc;
  doc["scheme"] = ToString(c.scheme);
  doc["eta"] = c.settings.accordion().eta();
  doc["interval"] = c.settings.accordion().interval();
  doc["level_low"] = c.settings.accordion().level_low();
  doc["level_high"] = c.settings.accordion().level_high();
  doc["msdr_factor"] = c.settings.msdr_factor();
  const PolicyRow* base = c.rows.empty() ? nullptr : &c.baseline();
  auto row_json = [&](const PolicyRow& row) {
    json r;
    r["policy"] = row.name;
    r["label"] = row.label;
    r["floats_per_worker"] = row.cost.total_floats;
    r["saving_vs_static_low"] = base != nullptr && row.cost.total_floats > 0
                                    ? json(base->cost.total_floats / row.cost.total_floats)
                                    : json(nullptr);
    r["error_proxy"] = row.error ? json(row.error->mean) : json(nullptr);
    r["critical_error_proxy"] = row.error && row.error->critical_mean ? json(*row.error->critical_mean) : json(nullptr);
    r["level_changes"] = row.level_changes;
    r["projected_s"] = row.projected_s ? json(*row.projected_s) : json(nullptr);
    r["projected_low_s"] = row.projected_band ? json(row.projected_band->low_s) : json(nullptr);
    r["projected_high_s"] = row.projected_band ? json(row.projected_band->high_s) : json(nullptr);
    const std::optional<double> vs_dense = Speedup(c.dense(), row);
    r["speedup_vs_dense"] = vs_dense ? json(*vs_dense) : json(nullptr);
    r["recorded_accuracy"] = row.recorded_accuracy ? json(*row.recorded_accuracy) : json(nullptr);
    r["recorded_runs"] = row.recorded_runs;
    json levels = json::array();
    for (int e = 0; e < row.schedule.num_epochs(); ++e) levels.push_back(row.schedule.levels[e]);
    r["levels"] = levels;
    return r;
  };
  json rows = json::array();
  for (const PolicyRow& row : c.rows) rows.push_back(row_json(row));
  doc["policies"] = rows;
  json whole = json::array();
  for (const PolicyRow& row : c.whole_gradient) {
    json r = row_json(row);
    const SchemeDescription& d = DescriptionOf(*row.whole_gradient);
    r["scheme"] = d.name;
    // The bound a cast's rounding keeps each value it sends within,
    // relative; dense sends float32 as computed (error 0).
    r["unit_roundoff"] = d.dense_baseline ? json(0.0) : json(UnitRoundoff(d.wire));
    whole.push_back(r);
  }
  doc["whole_gradient"] = whole;
  const PolicyRow* fastest = c.fastest();
  doc["fastest"] = fastest != nullptr ? json(fastest->name) : json(nullptr);
  doc["notes"] = c.notes;
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
