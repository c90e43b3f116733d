#include "simulator/policy_projection.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <stdexcept>

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

// `with_error`: whether the compared schedules have an error proxy (a
// compressing scheme's); beside a batch run's, which have none, dense's 0
// would fill a column nothing else is in.
PolicyRow WholeGradientRow(const TraceView& view, const ScheduleProjection& p, Scheme scheme, bool with_error,
                           bool critical_epochs) {
  PolicyRow row;
  row.name = p.name;
  row.label = p.label;
  row.schedule = StaticSchedule(view, scheme, 0);
  row.cost = CostOf(view, row.schedule);
  // The wire's bytes at the projected worker count, in floats: a cast's
  // are half of dense's.
  row.cost.total_floats = p.total.payload_bytes / 4;
  row.projected_s = p.total.time_s;
  row.projected_band = p.total.time_band();
  row.whole_gradient = scheme;
  if (with_error && DescriptionOf(scheme).dense_baseline) {
    // Dense sends the gradients as computed: no compression error at all.
    // A cast's rounding is not profiled, so its proxy stays empty.
    row.error = ErrorProxy();
    if (critical_epochs) row.error->critical_mean = 0;
  }
  return row;
}

}  // namespace

ProjectedPolicies ProjectPolicies(const ReplayInput& input, const ReplayOptions& options,
                                  const std::vector<Policy>& asked, WholeGradientRows whole_gradient) {
  const TraceView& view = input.view;
  const Scheme scheme = options.scheme().value_or(view.run.scheme);
  ProjectedPolicies out;
  const bool whole = whole_gradient == WholeGradientRows::kProject;
  if (whole && !DescriptionOf(scheme).has_levels()) {
    // Nothing for a policy to choose; the whole-gradient rows still compare.
    out.comparison.scheme = scheme;
    out.comparison.notes.push_back(std::string("the policies choose levels, and ") + ToString(scheme) +
                                   " has none: compare-policies ranks them on a " +
                                   JoinSchemeNames(SchemeSet::kWithLevels, ", ", " or ") + " trace");
    out.replay = ReplayEngine(ReplayOptions(options).policies({})).Run(input);
  } else {
    out.comparison = ComparePolicies(view, scheme, SettingsOf(view, options, scheme), asked);
    std::vector<Policy> derived;
    for (const PolicyRow& row : out.comparison.rows) {
      if (const auto p = ParsePolicy(row.name)) derived.push_back(*p);
    }
    out.replay = ReplayEngine(ReplayOptions(options).policies(derived)).Run(input);
    for (PolicyRow& row : out.comparison.rows) {
      const ScheduleProjection* p = out.replay.Named(row.name);
      if (p == nullptr) continue;
      row.projected_s = p->total.time_s;
      row.projected_band = p->total.time_band();
      // At the projected worker count (steps per epoch follow it).
      row.cost.total_floats = p->total.payload_bytes / 4;
    }
  }
  if (!whole) return out;
  const bool critical = !out.comparison.rows.empty() && out.comparison.rows.front().error &&
                        out.comparison.rows.front().error->critical_mean.has_value();
  std::vector<std::string> casts;
  for (Scheme s : WholeGradientSchemes()) {
    out.whole_gradient.push_back(ProjectWholeGradient(input, options, s));
    out.comparison.whole_gradient.push_back(
        WholeGradientRow(view, out.whole_gradient.back(), s,
                         InSet(DescriptionOf(out.comparison.scheme), SchemeSet::kCompressing), critical));
    const SchemeDescription& d = DescriptionOf(s);
    if (!d.dense_baseline) {
      casts.push_back(std::string(d.name) + " within " + FormatPrintf("%.2g", UnitRoundoff(d.wire)));
    }
  }
  if (!casts.empty()) {
    out.comparison.notes.push_back(
        "the 16-bit casts' rounding is not profiled (error —): each value a cast sends is within its unit roundoff "
        "of itself, relative (" +
        JoinWords(casts, ", ", " and ") +
        "), and the 16-bit sums round again at each step of the all-reduce; dense is exact (error 0)");
  }
  return out;
}

