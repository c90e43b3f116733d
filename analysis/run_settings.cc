#include "analysis/run_settings.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/errors.h"
#include "common/number_format.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"

namespace accordion {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// A TiB: no bucket is larger, and its bytes fit an int64 many times over.
constexpr double kMaxBucketMiB = 1024.0 * 1024.0;
constexpr double kNoLimit = std::numeric_limits<double>::infinity();
constexpr double kMaxInt = std::numeric_limits<int>::max();
// The largest double below 2^63: a seed up to it fits an int64 exactly.
constexpr double kMaxInt64 = 9223372036854774784.0;

// A value as a message shows it; a value of a kind JSON has no word for
// arrives as its Python repr, in a one-element array.
std::string Shown(const nlohmann::json& value) {
  if (value.is_string()) return "'" + value.get<std::string>() + "'";
  if (value.is_array() && value.size() == 1 && value[0].is_string()) return value[0].get<std::string>();
  // JSON has no NaN or infinity: dump() would say "null".
  if (value.is_number_float()) return FormatNumber(value.get<double>());
  return value.dump();
}

// A row whose keyword value is the member itself, recorded as it is.
template <typename T>
RunSettingField Plain(const char* keyword, const char* key, const char* flag, T RunSettings::*member, SettingKind kind,
                      const char* unit, std::string help) {
  RunSettingField f;
  f.keyword = keyword;
  f.key = key;
  f.flag = flag;
  f.kind = kind;
  f.unit = unit;
  f.help = std::move(help);
  f.record = [member](const RunSettings& s) { return nlohmann::json(s.*member); };
  f.read = [member, keyword](RunSettings& s, const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) throw InputError(std::string(keyword) + " must be a boolean, not " + Shown(v));
    } else {
      if (!v.is_number() || v.is_boolean())
        throw InputError(std::string(keyword) + " must be a number, not " + Shown(v));
    }
    s.*member = v.get<T>();
  };
  return f;
}

RunSettingField& Bounds(RunSettingField& f, double min, bool min_included, double max, bool max_included,
                        std::string rule) {
  f.min = min;
  f.min_included = min_included;
  f.max = max;
  f.max_included = max_included;
  f.rule = std::move(rule);
  return f;
}

