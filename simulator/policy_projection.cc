#include "simulator/policy_projection.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>

#include "common/number_format.h"
#include "analysis/error_proxy.h"
#include "analysis/schedule_report.h"
#include "common/errors.h"
#include "traces/scheme_description.h"

namespace accordion::sim {

namespace {

// The scheme and settings `options` ask of `view` (the engine's own
// resolution: flags over the trace's run row).
PolicySettings SettingsOf(const TraceView& view, const ReplayOptions& options, Scheme scheme) {
  const auto [low, high] = ResolveLevels(view.run, scheme, options.level_low(), options.level_high());
  return PolicySettings()
      .accordion(AccordionOptions()
                     .eta(options.eta().value_or(view.run.eta))
                     .interval(options.interval().value_or(view.run.interval))
                     .level_low(low)
                     .level_high(high))
      .msdr_factor(options.msdr_factor().value_or(view.run.msdr_factor));
}

const ScheduleProjection* ProjectionNamed(const ReplayResult& r, const std::string& name) {
  for (const ScheduleProjection* p : {&r.static_low, &r.static_high, &r.accordion}) {
    if (p->name == name) return p;
  }
  for (const ScheduleProjection& p : r.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

ProjectedPolicies ProjectPolicies(const ReplayInput& input, const ReplayOptions& options,
                                  const std::vector<Policy>& asked) {
  const TraceView& view = input.view;
  const Scheme scheme = options.scheme().value_or(view.run.scheme);
  ProjectedPolicies out;
  out.comparison = ComparePolicies(view, scheme, SettingsOf(view, options, scheme), asked);
  std::vector<Policy> derived;
  for (const PolicyRow& row : out.comparison.rows) {
    if (const auto p = ParsePolicy(row.name)) derived.push_back(*p);
  }
  out.replay = ReplayEngine(ReplayOptions(options).policies(derived)).Run(input);
  for (PolicyRow& row : out.comparison.rows) {
    const ScheduleProjection* p = ProjectionNamed(out.replay, row.name);
    if (p == nullptr) continue;
    row.projected_s = p->total.time_s;
    // At the projected worker count (steps per epoch follow it).
    row.cost.total_floats = p->total.payload_bytes / 4;
  }
  return out;
}

Advice AdviseLevels(const ReplayInput& input, const ReplayOptions& options, const AdvisorOptions& advisor) {
  const TraceView& view = input.view;
  Advice a;
  a.scheme = options.scheme().value_or(view.run.scheme);
  if (!InSet(DescriptionOf(a.scheme), SchemeSet::kCompressing)) {
    throw InputError(std::string("advise weighs compression error against time: the ") + ToString(a.scheme) +
                     " scheme has no compression error (advise a " +
                     JoinSchemeNames(SchemeSet::kCompressing, ", ", " or ") + " trace)");
  }
  if (view.error_profile.empty() || view.run.scheme != a.scheme) {
    throw InputError("advise reads the trace's per-layer error profile (error_profile, trace schema v4) of the " +
                     std::string(ToString(a.scheme)) +
                     " scheme, and this trace has none: record a run of that scheme with this toolkit");
  }
  if (advisor.etas().empty() || advisor.etas().size() > kMaxAdvisorEtas) {
    throw InputError("--etas takes 1 to " + std::to_string(kMaxAdvisorEtas) + " thresholds, got " +
                     std::to_string(advisor.etas().size()));
  }
  for (double eta : advisor.etas()) {
    if (!(eta > 0) || !std::isfinite(eta))
      throw InputError("--etas: each threshold is a number above 0, got " + FormatNumber(eta));
  }
  if (!(advisor.tolerance() >= 0) || advisor.tolerance() > 10) {
    throw InputError("--tolerance must be between 0 and 10 (a fraction: 0.1 allows 10 % more error)");
  }
  const PolicySettings base = SettingsOf(view, options, a.scheme);
  a.reference = advisor.reference().value_or(base.accordion().level_low());
  const std::string problem = LevelProblem(a.scheme, a.reference);
  if (!problem.empty()) throw InputError("--reference " + problem);
  a.tolerance = advisor.tolerance();
  std::set<double> levels;
  for (const ErrorProfileRecord& r : view.error_profile) levels.insert(r.level);

  const Schedule reference = StaticSchedule(view, a.scheme, a.reference);
  const std::optional<ErrorProxy> reference_error = ErrorProxyOf(view, reference);
  if (!reference_error || !reference_error->critical_mean) {
    throw InputError("advise needs critical epochs to hold the reference's error to: the run found none");
  }
  a.reference_critical_error = *reference_error->critical_mean;
  a.critical_epochs = reference_error->critical_epochs;
  const double limit = a.reference_critical_error * (1 + a.tolerance) + 1e-12;

  for (double eta : advisor.etas()) {
    for (double low : levels) {
      for (double high : levels) {
        if (high >= low) continue;  // both schemes: a smaller level compresses more
        AdvisorCandidate c;
        c.eta = eta;
        c.level_low = low;
        c.level_high = high;
        const Schedule s = DeriveAccordionSchedule(
            view, a.scheme, AccordionOptions(base.accordion()).eta(eta).level_low(low).level_high(high));
        c.floats = CostOf(view, s).total_floats;
        const std::optional<ErrorProxy> e = ErrorProxyOf(view, s);
        c.error = e ? e->mean : 0;
        c.critical_error = e && e->critical_mean ? *e->critical_mean : 0;
        c.admissible = c.critical_error <= limit;
        a.candidates.push_back(c);
      }
    }
  }
  // Only the admissible ones are projected: the search's cost is theirs.
  ReplayOptions replay = options;
  replay.policies({});
  const ReplayResult at_reference =
      ReplayEngine(ReplayOptions(replay).level_low(a.reference).level_high(a.reference)).Run(input);
  a.reference_s = at_reference.static_low.total.time_s;
  a.platform = at_reference.platform;
  a.workers = at_reference.workers;
  for (AdvisorCandidate& c : a.candidates) {
    if (!c.admissible) continue;
    const ReplayResult r =
        ReplayEngine(ReplayOptions(replay).eta(c.eta).level_low(c.level_low).level_high(c.level_high)).Run(input);
    c.projected_s = r.accordion.total.time_s;
  }
  std::stable_sort(a.candidates.begin(), a.candidates.end(), [](const AdvisorCandidate& x, const AdvisorCandidate& y) {
    if (x.admissible != y.admissible) return x.admissible;
    if (x.admissible) return *x.projected_s < *y.projected_s;
    return x.critical_error < y.critical_error;
  });
  // Advice is a setting that saves time: one projected no faster than the
  // reference is no reason to leave it.
  if (!a.candidates.empty() && a.candidates.front().admissible && *a.candidates.front().projected_s < a.reference_s) {
    a.best = a.candidates.front();
  }
  return a;
}

void WriteAdviceTable(const Advice& a, std::ostream& out) {
  out << "Level advice for " << ToString(a.scheme) << " on " << a.platform << " (" << a.workers << " workers)\n"
      << "reference: static " << LevelName(a.scheme, a.reference) << ", " << FormatPrintf("%.4g", a.reference_s)
      << " s projected, error " << FormatPrintf("%.4f", a.reference_critical_error) << " in the run's "
      << a.critical_epochs << " critical epochs; admissible: at most "
      << FormatPrintf("%.4f", a.reference_critical_error * (1 + a.tolerance)) << " there (tolerance "
      << FormatPrintf("%.0f", a.tolerance * 100) << " %)\n\n";
  out << std::setw(6) << "eta" << std::setw(12) << "low" << std::setw(12) << "high" << std::setw(14) << "floats/worker"
      << std::setw(11) << "error" << std::setw(15) << "error (crit.)" << std::setw(13) << "projected s" << std::setw(10)
      << "speedup"
      << "\n";
  for (const AdvisorCandidate& c : a.candidates) {
    out << std::setw(6) << FormatPrintf("%.3g", c.eta) << std::setw(12) << LevelName(a.scheme, c.level_low)
        << std::setw(12) << LevelName(a.scheme, c.level_high) << std::setw(14) << FormatPrintf("%.4g", c.floats)
        << std::setw(11) << FormatPrintf("%.4f", c.error) << std::setw(15) << FormatPrintf("%.4f", c.critical_error)
        << std::setw(13) << (c.projected_s ? FormatPrintf("%.4g", *c.projected_s) : "too lossy") << std::setw(10)
        << (c.projected_s ? FormatPrintf("%.2fx", a.reference_s / *c.projected_s) : "") << "\n";
  }
  out << "\n";
  if (a.best) {
    out << "advice: --policy accordion --eta " << FormatPrintf("%g", a.best->eta) << " --low "
        << FormatPrintf("%g", a.best->level_low) << " --high " << FormatPrintf("%g", a.best->level_high) << " ("
        << FormatPrintf("%.2fx", a.reference_s / *a.best->projected_s) << " faster than static "
        << LevelName(a.scheme, a.reference) << " projected)\n";
  } else if (!a.candidates.empty() && a.candidates.front().admissible) {
    out << "advice: stay at static " << LevelName(a.scheme, a.reference)
        << ": no pair that keeps the critical epochs' error within the tolerance is projected faster (the fastest, "
        << "eta " << FormatPrintf("%g", a.candidates.front().eta) << " "
        << LevelName(a.scheme, a.candidates.front().level_low) << " / "
        << LevelName(a.scheme, a.candidates.front().level_high) << ", takes "
        << FormatPrintf("%.2fx", *a.candidates.front().projected_s / a.reference_s) << " its time)\n";
  } else {
    out << "advice: none of the pairs keeps the critical epochs' error within the tolerance; stay at static "
        << LevelName(a.scheme, a.reference) << "\n";
  }
  out << "This is a projection from one run's gradients and error profile, not an accuracy guarantee: "
         "check the advice with a real run (docs/policies.md).\n";
}

nlohmann::json AdviceJson(const Advice& a) {
  using nlohmann::json;
  json j;
  j["scheme"] = ToString(a.scheme);
  j["reference_level"] = a.reference;
  j["reference_projected_s"] = a.reference_s;
  j["reference_critical_error"] = a.reference_critical_error;
  j["tolerance"] = a.tolerance;
  j["critical_epochs"] = a.critical_epochs;
  j["platform"] = a.platform;
  j["workers"] = a.workers;
  auto row = [](const AdvisorCandidate& c) {
    json r;
    r["eta"] = c.eta;
    r["level_low"] = c.level_low;
    r["level_high"] = c.level_high;
    r["floats_per_worker"] = c.floats;
    r["error_proxy"] = c.error;
    r["critical_error_proxy"] = c.critical_error;
    r["admissible"] = c.admissible;
    r["projected_s"] = c.projected_s ? json(*c.projected_s) : json(nullptr);
    return r;
  };
  json rows = json::array();
  for (const AdvisorCandidate& c : a.candidates) rows.push_back(row(c));
  j["candidates"] = rows;
  j["advice"] = a.best ? row(*a.best) : json(nullptr);
  j["note"] = "a projection from one run's gradients and error profile, not an accuracy guarantee";
  return j;
}

}  // namespace accordion::sim
