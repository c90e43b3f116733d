#include "gui/model/policy_table.h"

#include <cmath>
#include <cstdio>

#include "common/errors.h"
#include "gui/model/what_if.h"
#include "simulator/child_process.h"
#include "simulator/policy_projection.h"
#include "traces/scheme_description.h"

namespace accordion::gui {

namespace {

const char kMissing[] = "—";

std::string Printf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// The settings ProjectPolicies resolves from the same options: the
// schedule's scheme, η, interval and levels, the trace's MSDR factor.
PolicySettings SettingsOf(const RunData& run, const ScheduleSettings& s) {
  const ResolvedSchedule r = Resolve(run.view().run, s);
  return PolicySettings()
      .accordion(AccordionOptions().eta(s.eta).interval(s.interval).level_low(r.level_low).level_high(r.level_high))
      .msdr_factor(run.view().run.msdr_factor);
}

}  // namespace

std::vector<const PolicyRow*> PolicyTable::AllRows() const {
  std::vector<const PolicyRow*> all;
  for (const PolicyRow& row : comparison.rows) all.push_back(&row);
  for (const PolicyRow& row : comparison.whole_gradient) all.push_back(&row);
  return all;
}

const sim::ScheduleProjection* PolicyTable::projectionOf(size_t row) const {
  if (!replay) return nullptr;
  if (row >= comparison.rows.size()) {
    const size_t w = row - comparison.rows.size();
    return w < whole_gradient.size() ? &whole_gradient[w] : nullptr;
  }
  return replay->Named(comparison.rows[row].name);
}

PolicyTable ComparePoliciesOf(const RunData& run, const ScheduleSettings& s, const WhatIfSettings& w,
                              sim::TimingSource timing, const std::atomic<bool>* cancel) {
  PolicyTable t;
  t.timing = timing;
  const ResolvedSchedule resolved = Resolve(run.view().run, s);
  if (!DescriptionOf(resolved.scheme).has_levels()) {
    t.problem = std::string(ToString(resolved.scheme)) +
                " communication has no levels: no policy has anything to choose (explore the run as powersgd, "
                "topk or batch)";
    return t;
  }
  try {
    if (!run.replayable) throw InputError(run.replay_problem);
    const sim::ReplayOptions options = ReplayOptionsOf(s, w, timing, BasePlatformOf(run, w)).cancel(cancel);
    sim::ProjectedPolicies p = sim::ProjectPolicies(run.input, options, {}, sim::WholeGradientRows::kProject);
    t.comparison = std::move(p.comparison);
    t.replay = std::move(p.replay);
    t.whole_gradient = std::move(p.whole_gradient);
    // As advise searches it: α–β at every rate (about a hundred replays).
    try {
      t.break_even =
          sim::BreakEvenBandwidth(run.input, options, sim::BreakEvenOptions().timing(sim::TimingSource::kAnalytic));
    } catch (const sim::Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      t.break_even_problem = e.what();
    }
  } catch (const sim::Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    // Not projected (a run without iteration samples, a platform the
    // simulator refuses): the schedules, floats and errors still stand.
    t.projection_problem = e.what();
    try {
      t.comparison = ComparePolicies(run.view(), resolved.scheme, SettingsOf(run, s));
    } catch (const std::exception& again) {
      t.problem = again.what();
      return t;
    }
  }
  t.comparable = true;
  return t;
}

std::vector<std::string> PolicyTableHeaders(const PolicyTable& table) {
  const std::string floats =
      table.replay ? "floats / worker at " + std::to_string(table.replay->workers) + " workers" : "floats / worker";
  std::vector<std::string> h = {"policy", floats, "vs static low", "error", "error (critical)", "level changes"};
  if (table.projected()) {
    h.push_back("projected time");
    h.push_back("speedup vs static low");
    h.push_back("vs dense");
  }
  if (AnyRecordedAccuracy(table.comparison)) h.push_back("accuracy (run)");
  return h;
}

PolicyTable WithRecordedAccuracy(const PolicyTable& table, const RunData& run,
                                 const std::vector<std::shared_ptr<const RunData>>& runs) {
  PolicyTable out = table;
  std::vector<const TraceView*> views;
  for (const auto& r : runs) {
    if (r) views.push_back(&r->view());
  }
  if (out.comparable) AddRecordedAccuracy(out.comparison, run.view(), views);
  return out;
}

std::vector<std::string> PolicyColumnHelp(const PolicyTable& table) {
  std::vector<std::string> h = {
      "The policy and its levels: static low and static high keep one level throughout",
      table.projected() ? "Floats one worker sends over the run at the projected worker count (more workers: a "
                          "larger global batch, fewer steps an epoch, fewer floats each)"
                        : "Floats one worker sends over the run",
      "How many times fewer floats than static low the policy sends",
      "Error proxy: the mean relative compression error of the layers at the levels the policy chose, from the "
      "trace's error profile, over every epoch (a proxy, not an accuracy)",
      "The error proxy over the epochs the run found critical (where the paper says compression costs accuracy)",
      "Epochs whose levels differ from the epoch before"};
  if (table.projected()) {
    h.push_back(table.timing == sim::TimingSource::kSimulate ? "Time to train, SimGrid replay on the cluster"
                                                             : "Time to train, α–β estimate on the cluster");
    h.push_back("Static low's projected time over the policy's: above 1.00× the policy trains faster");
    h.push_back(
        "Dense's projected time over the row's: below 1.00× the row trains slower than sending every gradient "
        "whole. Dense, bf16 and fp16 send every gradient every step (the casts in 16 bits, as PyTorch's "
        "compress hooks: half the bytes); their floats count the wire's bytes / 4");
  }
  if (AnyRecordedAccuracy(table.comparison)) {
    h.push_back(
        "The final test accuracy that runs of the row's setting reached (the runs open in the explorer, the traces "
        "given to the report: the same model, data, workers, batch and epochs; the mean over n runs where more "
        "than one): measured, beside the projected time");
  }
  return h;
}

std::vector<std::vector<std::string>> PolicyTableCells(const PolicyTable& table) {
  std::vector<std::vector<std::string>> rows;
  if (table.comparison.rows.empty()) return rows;
  const PolicyRow& base = table.comparison.baseline();
  const PolicyRow* dense = table.comparison.dense();
  for (const PolicyRow* each : table.AllRows()) {
    const PolicyRow& row = *each;
    std::vector<std::string> cells;
    cells.push_back(PolicyDisplayLabel(row));
    cells.push_back(PolicyFloatsText(row.cost.total_floats));
    cells.push_back(row.cost.total_floats > 0 ? PolicyRatioText(base.cost.total_floats / row.cost.total_floats)
                                              : kMissing);
    cells.push_back(row.error ? Printf("%.4f", row.error->mean) : kMissing);
    cells.push_back(row.error && row.error->critical_mean ? Printf("%.4f", *row.error->critical_mean) : kMissing);
    cells.push_back(std::to_string(row.level_changes));
    if (table.projected()) {
      cells.push_back(row.projected_s ? PolicySecondsText(*row.projected_s) : kMissing);
      cells.push_back(row.projected_s && base.projected_s && *row.projected_s > 0
                          ? PolicyRatioText(*base.projected_s / *row.projected_s)
                          : kMissing);
      cells.push_back(row.projected_s && dense != nullptr && dense->projected_s && *row.projected_s > 0
                          ? PolicyRatioText(*dense->projected_s / *row.projected_s)
                          : kMissing);
    }
    if (AnyRecordedAccuracy(table.comparison)) cells.push_back(RecordedAccuracyText(row));
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::vector<bool> EmptyPolicyColumns(const std::vector<std::vector<std::string>>& cells) {
  if (cells.empty()) return {};
  std::vector<bool> empty(cells.front().size(), true);
  empty[0] = false;  // the policy's name
  for (const std::vector<std::string>& row : cells) {
    for (size_t c = 1; c < row.size() && c < empty.size(); ++c) empty[c] = empty[c] && row[c] == kMissing;
  }
  return empty;
}

std::string PolicyVerdict(const PolicyTable& table) {
  // "2.91×", as the tables write ratios.
  const std::string fastest = FastestSummary(table.comparison, "×");
  if (fastest.empty()) return {};
  std::string text = "Fastest on this cluster: " + fastest + ".";
  if (table.break_even) {
    const sim::BreakEven& b = *table.break_even;
    const std::string at = " at " + std::to_string(b.workers) + " workers";
    const std::string range = Printf("%g", b.min_gbps) + " to " + Printf("%g", b.max_gbps) + " Gb/s";
    if (b.gbps) {
      text += (b.compression_below ? " Accordion beats every whole-gradient exchange only below "
                                   : " Accordion beats every whole-gradient exchange only above ") +
              Printf("%.3g", *b.gbps) + " Gb/s" + at + ", where it and the " + DescriptionOf(b.whole_scheme).title +
              " take the same time.";
    } else {
      text += b.compression_below
                  ? " Accordion beats every whole-gradient exchange at every rate from " + range + at + "."
                  : " Accordion beats no whole-gradient exchange at any rate from " + range + at + ".";
    }
  }
  return text;
}

std::string PolicyFloatsText(double v) {
  // As the run list writes floats: 425.1 k, 34.4 M.
  const double a = std::fabs(v);
  if (a >= 1e12) return Printf("%.2f T", v / 1e12);
  if (a >= 1e9) return Printf("%.2f G", v / 1e9);
  if (a >= 1e6) return Printf("%.1f M", v / 1e6);
  if (a >= 1e3) return Printf("%.1f k", v / 1e3);
  return Printf("%.3g", v);
}

std::string PolicySecondsText(double s) {
  const double a = std::fabs(s);
  if (a >= 3600) return Printf("%.2f h", s / 3600);
  if (a >= 100) return Printf("%.0f s", s);
  if (a >= 1) return Printf("%.2f s", s);
  if (a >= 1e-3) return Printf("%.2f ms", s * 1e3);
  return Printf("%.1f µs", s * 1e6);
}

std::string PolicyRatioText(double ratio) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return kMissing;
  return Printf("%.2f×", ratio);
}

std::string PolicyDisplayLabel(const PolicyRow& row) {
  std::string label = row.label.empty() ? row.name : row.label;
  const size_t arrow = label.find(" -> ");
  if (arrow != std::string::npos) label.replace(arrow, 4, " → ");
  return label;
}

}  // namespace accordion::gui
