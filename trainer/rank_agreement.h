// Rank agreement: what the ranks of one data-parallel run must have in
// common, and the one-line explanation when they do not.
//
// Every collective must be issued by every rank in the same order and with
// the same shapes; a rank that was given other settings (another level, a
// model with one parameter more) or that takes one step more than its peers
// (an uneven data loader) otherwise hangs the run or aborts inside the
// transport ("op.preamble.length <= op.nbytes"). The DDP hook therefore
// compares its settings once, when it is attached, and compares what each
// rank is about to do (RankPhase) before every step, every end of an epoch
// and the close: the first difference is reported on every rank in words,
// before any gradient of the mismatched step moves.
//
// Nothing here communicates: the caller gathers the values (one all-gather)
// and asks these functions whether, and how, they differ.
#ifndef ACCORDION_TRAINER_RANK_AGREEMENT_H_
#define ACCORDION_TRAINER_RANK_AGREEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accordion {

// What a rank is about to do next.
enum class RankPhase { kStep = 1, kEndEpoch = 2, kClose = 3 };

// One rank's report before a step, an end of epoch or the close. Travels as
// kPhaseReportSize doubles (ToDoubles/FromDoubles), so that one fixed-size
// all-gather carries it whatever the phase.
struct PhaseReport {
  RankPhase phase = RankPhase::kStep;
  int64_t epoch = 0;     // the running epoch (0-based): epochs finished so far
  int64_t step = 0;      // kStep: the step starting (0-based); else steps taken in the epoch
  bool problem = false;  // the rank found a problem of its own (its words travel separately)
  double lr = 0;         // kEndEpoch: the epoch's learning rate
  double next_lr = 0;    // kEndEpoch: the next epoch's
};

inline constexpr int kPhaseReportSize = 6;
std::vector<double> ToDoubles(const PhaseReport& report);
// Throws std::invalid_argument when `values` does not hold one report.
PhaseReport FromDoubles(const std::vector<double>& values);

// "" when every rank (reports in rank order) is at the same point; else one
// line naming what each group of ranks is doing and what to change. Reports
// that carry a problem are not compared here (ProblemsOfRanks says them).
std::string PhaseDisagreement(const std::vector<PhaseReport>& reports);

// The problems the ranks found on their own (in rank order, "" for none),
// as one line: the problem alone when every rank that has one says the same,
// else each prefixed with its rank. "" when no rank has one.
std::string ProblemsOfRanks(const std::vector<std::string>& problems);

// `settings` in rank order, each a JSON object of the settings that must be
// equal on every rank (keys named as the user gave them). "" when all equal
// rank 0's; else one line naming each setting that differs, its value on
// rank 0 and on the ranks that differ, e.g. "eta is 0.5 on rank 0 but 0.3
// on rank 1". A key "parameters" holding a list of strings (one per
// parameter) is described by its first difference. Throws
// std::invalid_argument on a string that is not a JSON object.
std::string SettingsDisagreement(const std::vector<std::string>& settings);

// "ranks 1, 3 and 5", "rank 2", "ranks 1-7" for a sorted list of ranks.
std::string DescribeRanks(const std::vector<int>& ranks);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RANK_AGREEMENT_H_
