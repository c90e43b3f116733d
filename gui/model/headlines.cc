#include "gui/model/headlines.h"

#include <algorithm>
#include <cmath>

#include "common/number_format.h"

namespace accordion::gui {

namespace {

bool Positive(double v) { return v > 0 && std::isfinite(v); }

std::string Ratio(double r) { return FormatPrintf("%.2f", r) + "×"; }
std::string Bandwidth(double gbps) { return FormatPrintf("%.3g", gbps); }
std::string Percent(double fraction) { return FormatPrintf("%.0f", fraction * 100); }
std::string Tolerance() { return "within " + FormatPrintf("%g", kSameTimeTolerance * 100) + " %"; }

// "12–40", or "12" where both ends print the same.
std::string Span(const std::string& lo, const std::string& hi) { return lo == hi ? lo : lo + "–" + hi; }

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// What Accordion does at one bandwidth, against dense.
enum class Verdict { kSaves, kSavesLittle, kSame, kSlower };

Verdict Judge(const SweepPointResult& p, double worthwhile) {
  const double rel = p.accordion_s / p.dense_s;  // Accordion's share of dense's time
  if (std::fabs(rel - 1) <= kSameTimeTolerance) return Verdict::kSame;
  if (rel > 1) return Verdict::kSlower;
  return 1 - rel >= worthwhile ? Verdict::kSaves : Verdict::kSavesLittle;
}

bool Saves(Verdict v) { return v == Verdict::kSaves || v == Verdict::kSavesLittle; }

// Points that share a verdict: a run of neighbouring bandwidths, or (in a
// summary) all the points with that verdict.
struct Group {
  Verdict verdict;
  std::vector<SweepPointResult> points;
};

// What the group's points have in common, without where: "saves 12–40 % of
// dense's time", "less than 5 %" (after another saving), "is slower than
// dense (1.20–1.72× its time)".
std::string Claim(const Group& g, double worthwhile, bool after_saving, bool said_dense_time) {
  double lo = 1e300, hi = -1e300;
  for (const SweepPointResult& p : g.points) {
    const double v = g.verdict == Verdict::kSlower ? p.accordion_s / p.dense_s : 1 - p.accordion_s / p.dense_s;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const std::string verb = after_saving ? "" : "saves ";
  const std::string of_dense = said_dense_time ? "" : " of dense's time";
  switch (g.verdict) {
    case Verdict::kSaves:
      return verb + Span(Percent(lo), Percent(hi)) + " %" + of_dense;
    case Verdict::kSavesLittle:
      return verb + "less than " + Percent(worthwhile) + " %" + of_dense;
    case Verdict::kSame:
      return "is as fast as dense (" + Tolerance() + ")";
    case Verdict::kSlower:
      return "is slower than dense (" + Span(FormatPrintf("%.2f", lo), FormatPrintf("%.2f", hi)) + "× its time)";
  }
  return {};
}

std::string Where(const std::vector<SweepPointResult>& points) {
  if (points.size() == 1) return "at " + Bandwidth(points.front().bandwidth_gbps) + " Gb/s";
  return "from " + Bandwidth(points.front().bandwidth_gbps) + " to " + Bandwidth(points.back().bandwidth_gbps) +
         " Gb/s";
}

}  // namespace

std::string CompareTimes(double accordion_s, double other_s, const std::string& other) {
  if (!Positive(accordion_s) || !Positive(other_s)) return {};
  const double rel = accordion_s / other_s;
  const std::string than = other.empty() ? "" : " than " + other;
  if (std::fabs(rel - 1) <= kSameTimeTolerance) {
    return (other.empty() ? "as fast" : "as fast as " + other) + " (" + Tolerance() + ")";
  }
  if (rel < 1) return Ratio(1 / rel) + " faster" + than;
  return Ratio(rel) + " slower" + than;
}

std::string ProjectionHeadline(double accordion_s, double dense_s, double static_low_s, double static_high_s) {
  std::vector<std::string> parts;
  for (const std::string& s :
       {CompareTimes(accordion_s, dense_s, "dense"), CompareTimes(accordion_s, static_low_s, "static low"),
        CompareTimes(accordion_s, static_high_s, "static high")}) {
    if (!s.empty()) parts.push_back(s);
  }
  return parts.empty() ? std::string() : "Accordion: " + JoinAnd(parts);
}

std::string SweepHeadline(const std::vector<SweepPointResult>& sweep, double worthwhile) {
  std::vector<SweepPointResult> points;
  for (const SweepPointResult& p : sweep) {
    if (Positive(p.accordion_s) && Positive(p.dense_s)) points.push_back(p);
  }
  if (points.empty()) return {};

  std::vector<Group> runs;
  for (const SweepPointResult& p : points) {
    const Verdict v = Judge(p, worthwhile);
    if (runs.empty() || runs.back().verdict != v) runs.push_back({v, {}});
    runs.back().points.push_back(p);
  }

  if (runs.size() == 1) {
    const Group& g = runs.front();
    const std::string where = points.size() == 1 ? Where(points) : "at every bandwidth " + Where(points);
    if (g.verdict == Verdict::kSlower) {
      // "is slower than dense at every bandwidth … (1.20–1.72× its time)".
      std::string claim = Claim(g, worthwhile, false, false);
      const size_t paren = claim.find(" (");
      return "Accordion " + claim.substr(0, paren) + " " + where + claim.substr(paren);
    }
    return "Accordion " + Claim(g, worthwhile, false, false) + " " + where;
  }

  std::vector<std::string> parts;
  if (runs.size() <= 3) {
    bool said_dense_time = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      const bool after_saving = i > 0 && Saves(runs[i - 1].verdict) && Saves(runs[i].verdict);
      parts.push_back(Claim(runs[i], worthwhile, after_saving, said_dense_time) + " " + Where(runs[i].points));
      said_dense_time = said_dense_time || Saves(runs[i].verdict);
    }
    return "Accordion " + JoinAnd(parts);
  }

