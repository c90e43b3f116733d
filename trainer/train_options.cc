#include "trainer/train_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/schedule.h"
#include "common/errors.h"
#include "common/number_format.h"
#include "common/output_file.h"
#include "traces/policy_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/cifar_file.h"
#include "trainer/idx_file.h"
#include "trainer/launcher.h"
#include "trainer/token_file.h"

namespace accordion {

namespace {

// The widest LSTM: 16 x 8192^2 weights in its two layers, 4.3 GB of floats
// before gradients and momentum; --lstm-size 1000000 asked for 64 TB.
constexpr int kMaxLstmSize = 8192;
const std::vector<std::string> kModels = {"mlp", "cnn", "resnet18", "vgg19bn", "lstm"};
const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist", "cifar10", "cifar100", "tokens", "synthetic"};
// Where a dataset's files are without --data-dir: here followed by its name.
const std::string kDatasetsRoot = "/usr/share/datasets/";

bool IsCifar(const std::string& dataset) { return dataset == "cifar10" || dataset == "cifar100"; }

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string ParentOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The flag table. Each accordion-train setting is described once, by one
// TrainFlag row: AddTrainFlags, the number checks, ConfigJson, the resume
// whitelist and the flag names in ResumeMismatch and RankConfigMismatch are
// all read from it, so a new flag cannot be registered but left out of the
// checkpoint's identity, or reported under a flag that does not exist.

// The numbers a flag accepts. NaN and infinities never are.
struct Range {
  double min;
  bool min_included;
  double max;
  bool max_included;

  bool Contains(double v) const {
    return std::isfinite(v) && (min_included ? v >= min : v > min) && (max_included ? v <= max : v < max);
  }
};

constexpr double kNoLimit = std::numeric_limits<double>::infinity();

Range AtLeast(double min) { return {min, /*min_included=*/true, kNoLimit, /*max_included=*/true}; }
Range Above(double min) { return {min, /*min_included=*/false, kNoLimit, /*max_included=*/true}; }
// A rate the optimizer multiplies float32 parameters by: LibTorch refuses a
// scalar float32 cannot hold ("cannot be converted to type float without
// overflow"), which ended a run as an internal error mid-step.
Range PositiveFloat32() {
  return {0, /*min_included=*/false, std::numeric_limits<float>::max(), /*max_included=*/true};
}

// What the workers of one run must agree on.
enum class RankAgreement {
  kSame,          // it shapes the computation every rank takes part in
  kNodeOwn,       // each node's own: paths, threads, the address it binds, its patience
  kWhetherGiven,  // only whether it is given: rank 0 writes the trace, each rank its state file
};

// One setting of accordion-train: how it is given, checked and recorded, and
// who may change it. Rows are built by Flag, Number, OnOff or RecordedOnly
// and refined by the chained setters.
struct TrainFlag {
  const char* flag = nullptr;  // nullptr: ConfigJson records it, but no flag sets it
  std::string help;
  // ConfigJson's key; nullptr where other keys record the value (--level's
  // is in level_low and level_high).
  const char* key = nullptr;
  // The flag that sets `key` under a static policy, when it is not `flag`:
  // --level for level_low and level_high.
  const char* static_policy_flag = nullptr;
  std::vector<std::string> choices;  // the accepted values; empty: any the member's type takes
  std::string default_text;          // what --help shows as the default; empty: nothing
  bool resume_may_change = false;    // the resume whitelist
  RankAgreement ranks = RankAgreement::kSame;
  std::function<CLI::Option*(CLI::App&, TrainOptions&)> bind;  // registers `flag` on the app
  std::function<nlohmann::json(const TrainOptions&)> record;   // the value under `key`
  std::function<void(const TrainOptions&)> check;              // throws InputError; empty: none

  TrainFlag& Choices(std::vector<std::string> values) {
    choices = std::move(values);
    return *this;
  }
  // For members whose default is a stand-in (0 for "computed"): the help
  // text says what it stands for.
  TrainFlag& NoDefaultShown() {
    default_text.clear();
    return *this;
  }
  // ConfigJson records what the run actually uses, not the member as given.
  TrainFlag& Records(std::function<nlohmann::json(const TrainOptions&)> value) {
    record = std::move(value);
    return *this;
  }
  TrainFlag& Checked(std::function<void(const TrainOptions&)> test) {
    check = std::move(test);
    return *this;
  }
  TrainFlag& MayChangeOnResume() {
    resume_may_change = true;
    return *this;
  }
  // Adds to the help (a run setting's defaults per scheme, say).
  TrainFlag& Help(const std::string& more) {
    help += more;
    return *this;
  }
  TrainFlag& StaticPolicyFlag(const char* name) {
    static_policy_flag = name;
    return *this;
  }
  TrainFlag& Ranks(RankAgreement agreement) {
    ranks = agreement;
    return *this;
  }
};

// A default level as help shows it: "2", "0.99", "B", "8B" (a batch level
// is a multiple of --batch-size B).
std::string DefaultLevelText(const SchemeDescription& d, double level) {
  if (d.level_kind != LevelKind::kGlobalBatch) return FormatNumber(level);
  return level == 1 ? "B" : FormatNumber(level) + "B";
}

// Each scheme's default level, as --low's and --high's help show them: "2 /
// 0.99 / B".
std::string DefaultLevelsText(double SchemeDescription::*level) {
  std::string text;
  for (const SchemeDescription& d : AllSchemes()) {
    if (d.has_levels()) text += (text.empty() ? "" : " / ") + DefaultLevelText(d, d.*level);
  }
  return text;
}

// "--scheme batch: the default levels B / 8B", for --batch-size's help.
std::string BatchSchemesText() {
  std::string text;
  for (const SchemeDescription& d : AllSchemes()) {
    if (!InSet(d, SchemeSet::kBatchLevels)) continue;
    text += (text.empty() ? "" : "; ") + std::string("--scheme ") + d.name + ": the default levels " +
            DefaultLevelText(d, d.default_low) + " / " + DefaultLevelText(d, d.default_high);
  }
  return text;
}

// "--scheme topk", the schemes a group's flags belong to, for their help and errors.
std::string SchemeFlagOf(SchemeSet set) { return "--scheme " + JoinSchemeNames(set, ", ", " or "); }

template <typename T>
nlohmann::json JsonOf(const T& value) {
  return value;
}
template <typename T>
nlohmann::json JsonOf(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// CLI11 turns a 64-bit number given beyond its range (--seed 2^64) into the
// largest one without a word; this refuses it in the parse error's one line.
CLI::Validator WithinInt64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        std::strtoll(text.c_str(), &end, 10);
        if (errno != ERANGE) return "";
        return text + " is outside the 64-bit integers (" + std::to_string(std::numeric_limits<int64_t>::min()) + ".." +
               std::to_string(std::numeric_limits<int64_t>::max()) + ")";
      },
      "");
}

