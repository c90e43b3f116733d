#include "analysis/schedule_report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/communication_accounting.h"
#include "common/number_format.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Ratio(double num, double den) {
  if (den <= 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", num / den);
  return buf;
}

// The glyph of one layer in one epoch of the table.
char Glyph(const TraceView& view, const Schedule& s, int epoch, int layer) {
  const auto& shape = view.layers[layer].shape;
  if (FloatsPerStep(s.scheme, shape, s.level_low) == FloatsPerStep(s.scheme, shape, s.level_high)) {
    return '.';
  }
  return s.levels[epoch][layer] == s.level_low ? 'L' : 'H';
}

int CountCritical(const std::vector<bool>& row) {
  int n = 0;
  for (bool b : row) n += b ? 1 : 0;
  return n;
}

}  // namespace

std::string LevelName(Scheme scheme, double level) {
  const SchemeDescription& d = DescriptionOf(scheme);
  std::ostringstream out;
  switch (d.level_kind) {
    case LevelKind::kNone:
      return d.name;
    case LevelKind::kRank:
    case LevelKind::kGlobalBatch:
      out << d.level_label << ' ' << static_cast<int64_t>(level);
      break;
    case LevelKind::kFraction:
      out << d.level_label << ' ' << level * 100 << "%";
      break;
  }
  return out.str();
}

std::string PolicyName(Policy policy) { return DescriptionOf(policy).title; }

std::string PolicyLevelsText(Policy policy, Scheme scheme, double level_low, double level_high) {
  const std::string low = LevelName(scheme, level_low), high = LevelName(scheme, level_high);
  switch (DescriptionOf(policy).motion) {
    case LevelMotion::kFixed:
      return low;
    case LevelMotion::kSwitching:
      return low + " / " + high;
    case LevelMotion::kHighToLow:
      return high + " -> " + low;
    case LevelMotion::kLowToHigh:
      return low + " -> " + high;
  }
  return low;
}

ScheduleComparison CompareSchedules(const TraceView& view, Scheme scheme, const AccordionOptions& options) {
  return CompareSchedules(view, scheme, PolicySettings().accordion(options));
}

ScheduleComparison CompareSchedules(const TraceView& view, Scheme scheme, const PolicySettings& settings) {
  ScheduleComparison c;
  c.scheme = scheme;
  c.options = settings.accordion();
  const AccordionOptions& options = c.options;
  c.policy = settings.policy();
  c.msdr_factor = settings.msdr_factor();
  c.accordion = DerivePolicySchedule(view, scheme, settings);
  c.accordion_cost = CostOf(view, c.accordion);
  c.low_cost = CostOf(view, StaticSchedule(view, scheme, options.level_low()));
  c.high_cost = CostOf(view, StaticSchedule(view, scheme, options.level_high()));
  return c;
}

void WriteScheduleTable(const TraceView& view, const ScheduleComparison& c, std::ostream& out) {
  const Schedule& s = c.accordion;
  const int L = view.num_layers();
  const bool batch = DescriptionOf(c.scheme).level_kind == LevelKind::kGlobalBatch;
  // One level for the whole model, except where Accordion decides per layer.
  const bool model_level = batch || !DescriptionOf(c.policy).critical_regimes;
  out << PolicyName(c.policy) << " schedule for " << view.run.model << " on " << view.run.dataset << " (" << L
      << " layers, " << view.run.world_size << " workers, " << view.num_epochs() << " epochs"
      << (view.run.synthetic ? ", SYNTHETIC trace" : "") << ")\n";
  switch (DescriptionOf(c.policy).motion) {
    case LevelMotion::kHighToLow:
      out << "scheme " << ToString(c.scheme) << ": from " << LevelName(c.scheme, s.level_high) << " towards "
          << LevelName(c.scheme, s.level_low) << ", the compression halving each time the gradients' MSDR falls "
          << "by " << c.msdr_factor << "x; checked " << EveryEpochs(c.options.interval()) << "\n\n";
      break;
    case LevelMotion::kLowToHigh:
      out << "scheme " << ToString(c.scheme) << ": from " << LevelName(c.scheme, s.level_low)
          << ", the batch growing by the LR's decay factor where the LR would decay, up to "
          << LevelName(c.scheme, s.level_high) << "\n\n";
      break;
    default:
      out << "scheme " << ToString(c.scheme) << ": low " << LevelName(c.scheme, s.level_low)
          << " in critical regimes, high " << LevelName(c.scheme, s.level_high) << " elsewhere; eta " << c.options.eta()
          << ", check " << EveryEpochs(c.options.interval()) << "\n\n";
  }
  out << std::setw(5) << "epoch" << std::setw(12) << "lr" << std::setw(7) << "check" << std::setw(10) << "critical"
      << std::setw(14) << "floats/worker"
      << "  "
      << (batch         ? "global batch"
          : model_level ? "level (every layer)"
                        : "levels (layer 0.." + std::to_string(L - 1) + ": L low, H high, . no difference)")
      << '\n';
  for (int e = 0; e < s.num_epochs(); ++e) {
    out << std::setw(5) << e << std::setw(12) << std::setprecision(6) << view.epochs[e].lr << std::setw(7)
        << (s.checked[e] ? (s.lr_decay[e] ? "*+lr" : "*") : (s.lr_decay[e] ? "+lr" : "")) << std::setw(10)
        << (std::to_string(CountCritical(s.critical[e])) + "/" + std::to_string(L)) << std::setw(14)
        << Sci(c.accordion_cost.epoch_floats[e]) << "  ";
    if (batch) {
      out << static_cast<int64_t>(s.levels[e][0]);
    } else if (model_level) {
      out << LevelName(c.scheme, s.levels[e][0]);
    } else {
      for (int l = 0; l < L; ++l) out << Glyph(view, s, e, l);
    }
    out << '\n';
  }
  const double acc = c.accordion_cost.total_floats;
  const double low = c.low_cost.total_floats;
  const double high = c.high_cost.total_floats;
  out << "\n(check: * a regime check ran after the epoch; +lr: the LR decays after it)\n\n";
  out << "Floats sent per worker over " << s.num_epochs() << " epochs:\n";
  auto line = [&out](const std::string& label, double floats) {
    out << "  " << std::left << std::setw(26) << label << std::right << std::setw(12) << Sci(floats) << '\n';
  };
  line("static low (" + LevelName(c.scheme, s.level_low) + ")", low);
  line("static high (" + LevelName(c.scheme, s.level_high) + ")", high);
  const std::string name = PolicyName(c.policy);
  line(name, acc);
  out << name << " / static low: " << Ratio(acc, low) << " (saves " << Ratio(low, acc) << "); " << name
      << " / static high: " << Ratio(acc, high) << "\n";
}

