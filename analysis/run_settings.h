// RunSettings: the settings of one recorded run that every writer of a trace
// takes - accordion-train's flags and accordion.ddp.attach's keywords - and
// the one table of fields that describes them.
//
// Each field is one row of RunSettingFields(): its keyword in Python, its
// key in run.config_json, its accordion-train flag, its unit, its bounds and
// whether every rank must give the same value. From the rows follow the
// settings' part of the configuration JSON (both writers write the same keys
// in the same forms), the digest the ranks compare, the bounds checks and
// their messages (in the words of whichever vocabulary the caller speaks),
// the Python keywords and what a reader makes of an old trace's
// configuration. "How to add … a run setting" in docs/ARCHITECTURE.md.
//
// Thread-safe: the table is a constant built on first use.
#ifndef ACCORDION_ANALYSIS_RUN_SETTINGS_H_
#define ACCORDION_ANALYSIS_RUN_SETTINGS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "traces/records.h"

namespace accordion {

// Seed of the weights (accordion-train), the data order and PowerSGD's
// random Q: the same draws from both writers.
inline constexpr int64_t kDefaultRunSeed = 1;
// Steps per epoch and rank whose timings, gradient-ready offsets and
// collectives go into the per-iteration tables.
inline constexpr int kDefaultSampleIterations = 4;
// The network probe's time budget, seconds (NetworkProbeOptions).
inline constexpr double kDefaultNetworkProbeBudgetS = 5;
// AdaQS's MSDR factor (AdaqsOptions::factor).
inline constexpr double kDefaultMsdrFactor = 2;

struct RunSettings {
  CommunicationScheme scheme;  // with TopK's choices
  Policy policy = Policy::kStatic;
  double level_low = 0;   // inside critical regimes, and a static run's one level
  double level_high = 0;  // outside them
  double eta = AccordionOptions().eta();
  int interval = AccordionOptions().interval();  // epochs between checks (AdaQS's too)
  double msdr_factor = kDefaultMsdrFactor;
  double bucket_mb = kDefaultBucketBytes / (1024.0 * 1024.0);  // as given; BucketBytesOf converts
  int64_t seed = kDefaultRunSeed;
  int sample_iterations = kDefaultSampleIterations;
  bool network_probe = true;
  double network_probe_budget_s = kDefaultNetworkProbeBudgetS;
  int epochs = 1;          // planned
  int64_t batch_size = 0;  // global, at the start; 0: unknown (a hook run without a trace)
};

// The bucket in bytes: rounded to the nearest byte, at least one. The one
// conversion of a bucket's MiB.
int64_t BucketBytesOf(const RunSettings& settings);

// Which names a message uses: accordion-train's flags or the hook's keywords.
enum class SettingVocabulary { kFlags, kKeywords };

// What every rank of one run must agree on.
enum class SettingSharing {
  kSame,    // it shapes the collectives every rank takes part in
  kWriter,  // only the writer's (rank 0's) counts: what the trace records
};

// The value kinds a keyword takes, and so what Python may pass.
enum class SettingKind { kBool, kWhole, kNumber, kName };

struct RunSettingField {
  const char* keyword;  // accordion.ddp.attach: "low"
  const char* key;      // run.config_json: "level_low"
  const char* flag;     // accordion-train: "--low"
  SettingKind kind;
  const char* unit;  // as help and docs say it: "MiB", "epochs", "s"; "" for none
  double min = 0;    // bounds of the keyword's value (kWhole, kNumber)
  bool min_included = true;
  double max = 0;
  bool max_included = true;
  // What a value out of bounds is told, after the setting's name: "must be
  // above 1 and at most 1e+06".
  std::string rule;
  SettingSharing sharing = SettingSharing::kSame;
  bool resume_may_change = false;    // accordion-train --resume may give another value
  std::string help;                  // one sentence for --help and the docstring
  std::vector<std::string> choices;  // kName: the accepted names
  // The value under `key`, and the setting from such a value - also the
  // forms older writers recorded (a reader of an old trace). `read` throws
  // InputError on a value of the wrong kind.
  std::function<nlohmann::json(const RunSettings&)> record;
  std::function<void(RunSettings&, const nlohmann::json&)> read;
  // The keyword's value, where it differs from the recorded form (bucket_mb
  // is MiB in both; network_probe is the recorded no_network_probe's
  // negation); empty: the same as record / read.
  std::function<nlohmann::json(const RunSettings&)> keyword_value;
  std::function<void(RunSettings&, const nlohmann::json&)> set_keyword;

  const char* NameIn(SettingVocabulary v) const { return v == SettingVocabulary::kFlags ? flag : keyword; }
  bool InBounds(double value) const;
};

// Every field, in the order docs list them.
const std::vector<RunSettingField>& RunSettingFields();
// The field whose keyword (or config key) is `name`; nullptr for none.
const RunSettingField* FieldWithKeyword(const std::string& keyword);
const RunSettingField* FieldWithKey(const std::string& key);

// The settings as run.config_json's keys (a JSON object). Both writers
// write these keys; accordion-train adds its own flags beside them.
nlohmann::json RecordedSettingsJson(const RunSettings& settings);
// The settings an old or new trace's configuration records; a key it does
// not hold (or holds in a form no writer used) keeps `defaults`' value.
RunSettings SettingsFromConfig(const std::string& config_json, const RunSettings& defaults = RunSettings());

// What the ranks compare before the first step: the kSame fields under
// their keywords.
nlohmann::json SharedSettingsDigest(const RunSettings& settings);

// Sets the field named by keyword `keyword` from a Python value given as
// JSON: a value of another kind or out of bounds is an InputError "<keyword>
// must be <what>, not <value>".
void SetKeyword(RunSettings& settings, const std::string& keyword, const nlohmann::json& value);
nlohmann::json KeywordValue(const RunSettings& settings, const std::string& keyword);

// Throws InputError naming the first problem, in `vocabulary`'s names: a
// field out of bounds, a policy that does not fit the scheme, levels that
// are not the scheme's or in the wrong order, a static run given two.
void CheckRunSettings(const RunSettings& settings, SettingVocabulary vocabulary);

// The controller's options for these settings (levels and mode included).
AccordionOptions AccordionOptionsOf(const RunSettings& settings);

// The run row's fields these settings decide (scheme, policy, levels, eta,
// interval, msdr_factor, seed, epochs_planned, batch_size - a batch
// scheme's is its low level); the writer fills in the rest.
void FillRunInfo(const RunSettings& settings, RunInfo& run);

}  // namespace accordion

#endif  // ACCORDION_ANALYSIS_RUN_SETTINGS_H_
