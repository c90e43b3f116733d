#include "trainer/train_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/schedule.h"
#include "common/errors.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/idx_file.h"

namespace accordion {

namespace {

const std::vector<std::string> kModels = {"mlp", "cnn", "resnet18"};
const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist", "synthetic"};

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

std::string Num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void CheckLevel(Scheme scheme, double level, const char* flag) {
  const std::string problem = LevelProblem(scheme, level);
  if (!problem.empty()) {
    throw InputError(std::string(flag) + " " + Num(level) + " " + problem + " for --scheme " +
                     ToString(scheme));
  }
}

void CheckNumbers(const TrainOptions& o) {
  if (o.epochs < 1) throw InputError("--epochs must be at least 1");
  if (o.nproc < 1) throw InputError("--nproc must be at least 1");
  if (o.threads < 0) throw InputError("--threads must be positive (0 picks cores / nproc)");
  if (o.batch_size < 1) throw InputError("--batch-size must be at least 1");
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw InputError("--lr must be a positive number");
  if (!(o.momentum >= 0 && o.momentum < 1)) throw InputError("--momentum must be in [0, 1)");
  if (o.nesterov && o.momentum == 0) throw InputError("--nesterov needs a --momentum above 0");
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay)) {
    throw InputError("--weight-decay must be >= 0");
  }
  if (o.warmup_epochs < 0) throw InputError("--warmup-epochs must be >= 0");
  for (int d : o.decay_epochs) {
    if (d < 1) throw InputError("--decay-epochs must be epochs >= 1 (got " + std::to_string(d) + ")");
  }
  if (!(o.decay_factor > 0 && o.decay_factor <= 1)) {
    throw InputError("--decay-factor must be in (0, 1]");
  }
  if (!(o.eta > 0) || !std::isfinite(o.eta)) throw InputError("--eta must be a positive number");
  if (o.interval < 1) throw InputError("--interval must be at least 1 epoch");
  if (o.trace_iterations < 0) throw InputError("--trace-iterations must be >= 0");
  if (!(o.bucket_mb > 0) || !std::isfinite(o.bucket_mb)) throw InputError("--bucket-mb must be > 0");
  if (o.limit_samples < 0) throw InputError("--limit-samples must be >= 0");
  if (!(o.timeout_s >= 1) || !std::isfinite(o.timeout_s)) {
    throw InputError("--timeout must be at least 1 second");
  }
}

void CheckDataset(const TrainOptions& o) {
  if (o.dataset == "synthetic") return;
  const std::string dir = DataDirOf(o);
  if (!IsDirectory(dir)) {
    throw InputError("dataset directory " + dir + " not found" +
                     (o.dataset == "fashion-mnist"
                          ? " (apt-get install dataset-fashion-mnist, or pass --data-dir)"
                          : " (pass --data-dir with the IDX files)"));
  }
  const IdxSplitFiles files = FindIdxSplitFiles(dir);
  const IdxHeader train_images = ReadIdxHeader(files.train_images);
  const IdxHeader train_labels = ReadIdxHeader(files.train_labels);
  const IdxHeader test_images = ReadIdxHeader(files.test_images);
  const IdxHeader test_labels = ReadIdxHeader(files.test_labels);
  CheckImagesAndLabels(train_images, train_labels);
  CheckImagesAndLabels(test_images, test_labels);
}

void CheckPaths(const TrainOptions& o) {
  if (!o.trace.empty()) {
    if (!IsDirectory(ParentOf(o.trace))) {
      throw InputError("--trace " + o.trace + ": directory " + ParentOf(o.trace) + " does not exist");
    }
    if (IsDirectory(o.trace)) throw InputError("--trace " + o.trace + " is a directory");
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
  }
  if (o.resume) {
    const std::optional<CheckpointManifest> m = ReadCheckpointManifest(o.checkpoint_dir);
    if (!m) throw InputError("--resume: no checkpoint in " + o.checkpoint_dir);
    const std::string mismatch = ResumeMismatch(m->config_json, o);
    if (!mismatch.empty()) throw InputError("--resume: " + mismatch);
    if (m->epoch + 1 >= o.epochs) {
      throw InputError("--resume: the checkpoint already holds the last epoch (" +
                       std::to_string(m->epoch) + "); nothing is left to train");
    }
  }
}

}  // namespace