  // Too many changes to list in order: how many bandwidths have each verdict.
  std::vector<Group> by_verdict;
  for (Verdict v : {Verdict::kSaves, Verdict::kSavesLittle, Verdict::kSame, Verdict::kSlower}) {
    Group g{v, {}};
    for (const SweepPointResult& p : points) {
      if (Judge(p, worthwhile) == v) g.points.push_back(p);
    }
    if (!g.points.empty()) by_verdict.push_back(g);
  }
  bool said_dense_time = false;
  for (size_t i = 0; i < by_verdict.size(); ++i) {
    const bool after_saving = i > 0 && Saves(by_verdict[i - 1].verdict) && Saves(by_verdict[i].verdict);
    parts.push_back(Claim(by_verdict[i], worthwhile, after_saving, said_dense_time) + " at " +
                    std::to_string(by_verdict[i].points.size()));
    said_dense_time = said_dense_time || Saves(by_verdict[i].verdict);
  }
  return "Of the " + std::to_string(points.size()) + " bandwidths swept " + Where(points) + ", Accordion " +
         JoinAnd(parts);
}

}  // namespace accordion::gui

namespace accordion::gui {

namespace {

// |fraction| as a percentage that never rounds to a claim the number does
// not make: "41", "0.4", "99.6" (not "100"), "less than 0.1".
std::string SavedPercent(double fraction) {
  const double a = std::fabs(fraction) * 100;
  if (a < 0.05) return "less than 0.1";
  if (a < 1) return FormatPrintf("%.1f", a);
  const std::string whole = FormatPrintf("%.0f", a);
  return whole == "100" && a < 100 ? FormatPrintf("%.1f", std::min(a, 99.9)) : whole;
}

std::string Setting(const SweepCell& c) {
  return "η " + FormatPrintf("%g", c.eta) + ", interval " + std::to_string(c.interval);
}

// What a cell's saving `v` (fraction of static low's) says: "saves 41 % of
// static low's floats", "sends 3 % more floats than static low", "takes as
// long as static low (within 0.5 %)"; `brief` leaves out what the
// percentage is of ("saves 41 %").
std::string Effect(double v, SweepMetric metric, bool brief) {
  const bool time = metric == SweepMetric::kTime;
  const std::string of = brief ? "" : time ? " of static low's time" : " of static low's floats";
  if (time ? std::fabs(v) <= kSameTimeTolerance : v == 0) {
    return time ? "takes as long as static low (" + Tolerance() + ")" : "sends as many floats as static low";
  }
  if (v > 0) return "saves " + SavedPercent(v) + " %" + of;
  return time ? "takes " + SavedPercent(v) + " % longer than static low"
              : "sends " + SavedPercent(v) + " % more floats than static low";
}

}  // namespace

std::string EtaIntervalHeadline(const EtaIntervalSweep& sweep, SweepMetric metric, double recorded_eta,
                                int recorded_interval) {
  std::vector<std::pair<const SweepCell*, double>> valued;
  for (const SweepCell& c : sweep.cells) {
    const double v = sweep.Saved(c, metric);
    if (std::isfinite(v)) valued.emplace_back(&c, v);
  }
  if (valued.empty()) return {};
  const SweepCell* recorded = sweep.find(recorded_eta, recorded_interval);
  double recorded_saved = 0;
  const auto best_it =
      std::max_element(valued.begin(), valued.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const double best_saved = best_it->second;
  const double worst_saved = std::min_element(valued.begin(), valued.end(), [](const auto& a, const auto& b) {
                               return a.second < b.second;
                             })->second;
  if (best_saved == worst_saved) return "Every η and interval of this grid " + Effect(best_saved, metric, false);

  // Among equals: the recorded setting, else the most cautious (smallest η,
  // then shortest interval).
  const SweepCell* best = nullptr;
  int tied = 0;
  for (const auto& [cell, v] : valued) {
    if (cell == recorded) recorded_saved = v;
    if (v != best_saved) continue;
    ++tied;
    if (best == nullptr || cell == recorded ||
        (best != recorded && (cell->eta < best->eta || (cell->eta == best->eta && cell->interval < best->interval)))) {
      best = cell;
    }
  }
  const bool recorded_valued = recorded != nullptr && std::isfinite(sweep.Saved(*recorded, metric));
  const std::string others =
      tied > 1
          ? " (as " +
                std::string(tied == 2 ? "does 1 other setting" : "do " + std::to_string(tied - 1) + " other settings") +
                ")"
          : "";
  const std::string critical =
      std::to_string(best->low_level_epochs) + " of " + std::to_string(sweep.epochs) + " epochs at the low level";
  const std::string lead = best == recorded ? "The recorded " + Setting(*best) : Setting(*best);
  std::string out = best_saved > 0
                        ? lead + " saves the most" + others + ": " + SavedPercent(best_saved) + " %" +
                              (metric == SweepMetric::kTime ? " of static low's time" : " of static low's floats")
                        : lead + " does best" + others + ": it " + Effect(best_saved, metric, false);
  out += ", " + critical;
  if (!recorded_valued || best == recorded) return out;
  std::string effect = Effect(recorded_saved, metric, best_saved > 0);
  if (recorded_saved > 0 && best_saved > 0 && SavedPercent(recorded_saved) == SavedPercent(best_saved)) {
    effect = "saves slightly less (also " + SavedPercent(recorded_saved) + " % when rounded)";
  }
  return out + "; the recorded " + Setting(*recorded) + " " + effect + ", " +
         std::to_string(recorded->low_level_epochs) + " at the low level";
}

}  // namespace accordion::gui