// Where a row's value lives in TrainOptions: a member of its own, or an
// option of a nested options class (AccordionOptions, HessianOptions), which
// has no mutable reference to bind, only its chained setter.
template <typename T>
struct Setting {
  std::function<const T&(const TrainOptions&)> get;
  // Registers `flag` on the app, writing what it is given into `o`.
  std::function<CLI::Option*(CLI::App&, TrainOptions&, const char* flag, const std::string& help)> bind;
};

template <typename T>
Setting<T> Member(T TrainOptions::*member) {
  Setting<T> s;
  s.get = [member](const TrainOptions& o) -> const T& { return o.*member; };
  s.bind = [member](CLI::App& app, TrainOptions& o, const char* flag, const std::string& help) {
    if constexpr (std::is_same_v<T, bool>) {
      return app.add_flag(flag, o.*member, help);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return app.add_option(flag, o.*member, help)->check(WithinInt64());
    } else {
      return app.add_option(flag, o.*member, help);
    }
  };
  return s;
}

// The option `get`/`set` (its getter and its setter: the same name twice,
// e.g. &AccordionOptions::eta) of the options class TrainOptions nests at
// `nested`.
template <typename Owner, typename T>
Setting<T> In(Owner TrainOptions::*nested, T const& (Owner::*get)() const noexcept, Owner& (Owner::*set)(T const&)) {
  static_assert(!std::is_same_v<T, bool> && !std::is_same_v<T, int64_t>, "bind switches and int64s as members");
  Setting<T> s;
  s.get = [nested, get](const TrainOptions& o) -> const T& { return ((o.*nested).*get)(); };
  s.bind = [nested, set](CLI::App& app, TrainOptions& o, const char* flag, const std::string& help) {
    return app.add_option_function<T>(
        flag, [&o, nested, set](const T& value) { ((o.*nested).*set)(value); }, help);
  };
  return s;
}

// The default --help shows, as CLI11 itself would print the setting of a
// default-constructed TrainOptions (so the help never restates a default).
template <typename T>
std::string DefaultTextOf(const Setting<T>& setting) {
  const TrainOptions defaults;
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    return CLI::detail::checked_to_string<T, T>(setting.get(defaults));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return setting.get(defaults);
  } else {
    return "";  // switches, optionals and lists have no default to show
  }
}

// `flag` sets `setting`, which ConfigJson records under `key`.
template <typename T>
TrainFlag Flag(const char* flag, const char* key, Setting<T> setting, const std::string& help) {
  TrainFlag f;
  f.flag = flag;
  f.help = help;
  f.key = key;
  f.default_text = DefaultTextOf(setting);
  f.bind = [flag, bind = setting.bind, help](CLI::App& app, TrainOptions& o) { return bind(app, o, flag, help); };
  f.record = [get = setting.get](const TrainOptions& o) { return JsonOf(get(o)); };
  return f;
}
template <typename T>
TrainFlag Flag(const char* flag, const char* key, T TrainOptions::*member, const std::string& help) {
  return Flag(flag, key, Member(member), help);
}

// A number flag whose value must lie in `range`; else the error is the flag
// followed by `rule`.
template <typename T>
TrainFlag Number(const char* flag, const char* key, Setting<T> setting, const std::string& help, Range range,
                 const std::string& rule) {
  return Flag(flag, key, setting, help).Checked([flag, get = setting.get, range, rule](const TrainOptions& o) {
    if (!range.Contains(static_cast<double>(get(o)))) throw InputError(std::string(flag) + " " + rule);
  });
}
template <typename T>
TrainFlag Number(const char* flag, const char* key, T TrainOptions::*member, const std::string& help, Range range,
                 const std::string& rule) {
  return Number(flag, key, Member(member), help, range, rule);
}

// Run setting `keyword`, a switch given as on or off; unset means on.
TrainFlag OnOff(const char* keyword, std::optional<bool> TrainOptions::*member) {
  const RunSettingField& field = *FieldWithKeyword(keyword);
  TrainFlag f;
  f.flag = field.flag;
  f.help = field.help + " (on or off; default on)";
  f.key = field.key;
  f.choices = {"on", "off"};
  f.bind = [flag = field.flag, member, help = f.help](CLI::App& app, TrainOptions& o) {
    return app.add_option_function<std::string>(
        flag, [&o, member](const std::string& v) { o.*member = v == "on"; }, help);
  };
  f.record = [&field](const TrainOptions& o) { return field.record(RunSettingsOf(o)); };
  return f;
}

// `flag`'s row is run setting `keyword` (analysis/run_settings.h): the
// flag, its ConfigJson key, help, record and resume rule are the field's,
// and CheckRunSettings checks it (ValidateOptions), in the flag's words.
template <typename T>
TrainFlag RunSettingFlag(const char* keyword, Setting<T> setting) {
  const RunSettingField& field = *FieldWithKeyword(keyword);
  TrainFlag f = Flag(field.flag, field.key, setting, field.help);
  f.record = [&field](const TrainOptions& o) { return field.record(RunSettingsOf(o)); };
  f.resume_may_change = field.resume_may_change;
  if (!field.choices.empty()) f.choices = field.choices;
  return f;
}
template <typename T>
TrainFlag RunSettingFlag(const char* keyword, T TrainOptions::*member) {
  return RunSettingFlag(keyword, Member(member));
}