void WriteScheduleCsv(const TraceView& view, const ScheduleComparison& c, std::ostream& out) {
  const Schedule& s = c.accordion;
  out << "epoch,layer_id,layer,lr,checked,critical,ratio,level,floats\n";
  for (int e = 0; e < s.num_epochs(); ++e) {
    for (int l = 0; l < view.num_layers(); ++l) {
      out << e << ',' << l << ',' << view.layers[l].name << ',' << std::setprecision(17) << view.epochs[e].lr << ','
          << (s.checked[e] ? 1 : 0) << ',' << (s.critical[e][l] ? 1 : 0) << ',';
      if (s.ratios[e][l]) out << *s.ratios[e][l];
      out << ',' << s.levels[e][l] << ',' << c.accordion_cost.layer_floats[e][l] << '\n';
    }
  }
}

void WriteScheduleJson(const TraceView& view, const ScheduleComparison& c, std::ostream& out) {
  using nlohmann::json;
  const Schedule& s = c.accordion;
  json doc;
  doc["model"] = view.run.model;
  doc["dataset"] = view.run.dataset;
  doc["synthetic"] = view.run.synthetic;
  doc["scheme"] = ToString(c.scheme);
  doc["policy"] = ToString(c.policy);
  doc["msdr_factor"] = c.msdr_factor;
  doc["eta"] = c.options.eta();
  doc["interval"] = c.options.interval();
  doc["level_low"] = s.level_low;
  doc["level_high"] = s.level_high;
  doc["layers"] = json::array();
  for (const LayerInfo& l : view.layers) doc["layers"].push_back(l.name);
  json epochs = json::array();
  for (int e = 0; e < s.num_epochs(); ++e) {
    json row;
    row["epoch"] = e;
    row["lr"] = view.epochs[e].lr;
    row["checked"] = static_cast<bool>(s.checked[e]);
    row["lr_decay"] = static_cast<bool>(s.lr_decay[e]);
    row["levels"] = s.levels[e];
    json crit = json::array();
    json ratios = json::array();
    for (int l = 0; l < view.num_layers(); ++l) {
      crit.push_back(static_cast<bool>(s.critical[e][l]));
      ratios.push_back(s.ratios[e][l] ? json(*s.ratios[e][l]) : json(nullptr));
    }
    row["critical"] = crit;
    row["ratios"] = ratios;
    row["steps"] = c.accordion_cost.steps[e];
    row["floats"] = c.accordion_cost.epoch_floats[e];
    epochs.push_back(row);
  }
  doc["epochs"] = epochs;
  json totals;
  totals["accordion"] = c.accordion_cost.total_floats;
  totals["static_low"] = c.low_cost.total_floats;
  totals["static_high"] = c.high_cost.total_floats;
  doc["floats_total"] = totals;
  auto ratio = [](double a, double b) { return b > 0 ? json(a / b) : json(nullptr); };
  doc["ratio_vs_static_low"] = ratio(c.accordion_cost.total_floats, c.low_cost.total_floats);
  doc["ratio_vs_static_high"] = ratio(c.accordion_cost.total_floats, c.high_cost.total_floats);
  out << doc.dump(1) << '\n';
}

}  // namespace accordion