// How gradients travel and who chooses their levels.
void AddCommunicationFields(std::vector<RunSettingField>& fields) {
  {
    RunSettingField f;
    f.keyword = "scheme";
    f.key = "scheme";
    f.flag = "--scheme";
    f.kind = SettingKind::kName;
    f.unit = "";
    f.help = "How gradients travel: " + JoinSchemeNames(SchemeSet::kAll, ", ", " or ");
    f.choices = SchemeNames();
    f.record = [](const RunSettings& s) { return nlohmann::json(ToString(s.scheme.scheme())); };
    f.read = [](RunSettings& s, const nlohmann::json& v) {
      const std::optional<Scheme> scheme = v.is_string() ? ParseScheme(v.get<std::string>()) : std::nullopt;
      if (!scheme) {
        throw InputError("unknown scheme " + Shown(v) + " (schemes: " + JoinSchemeNames(SchemeSet::kAll, ", ", ", ") +
                         ")");
      }
      s.scheme = CommunicationScheme(*scheme)
                     .topk_dense_vectors(s.scheme.topk_dense_vectors())
                     .topk_error_feedback(s.scheme.topk_error_feedback());
    };
    fields.push_back(std::move(f));
  }
  {
    RunSettingField f;
    f.keyword = "topk_dense_vectors";
    f.key = "topk_dense_vectors";
    f.flag = "--topk-dense-vectors";
    f.kind = SettingKind::kBool;
    f.unit = "";
    f.help = "TopK: send 1-D tensors (biases, BatchNorm) dense, as the reference code does";
    f.record = [](const RunSettings& s) { return nlohmann::json(s.scheme.topk_dense_vectors()); };
    f.read = [](RunSettings& s, const nlohmann::json& v) {
      if (!v.is_boolean()) throw InputError("topk_dense_vectors must be a boolean, not " + Shown(v));
      s.scheme.topk_dense_vectors(v.get<bool>());
    };
    fields.push_back(std::move(f));
  }
  {
    RunSettingField f;
    f.keyword = "topk_error_feedback";
    f.key = "topk_error_feedback";
    f.flag = "--topk-error-feedback";
    f.kind = SettingKind::kBool;
    f.unit = "";
    f.help = "TopK: keep what a step did not send and add it to the next";
    // accordion-train records "on" / "off"; the hook before November 2026 a boolean.
    f.record = [](const RunSettings& s) { return nlohmann::json(s.scheme.topk_error_feedback() ? "on" : "off"); };
    f.read = [](RunSettings& s, const nlohmann::json& v) {
      if (v.is_boolean()) {
        s.scheme.topk_error_feedback(v.get<bool>());
      } else if (v == "on" || v == "off") {
        s.scheme.topk_error_feedback(v == "on");
      } else {
        throw InputError("topk_error_feedback must be on or off, not " + Shown(v));
      }
    };
    f.keyword_value = [](const RunSettings& s) { return nlohmann::json(s.scheme.topk_error_feedback()); };
    f.set_keyword = [](RunSettings& s, const nlohmann::json& v) {
      if (!v.is_boolean()) throw InputError("topk_error_feedback must be a boolean, not " + Shown(v));
      s.scheme.topk_error_feedback(v.get<bool>());
    };
    fields.push_back(std::move(f));
  }
  {
    RunSettingField f;
    f.keyword = "policy";
    f.key = "policy";
    f.flag = "--policy";
    f.kind = SettingKind::kName;
    f.unit = "";
    f.help = PolicyHelp();
    f.choices = PolicyNames();
    f.record = [](const RunSettings& s) { return nlohmann::json(ToString(s.policy)); };
    f.read = [](RunSettings& s, const nlohmann::json& v) {
      const std::optional<Policy> policy = v.is_string() ? ParsePolicy(v.get<std::string>()) : std::nullopt;
      if (!policy) throw InputError("unknown policy " + Shown(v) + " (policies: " + JoinPolicyNames(", ", ", ") + ")");
      s.policy = *policy;
    };
    fields.push_back(std::move(f));
  }
}

// The levels and the policies' own settings.
void AddLevelFields(std::vector<RunSettingField>& fields) {
  fields.push_back(Plain("low", "level_low", "--low", &RunSettings::level_low, SettingKind::kNumber, "",
                         "Accordion: the level inside critical regimes"));
  Bounds(fields.back(), -kNoLimit, false, kNoLimit, false, "must be a finite number");
  fields.push_back(Plain("high", "level_high", "--high", &RunSettings::level_high, SettingKind::kNumber, "",
                         "Accordion: the level outside them"));
  Bounds(fields.back(), -kNoLimit, false, kNoLimit, false, "must be a finite number");
  fields.push_back(Plain("eta", "eta", "--eta", &RunSettings::eta, SettingKind::kNumber, "",
                         "Accordion threshold on the norm's relative change"));
  Bounds(fields.back(), 0, false, kNoLimit, false, "must be a positive number");
  fields.push_back(Plain("interval", "interval", "--interval", &RunSettings::interval, SettingKind::kWhole, "epochs",
                         "Epochs between Accordion checks (AdaQS's MSDR checks too)"));
  Bounds(fields.back(), 1, true, kMaxInt, true, "must be from 1 to 2147483647 epochs");
  fields.push_back(Plain("msdr_factor", "msdr_factor", "--msdr-factor", &RunSettings::msdr_factor, SettingKind::kNumber,
                         "",
                         "adaqs: the fall of the gradients' mean-to-std ratio, since the last switch, that halves the "
                         "compression"));
  Bounds(fields.back(), 1, false, kMaxMsdrFactor, true, "must be above 1 and at most " + FormatNumber(kMaxMsdrFactor));
}