// A ConfigJson key that no flag sets.
TrainFlag RecordedOnly(const char* key, std::function<nlohmann::json(const TrainOptions&)> value) {
  TrainFlag f;
  f.key = key;
  f.record = std::move(value);
  return f;
}

// The data: model, dataset, files, augmentation.
std::vector<TrainFlag> DataFlags() {
  return {
      // No Choices: a TorchScript file is a path (ValidateOptions names the models).
      Flag("--model", "model", &TrainOptions::model,
           "mlp, cnn, resnet18, vgg19bn (CIFAR variants; vgg19bn pads 28x28 images to 32x32), lstm (language model), "
           "or a TorchScript file (a path ending in .pt or holding a '/': torch.jit.script(model).save(path))"),
      Flag("--dataset", "dataset", &TrainOptions::dataset,
           "fashion-mnist, mnist (IDX files), cifar10, cifar100 (binary files), tokens (a text "
           "file) or synthetic")
          .Choices(kDatasets),
      Flag("--data-dir", "data_dir", &TrainOptions::data_dir,
           "Directory of the IDX or CIFAR files (default " + kDatasetsRoot + "<dataset>)")
          .Records(DataDirOf)
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn),
      Flag("--data-file", "data_file", &TrainOptions::data_file,
           "--dataset tokens: the training text (words, one sentence or paragraph per line)")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn),
      Flag("--valid-file", "valid_file", &TrainOptions::valid_file,
           "--dataset tokens: validation text (default: the last --valid-fraction of --data-file's lines)")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn),
      Number("--valid-fraction", "valid_fraction", &TrainOptions::valid_fraction,
             "Share of --data-file's lines held out to validate",
             {0, /*min_included=*/false, 1, /*max_included=*/false}, "must be in (0, 1)"),
      Flag("--augment", "augment", &TrainOptions::augment,
           "Random crop (padding 4) and horizontal flip of training images"),
  };
}

// The optimisation: epochs, batch, learning-rate schedule, clipping.
std::vector<TrainFlag> OptimizerFlags() {
  return {
      RunSettingFlag("epochs", &TrainOptions::epochs),
      RunSettingFlag("batch_size", &TrainOptions::batch_size)
          .Help(", split evenly over workers (lstm: token streams; " + BatchSchemesText() + ")")
          .Checked([](const TrainOptions& o) {
            // The hook may not know its batch (0); a training run does.
            if (o.batch_size < 1) throw InputError("--batch-size must be at least 1");
          }),
      Number("--lr", "lr", &TrainOptions::lr, "Learning rate after warm-up", PositiveFloat32(),
             "must be a positive number float32 holds (at most 3.4e38)"),
      Number("--momentum", "momentum", &TrainOptions::momentum, "SGD momentum",
             {0, /*min_included=*/true, 1, /*max_included=*/false}, "must be in [0, 1)"),
      Flag("--nesterov", "nesterov", &TrainOptions::nesterov, "Nesterov momentum").Checked([](const TrainOptions& o) {
        if (o.nesterov && o.momentum == 0) throw InputError("--nesterov needs a --momentum above 0");
      }),
      Number("--weight-decay", "weight_decay", &TrainOptions::weight_decay, "L2 weight decay", AtLeast(0),
             "must be >= 0"),
      Number("--warmup-epochs", "warmup_epochs", &TrainOptions::warmup_epochs, "Linear LR warm-up over these epochs",
             AtLeast(0), "must be >= 0"),
      Flag("--warmup-from", "warmup_from", &TrainOptions::warmup_from,
           "First LR of the warm-up (default lr / warmup epochs)")
          .Checked([](const TrainOptions& o) {
            if (o.warmup_from && !PositiveFloat32().Contains(*o.warmup_from)) {
              throw InputError("--warmup-from must be a positive learning rate float32 holds (at most 3.4e38)");
            }
            if (o.warmup_from && o.warmup_epochs < 1) {
              throw InputError("--warmup-from needs --warmup-epochs of at least 1");
            }
          }),
      Flag("--decay-epochs", "decay_epochs", &TrainOptions::decay_epochs,
           "Epochs from which the LR is multiplied by --decay-factor (e.g. --decay-epochs 10 15)")
          .Checked([](const TrainOptions& o) {
            for (int d : o.decay_epochs) {
              if (d < 1) throw InputError("--decay-epochs must be epochs >= 1 (got " + std::to_string(d) + ")");
            }
          }),
      Number("--decay-factor", "decay_factor", &TrainOptions::decay_factor, "LR factor at each decay epoch",
             {0, /*min_included=*/false, 1, /*max_included=*/true}, "must be in (0, 1]"),
      Number("--clip", "clip", &TrainOptions::clip, "Clip the averaged gradient's global norm to this (0: off)",
             AtLeast(0), "must be >= 0 (0: no clipping)"),
  };
}

