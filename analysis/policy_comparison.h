// PolicyComparison: the schedules every policy chooses for one trace, side
// by side - floats each worker sends, the error proxy (error_proxy.h) and,
// where a simulator filled it in, the projected time - and its renderings.
//
//   static low, static high, Accordion, and AdaQS (PowerSGD, TopK) or
//   Smith et al. (batch): the policies that fit the scheme, or those asked.
//   Where a simulator projected them (sim::ProjectPolicies), the exchanges
//   compression has to beat follow: dense and the 16-bit casts.
//
// Thread-safe: pure functions; the Write* functions touch only their stream.
#ifndef ACCORDION_ANALYSIS_POLICY_COMPARISON_H_
#define ACCORDION_ANALYSIS_POLICY_COMPARISON_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/error_proxy.h"
#include "analysis/schedule.h"
#include "analysis/time_band.h"

namespace accordion {

struct PolicyRow {
  std::string name;   // static-low, static-high, accordion, adaqs, smith
  std::string label;  // "Accordion rank 2 / rank 1", "static rank 2"
  Schedule schedule;
  ScheduleCost cost;
  std::optional<ErrorProxy> error;
  std::optional<double> projected_s;       // time to train, when a simulator projected it
  std::optional<TimeBand> projected_band;  // its prediction band, with it
  int level_changes = 0;                   // epochs whose levels differ from the epoch before
  // Set on a whole-gradient row (PolicyComparison::whole_gradient): the
  // scheme it sends every gradient with (dense, fp16, bf16).
  std::optional<Scheme> whole_gradient;
  // The final test accuracy of recorded runs of this row's setting
  // (AddRecordedAccuracy): their mean, and how many there were (seeds).
  std::optional<double> recorded_accuracy;
  int recorded_runs = 0;
};

struct PolicyComparison {
  Scheme scheme = Scheme::kDense;
  PolicySettings settings;      // eta, interval, levels, MSDR factor
  std::vector<PolicyRow> rows;  // empty for a scheme without levels
  // Every gradient every step, dense first (WholeGradientSchemes), each
  // projected: total_floats is the wire's bytes / 4 (a cast's are half of
  // dense's); dense's error 0, a cast's empty (its rounding is not
  // profiled). Empty where nothing was projected.
  std::vector<PolicyRow> whole_gradient;
  // Policies asked for that the trace or scheme cannot feed, with why.
  std::vector<std::string> notes;
  // The row the ratios are against: static low (the accurate baseline).
  const PolicyRow& baseline() const { return rows.front(); }
  // The dense row of whole_gradient; nullptr without one.
  const PolicyRow* dense() const;
  // The projected row of either list with the shortest time (a tie: the
  // more exact, whole-gradient rows first); nullptr where none is.
  const PolicyRow* fastest() const;
};

// Fills each row's recorded_accuracy from `runs` (the compared trace among
// them or not): a run counts for a row when it trained the same model on
// the same data with the same workers, global batch and epochs as `view`,
// and ran the row's setting - the scheme and policy, its levels (a static
// row: one level throughout), and for a switching policy the same eta and
// interval; a whole-gradient row: a run of that scheme. Its accuracy is its
// last epoch's test accuracy; runs that recorded none do not count, nor does
// a run given twice (the same trace, or the same run_id). Returns, for each
// of `runs`, whether it counted for some row.
std::vector<bool> AddRecordedAccuracy(PolicyComparison& c, const TraceView& view,
                                      const std::vector<const TraceView*>& runs);
// Whether any row has one; a row's as the tables write it: "90.00 %",
// "89.95 % (n 3)", "—".
bool AnyRecordedAccuracy(const PolicyComparison& c);
std::string RecordedAccuracyText(const PolicyRow& row);

// "bf16 cast, 2.91x faster than static rank 2": the fastest projected row
// against the fastest of the other kind (compressed against whole-gradient),
// as the table's "fastest:" line says it; empty where nothing was
// projected or there are no whole-gradient rows.
// `times`: the ratio's sign, "x" on terminals, "×" where the text is UTF-8
// for people (the explorer, the report).
std::string FastestSummary(const PolicyComparison& c, const std::string& times = "x");

// The policies that fit `scheme` when none are asked: accordion and adaqs
// (PowerSGD, TopK) or accordion and smith (batch).
std::vector<Policy> DefaultPolicies(Scheme scheme);

// Static low and static high, then each of `policies` (none: the
// defaults). A default policy the trace cannot feed becomes a note; one
// asked for explicitly throws InputError saying what is missing.
PolicyComparison ComparePolicies(const TraceView& view, Scheme scheme, const PolicySettings& settings,
                                 const std::vector<Policy>& policies = {});

// "AdaQS rank 1 -> 2", "Smith et al. batch 128 -> 1024".
std::string PolicyLabel(Policy policy, Scheme scheme, double level_low, double level_high);

// One row per policy and whole-gradient exchange: floats per worker, their
// ratio to static low, the error proxy (all epochs; critical epochs), level
// changes and, where set, projected time and speedup over static low and
// over dense; the table ends with the fastest row, against the fastest of
// the other kind (compressed or whole-gradient).
void WritePolicyTable(const PolicyComparison& c, std::ostream& out);
void WritePolicyCsv(const PolicyComparison& c, std::ostream& out);
void WritePolicyJson(const PolicyComparison& c, std::ostream& out);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_POLICY_COMPARISON_H_
