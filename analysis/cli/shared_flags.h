// The flags of concepts that several accordion-* tools take (a schedule's
// scheme, eta, interval and levels, a policy, an output format), each
// described once so that every tool says it in the same words, and the
// deprecated aliases of renamed flags. Cluster flags are in
// simulator/cli/cluster_flags.h, which needs the simulator.
//
// A help line is the concept's sentence, then "(default ...)" with the
// default of the options class the flag feeds in that tool: the sentence is
// the same everywhere, the default is what the tool really does.
#ifndef ACCORDION_ANALYSIS_CLI_SHARED_FLAGS_H_
#define ACCORDION_ANALYSIS_CLI_SHARED_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "traces/scheme_description.h"

namespace accordion::cli {

// `help` followed by " (default: <default_text>)".
std::string WithDefault(const std::string& help, const std::string& default_text);

// Numbers as a list flag takes them: "0.3,0.5,0.7".
std::string HelpList(const std::vector<double>& values);

// What "the trace's" defaults say in help: "the trace's run.eta".
std::string TracesOwn(const std::string& column);

// --scheme: the schemes of `set` (validated), empty meaning the trace's.
CLI::Option* AddSchemeFlag(CLI::App* cmd, std::string* scheme, SchemeSet set);

// --eta: one threshold; --etas: several (comma-separated), for commands
// that try more than one.
CLI::Option* AddEtaFlag(CLI::App* cmd, std::optional<double>* eta, const std::string& default_text);
CLI::Option* AddEtasFlag(CLI::App* cmd, std::vector<double>* etas, const std::string& default_text);

// --interval: epochs between regime checks; a list in a sweep.
CLI::Option* AddIntervalFlag(CLI::App* cmd, std::optional<int>* interval, const std::string& default_text);
CLI::Option* AddIntervalFlag(CLI::App* cmd, std::vector<int>* intervals, const std::string& default_text);

// --low and --high: the levels in and outside critical regimes.
void AddLevelFlags(CLI::App* cmd, std::optional<double>* low, std::optional<double>* high);

// --policy (one) and --policies (beside static low and high).
CLI::Option* AddPolicyFlag(CLI::App* cmd, std::string* policy);
CLI::Option* AddPoliciesFlag(CLI::App* cmd, std::vector<std::string>* policies);

// --msdr-factor: AdaQS's; empty means the trace's.
CLI::Option* AddMsdrFactorFlag(CLI::App* cmd, std::optional<double>* msdr_factor);

// --format: `choices` of the one vocabulary (table: for people; csv; json),
// listed by the check, so the help sentence is the same everywhere.
// "text" and "markdown", the human form's names before 0.2, are accepted as
// deprecated spellings of "table" where "table" is a choice.
CLI::Option* AddFormatFlag(CLI::App* cmd, std::string* format, const std::vector<std::string>& choices,
                           const std::string& tool);

// --overwrite: replace an existing output.
CLI::Option* AddOverwriteFlag(CLI::App* cmd, bool* overwrite);

// --baseline TRACE: the results table's pinned run (ResultsTableOptions).
CLI::Option* AddBaselineFlag(CLI::App* cmd, std::string* baseline);

// Prints "<tool>: note: <old> is deprecated; use <replacement>" on stderr.
void NoteDeprecated(const std::string& tool, const std::string& old, const std::string& replacement);

// `old_name`, hidden from help, as a deprecated spelling of `target`: its
// value goes to `target` (as if `target` had been given, so its checks
// apply) with the note above; both given is an error. With `fixed_value`,
// `old_name` is a flag that gives `target` that value ("--simulate" for
// "--timing simulate").
CLI::Option* AddDeprecatedAlias(CLI::App* cmd, const std::string& tool, const std::string& old_name,
                                CLI::Option* target, const std::optional<std::string>& fixed_value = std::nullopt);

}  // namespace accordion::cli

#endif  // ACCORDION_ANALYSIS_CLI_SHARED_FLAGS_H_