// How gradients travel and who chooses their levels (run settings, run_settings.h).
std::vector<TrainFlag> CommunicationFlags() {
  return {
      RunSettingFlag("scheme", &TrainOptions::scheme),
      RunSettingFlag("policy", &TrainOptions::policy),
      RunSettingFlag("msdr_factor", &TrainOptions::msdr_factor),
      Flag("--level", /*key=*/nullptr, &TrainOptions::level,
           "Static policy: the level (PowerSGD rank, TopK fraction, global batch); default the scheme's low"),
      RunSettingFlag("low", &TrainOptions::low)
          .Help(" (default " + DefaultLevelsText(&SchemeDescription::default_low) + ")")
          .StaticPolicyFlag("--level"),
      RunSettingFlag("high", &TrainOptions::high)
          .Help(" (default " + DefaultLevelsText(&SchemeDescription::default_high) + ")")
          .StaticPolicyFlag("--level"),
      RunSettingFlag("topk_dense_vectors", &TrainOptions::topk_dense_vectors),
      OnOff("topk_error_feedback", &TrainOptions::topk_error_feedback),
      Number("--micro-batch", "micro_batch", &TrainOptions::global_micro_batch,
             SchemeFlagOf(SchemeSet::kBatchLevels) +
                 ": global batch of one forward/backward; larger levels accumulate gradients over "
                 "several (default: the low level)",
             AtLeast(0), "must be >= 0 (0: the low level)")
          .NoDefaultShown()
          .Records(GlobalMicroBatchOf),
      RunSettingFlag("eta", In(&TrainOptions::accordion, &AccordionOptions::eta, &AccordionOptions::eta)),
      RunSettingFlag("interval",
                     In(&TrainOptions::accordion, &AccordionOptions::interval, &AccordionOptions::interval)),
  };
}

// The language model's shape and the Hessian estimate.
std::vector<TrainFlag> ModelAndHessianFlags() {
  return {
      Number("--bptt", "bptt", &TrainOptions::bptt, "lstm: tokens per truncated-backprop window", AtLeast(1),
             "must be at least 1 token"),
      Number("--lstm-size", "lstm_size", &TrainOptions::lstm_size,
             "lstm: embedding and hidden width (at most " + std::to_string(kMaxLstmSize) +
                 ": its two layers then hold 1.1 billion weights)",
             {1, /*min_included=*/true, kMaxLstmSize, /*max_included=*/true},
             "must be in 1.." + std::to_string(kMaxLstmSize) + " (the weights grow with its square)"),
      Number("--dropout", "dropout", &TrainOptions::dropout, "lstm: dropout",
             {0, /*min_included=*/true, 1, /*max_included=*/false}, "must be in [0, 1)"),
      Flag("--tie-weights", "tie_weights", &TrainOptions::tie_weights,
           "lstm: the decoder shares the embedding's weights"),
      Number("--hessian-every", "hessian_every", &TrainOptions::hessian_every,
             "Top Hessian eigenvalue every K epochs, recorded in the trace (0: never)", AtLeast(0),
             "must be >= 0 (0: never)"),
      Number("--hessian-batch", "hessian_batch", &TrainOptions::hessian_batch,
             "Samples (lstm: sequences) of its fixed batch", AtLeast(1), "must be at least 1"),
      Number("--hessian-tolerance", "hessian_tolerance",
             In(&TrainOptions::hessian, &HessianOptions::tolerance, &HessianOptions::tolerance),
             "Power iteration's relative tolerance", Above(0), "must be a positive number"),
      Number("--hessian-iterations", "hessian_max_iterations",
             In(&TrainOptions::hessian, &HessianOptions::max_iterations, &HessianOptions::max_iterations),
             "Power iteration's cap", AtLeast(1), "must be at least 1"),
      Flag("--hessian-blocks", "hessian_blocks", &TrainOptions::hessian_blocks,
           "Also one eigenvalue per top-level module"),
  };
}

// Processes, seeds, outputs and the network: where and how the run executes.
std::vector<TrainFlag> ProcessFlags() {
  return {
      Flag("--backend", "backend", &TrainOptions::backend, "gloo (CPU or CUDA tensors) or nccl (CUDA)")
          .Choices({"gloo", "nccl"}),
      Flag("--device", "device", &TrainOptions::device,
           "cpu or cuda (LOCAL_RANK's GPU; under gloo several workers may share one)")
          .Choices({"cpu", "cuda"}),
      Flag("--nproc", "nproc", &TrainOptions::nproc, "Local worker processes to start (" + LocalWorkerLimitText() + ")")
          .Checked([](const TrainOptions& o) {
            if (o.nproc < 1) throw InputError("--nproc must be at least 1");
            CheckLocalWorkers(o.nproc, "--nproc");
          }),
      Flag("--threads", "threads", &TrainOptions::threads,
           "Compute threads per worker (default cores / nproc; at most " + std::to_string(kMaxThreadsPerCore) +
               " per core)")
          .Checked([](const TrainOptions& o) {
            const int most = kMaxThreadsPerCore * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            if (o.threads < 0) throw InputError("--threads must be positive (0 picks cores / nproc)");
            if (o.threads > most) {
              throw InputError("--threads " + std::to_string(o.threads) + " is above " +
                               std::to_string(kMaxThreadsPerCore) + " per core (at most " + std::to_string(most) +
                               " on this machine)");
            }
          })
          .NoDefaultShown()
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn),
      RunSettingFlag("seed", &TrainOptions::seed),
      Flag("--trace", "trace", &TrainOptions::trace, "Trace file to record (SQLite)")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kWhetherGiven),
      Flag("--overwrite", "overwrite", &TrainOptions::overwrite,
           "Replace an existing --trace file, and another run's checkpoint in --checkpoint-dir (never a trace or "
           "a checkpoint directory a live run is using)")
          .MayChangeOnResume(),
      Flag("--checkpoint-dir", "checkpoint_dir", &TrainOptions::checkpoint_dir,
           "Checkpoint every epoch into this directory (held for the run's life: a second run, an --overwrite "
           "or a --resume of it is refused while it lives)")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kWhetherGiven),
      Flag("--resume", "resume", &TrainOptions::resume, "Continue the run checkpointed in --checkpoint-dir")
          .MayChangeOnResume(),
      RunSettingFlag("sample_iterations", &TrainOptions::trace_iterations),
      // The sampling policy of the per-iteration tables, spelled out for a reader of the trace.
      RecordedOnly("trace_sample",
                   [](const TrainOptions& o) {
                     return "iterations 0.." + std::to_string(o.trace_iterations - 1) +
                            " of every epoch, from every rank (iterations, grad_ready, collectives)";
                   })
          .MayChangeOnResume(),
      RunSettingFlag("network_probe", &TrainOptions::no_network_probe),
      RunSettingFlag("network_probe_budget_s", &TrainOptions::network_probe_budget_s),
      RunSettingFlag("bucket_mb", &TrainOptions::bucket_mb),
      Number("--limit-samples", "limit_samples", &TrainOptions::limit_samples,
             "Train on the first N samples (lstm: tokens) only (0: all)", AtLeast(0), "must be >= 0"),
      Flag("--bind-addr", "bind_addr", &TrainOptions::bind_addr,
           "Address this node's workers bind to (multi-node: an address the other nodes reach)")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn)
          .Checked([](const TrainOptions& o) { CheckBindAddress(o.bind_addr, "--bind-addr"); }),
      Number("--timeout", "timeout_s", &TrainOptions::timeout_s, "Seconds after which a silent peer fails the run",
             AtLeast(1), "must be at least 1 second")
          .MayChangeOnResume()
          .Ranks(RankAgreement::kNodeOwn),
  };
}