const char* ToString(AdviceKind kind) {
  switch (kind) {
    case AdviceKind::kAccordion:
      return "accordion";
    case AdviceKind::kStatic:
      return "static";
    case AdviceKind::kWholeGradient:
      return "whole-gradient";
  }
  return "";
}

std::string Advice::CompressedLabel() const {
  if (best) {
    return "Accordion eta " + FormatPrintf("%g", best->eta) + " " + LevelName(scheme, best->level_low) + " / " +
           LevelName(scheme, best->level_high);
  }
  return "static " + LevelName(scheme, reference);
}

const WholeGradientTime& Advice::FastestWholeGradient() const {
  const WholeGradientTime* fastest = &whole_gradient.front();
  for (const WholeGradientTime& w : whole_gradient) {
    if (w.projected_s < fastest->projected_s) fastest = &w;
  }
  return *fastest;
}

std::optional<Advice::Contest> Advice::AdvisedAgainstRunnerUp() const {
  if (whole_gradient.empty() && !best) return std::nullopt;
  auto whole_name = [](const WholeGradientTime& w) { return std::string(DescriptionOf(w.scheme).title); };
  if (kind == AdviceKind::kWholeGradient) {
    const WholeGradientTime& w = AdvisedWholeGradient();
    return Contest{whole_name(w), CompressedLabel(), w.band, compressed_band()};
  }
  if (best) return Contest{CompressedLabel(), "static " + LevelName(scheme, reference), *best->band, reference_band};
  const WholeGradientTime& w = FastestWholeGradient();
  return Contest{CompressedLabel(), whole_name(w), reference_band, w.band};
}