// The exchange, the draws, what the trace samples and the run's size.
void AddRunFields(std::vector<RunSettingField>& fields) {
  fields.push_back(Plain("bucket_mb", "bucket_mb", "--bucket-mb", &RunSettings::bucket_mb, SettingKind::kNumber, "MiB",
                         "Gradient bucket size in MiB"));
  Bounds(fields.back(), 0, false, kMaxBucketMiB, true, "must be above 0 and at most 1048576 (a TiB)");
  fields.push_back(Plain("seed", "seed", "--seed", &RunSettings::seed, SettingKind::kWhole, "",
                         "Seed of weights, data order and compressors"));
  Bounds(fields.back(), -kMaxInt64, true, kMaxInt64, true, "must be a whole number that fits 64 bits (signed)");
  fields.push_back(Plain("sample_iterations", "trace_iterations", "--trace-iterations", &RunSettings::sample_iterations,
                         SettingKind::kWhole, "steps",
                         "Per-iteration timings recorded for the first N steps of every epoch, on every rank"));
  Bounds(fields.back(), 0, true, kMaxInt, true, "must be from 0 to 2147483647 steps");
  fields.back().sharing = SettingSharing::kWriter;
  fields.back().resume_may_change = true;
  {
    RunSettingField f;
    f.keyword = "network_probe";
    f.key = "no_network_probe";
    f.flag = "--no-network-probe";
    f.kind = SettingKind::kBool;
    f.unit = "";
    f.help =
        "Skip the network probe at start (a few seconds of all-reduces and all-gathers that let a replay anchor on "
        "the recorded network)";
    f.resume_may_change = true;
    f.record = [](const RunSettings& s) { return nlohmann::json(!s.network_probe); };
    f.read = [](RunSettings& s, const nlohmann::json& v) {
      if (!v.is_boolean()) throw InputError("no_network_probe must be a boolean, not " + Shown(v));
      s.network_probe = !v.get<bool>();
    };
    f.keyword_value = [](const RunSettings& s) { return nlohmann::json(s.network_probe); };
    f.set_keyword = [](RunSettings& s, const nlohmann::json& v) {
      if (!v.is_boolean()) throw InputError("network_probe must be a boolean, not " + Shown(v));
      s.network_probe = v.get<bool>();
    };
    fields.push_back(std::move(f));
  }
  fields.push_back(Plain("network_probe_budget_s", "network_probe_budget_s", "--network-probe-budget",
                         &RunSettings::network_probe_budget_s, SettingKind::kNumber, "s",
                         "Seconds the network probe may take at most (it ends sooner where two sizes cross at the "
                         "same rate)"));
  Bounds(fields.back(), 0, false, 60, true, "must be in (0, 60] seconds");
  fields.back().resume_may_change = true;
  fields.push_back(Plain("epochs", "epochs", "--epochs", &RunSettings::epochs, SettingKind::kWhole, "epochs",
                         "Epochs the run trains"));
  Bounds(fields.back(), 1, true, kMaxInt, true, "must be from 1 to 2147483647");
  fields.back().sharing = SettingSharing::kWriter;
  fields.push_back(Plain("batch_size", "batch_size", "--batch-size", &RunSettings::batch_size, SettingKind::kWhole,
                         "samples", "The global batch size at the start, every rank's together"));
  Bounds(fields.back(), 0, true, kMaxInt64, true, "must be a whole number >= 0");
  fields.back().sharing = SettingSharing::kWriter;
}

std::vector<RunSettingField> BuildFields() {
  std::vector<RunSettingField> fields;
  AddCommunicationFields(fields);
  AddLevelFields(fields);
  AddRunFields(fields);
  return fields;
}

std::string Said(const RunSettingField& f, SettingVocabulary v, const std::string& value) {
  return v == SettingVocabulary::kFlags ? std::string(f.flag) + " " + value
                                        : std::string(f.keyword) + "='" + value + "'";
}