const std::vector<TrainFlag>& TrainFlags() {
  // Built once and never destroyed: worker threads may still read it at exit.
  static const auto* const flags = [] {
    auto* all = new std::vector<TrainFlag>();
    for (std::vector<TrainFlag> (*group)() :
         {DataFlags, OptimizerFlags, CommunicationFlags, ModelAndHessianFlags, ProcessFlags}) {
      std::vector<TrainFlag> rows = group();
      all->insert(all->end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
    }
    return all;
  }();
  return *flags;
}

// The row whose ConfigJson key is `key`; nullptr for none.
const TrainFlag* FlagWithKey(const std::string& key) {
  for (const TrainFlag& f : TrainFlags()) {
    if (f.key != nullptr && key == f.key) return &f;
  }
  return nullptr;
}

void CheckNumbers(const TrainOptions& o) {
  for (const TrainFlag& f : TrainFlags()) {
    if (f.check) f.check(o);
  }
}

void CheckTokenCorpus(const TrainOptions& o) {
  if (o.data_file.empty()) throw InputError("--dataset tokens needs --data-file (a word-level text file)");
  const TokenCorpus corpus = ReadTokenCorpus(TokenCorpusOptionsOf(o));
  // Each of the batch's token streams needs an input and a next token.
  const auto needed = static_cast<size_t>(2 * o.batch_size);
  if (corpus.train.size() < needed) {
    throw InputError(o.data_file + ": " + std::to_string(corpus.train.size()) + " training tokens are too few for " +
                     std::to_string(o.batch_size) + " streams (--batch-size) of at least 2 tokens");
  }
  if (corpus.valid.size() < 2) throw InputError("the validation split holds fewer than 2 tokens");
}

void CheckDataset(const TrainOptions& o) {
  if (o.dataset == "synthetic") return;
  if (o.dataset == "tokens") return CheckTokenCorpus(o);
  const std::string dir = DataDirOf(o);
  if (!IsDirectory(dir)) {
    throw InputError("dataset directory " + dir + " not found" +
                     (o.dataset == "fashion-mnist" ? " (apt-get install dataset-fashion-mnist, or pass --data-dir)"
                      : IsCifar(o.dataset)         ? " (pass --data-dir with the binary CIFAR files)"
                                                   : " (pass --data-dir with the IDX files)"));
  }
  if (IsCifar(o.dataset)) {
    const CifarVariant variant = o.dataset == "cifar10" ? CifarVariant::kCifar10 : CifarVariant::kCifar100;
    const CifarSplitFiles files = FindCifarFiles(dir, variant);
    for (const std::string& f : files.train) CheckCifarFile(f, variant);
    CheckCifarFile(files.test, variant);
    return;
  }
  const IdxSplitFiles files = FindIdxSplitFiles(dir);
  const IdxHeader train_images = ReadIdxHeader(files.train_images);
  const IdxHeader train_labels = ReadIdxHeader(files.train_labels);
  const IdxHeader test_images = ReadIdxHeader(files.test_images);
  const IdxHeader test_labels = ReadIdxHeader(files.test_labels);
  CheckImagesAndLabels(train_images, train_labels);
  CheckImagesAndLabels(test_images, test_labels);
}

// --model FILE: what can be told without loading it (models.h's
// CheckModelFile loads it and runs a step, where LibTorch is).
void CheckModelPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError("--model " + path + ": no such file (a TorchScript file, as torch.jit.script(model).save(path) " +
                     "writes; or a built-in model: " + JoinWords(kModels, ", ", ", ") + ")");
  }
  if (S_ISDIR(st.st_mode)) throw InputError("--model " + path + " is a directory, not a TorchScript file");
  if (!S_ISREG(st.st_mode)) throw InputError("--model " + path + " is not a regular file");
  if (::access(path.c_str(), R_OK) != 0) throw InputError("--model " + path + " cannot be read (permission denied)");
}

// Model, dataset, backend and device that belong together.
void CheckCombination(const TrainOptions& o, Scheme scheme) {
  // A TorchScript model takes whatever the dataset gives (CheckModelFile
  // runs it on a batch); a built-in one is an image or a language model.
  const bool model_file = IsModelFile(o.model);
  const bool language = model_file ? o.dataset == "tokens" : o.model == "lstm";
  if (!model_file && language != (o.dataset == "tokens")) {
    throw InputError(language ? "--model lstm reads text: pass --dataset tokens --data-file FILE"
                              : "--dataset tokens is for --model lstm");
  }
  if (language && InSet(DescriptionOf(scheme), SchemeSet::kBatchLevels)) {
    throw InputError(std::string("--scheme ") + ToString(scheme) +
                     " is for the image models (a language model's batch is its token streams)");
  }
  if (o.augment && language) {
    throw InputError(std::string("--augment crops and flips images; ") +
                     (model_file ? "--dataset tokens is text" : "--model lstm reads text"));
  }
  if (o.backend != "gloo" && o.backend != "nccl") throw InputError("unknown backend '" + o.backend + "' (gloo, nccl)");
  if (o.device != "cpu" && o.device != "cuda") throw InputError("unknown device '" + o.device + "' (cpu, cuda)");
  // Gloo also moves CUDA tensors (through host memory): the way to run
  // several ranks on one GPU, which NCCL refuses.
  if (o.backend == "nccl" && o.device != "cuda") throw InputError("--backend nccl runs on --device cuda");
  if (o.backend == "nccl" && !NcclAvailable()) {
    throw InputError(
        "this accordion-train was built without the NCCL communicator (it needs a CUDA LibTorch; "
        "see docs/gpu.md)");
  }
}

