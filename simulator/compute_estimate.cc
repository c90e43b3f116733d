#include "simulator/compute_estimate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/schedule_report.h"
#include "common/number_format.h"

namespace accordion::sim {
namespace {

double StepCompute(const StepSample& s) { return s.forward_s + s.backward_s; }

LevelCompute Measure(const StepProfile& p) {
  LevelCompute c;
  c.levels = p.levels;
  c.steps = static_cast<int64_t>(p.samples.size());
  if (c.steps == 0) return c;
  for (const StepSample& s : p.samples) c.mean_s += StepCompute(s);
  c.mean_s /= static_cast<double>(c.steps);
  double squares = 0;
  for (const StepSample& s : p.samples) squares += (StepCompute(s) - c.mean_s) * (StepCompute(s) - c.mean_s);
  c.sd_s = c.steps > 1 ? std::sqrt(squares / static_cast<double>(c.steps - 1)) : 0.0;
  double rank_sum = 0, views = 0;
  for (const StepSample& s : p.samples) {
    for (const StepSample& rank : s.per_rank) {
      rank_sum += StepCompute(rank);
      ++views;
    }
  }
  c.rank_mean_s = views > 0 ? rank_sum / views : 0.0;
  return c;
}

void Decide(BatchCompute& b) {
  double steps = 0, sum = 0, rank_sum = 0, within = 0, dof = 0;
  for (const LevelCompute& l : b.levels) {
    steps += static_cast<double>(l.steps);
    sum += l.mean_s * static_cast<double>(l.steps);
    rank_sum += l.rank_mean_s * static_cast<double>(l.steps);
    if (l.steps > 1) {
      within += l.sd_s * l.sd_s * static_cast<double>(l.steps - 1);
      dof += static_cast<double>(l.steps - 1);
    }
  }
  b.mean_s = steps > 0 ? sum / steps : 0.0;
  b.rank_mean_s = steps > 0 ? rank_sum / steps : 0.0;
  b.within_sd_s = dof > 0 ? std::sqrt(within / dof) : 0.0;
  if (b.levels.size() < 2) return;
  double between = 0;
  for (const LevelCompute& l : b.levels) {
    between += static_cast<double>(l.steps) * (l.mean_s - b.mean_s) * (l.mean_s - b.mean_s);
  }
  const double between_sd = std::sqrt(between / steps);
  // Without a spread to judge by (one step per level), any difference
  // counts: the levels keep their own.
  b.effect = b.within_sd_s > 0 ? between_sd / b.within_sd_s : (between_sd > 0 ? INFINITY : 0.0);
  b.shared = b.effect <= kLevelEffect;
}

std::string Ms(double s) { return FormatNumber(s * 1e3, 3) + " ms"; }

std::string LevelsName(Scheme scheme, const std::vector<double>& levels) {
  if (levels.empty()) return "?";
  if (std::all_of(levels.begin(), levels.end(), [&](double l) { return l == levels.front(); })) {
    return LevelName(scheme, levels.front());
  }
  // "mixed: 59 layers rank 2, 3 rank 1", most common level first.
  std::vector<std::pair<double, int>> counts;
  for (double l : levels) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == l; });
    if (it == counts.end()) {
      counts.emplace_back(l, 1);
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::ostringstream out;
  out << "mixed:";
  for (size_t i = 0; i < counts.size(); ++i) {
    out << (i ? ", " : " ") << counts[i].second << (i ? " " : " layers ") << LevelName(scheme, counts[i].first);
  }
  return out.str();
}

}  // namespace

std::string BatchCompute::Describe(Scheme scheme) const {
  std::ostringstream out;
  if (levels.size() < 2) {
    out << Ms(mean_s) << " a step, sd " << Ms(within_sd_s);
    return out.str();
  }
  const std::string f = std::isfinite(effect) ? FormatNumber(effect, 2) : "inf";
  if (shared) {
    out << "one estimate for " << levels.size() << " sets of levels: " << Ms(mean_s) << " a step, sd "
        << Ms(within_sd_s) << " (levels' effect f = " << f << " <= " << FormatNumber(kLevelEffect) << ")";
    return out.str();
  }
  out << "per level, the levels' effect f = " << f << " > " << FormatNumber(kLevelEffect) << ":";
  for (const LevelCompute& l : levels) out << ' ' << LevelsName(scheme, l.levels) << ": " << Ms(l.mean_s) << ';';
  out << " sd within a level " << Ms(within_sd_s);
  return out.str();
}

std::vector<BatchCompute> EstimateCompute(const std::vector<StepProfile>& profiles) {
  std::vector<BatchCompute> batches;
  for (const StepProfile& p : profiles) {
    auto it = std::find_if(batches.begin(), batches.end(),
                           [&](const BatchCompute& b) { return b.per_worker_batch == p.per_worker_batch; });
    if (it == batches.end()) {
      batches.emplace_back();
      it = std::prev(batches.end());
      it->per_worker_batch = p.per_worker_batch;
    }
    it->levels.push_back(Measure(p));
  }
  for (BatchCompute& b : batches) Decide(b);
  return batches;
}

namespace {

void ScaleCompute(StepSample& s, double by) {
  s.forward_s *= by;
  s.backward_s *= by;
  for (double& t : s.grad_ready_s) t *= by;
}

}  // namespace

std::vector<StepProfile> ShareCompute(const std::vector<StepProfile>& profiles,
                                      const std::vector<BatchCompute>& estimates) {
  std::vector<StepProfile> shared = profiles;
  for (StepProfile& p : shared) {
    for (const BatchCompute& b : estimates) {
      if (b.per_worker_batch != p.per_worker_batch || !b.shared) continue;
      const LevelCompute own = Measure(p);
      if (!(own.mean_s > 0)) continue;
      const double by = b.mean_s / own.mean_s;
      // Each rank's own view to the batch's mean over ranks: the replay on
      // the trace's own network averages those, not the slowest rank's.
      const double rank_by = own.rank_mean_s > 0 ? b.rank_mean_s / own.rank_mean_s : by;
      for (StepSample& s : p.samples) {
        ScaleCompute(s, by);
        for (StepSample& rank : s.per_rank) ScaleCompute(rank, rank_by);
      }
      p.forward_s *= by;
      p.backward_s *= by;
      for (double& t : p.grad_ready_s) t *= by;
    }
  }
  return shared;
}

}  // namespace accordion::sim
