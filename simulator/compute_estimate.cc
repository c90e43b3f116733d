#include "simulator/compute_estimate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/schedule_report.h"
#include "common/number_format.h"

namespace accordion::sim {
namespace {

// Forward and backward less the compression the hooks ran inside backward:
// what the model's computation costs, whatever the level.
double StepCompute(const StepSample& s) { return s.forward_s + s.backward_s - s.in_backward_host_s; }
double StepCompression(const StepSample& s) { return s.in_backward_host_s; }

void ScaleCompute(StepSample& s, double by) {
  s.forward_s *= by;
  s.backward_s *= by;
  s.in_backward_host_s *= by;
  for (double& t : s.grad_ready_s) t *= by;
}

LevelSample Sample(const StepProfile& p, double (*of)(const StepSample&)) {
  LevelSample c;
  const auto n = static_cast<double>(p.samples.size());
  if (p.samples.empty()) return c;
  for (const StepSample& s : p.samples) c.mean_s += of(s) / n;
  double squares = 0;
  for (const StepSample& s : p.samples) squares += (of(s) - c.mean_s) * (of(s) - c.mean_s);
  c.sd_s = n > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  double rank_sum = 0, views = 0;
  for (const StepSample& s : p.samples) {
    for (const StepSample& rank : s.per_rank) {
      rank_sum += of(rank);
      ++views;
    }
  }
  c.rank_mean_s = views > 0 ? rank_sum / views : 0.0;
  return c;
}

LevelCompute Measure(const StepProfile& p) {
  LevelCompute c;
  c.levels = p.levels;
  c.steps = static_cast<int64_t>(p.samples.size());
  c.compute = Sample(p, StepCompute);
  c.compression = Sample(p, StepCompression);
  return c;
}

SharedEstimate Decide(const std::vector<LevelCompute>& levels, LevelSample LevelCompute::*quantity) {
  SharedEstimate b;
  double steps = 0, sum = 0, rank_sum = 0, within = 0, dof = 0;
  for (const LevelCompute& l : levels) {
    const LevelSample& q = l.*quantity;
    const auto n = static_cast<double>(l.steps);
    steps += n;
    sum += q.mean_s * n;
    rank_sum += q.rank_mean_s * n;
    if (l.steps > 1) {
      within += q.sd_s * q.sd_s * (n - 1);
      dof += n - 1;
    }
  }
  b.mean_s = steps > 0 ? sum / steps : 0.0;
  b.rank_mean_s = steps > 0 ? rank_sum / steps : 0.0;
  b.within_sd_s = dof > 0 ? std::sqrt(within / dof) : 0.0;
  if (levels.size() < 2) return b;
  double between = 0;
  for (const LevelCompute& l : levels) {
    const LevelSample& q = l.*quantity;
    between += static_cast<double>(l.steps) * (q.mean_s - b.mean_s) * (q.mean_s - b.mean_s);
  }
  const auto k = static_cast<double>(levels.size());
  if (!(dof > 0) || !(within > 0)) {
    // Without a spread to judge by (one step per level), any difference
    // counts: the levels keep their own.
    b.effect = between > 0 ? INFINITY : 0.0;
  } else {
    // ω²: the share of the steps' variance the levels explain, less what
    // k noisy means explain by chance ((k - 1) mean squares within).
    const double mean_square_within = within / dof;
    const double omega2 =
        std::max(0.0, (between - (k - 1) * mean_square_within) / (between + within + mean_square_within));
    b.effect = omega2 < 1 ? std::sqrt(omega2 / (1 - omega2)) : INFINITY;
  }
  b.shared = b.effect <= kLevelEffect;
  return b;
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

void DescribeOne(std::ostream& out, const std::vector<LevelCompute>& levels, const SharedEstimate& e,
                 LevelSample LevelCompute::*quantity, Scheme scheme) {
  if (levels.size() < 2) {
    out << Ms(e.mean_s) << " a step, sd " << Ms(e.within_sd_s);
    return;
  }
  const std::string f = std::isfinite(e.effect) ? FormatNumber(e.effect, 2) : "inf";
  if (e.shared) {
    out << "one estimate for " << levels.size() << " sets of levels: " << Ms(e.mean_s) << " a step, sd "
        << Ms(e.within_sd_s) << " (levels' effect f = " << f << " <= " << FormatNumber(kLevelEffect) << ")";
    return;
  }
  out << "per level, the levels' effect f = " << f << " > " << FormatNumber(kLevelEffect) << ":";
  for (const LevelCompute& l : levels)
    out << ' ' << LevelsName(scheme, l.levels) << ": " << Ms((l.*quantity).mean_s) << ';';
  out << " sd within a level " << Ms(e.within_sd_s);
}

}  // namespace

std::string BatchCompute::Describe(Scheme scheme) const {
  std::ostringstream out;
  out << "compute ";
  DescribeOne(out, levels, compute, &LevelCompute::compute, scheme);
  // Only where the hooks compress inside backward at all.
  if (compression.mean_s > 0) {
    out << "; compression inside backward ";
    DescribeOne(out, levels, compression, &LevelCompute::compression, scheme);
  }
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
  for (BatchCompute& b : batches) {
    b.compute = Decide(b.levels, &LevelCompute::compute);
    b.compression = Decide(b.levels, &LevelCompute::compression);
  }
  return batches;
}

std::vector<StepProfile> ShareCompute(const std::vector<StepProfile>& profiles,
                                      const std::vector<BatchCompute>& estimates) {
  std::vector<StepProfile> shared = profiles;
  for (StepProfile& p : shared) {
    for (const BatchCompute& b : estimates) {
      if (b.per_worker_batch != p.per_worker_batch || (!b.compute.shared && !b.compression.shared)) continue;
      // The level as EstimateCompute measured it, not measured again.
      auto measured =
          std::find_if(b.levels.begin(), b.levels.end(), [&](const LevelCompute& l) { return l.levels == p.levels; });
      if (measured == b.levels.end()) continue;
      const LevelCompute& own = *measured;
      // The slowest rank's view, and each rank's own: the replay on the
      // trace's own network averages those, not the slowest rank's.
      auto target = [&](double compute, double compression, double own_compute, double own_compression) {
        return (b.compute.shared ? compute : own_compute) + (b.compression.shared ? compression : own_compression);
      };
      const double was = own.compute.mean_s + own.compression.mean_s;
      const double rank_was = own.compute.rank_mean_s + own.compression.rank_mean_s;
      if (!(was > 0)) continue;
      const double by =
          target(b.compute.mean_s, b.compression.mean_s, own.compute.mean_s, own.compression.mean_s) / was;
      const double rank_by = rank_was > 0 ? target(b.compute.rank_mean_s, b.compression.rank_mean_s,
                                                   own.compute.rank_mean_s, own.compression.rank_mean_s) /
                                                rank_was
                                          : by;
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