void AddTrainFlags(CLI::App& app, TrainOptions& o) {
  app.add_option("--model", o.model, "mlp, cnn or resnet18 (CIFAR variant)")
      ->check(CLI::IsMember(kModels))
      ->capture_default_str();
  app.add_option("--dataset", o.dataset, "fashion-mnist, mnist (IDX files) or synthetic")
      ->check(CLI::IsMember(kDatasets))
      ->capture_default_str();
  app.add_option("--data-dir", o.data_dir,
                 "Directory of the IDX files (default /usr/share/datasets/<dataset>)");
  app.add_option("--epochs", o.epochs, "Epochs to train")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "GLOBAL batch size, split evenly over workers")
      ->capture_default_str();
  app.add_option("--lr", o.lr, "Learning rate after warm-up")->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  app.add_flag("--nesterov", o.nesterov, "Nesterov momentum");
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay")->capture_default_str();
  app.add_option("--warmup-epochs", o.warmup_epochs, "Linear LR warm-up over these epochs")
      ->capture_default_str();
  app.add_option("--decay-epochs", o.decay_epochs, "Epochs from which the LR is multiplied by "
                                                   "--decay-factor (e.g. --decay-epochs 10 15)");
  app.add_option("--decay-factor", o.decay_factor, "LR factor at each decay epoch")
      ->capture_default_str();
  app.add_option("--scheme", o.scheme, "dense, powersgd or topk")
      ->check(CLI::IsMember({"dense", "powersgd", "topk"}))
      ->capture_default_str();
  app.add_option("--policy", o.policy, "static (fixed level) or accordion")
      ->check(CLI::IsMember({"static", "accordion"}))
      ->capture_default_str();
  app.add_option("--level", o.level,
                 "Static policy: the level (PowerSGD rank, TopK fraction); default the scheme's low");
  app.add_option("--low", o.low, "Accordion: level in critical regimes (default 2 / 0.99)");
  app.add_option("--high", o.high, "Accordion: level outside them (default 1 / 0.1)");
  app.add_option("--eta", o.eta, "Accordion threshold on the norm's relative change")
      ->capture_default_str();
  app.add_option("--interval", o.interval, "Epochs between Accordion checks")->capture_default_str();
  app.add_option("--nproc", o.nproc, "Local worker processes to start")->capture_default_str();
  app.add_option("--threads", o.threads, "Compute threads per worker (default cores / nproc)");
  app.add_option("--seed", o.seed, "Seed of weights, data order and compressors")
      ->capture_default_str();
  app.add_option("--trace", o.trace, "Trace file to record (SQLite)");
  app.add_flag("--overwrite", o.overwrite, "Replace an existing --trace file");
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "Checkpoint every epoch into this directory");
  app.add_flag("--resume", o.resume, "Continue the run checkpointed in --checkpoint-dir");
  app.add_option("--trace-iterations", o.trace_iterations,
                 "Per-iteration timings recorded for the first N iterations of every epoch, "
                 "on every rank")
      ->capture_default_str();
  app.add_option("--bucket-mb", o.bucket_mb, "Gradient bucket size in MiB")->capture_default_str();
  app.add_option("--limit-samples", o.limit_samples, "Train on the first N samples only (0: all)")
      ->capture_default_str();
  app.add_option("--bind-addr", o.bind_addr, "Address this node's workers bind to (multi-node: "
                                             "an address the other nodes reach)")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "Seconds after which a silent peer fails the run")
      ->capture_default_str();
}

LevelPlan LevelsOf(const TrainOptions& o) {
  LevelPlan p;
  p.scheme = *ParseScheme(o.scheme);
  p.policy = *ParsePolicy(o.policy);
  const auto defaults = DefaultLevels(p.scheme, o.batch_size);
  if (p.policy == Policy::kStatic) {
    p.low = p.high = o.level.value_or(defaults.first);
  } else {
    p.low = o.low.value_or(defaults.first);
    p.high = o.high.value_or(defaults.second);
  }
  return p;
}