const WholeGradientTime& Advice::AdvisedWholeGradient() const {
  for (const WholeGradientTime& w : whole_gradient) {
    if (w.scheme == whole_gradient_scheme) return w;
  }
  throw std::logic_error("the advised whole-gradient exchange was not projected");
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
  a.reference_band = at_reference.static_low.total.time_band();
  a.platform = at_reference.platform;
  a.workers = at_reference.workers;
  for (AdvisorCandidate& c : a.candidates) {
    if (!c.admissible) continue;
    const ReplayResult r =
        ReplayEngine(ReplayOptions(replay).eta(c.eta).level_low(c.level_low).level_high(c.level_high)).Run(input);
    c.projected_s = r.accordion.total.time_s;
    c.band = r.accordion.total.time_band();
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

  // Not compressing at all is an answer too: every gradient every step,
  // dense or cast to 16 bits, on the same cluster.
  a.timing = at_reference.timing;
  a.bandwidth_gbps = GbpsFromBytesPerSecond(replay.platform().bandwidth_Bps);
  double fastest = a.compressed_s();
  for (Scheme s : WholeGradientSchemes()) {
    const ScheduleProjection p = ProjectWholeGradient(input, replay, s);
    a.whole_gradient.push_back({s, p.total.time_s, p.total.time_band(), p.total.payload_bytes});
    fastest = std::min(fastest, p.total.time_s);
  }
  // The most exact setting within the margin of the fastest: dense, the
  // casts (the widest range first), then compression.
  a.kind = a.best ? AdviceKind::kAccordion : AdviceKind::kStatic;
  for (const WholeGradientTime& w : a.whole_gradient) {
    if (w.projected_s <= fastest * (1 + kExactnessMargin)) {
      a.kind = AdviceKind::kWholeGradient;
      a.whole_gradient_scheme = w.scheme;
      break;
    }
  }
  if (advisor.break_even()) {
    ReplayOptions compressed = replay;
    if (a.best) {
      compressed.eta(a.best->eta).level_low(a.best->level_low).level_high(a.best->level_high);
    } else {
      compressed.level_low(a.reference).level_high(a.reference);
    }
    try {
      a.break_even = BreakEvenBandwidth(input, compressed, *advisor.break_even());
    } catch (const InputError& e) {
      a.break_even_problem = e.what();
    }
  }
  return a;
}

namespace {

const char* TimingText(TimingSource timing) {
  return timing == TimingSource::kAnalytic ? "the analytic alpha-beta model" : ToString(timing);
}

// "bf16 casts", "whole float32 gradients".
std::string WholeGradientText(Scheme scheme) {
  const SchemeDescription& d = DescriptionOf(scheme);
  return d.dense_baseline ? std::string("whole float32 gradients") : std::string(d.title) + "s";
}

std::string Seconds(double s) { return FormatPrintf("%.4g", s) + " s"; }

void WriteBreakEven(const Advice& a, std::ostream& out) {
  if (!a.break_even_problem.empty()) {
    out << "break-even: not searched: " << a.break_even_problem << '\n';
    return;
  }
  if (!a.break_even) return;
  const BreakEven& b = *a.break_even;
  const std::string range = FormatPrintf("%g", b.min_gbps) + " to " + FormatPrintf("%g", b.max_gbps) + " Gb/s";
  const std::string timed = std::string("timed by ") + TimingText(b.timing);
  if (!b.gbps) {
    out << "break-even: none - compression (" << a.CompressedLabel() << ") is "
        << (b.compression_below ? "faster" : "slower") << " than every whole-gradient exchange at every rate from "
        << range << " at " << b.workers << " workers (" << timed << ")\n";
    return;
  }
  const WholeGradientTime& whole = a.FastestWholeGradient();
  const bool compression_faster = a.compressed_s() < whole.projected_s;
  out << "break-even: compression pays " << (b.compression_below ? "below " : "above ") << FormatPrintf("%.3g", *b.gbps)
      << " Gb/s at " << b.workers << " workers (" << a.CompressedLabel() << " vs "
      << DescriptionOf(b.whole_scheme).title << ": " << Seconds(b.compressed_s) << " and " << Seconds(b.whole_s)
      << " there, " << timed << "); at " << FormatPrintf("%.3g", a.bandwidth_gbps) << " Gb/s "
      << (compression_faster ? a.CompressedLabel() : std::string(DescriptionOf(whole.scheme).title)) << " is "
      << FormatPrintf("%.2fx",
                      compression_faster ? whole.projected_s / a.compressed_s() : a.compressed_s() / whole.projected_s)
      << " faster\n";
}

}  // namespace

void WriteAdviceTable(const Advice& a, std::ostream& out) {
  out << "Level advice for " << ToString(a.scheme) << " on " << a.platform << " (" << a.workers << " workers)\n"
      << "reference: static " << LevelName(a.scheme, a.reference) << ", " << FormatPrintf("%.4g", a.reference_s)
      << " s projected, error " << FormatPrintf("%.4f", a.reference_critical_error) << " in the run's "
      << a.critical_epochs << " critical epochs; admissible: at most "
      << FormatPrintf("%.4f", a.reference_critical_error * (1 + a.tolerance)) << " there (tolerance "
      << FormatPrintf("%.0f", a.tolerance * 100) << " %)\n\n";
  out << std::setw(6) << "eta" << std::setw(12) << "low" << std::setw(12) << "high" << std::setw(14) << "floats/worker"
      << std::setw(11) << "error" << std::setw(15) << "error (crit.)" << std::setw(13) << "projected s" << std::setw(10)
      << "speedup" << std::setw(18) << "band s (90 %)"
      << "\n";
  for (const AdvisorCandidate& c : a.candidates) {
    out << std::setw(6) << FormatPrintf("%.3g", c.eta) << std::setw(12) << LevelName(a.scheme, c.level_low)
        << std::setw(12) << LevelName(a.scheme, c.level_high) << std::setw(14) << FormatPrintf("%.4g", c.floats)
        << std::setw(11) << FormatPrintf("%.4f", c.error) << std::setw(15) << FormatPrintf("%.4f", c.critical_error)
        << std::setw(13) << (c.projected_s ? FormatPrintf("%.4g", *c.projected_s) : "too lossy") << std::setw(10)
        << (c.projected_s ? FormatPrintf("%.2fx", a.reference_s / *c.projected_s) : "") << std::setw(18)
        << (c.band ? c.band->Text() : "") << "\n";
  }
  out << "\n";
  if (!a.whole_gradient.empty()) {
    out << "every gradient every step:";
    for (size_t i = 0; i < a.whole_gradient.size(); ++i) {
      const WholeGradientTime& w = a.whole_gradient[i];
      // No floats here: the candidates' are counted at the trace's workers.
      out << (i == 0 ? " " : ", ") << DescriptionOf(w.scheme).title << " " << Seconds(w.projected_s);
    }
    out << " projected\n";
  }
  const std::string fastest_whole =
      a.whole_gradient.empty() ? std::string() : DescriptionOf(a.FastestWholeGradient().scheme).title;
  const std::string vs_whole = a.whole_gradient.empty()
                                   ? std::string()
                                   : FormatPrintf("%.2fx", a.FastestWholeGradient().projected_s / a.compressed_s()) +
                                         " faster than " + fastest_whole + ", the fastest whole-gradient exchange";
  if (a.kind == AdviceKind::kWholeGradient) {
    const SchemeDescription& d = DescriptionOf(a.whole_gradient_scheme);
    const double advised_s = a.AdvisedWholeGradient().projected_s;
    const double advised_bytes = a.AdvisedWholeGradient().payload_bytes;
    out << "advice: don't compress - send " << WholeGradientText(a.whole_gradient_scheme) << " (--scheme " << d.name
        << "): static " << LevelName(a.scheme, a.reference) << "'s " << Seconds(a.reference_s) << " -> "
        << Seconds(advised_s) << " projected, " << FormatPrintf("%.2fx", a.compressed_s() / advised_s)
        << " faster than the best compressed setting (" << a.CompressedLabel() << ")\n";
    // Another cast of the same bytes: say what choosing this one gave up.
    for (const WholeGradientTime& w : a.whole_gradient) {
      const SchemeDescription& other = DescriptionOf(w.scheme);
      if (w.scheme == a.whole_gradient_scheme || other.dense_baseline || d.dense_baseline ||
          w.payload_bytes != advised_bytes) {
        continue;
      }
      out << "(" << other.name << " sends the same bytes with finer rounding - unit roundoff "
          << FormatPrintf("%.2g", UnitRoundoff(other.wire)) << " against " << FormatPrintf("%.2g", UnitRoundoff(d.wire))
          << " - but a narrower range: " << ExponentBits(other.wire) << " exponent bits against "
          << ExponentBits(d.wire) << ", float32's; " << d.name << " is PyTorch's " << d.name << "_compress_hook)\n";
    }
  } else if (a.best) {
    out << "advice: --policy accordion --eta " << FormatPrintf("%g", a.best->eta) << " --low "
        << FormatPrintf("%g", a.best->level_low) << " --high " << FormatPrintf("%g", a.best->level_high) << " ("
        << FormatPrintf("%.2fx", a.reference_s / *a.best->projected_s) << " faster than static "
        << LevelName(a.scheme, a.reference) << " projected" << (vs_whole.empty() ? "" : ", " + vs_whole) << ")\n";
  } else {
    if (!a.candidates.empty() && a.candidates.front().admissible) {
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
    if (!vs_whole.empty()) out << "(static " << LevelName(a.scheme, a.reference) << " is " << vs_whole << ")\n";
  }
  if (const auto contest = a.AdvisedAgainstRunnerUp()) {
    out << "bands: " << contest->advised << " " << contest->advised_band.Text() << " s, " << contest->runner_up << " "
        << contest->runner_up_band.Text() << " s (90 % of the recorded steps, through the model): "
        << (contest->distinguishable() ? "apart" : "they overlap - not distinguishable on this trace") << "\n";
  }
  WriteBreakEven(a, out);
  out << "This is a projection from one run's gradients and error profile, not an accuracy guarantee: "
         "check the advice with a real run (docs/policies.md).\n";
}

nlohmann::json AdviceJson(const Advice& a) {
  using nlohmann::json;
  json j;
  j["scheme"] = ToString(a.scheme);
  j["reference_level"] = a.reference;
  j["reference_projected_s"] = a.reference_s;
  j["reference_projected_low_s"] = a.reference_band.low_s;
  j["reference_projected_high_s"] = a.reference_band.high_s;
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
    r["projected_low_s"] = c.band ? json(c.band->low_s) : json(nullptr);
    r["projected_high_s"] = c.band ? json(c.band->high_s) : json(nullptr);
    return r;
  };
  json rows = json::array();
  for (const AdvisorCandidate& c : a.candidates) rows.push_back(row(c));
  j["candidates"] = rows;
  json whole = json::array();
  for (const WholeGradientTime& w : a.whole_gradient) {
    const SchemeDescription& d = DescriptionOf(w.scheme);
    whole.push_back({{"scheme", d.name},
                     {"label", d.title},
                     {"projected_s", w.projected_s},
                     {"projected_low_s", w.band.low_s},
                     {"projected_high_s", w.band.high_s},
                     {"payload_bytes", w.payload_bytes},
                     {"unit_roundoff", d.dense_baseline ? 0.0 : UnitRoundoff(d.wire)}});
  }
  j["whole_gradient"] = whole;
  j["best_compressed"] = {{"label", a.CompressedLabel()}, {"projected_s", a.compressed_s()}};
  // The advice: the candidate's own keys where it is one (as before), and
  // what it is in every case.
  json advice = a.kind == AdviceKind::kAccordion ? row(*a.best) : json::object();
  advice["kind"] = ToString(a.kind);
  if (a.kind == AdviceKind::kWholeGradient) {
    advice["scheme"] = ToString(a.whole_gradient_scheme);
    advice["projected_s"] = a.AdvisedWholeGradient().projected_s;
    advice["speedup_vs_best_compressed"] = a.compressed_s() / a.AdvisedWholeGradient().projected_s;
  } else {
    advice["scheme"] = ToString(a.scheme);
    if (a.kind == AdviceKind::kStatic) {
      advice["level"] = a.reference;
      advice["projected_s"] = a.reference_s;
    }
    if (!a.whole_gradient.empty()) {
      advice["speedup_vs_whole_gradient"] = a.FastestWholeGradient().projected_s / a.compressed_s();
    }
  }
  advice["speedup_vs_reference"] = a.reference_s / advice["projected_s"].get<double>();
  if (const auto contest = a.AdvisedAgainstRunnerUp()) {
    advice["runner_up"] = contest->runner_up;
    advice["projected_low_s"] = contest->advised_band.low_s;
    advice["projected_high_s"] = contest->advised_band.high_s;
    advice["runner_up_low_s"] = contest->runner_up_band.low_s;
    advice["runner_up_high_s"] = contest->runner_up_band.high_s;
    advice["distinguishable"] = contest->distinguishable();
  }
  j["advice"] = advice;
  json break_even = nullptr;
  if (a.break_even) {
    const BreakEven& b = *a.break_even;
    break_even = {{"gbps", b.gbps ? json(*b.gbps) : json(nullptr)},
                  {"compression_below", b.compression_below},
                  {"compressed", a.CompressedLabel()},
                  {"min_gbps", b.min_gbps},
                  {"max_gbps", b.max_gbps},
                  {"workers", b.workers},
                  {"timing", ToString(b.timing)}};
    if (b.gbps) {
      break_even["whole_gradient"] = ToString(b.whole_scheme);
      break_even["compressed_s"] = b.compressed_s;
      break_even["whole_gradient_s"] = b.whole_s;
    }
  } else if (!a.break_even_problem.empty()) {
    break_even = {{"problem", a.break_even_problem}};
  }
  j["break_even"] = break_even;
  j["break_even_gbps"] = a.break_even && a.break_even->gbps ? json(*a.break_even->gbps) : json(nullptr);
  j["bandwidth_gbps"] = a.bandwidth_gbps;
  j["timing"] = ToString(a.timing);
  j["note"] = "a projection from one run's gradients and error profile, not an accuracy guarantee";
  return j;
}

}  // namespace accordion::sim