const RunSettingField& Field(const char* keyword) { return *FieldWithKeyword(keyword); }

// What a keyword of this kind takes, for its type error.
std::string KindWords(const RunSettingField& f) {
  switch (f.kind) {
    case SettingKind::kBool:
      return "a boolean";
    case SettingKind::kWhole:
      return "a whole number";
    case SettingKind::kNumber:
      return "a finite number";
    case SettingKind::kName:
      return "one of " + JoinWords(f.choices, ", ", " or ");
  }
  return "";
}

void CheckPolicyFits(const RunSettings& s, SettingVocabulary v) {
  // One wording (traces/policy_description.h); a flag is "--policy".
  const std::string misfit = PolicyFitProblem(s.policy, s.scheme.scheme());
  if (!misfit.empty()) throw InputError((v == SettingVocabulary::kFlags ? "--" : "") + misfit);
}

void CheckLevels(const RunSettings& s, SettingVocabulary v) {
  const SchemeDescription& d = DescriptionOf(s.scheme.scheme());
  const bool flags = v == SettingVocabulary::kFlags;
  const bool one_level = DescriptionOf(s.policy).one_level();
  const std::string low = one_level ? (flags ? "--level" : "level") : Field("low").NameIn(v);
  const std::string high = Field("high").NameIn(v);
  if (one_level && s.level_low != s.level_high) {
    throw InputError(std::string("policy ") + ToString(s.policy) + " takes one level: " + Field("low").NameIn(v) +
                     " and " + high + " must be equal");
  }
  if (!d.has_levels()) return;
  for (const auto& [level, name] : {std::pair{s.level_low, low}, std::pair{s.level_high, high}}) {
    const std::string problem = LevelProblem(s.scheme.scheme(), level);
    if (!problem.empty()) {
      throw InputError(name + " " + FormatNumber(level) + " " + problem + " for " + Said(Field("scheme"), v, d.name));
    }
  }
  // Critical regimes get the gentler level: a larger rank or fraction, the
  // smaller batch. AdaQS climbs from high to low, Smith et al. from low to
  // high: each only one way, so the same order holds for them.
  const bool batch = d.level_kind == LevelKind::kGlobalBatch;
  if (batch ? s.level_high < s.level_low : s.level_low < s.level_high) {
    throw InputError(std::string(Field("low").NameIn(v)) + " (" + (batch ? "the batch" : "the level") +
                     " inside critical regimes) must " +
                     (batch ? "not exceed " + high + ": the batch only grows"
                            : "compress no more than " + high + ": at least " + high) +
                     ", got " + FormatNumber(s.level_low) + " and " + FormatNumber(s.level_high));
  }
}

}  // namespace

int64_t BucketBytesOf(const RunSettings& s) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::llround(s.bucket_mb * kMiB)));
}

bool RunSettingField::InBounds(double value) const {
  return std::isfinite(value) && (min_included ? value >= min : value > min) &&
         (max_included ? value <= max : value < max);
}

const std::vector<RunSettingField>& RunSettingFields() {
  // Built once and never destroyed: worker threads may still read it at exit.
  static const auto* const fields = new std::vector<RunSettingField>(BuildFields());
  return *fields;
}

const RunSettingField* FieldWithKeyword(const std::string& keyword) {
  for (const RunSettingField& f : RunSettingFields()) {
    if (keyword == f.keyword) return &f;
  }
  return nullptr;
}