// The batch scheme's levels are global batch sizes built from micro-batches.
void CheckBatchLevels(const TrainOptions& o, const LevelPlan& levels) {
  if (!InSet(DescriptionOf(levels.scheme.scheme()), SchemeSet::kBatchLevels)) {
    if (o.global_micro_batch != 0)
      throw InputError("--micro-batch belongs to " + SchemeFlagOf(SchemeSet::kBatchLevels));
    if (o.batch_size % o.nproc != 0) {
      throw InputError("--batch-size " + std::to_string(o.batch_size) + " must split evenly over --nproc " +
                       std::to_string(o.nproc) + " workers");
    }
    return;
  }
  const int64_t micro = GlobalMicroBatchOf(o);
  if (micro % o.nproc != 0) {
    throw InputError("the micro-batch " + std::to_string(micro) +
                     " (--micro-batch, default the low level) must "
                     "split evenly over --nproc " +
                     std::to_string(o.nproc) + " workers");
  }
  for (double level : {levels.low, levels.high}) {
    if (static_cast<int64_t>(level) % micro != 0) {
      throw InputError("batch level " + FormatNumber(level) + " is not a whole number of micro-batches of " +
                       std::to_string(micro));
    }
  }
}
void CheckPaths(const TrainOptions& o) {
  if (!o.trace.empty()) {
    if (!IsDirectory(ParentOf(o.trace))) {
      throw InputError("--trace " + o.trace + ": directory " + ParentOf(o.trace) + " does not exist");
    }
    if (IsDirectory(o.trace)) throw InputError("--trace " + o.trace + " is a directory");
    struct stat st {};
    if (::lstat(o.trace.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw InputError("--trace " + o.trace + " exists and is not a regular file; refusing to write over it");
    }
    if (TraceBeingWritten(o.trace)) {
      throw InputError("--trace " + o.trace +
                       " is being written by a running accordion-train; wait for it "
                       "or choose another path");
    }
    if (!o.resume && !o.overwrite && Exists(o.trace)) {
      throw InputError("--trace " + o.trace + " already exists (pass --overwrite to replace it)");
    }
    if (o.resume && !Exists(o.trace)) {
      throw InputError("--resume: the trace " + o.trace + " to continue does not exist");
    }
  }
  if (o.resume && o.checkpoint_dir.empty()) {
    throw InputError("--resume needs the --checkpoint-dir of the run to continue");
  }
  if (!o.checkpoint_dir.empty()) {
    if (Exists(o.checkpoint_dir) && !IsDirectory(o.checkpoint_dir)) {
      throw InputError("--checkpoint-dir " + o.checkpoint_dir + " is not a directory");
    }
    if (!Exists(o.checkpoint_dir) && !IsDirectory(ParentOf(o.checkpoint_dir))) {
      throw InputError("--checkpoint-dir " + o.checkpoint_dir + ": parent directory does not exist");
    }
    // A live run's directory: not for a second run, an --overwrite or a --resume.
    if (DirectoryInUse(o.checkpoint_dir)) {
      throw InputError("--checkpoint-dir " + o.checkpoint_dir +
                       " is in use by a running accordion-train; wait for it or choose another directory");
    }
  }
  if (!o.resume && !o.overwrite && !o.checkpoint_dir.empty()) {
    if (const std::optional<CheckpointManifest> m = ReadCheckpointManifest(o.checkpoint_dir)) {
      throw InputError("--checkpoint-dir " + o.checkpoint_dir + " holds another run's checkpoint (epoch " +
                       std::to_string(m->epoch) + "); pass --resume to continue it or --overwrite to replace it");
    }
  }
  if (o.resume) {
    const std::optional<CheckpointManifest> m = ReadCheckpointManifest(o.checkpoint_dir);
    if (!m) throw InputError("--resume: no checkpoint in " + o.checkpoint_dir);
    if (!o.trace.empty() && !m->run_id.empty()) {
      const std::string trace_run = TraceReader::Open(o.trace)->run().run_id;
      if (trace_run != m->run_id) {
        throw InputError("--resume: the trace " + o.trace + " is not the one of the checkpoint in " + o.checkpoint_dir +
                         " (run " + (trace_run.empty() ? std::string("unknown") : trace_run) + " there, " + m->run_id +
                         " in the checkpoint); nothing was changed");
      }
    }
    const std::string mismatch = ResumeMismatch(m->config_json, o);
    if (!mismatch.empty()) throw InputError("--resume: " + mismatch);
    // Before any worker starts; each worker checks its own file again (under
    // torchrun another node's files may not be here). A missing file is
    // refused here where it must be here: rank 0's always (this is its
    // machine), every rank's when this launcher starts them all. Found only
    // by its worker, it failed the run and marked the trace so.
    const size_t here = o.nproc == static_cast<int>(m->state_files.size()) ? m->state_files.size() : 1;
    for (size_t rank = 0; rank < m->state_files.size(); ++rank) {
      const std::string state = CheckpointStatePath(o.checkpoint_dir, m->epoch, static_cast<int>(rank));
      if (rank < here && !Exists(state)) {
        throw InputError("--resume: " + state + ": no such file; the checkpoint of epoch " + std::to_string(m->epoch) +
                         " cannot be resumed (nothing was changed)");
      }
      if (Exists(state) && !(DigestOfFile(state) == m->state_files[rank])) {
        throw InputError("--resume: " + state +
                         " is damaged (its size or CRC-32 differs from the manifest's); "
                         "the checkpoint cannot be resumed");
      }
    }
    if (m->epoch + 1 >= o.epochs) {
      throw InputError("--resume: the checkpoint already holds the last epoch (" + std::to_string(m->epoch) +
                       "); nothing is left to train");
    }
  }
}

}  // namespace

