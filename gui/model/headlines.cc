#include "gui/model/headlines.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace accordion::gui {

namespace {

bool Positive(double v) { return v > 0 && std::isfinite(v); }

std::string Format(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Ratio(double r) { return Format("%.2f", r) + "×"; }
std::string Bandwidth(double gbps) { return Format("%.3g", gbps); }
std::string Percent(double fraction) { return Format("%.0f", fraction * 100); }
std::string Tolerance() { return "within " + Format("%g", kSameTimeTolerance * 100) + " %"; }

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
      return "is slower than dense (" + Span(Format("%.2f", lo), Format("%.2f", hi)) + "× its time)";
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