const RunSettingField* FieldWithKey(const std::string& key) {
  for (const RunSettingField& f : RunSettingFields()) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

nlohmann::json RecordedSettingsJson(const RunSettings& settings) {
  nlohmann::json j = nlohmann::json::object();
  for (const RunSettingField& f : RunSettingFields()) j[f.key] = f.record(settings);
  return j;
}

RunSettings SettingsFromConfig(const std::string& config_json, const RunSettings& defaults) {
  RunSettings s = defaults;
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return s;
  for (const RunSettingField& f : RunSettingFields()) {
    const auto it = config.find(f.key);
    if (it == config.end()) continue;
    try {
      f.read(s, *it);
    } catch (const InputError&) {
      // A form no writer used keeps the default: a reader describes what it
      // can and validate says what is wrong with the rest.
    }
  }
  return s;
}

nlohmann::json SharedSettingsDigest(const RunSettings& settings) {
  nlohmann::json j = nlohmann::json::object();
  for (const RunSettingField& f : RunSettingFields()) {
    if (f.sharing == SettingSharing::kSame) j[f.keyword] = KeywordValue(settings, f.keyword);
  }
  return j;
}

nlohmann::json KeywordValue(const RunSettings& settings, const std::string& keyword) {
  const RunSettingField* f = FieldWithKeyword(keyword);
  if (f == nullptr) throw InputError("no run setting '" + keyword + "'");
  return f->keyword_value ? f->keyword_value(settings) : f->record(settings);
}

void SetKeyword(RunSettings& settings, const std::string& keyword, const nlohmann::json& value) {
  const RunSettingField* f = FieldWithKeyword(keyword);
  if (f == nullptr) throw InputError("no run setting '" + keyword + "'");
  const bool number = value.is_number() && !value.is_boolean();
  bool kind_fits = false;
  switch (f->kind) {
    case SettingKind::kBool:
      kind_fits = value.is_boolean();
      break;
    case SettingKind::kWhole:
      kind_fits = value.is_number_integer();
      break;
    case SettingKind::kNumber:
      kind_fits = number && std::isfinite(value.get<double>());
      break;
    case SettingKind::kName:
      kind_fits = value.is_string();
      break;
  }
  if (!kind_fits) throw InputError(std::string(keyword) + " must be " + KindWords(*f) + ", not " + Shown(value));
  if (number && !f->rule.empty() && !f->InBounds(value.get<double>())) {
    throw InputError(std::string(keyword) + " " + f->rule + ", not " + Shown(value));
  }
  if (f->set_keyword) {
    f->set_keyword(settings, value);
  } else {
    f->read(settings, value);
  }
}

void CheckRunSettings(const RunSettings& s, SettingVocabulary v) {
  for (const RunSettingField& f : RunSettingFields()) {
    if (f.rule.empty()) continue;
    const nlohmann::json value = f.keyword_value ? f.keyword_value(s) : f.record(s);
    if (value.is_number() && !f.InBounds(value.get<double>())) {
      throw InputError(std::string(f.NameIn(v)) + " " + f.rule + ", not " + Shown(value));
    }
  }
  CheckPolicyFits(s, v);
  CheckLevels(s, v);
  if (DescriptionOf(s.scheme.scheme()).has_levels()) AccordionOptionsOf(s).Validate();
}

AccordionOptions AccordionOptionsOf(const RunSettings& s) {
  const bool batch = DescriptionOf(s.scheme.scheme()).level_kind == LevelKind::kGlobalBatch;
  return AccordionOptions()
      .eta(s.eta)
      .interval(s.interval)
      .level_low(s.level_low)
      .level_high(s.level_high)
      .mode(batch ? ControllerMode::kWholeModel : ControllerMode::kPerLayer);
}

void FillRunInfo(const RunSettings& s, RunInfo& run) {
  run.scheme = s.scheme.scheme();
  run.policy = s.policy;
  run.level_low = s.level_low;
  run.level_high = s.level_high;
  run.eta = s.eta;
  run.interval = s.interval;
  run.msdr_factor = s.msdr_factor;
  run.seed = s.seed;
  run.epochs_planned = s.epochs;
  const bool batch = DescriptionOf(s.scheme.scheme()).level_kind == LevelKind::kGlobalBatch;
  run.batch_size = batch ? static_cast<int64_t>(s.level_low) : s.batch_size;
}

}  // namespace accordion
