#include "analysis/cli/shared_flags.h"

#include <algorithm>
#include <iostream>

#include "analysis/level_policy.h"
#include "common/cli.h"
#include "common/number_format.h"
#include "traces/policy_description.h"
#include "traces/records.h"
#include "traces/scheme_description.h"

namespace accordion::cli {

std::string WithDefault(const std::string& help, const std::string& default_text) {
  return help + " (default: " + default_text + ")";
}

std::string HelpList(const std::vector<double>& values) {
  std::string text;
  for (double v : values) text += (text.empty() ? "" : ",") + HelpNumber(v);
  return text;
}

std::string TracesOwn(const std::string& column) { return "the trace's " + column; }

CLI::Option* AddSchemeFlag(CLI::App* cmd, std::string* scheme, SchemeSet set) {
  return cmd->add_option("--scheme", *scheme, WithDefault("Compression scheme to schedule", "the trace's"))
      ->check(CLI::IsMember(SchemeNames(set)));
}

constexpr const char* kEtaHelp = "Accordion's threshold on the gradient norm's relative change";

CLI::Option* AddEtaFlag(CLI::App* cmd, std::optional<double>* eta, const std::string& default_text) {
  return cmd->add_option("--eta", *eta, WithDefault(kEtaHelp, default_text))->check(AboveZero());
}

CLI::Option* AddEtasFlag(CLI::App* cmd, std::vector<double>* etas, const std::string& default_text) {
  return cmd
      ->add_option("--etas", *etas, WithDefault("Accordion's thresholds to try, a list, e.g. 0.3,0.5", default_text))
      ->delimiter(',')
      ->check(AboveZero());
}

constexpr const char* kIntervalHelp = "Epochs between regime checks";

CLI::Option* AddIntervalFlag(CLI::App* cmd, std::optional<int>* interval, const std::string& default_text) {
  return cmd->add_option("--interval", *interval, WithDefault(kIntervalHelp, default_text))
      ->check(CLI::Range(1, 1000000));
}

CLI::Option* AddIntervalFlag(CLI::App* cmd, std::vector<int>* intervals, const std::string& default_text) {
  return cmd->add_option("--interval", *intervals, WithDefault(kIntervalHelp, default_text))
      ->delimiter(',')
      ->check(CLI::Range(1, 1000000));
}

void AddLevelFlags(CLI::App* cmd, std::optional<double>* low, std::optional<double>* high) {
  const std::string levels = "the trace's pair when it switched levels, else the scheme's default";
  cmd->add_option("--low", *low, WithDefault("Level in critical regimes: rank, TopK fraction or global batch", levels));
  cmd->add_option("--high", *high, WithDefault("Level outside critical regimes", levels));
}

// The policies a schedule can be derived with (those with an algorithm,
// analysis/level_policy.h), from the policy table.
std::vector<std::string> DerivablePolicies() {
  std::vector<std::string> names;
  for (const PolicyDescription& p : AllPolicies()) {
    if (HasAlgorithm(p.policy)) names.emplace_back(p.name);
  }
  return names;
}

// "accordion, adaqs (powersgd, topk) or smith (batch)": a literature
// baseline with the schemes it fits.
std::string DerivablePoliciesHelp() {
  std::vector<std::string> words;
  for (const PolicyDescription& p : AllPolicies()) {
    if (!HasAlgorithm(p.policy)) continue;
    words.emplace_back(p.name);
    if (p.literature_baseline) words.back() += " (" + JoinSchemeNames(p.fits, ", ", ", ") + ")";
  }
  return JoinWords(words, ", ", " or ");
}

CLI::Option* AddPolicyFlag(CLI::App* cmd, std::string* policy) {
  return cmd->add_option("--policy", *policy, WithDefault(DerivablePoliciesHelp(), *policy))
      ->check(CLI::IsMember(DerivablePolicies()));
}

CLI::Option* AddPoliciesFlag(CLI::App* cmd, std::vector<std::string>* policies) {
  return cmd
      ->add_option(
          "--policies", *policies,
          WithDefault("Policies beside static low and high, e.g. accordion,adaqs", "those that fit the scheme"))
      ->delimiter(',')
      ->check(CLI::IsMember(DerivablePolicies()));
}

CLI::Option* AddMsdrFactorFlag(CLI::App* cmd, std::optional<double>* msdr_factor) {
  return cmd
      ->add_option("--msdr-factor", *msdr_factor,
                   WithDefault("AdaQS: the MSDR fall that halves the compression", TracesOwn("run.msdr_factor")))
      ->check(CLI::Range(1.000001, kMaxMsdrFactor));
}

CLI::Option* AddFormatFlag(CLI::App* cmd, std::string* format, const std::vector<std::string>& choices,
                           const std::string& tool) {
  CLI::Option* option =
      cmd->add_option("--format", *format, "Output format (table: for people; csv; json)")->capture_default_str();
  const bool has_table = std::find(choices.begin(), choices.end(), "table") != choices.end();
  if (has_table) {
    // Before 0.2 the human form was "text" (info) or "markdown" (table).
    option->transform(CLI::Validator(
        [tool](std::string& value) {
          if (value == "text" || value == "markdown") {
            NoteDeprecated(tool, "--format " + value, "--format table");
            value = "table";
          }
          return std::string();
        },
        ""));
  }
  return option->check(CLI::IsMember(choices));
}

CLI::Option* AddOverwriteFlag(CLI::App* cmd, bool* overwrite) {
  return cmd->add_flag("--overwrite", *overwrite,
                       "Replace an existing output (never an input: a tool does not write over what it reads; never "
                       "what another process is writing, such as a live trace; a report replaces only an earlier "
                       "report)");
}

CLI::Option* AddBaselineFlag(CLI::App* cmd, std::string* baseline) {
  return cmd->add_option("--baseline", *baseline,
                         "One of the traces: the results table's 'vs' columns divide by its setting, for the rows of "
                         "its training (default: dense, where a dense run is among them)");
}

void NoteDeprecated(const std::string& tool, const std::string& old, const std::string& replacement) {
  std::cerr << tool << ": note: " << old << " is deprecated; use " << replacement << "\n";
}

CLI::Option* AddDeprecatedAlias(CLI::App* cmd, const std::string& tool, const std::string& old_name,
                                CLI::Option* target, const std::optional<std::string>& fixed_value) {
  const std::string new_name = target->get_name();
  auto give = [=](const std::string& value) {
    if (target->count() > 0) {
      throw CLI::ValidationError(old_name, "is the deprecated spelling of " + new_name + ": give only " + new_name);
    }
    NoteDeprecated(tool, old_name, fixed_value ? new_name + " " + *fixed_value : new_name);
    target->add_result(value);
    target->run_callback();  // its checks and its variable, as if it had been given
  };
  CLI::Option* alias =
      fixed_value ? cmd->add_flag_callback(old_name, [give, fixed_value] { give(*fixed_value); })
                  : cmd->add_option_function<std::string>(old_name, give, "Deprecated spelling of " + new_name);
  return alias->group("");
}

}  // namespace accordion::cli