void AddTrainFlags(CLI::App& app, TrainOptions& o) {
  for (const TrainFlag& f : TrainFlags()) {
    if (f.flag == nullptr) continue;
    CLI::Option* option = f.bind(app, o);
    if (!f.choices.empty()) option->check(CLI::IsMember(f.choices));
    if (!f.default_text.empty()) option->default_str(f.default_text);
    option->description(f.help);  // with what a row's Help() added after it was bound
  }
}

LevelPlan LevelsOf(const TrainOptions& o) {
  LevelPlan p;
  p.scheme = CommunicationScheme(*ParseScheme(o.scheme))
                 .topk_dense_vectors(o.topk_dense_vectors)
                 .topk_error_feedback(o.topk_error_feedback.value_or(true));
  p.policy = *ParsePolicy(o.policy);
  const auto defaults = DefaultLevels(p.scheme.scheme(), o.batch_size);
  if (DescriptionOf(p.policy).one_level()) {
    p.low = p.high = o.level.value_or(defaults.first);
  } else {
    p.low = o.low.value_or(defaults.first);
    p.high = o.high.value_or(defaults.second);
  }
  return p;
}

RunSettings RunSettingsOf(const TrainOptions& o) {
  const LevelPlan levels = LevelsOf(o);
  RunSettings s;
  s.scheme = levels.scheme;
  s.policy = levels.policy;
  s.level_low = levels.low;
  s.level_high = levels.high;
  s.eta = o.accordion.eta();
  s.interval = o.accordion.interval();
  s.msdr_factor = o.msdr_factor;
  s.bucket_mb = o.bucket_mb;
  s.seed = o.seed;
  s.sample_iterations = o.trace_iterations;
  s.network_probe = !o.no_network_probe;
  s.network_probe_budget_s = o.network_probe_budget_s;
  s.epochs = o.epochs;
  s.batch_size = o.batch_size;
  return s;
}

bool IsModelFile(const std::string& model) {
  const std::string suffix = ".pt";
  return model.find('/') != std::string::npos ||
         (model.size() > suffix.size() && model.compare(model.size() - suffix.size(), suffix.size(), suffix) == 0);
}

std::string ModelLabel(const std::string& model) {
  if (!IsModelFile(model)) return model;
  const auto slash = model.find_last_of('/');
  return "torchscript:" + (slash == std::string::npos ? model : model.substr(slash + 1));
}

namespace {

// The policies a flag belongs to, in its error: "static".
std::string PolicyNamesWhere(bool (PolicyDescription::*holds)() const) {
  std::vector<std::string> names;
  for (const PolicyDescription& d : AllPolicies()) {
    if ((d.*holds)()) names.emplace_back(d.name);
  }
  return JoinWords(names, ", ", " or ");
}

}  // namespace

void ValidateOptions(const TrainOptions& o, bool check_paths) {
  if (IsModelFile(o.model)) {
    CheckModelPath(o.model);
  } else if (std::find(kModels.begin(), kModels.end(), o.model) == kModels.end()) {
    throw InputError("unknown model '" + o.model + "' (--model: " + JoinWords(kModels, ", ", ", ") +
                     ", or a TorchScript file: a path ending in .pt)");
  }
  if (std::find(kDatasets.begin(), kDatasets.end(), o.dataset) == kDatasets.end()) {
    throw InputError("unknown dataset '" + o.dataset + "' (datasets: " + JoinWords(kDatasets, ", ", ", ") + ")");
  }
  const auto scheme = ParseScheme(o.scheme);
  if (!scheme) {
    throw InputError("unknown scheme '" + o.scheme + "' (schemes: " + JoinSchemeNames(SchemeSet::kAll, ", ", ", ") +
                     ")");
  }
  const auto policy = ParsePolicy(o.policy);
  if (!policy) throw InputError("unknown policy '" + o.policy + "' (policies: " + JoinPolicyNames(", ", ", ") + ")");
  CheckNumbers(o);
  CheckCombination(o, *scheme);
  const PolicyDescription& p = DescriptionOf(*policy);
  if (p.one_level() && (o.low || o.high)) {
    throw InputError("--low and --high belong to the adaptive policies; a " + o.policy + " run takes --level");
  }
  if (!p.one_level() && o.level) {
    throw InputError("--level belongs to --policy " + PolicyNamesWhere(&PolicyDescription::one_level) + "; " +
                     o.policy + " takes --low and --high");
  }
  if (!p.reads_moments() && o.msdr_factor != TrainOptions().msdr_factor) {
    throw InputError("--msdr-factor belongs to --policy " + PolicyNamesWhere(&PolicyDescription::reads_moments));
  }
  if (!DescriptionOf(*scheme).has_levels() && o.level && *o.level != 0) {
    throw InputError("--scheme " + o.scheme + " has no level");
  }
  if (!InSet(DescriptionOf(*scheme), SchemeSet::kSparse) && (o.topk_dense_vectors || o.topk_error_feedback)) {
    throw InputError(std::string(o.topk_dense_vectors ? "--topk-dense-vectors" : "--topk-error-feedback") +
                     " belongs to " + SchemeFlagOf(SchemeSet::kSparse) + ", not " + o.scheme);
  }
  // The run settings' bounds, the policy's fit and the levels, as the hook
  // checks them (analysis/run_settings.h), in the flags' words.
  CheckRunSettings(RunSettingsOf(o), SettingVocabulary::kFlags);
  CheckBatchLevels(o, LevelsOf(o));
  CheckDataset(o);
  if (check_paths) CheckPaths(o);
}

