#include "analysis/policy_comparison.h"

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

}  // namespace

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
  const PolicyRow& base = c.baseline();
  const bool projected = base.projected_s.has_value();
  out << std::left << std::setw(38) << "policy" << std::right << std::setw(14) << "floats/worker" << std::setw(10)
      << "vs low" << std::setw(11) << "error" << std::setw(15) << "error (crit.)" << std::setw(9) << "changes";
  if (projected) out << std::setw(14) << "projected s" << std::setw(10) << "speedup";
  out << '\n';
  for (const PolicyRow& row : c.rows) {
    out << std::left << std::setw(38) << row.label << std::right << std::setw(14)
        << FormatPrintf("%.4g", row.cost.total_floats) << std::setw(10)
        << (row.cost.total_floats > 0 ? FormatPrintf("%.2fx", base.cost.total_floats / row.cost.total_floats) : "n/a")
        << std::setw(11) << (row.error ? FormatPrintf("%.4f", row.error->mean) : "—  ") << std::setw(15)
        << (row.error && row.error->critical_mean ? FormatPrintf("%.4f", *row.error->critical_mean) : "—  ")
        << std::setw(9) << row.level_changes;
    if (projected) {
      out << std::setw(14) << (row.projected_s ? FormatPrintf("%.4g", *row.projected_s) : "—  ") << std::setw(10)
          << (row.projected_s && *row.projected_s > 0 ? FormatPrintf("%.2fx", *base.projected_s / *row.projected_s)
                                                      : "—");
    }
    out << '\n';
  }
  out << "\n(vs low: static low's floats over the policy's - how many times less it sends; error: mean relative "
         "compression error of the layers at the chosen levels, from the trace's error profile; crit.: over the "
         "epochs the run found critical; a proxy, not an accuracy)\n";
  for (const std::string& note : c.notes) out << "note: " << note << '\n';
}

void WritePolicyCsv(const PolicyComparison& c, std::ostream& out) {
  out << "policy,label,floats_per_worker,saving_vs_static_low,error_proxy,critical_error_proxy,level_changes,"
         "projected_s\n";
  for (const PolicyRow& row : c.rows) {
    out << row.name << ",\"" << row.label << "\"," << std::setprecision(17) << row.cost.total_floats << ','
        << (row.cost.total_floats > 0 ? c.baseline().cost.total_floats / row.cost.total_floats : 0) << ',';
    if (row.error) out << row.error->mean;
    out << ',';
    if (row.error && row.error->critical_mean) out << *row.error->critical_mean;
    out << ',' << row.level_changes << ',';
    if (row.projected_s) out << *row.projected_s;
    out << '\n';
  }
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
  json rows = json::array();
  for (const PolicyRow& row : c.rows) {
    json r;
    r["policy"] = row.name;
    r["label"] = row.label;
    r["floats_per_worker"] = row.cost.total_floats;
    r["saving_vs_static_low"] =
        row.cost.total_floats > 0 ? json(c.baseline().cost.total_floats / row.cost.total_floats) : json(nullptr);
    r["error_proxy"] = row.error ? json(row.error->mean) : json(nullptr);
    r["critical_error_proxy"] = row.error && row.error->critical_mean ? json(*row.error->critical_mean) : json(nullptr);
    r["level_changes"] = row.level_changes;
    r["projected_s"] = row.projected_s ? json(*row.projected_s) : json(nullptr);
    json levels = json::array();
    for (int e = 0; e < row.schedule.num_epochs(); ++e) levels.push_back(row.schedule.levels[e]);
    r["levels"] = levels;
    rows.push_back(r);
  }
  doc["policies"] = rows;
  doc["notes"] = c.notes;
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