void ValidateOptions(const TrainOptions& o, bool check_paths) {
  if (std::find(kModels.begin(), kModels.end(), o.model) == kModels.end()) {
    throw InputError("unknown model '" + o.model + "' (models: mlp, cnn, resnet18)");
  }
  if (std::find(kDatasets.begin(), kDatasets.end(), o.dataset) == kDatasets.end()) {
    throw InputError("unknown dataset '" + o.dataset + "' (datasets: fashion-mnist, mnist, synthetic)");
  }
  const auto scheme = ParseScheme(o.scheme);
  if (!scheme || *scheme == Scheme::kBatch) {
    throw InputError("unknown scheme '" + o.scheme + "' (schemes: dense, powersgd, topk)");
  }
  const auto policy = ParsePolicy(o.policy);
  if (!policy) throw InputError("unknown policy '" + o.policy + "' (policies: static, accordion)");
  CheckNumbers(o);
  if (*policy == Policy::kAccordion && *scheme == Scheme::kDense) {
    throw InputError("--policy accordion needs a compressing --scheme (powersgd or topk)");
  }
  if (*policy == Policy::kStatic && (o.low || o.high)) {
    throw InputError("--low and --high belong to --policy accordion; a static run takes --level");
  }
  if (*policy == Policy::kAccordion && o.level) {
    throw InputError("--level belongs to --policy static; accordion takes --low and --high");
  }
  if (*scheme == Scheme::kDense && o.level && *o.level != 0) {
    throw InputError("--scheme dense has no level");
  }
  const LevelPlan levels = LevelsOf(o);
  CheckLevel(levels.scheme, levels.low, levels.policy == Policy::kStatic ? "--level" : "--low");
  CheckLevel(levels.scheme, levels.high, "--high");
  if (o.batch_size % o.nproc != 0) {
    throw InputError("--batch-size " + std::to_string(o.batch_size) +
                     " must split evenly over --nproc " + std::to_string(o.nproc) + " workers");
  }
  CheckDataset(o);
  if (check_paths) CheckPaths(o);
}

double LearningRate(const TrainOptions& o, int epoch) {
  double lr = o.lr;
  if (epoch < o.warmup_epochs) lr = o.lr * (epoch + 1) / o.warmup_epochs;
  for (int d : o.decay_epochs) {
    if (epoch >= d) lr *= o.decay_factor;
  }
  return lr;
}

std::string DataDirOf(const TrainOptions& o) {
  return o.data_dir.empty() ? "/usr/share/datasets/" + o.dataset : o.data_dir;
}

int ThreadsOf(const TrainOptions& o, int workers_on_this_node) {
  if (o.threads > 0) return o.threads;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, workers_on_this_node));
}

std::string ConfigJson(const TrainOptions& o) {
  const LevelPlan levels = LevelsOf(o);
  nlohmann::json j;
  j["model"] = o.model;
  j["dataset"] = o.dataset;
  j["data_dir"] = DataDirOf(o);
  j["epochs"] = o.epochs;
  j["batch_size"] = o.batch_size;
  j["lr"] = o.lr;
  j["momentum"] = o.momentum;
  j["nesterov"] = o.nesterov;
  j["weight_decay"] = o.weight_decay;
  j["warmup_epochs"] = o.warmup_epochs;
  j["decay_epochs"] = o.decay_epochs;
  j["decay_factor"] = o.decay_factor;
  j["scheme"] = o.scheme;
  j["policy"] = o.policy;
  j["level_low"] = levels.low;
  j["level_high"] = levels.high;
  j["eta"] = o.eta;
  j["interval"] = o.interval;
  j["nproc"] = o.nproc;
  j["threads"] = o.threads;
  j["seed"] = o.seed;
  j["trace"] = o.trace;
  j["overwrite"] = o.overwrite;
  j["checkpoint_dir"] = o.checkpoint_dir;
  j["resume"] = o.resume;
  j["trace_iterations"] = o.trace_iterations;
  j["trace_sample"] = "iterations 0.." + std::to_string(o.trace_iterations - 1) +
                      " of every epoch, from every rank (iterations, grad_ready, collectives)";
  j["bucket_mb"] = o.bucket_mb;
  j["limit_samples"] = o.limit_samples;
  j["bind_addr"] = o.bind_addr;
  j["timeout_s"] = o.timeout_s;
  return j.dump();
}

std::string ResumeMismatch(const std::string& saved_config, const TrainOptions& o) {
  nlohmann::json saved = nlohmann::json::parse(saved_config, nullptr, /*allow_exceptions=*/false);
  if (saved.is_discarded() || !saved.is_object()) return "the checkpoint's configuration is unreadable";
  const nlohmann::json now = nlohmann::json::parse(ConfigJson(o));
  // What may change between the interrupted run and its continuation.
  for (const char* free : {"threads", "trace", "overwrite", "checkpoint_dir", "resume", "data_dir",
                           "bind_addr", "timeout_s", "trace_iterations", "trace_sample"}) {
    saved.erase(free);
  }
  for (const auto& [key, value] : saved.items()) {
    if (!now.contains(key) || now[key] != value) {
      std::string flag = key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      return "--" + flag + " differs from the checkpointed run (" + value.dump() + " there, " +
             (now.contains(key) ? now[key].dump() : std::string("absent")) + " now)";
    }
  }
  return "";
}

}  // namespace accordion