double LearningRate(const TrainOptions& o, int epoch) {
  double lr = o.lr;
  if (epoch < o.warmup_epochs) {
    lr = o.warmup_from ? *o.warmup_from + (o.lr - *o.warmup_from) * epoch / o.warmup_epochs
                       : o.lr * (epoch + 1) / o.warmup_epochs;
  }
  for (int d : o.decay_epochs) {
    if (epoch >= d) lr *= o.decay_factor;
  }
  return lr;
}

double ScaledLearningRate(const TrainOptions& o, int epoch, double level) {
  const double lr = LearningRate(o, epoch);
  const LevelPlan levels = LevelsOf(o);
  return InSet(DescriptionOf(levels.scheme.scheme()), SchemeSet::kBatchLevels) ? lr * level / levels.low : lr;
}

int64_t GlobalMicroBatchOf(const TrainOptions& o) {
  const LevelPlan levels = LevelsOf(o);
  if (!InSet(DescriptionOf(levels.scheme.scheme()), SchemeSet::kBatchLevels)) return o.batch_size;
  return o.global_micro_batch > 0 ? o.global_micro_batch : static_cast<int64_t>(levels.low);
}

bool NcclAvailable() {
#ifdef ACCORDION_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::string DataDirOf(const TrainOptions& o) { return o.data_dir.empty() ? kDatasetsRoot + o.dataset : o.data_dir; }

TokenCorpusOptions TokenCorpusOptionsOf(const TrainOptions& o) {
  return TokenCorpusOptions()
      .train_path(o.data_file)
      .valid_path(o.valid_file)
      .valid_fraction(o.valid_fraction)
      .limit_tokens(o.limit_samples);
}

int ThreadsOf(const TrainOptions& o, int workers_on_this_node) {
  if (o.threads > 0) return o.threads;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, workers_on_this_node));
}

std::string ConfigJson(const TrainOptions& o) {
  nlohmann::json j;
  for (const TrainFlag& f : TrainFlags()) {
    if (f.key != nullptr) j[f.key] = f.record(o);
  }
  return j.dump();
}

std::string ResumeMismatch(const std::string& saved_config, const TrainOptions& o) {
  nlohmann::json saved = nlohmann::json::parse(saved_config, nullptr, /*allow_exceptions=*/false);
  if (saved.is_discarded() || !saved.is_object()) return "the checkpoint's configuration is unreadable";
  const nlohmann::json now = nlohmann::json::parse(ConfigJson(o));
  // A setting the checkpoint does not name did not exist yet: that run had its default.
  const nlohmann::json defaults = nlohmann::json::parse(ConfigJson(TrainOptions()));
  for (const auto& [key, value] : defaults.items()) {
    if (!saved.contains(key)) saved[key] = value;
  }
  // What may change between the interrupted run and its continuation.
  for (const TrainFlag& f : TrainFlags()) {
    if (f.key != nullptr && f.resume_may_change) saved.erase(f.key);
  }
  // What defines the run first: another scheme or policy changes what the
  // levels mean, and naming --high for a run resumed with another --scheme
  // sent the user to the wrong flag.
  std::vector<std::string> keys = {"model", "dataset", "scheme", "policy"};
  for (const auto& item : saved.items()) {
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) keys.push_back(item.key());
  }
  for (const std::string& key : keys) {
    if (!saved.contains(key)) continue;
    const nlohmann::json& value = saved[key];
    if (!now.contains(key) || now[key] != value) {
      const std::string flag = FlagOfConfigKey(key, o.policy);
      return (flag.empty() ? key : flag) + " differs from the checkpointed run (" + value.dump() + " there, " +
             (now.contains(key) ? now[key].dump() : std::string("absent")) + " now)";
    }
  }
  return "";
}

std::string RankConfigMismatch(const std::vector<std::string>& configs) {
  auto comparable = [](const std::string& text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return nlohmann::json();
    for (const TrainFlag& f : TrainFlags()) {
      if (f.key == nullptr) continue;
      if (f.ranks == RankAgreement::kNodeOwn) j.erase(f.key);
      if (f.ranks == RankAgreement::kWhetherGiven && j.contains(f.key)) {
        j[f.key] = j[f.key].is_string() && !j[f.key].get<std::string>().empty();
      }
    }
    return j;
  };
  if (configs.empty()) return "";
  const nlohmann::json reference = comparable(configs[0]);
  const std::string policy = reference.value("policy", "");
  for (size_t rank = 1; rank < configs.size(); ++rank) {
    const nlohmann::json other = comparable(configs[rank]);
    if (other.is_null()) return "rank " + std::to_string(rank) + " sent an unreadable configuration";
    for (const auto& [key, value] : reference.items()) {
      const nlohmann::json theirs = other.contains(key) ? other[key] : nlohmann::json();
      if (theirs == value) continue;
      const std::string flag = FlagOfConfigKey(key, policy);
      // An init-capture: C++17 cannot capture a structured binding (clang refuses).
      auto shown = [&name = key](const nlohmann::json& v) {
        const TrainFlag* f = FlagWithKey(name);
        if (v.is_boolean() && f != nullptr && f->ranks == RankAgreement::kWhetherGiven) {
          return std::string(v ? "given" : "none");
        }
        return v.is_null() ? std::string("absent") : v.dump();
      };
      return "the workers were started with different flags: " + (flag.empty() ? key : flag) + " is " + shown(value) +
             " on rank 0 and " + shown(theirs) + " on rank " + std::to_string(rank) +
             " (every worker needs the same flags; only data paths, --threads, --bind-addr and --timeout may differ)";
    }
  }
  return "";
}

std::string FlagOfConfigKey(const std::string& key, const std::string& policy) {
  const TrainFlag* f = FlagWithKey(key);
  if (f == nullptr || f->flag == nullptr) return "";
  if (f->static_policy_flag != nullptr && policy == "static") return f->static_policy_flag;
  return f->flag;
}

}  // namespace accordion
