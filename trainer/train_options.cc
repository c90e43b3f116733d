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
#include "traces/trace_reader.h"
#include "traces/scheme_description.h"
#include "traces/trace_writer.h"
#include "trainer/checkpoint_manifest.h"
#include "trainer/cifar_file.h"
#include "trainer/idx_file.h"
#include "trainer/token_file.h"

namespace accordion {

namespace {

const std::vector<std::string> kModels = {"mlp", "cnn", "resnet18", "vgg19bn", "lstm"};
const std::vector<std::string> kDatasets = {"fashion-mnist", "mnist", "cifar10", "cifar100", "tokens",
                                            "synthetic"};

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

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
  if (o.warmup_from && (!(*o.warmup_from > 0) || !std::isfinite(*o.warmup_from))) {
    throw InputError("--warmup-from must be a positive learning rate");
  }
  if (o.warmup_from && o.warmup_epochs < 1) throw InputError("--warmup-from needs --warmup-epochs of at least 1");
  if (!(o.clip >= 0) || !std::isfinite(o.clip)) throw InputError("--clip must be >= 0 (0: no clipping)");
  if (o.micro_batch < 0) throw InputError("--micro-batch must be >= 0 (0: the low level)");
  if (o.bptt < 1) throw InputError("--bptt must be at least 1 token");
  if (o.lstm_size < 1) throw InputError("--lstm-size must be at least 1");
  if (!(o.dropout >= 0 && o.dropout < 1)) throw InputError("--dropout must be in [0, 1)");
  if (o.hessian_every < 0) throw InputError("--hessian-every must be >= 0 (0: never)");
  if (o.hessian_batch < 1) throw InputError("--hessian-batch must be at least 1");
  if (!(o.hessian_tolerance > 0) || !std::isfinite(o.hessian_tolerance)) {
    throw InputError("--hessian-tolerance must be a positive number");
  }
  if (o.hessian_max_iterations < 1) throw InputError("--hessian-iterations must be at least 1");
  if (!(o.valid_fraction > 0 && o.valid_fraction < 1)) throw InputError("--valid-fraction must be in (0, 1)");
  if (!(o.timeout_s >= 1) || !std::isfinite(o.timeout_s)) {
    throw InputError("--timeout must be at least 1 second");
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
                     (o.dataset == "fashion-mnist"
                          ? " (apt-get install dataset-fashion-mnist, or pass --data-dir)"
                          : IsCifar(o.dataset) ? " (pass --data-dir with the binary CIFAR files)"
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

// Model, dataset, backend and device that belong together.
void CheckCombination(const TrainOptions& o, Scheme scheme) {
  const bool language = o.model == "lstm";
  if (language != (o.dataset == "tokens")) {
    throw InputError(language ? "--model lstm reads text: pass --dataset tokens --data-file FILE"
                              : "--dataset tokens is for --model lstm");
  }
  if (o.model == "vgg19bn" && !IsCifar(o.dataset)) {
    throw InputError("--model vgg19bn needs 32x32 images (--dataset cifar10 or cifar100); " + o.dataset +
                     " images are 28x28");
  }
  if (language && scheme == Scheme::kBatch) {
    throw InputError("--scheme batch is for the image models (a language model's batch is its token streams)");
  }
  if (o.augment && language) throw InputError("--augment crops and flips images; --model lstm reads text");
  if (o.backend != "gloo" && o.backend != "nccl") throw InputError("unknown backend '" + o.backend + "' (gloo, nccl)");
  if (o.device != "cpu" && o.device != "cuda") throw InputError("unknown device '" + o.device + "' (cpu, cuda)");
  if ((o.backend == "nccl") != (o.device == "cuda")) {
    throw InputError("--backend nccl runs on --device cuda, and --backend gloo on --device cpu");
  }
  if (o.backend == "nccl" && !NcclAvailable()) {
    throw InputError("this accordion-train was built without the NCCL communicator (it needs a CUDA LibTorch; "
                     "see docs/gpu.md)");
  }
}

// The batch scheme's levels are global batch sizes built from micro-batches.
void CheckBatchLevels(const TrainOptions& o, const LevelPlan& levels) {
  if (levels.scheme.scheme() != Scheme::kBatch) {
    if (o.micro_batch != 0) throw InputError("--micro-batch belongs to --scheme batch");
    if (o.batch_size % o.nproc != 0) {
      throw InputError("--batch-size " + std::to_string(o.batch_size) + " must split evenly over --nproc " +
                       std::to_string(o.nproc) + " workers");
    }
    return;
  }
  if (levels.high < levels.low) {
    throw InputError("--high must be the larger batch: under Accordion the batch only grows");
  }
  const int64_t micro = MicroBatchOf(o);
  if (micro % o.nproc != 0) {
    throw InputError("the micro-batch " + std::to_string(micro) + " (--micro-batch, default the low level) must "
                     "split evenly over --nproc " + std::to_string(o.nproc) + " workers");
  }
  for (double level : {levels.low, levels.high}) {
    if (static_cast<int64_t>(level) % micro != 0) {
      throw InputError("batch level " + Num(level) + " is not a whole number of micro-batches of " +
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
      throw InputError("--trace " + o.trace + " is being written by a running accordion-train; wait for it "
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
        throw InputError("--resume: the trace " + o.trace + " is not the one of the checkpoint in " +
                         o.checkpoint_dir + " (run " + (trace_run.empty() ? std::string("unknown") : trace_run) +
                         " there, " + m->run_id + " in the checkpoint); nothing was changed");
      }
    }
    const std::string mismatch = ResumeMismatch(m->config_json, o);
    if (!mismatch.empty()) throw InputError("--resume: " + mismatch);
    // Before any worker starts; each worker checks its own file again (under
    // torchrun another node's files may not be here).
    for (size_t rank = 0; rank < m->state_files.size(); ++rank) {
      const std::string state = CheckpointStatePath(o.checkpoint_dir, m->epoch, static_cast<int>(rank));
      if (Exists(state) && !(DigestOfFile(state) == m->state_files[rank])) {
        throw InputError("--resume: " + state + " is damaged (its size or CRC-32 differs from the manifest's); "
                         "the checkpoint cannot be resumed");
      }
    }
    if (m->epoch + 1 >= o.epochs) {
      throw InputError("--resume: the checkpoint already holds the last epoch (" +
                       std::to_string(m->epoch) + "); nothing is left to train");
    }
  }
}

}  // namespace

void AddTrainFlags(CLI::App& app, TrainOptions& o) {
  app.add_option("--model", o.model, "mlp, cnn, resnet18, vgg19bn (CIFAR variants) or lstm (language model)")
      ->check(CLI::IsMember(kModels))
      ->capture_default_str();
  app.add_option("--dataset", o.dataset,
                 "fashion-mnist, mnist (IDX files), cifar10, cifar100 (binary files), tokens (a text "
                 "file) or synthetic")
      ->check(CLI::IsMember(kDatasets))
      ->capture_default_str();
  app.add_option("--data-dir", o.data_dir,
                 "Directory of the IDX or CIFAR files (default /usr/share/datasets/<dataset>)");
  app.add_option("--data-file", o.data_file, "--dataset tokens: the training text (words, one "
                                             "sentence or paragraph per line)");
  app.add_option("--valid-file", o.valid_file, "--dataset tokens: validation text (default: the last "
                                               "--valid-fraction of --data-file's lines)");
  app.add_option("--valid-fraction", o.valid_fraction, "Share of --data-file's lines held out to validate")
      ->capture_default_str();
  app.add_flag("--augment", o.augment, "Random crop (padding 4) and horizontal flip of training images");
  app.add_option("--epochs", o.epochs, "Epochs to train")->capture_default_str();
  app.add_option("--batch-size", o.batch_size,
                 "GLOBAL batch size, split evenly over workers (lstm: token streams; --scheme batch: "
                 "the default levels B / 8B)")
      ->capture_default_str();
  app.add_option("--lr", o.lr, "Learning rate after warm-up")->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  app.add_flag("--nesterov", o.nesterov, "Nesterov momentum");
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay")->capture_default_str();
  app.add_option("--warmup-epochs", o.warmup_epochs, "Linear LR warm-up over these epochs")
      ->capture_default_str();
  app.add_option("--warmup-from", o.warmup_from, "First LR of the warm-up (default lr / warmup epochs)");
  app.add_option("--decay-epochs", o.decay_epochs, "Epochs from which the LR is multiplied by "
                                                   "--decay-factor (e.g. --decay-epochs 10 15)");
  app.add_option("--decay-factor", o.decay_factor, "LR factor at each decay epoch")
      ->capture_default_str();
  app.add_option("--clip", o.clip, "Clip the averaged gradient's global norm to this (0: off)")
      ->capture_default_str();
  app.add_option("--scheme", o.scheme,
                 JoinSchemeNames(SchemeSet::kAll, ", ", " or ") + " (levels are global batch sizes)")
      ->check(CLI::IsMember(SchemeNames()))
      ->capture_default_str();
  app.add_option("--policy", o.policy, "static (fixed level) or accordion")
      ->check(CLI::IsMember({"static", "accordion"}))
      ->capture_default_str();
  app.add_option("--level", o.level,
                 "Static policy: the level (PowerSGD rank, TopK fraction, global batch); default the "
                 "scheme's low");
  app.add_option("--low", o.low, "Accordion: level in critical regimes (default 2 / 0.99 / B)");
  app.add_option("--high", o.high, "Accordion: level outside them (default 1 / 0.1 / 8B)");
  app.add_flag("--topk-dense-vectors", o.topk_dense_vectors,
               "--scheme topk: send 1-D tensors (biases, BatchNorm) dense in their bucket's all-reduce, as "
               "the reference code does (default: sparsify them too)");
  app.add_option_function<std::string>(
         "--topk-error-feedback", [&o](const std::string& v) { o.topk_error_feedback = v == "on"; },
         "--scheme topk: on keeps what a step did not send and adds it to the next (default); off drops it, "
         "as the reference code effectively does")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--micro-batch", o.micro_batch,
                 "--scheme batch: global batch of one forward/backward; larger levels accumulate "
                 "gradients over several (default: the low level)");
  app.add_option("--eta", o.eta, "Accordion threshold on the norm's relative change")
      ->capture_default_str();
  app.add_option("--interval", o.interval, "Epochs between Accordion checks")->capture_default_str();
  app.add_option("--bptt", o.bptt, "lstm: tokens per truncated-backprop window")->capture_default_str();
  app.add_option("--lstm-size", o.lstm_size, "lstm: embedding and hidden width")->capture_default_str();
  app.add_option("--dropout", o.dropout, "lstm: dropout")->capture_default_str();
  app.add_flag("--tie-weights", o.tie_weights, "lstm: the decoder shares the embedding's weights");
  app.add_option("--hessian-every", o.hessian_every,
                 "Top Hessian eigenvalue every K epochs, recorded in the trace (0: never)")
      ->capture_default_str();
  app.add_option("--hessian-batch", o.hessian_batch, "Samples (lstm: sequences) of its fixed batch")
      ->capture_default_str();
  app.add_option("--hessian-tolerance", o.hessian_tolerance, "Power iteration's relative tolerance")
      ->capture_default_str();
  app.add_option("--hessian-iterations", o.hessian_max_iterations, "Power iteration's cap")
      ->capture_default_str();
  app.add_flag("--hessian-blocks", o.hessian_blocks, "Also one eigenvalue per top-level module");
  app.add_option("--backend", o.backend, "gloo (CPU) or nccl (CUDA)")
      ->check(CLI::IsMember({"gloo", "nccl"}))
      ->capture_default_str();
  app.add_option("--device", o.device, "cpu or cuda (one GPU per worker: LOCAL_RANK's)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--nproc", o.nproc, "Local worker processes to start")->capture_default_str();
  app.add_option("--threads", o.threads, "Compute threads per worker (default cores / nproc)");
  app.add_option("--seed", o.seed, "Seed of weights, data order and compressors")
      ->capture_default_str();
  app.add_option("--trace", o.trace, "Trace file to record (SQLite)");
  app.add_flag("--overwrite", o.overwrite, "Replace an existing --trace file, and another run's checkpoint in --checkpoint-dir (never a trace a live run is writing)");
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "Checkpoint every epoch into this directory");
  app.add_flag("--resume", o.resume, "Continue the run checkpointed in --checkpoint-dir");
  app.add_option("--trace-iterations", o.trace_iterations,
                 "Per-iteration timings recorded for the first N iterations of every epoch, "
                 "on every rank")
      ->capture_default_str();
  app.add_option("--bucket-mb", o.bucket_mb, "Gradient bucket size in MiB")->capture_default_str();
  app.add_option("--limit-samples", o.limit_samples, "Train on the first N samples (lstm: tokens) only (0: all)")
      ->capture_default_str();
  app.add_option("--bind-addr", o.bind_addr, "Address this node's workers bind to (multi-node: "
                                             "an address the other nodes reach)")
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "Seconds after which a silent peer fails the run")
      ->capture_default_str();
}

LevelPlan LevelsOf(const TrainOptions& o) {
  LevelPlan p;
  p.scheme = CommunicationScheme(*ParseScheme(o.scheme))
                 .topk_dense_vectors(o.topk_dense_vectors)
                 .topk_error_feedback(o.topk_error_feedback.value_or(true));
  p.policy = *ParsePolicy(o.policy);
  const auto defaults = DefaultLevels(p.scheme.scheme(), o.batch_size);
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
    throw InputError("unknown model '" + o.model + "' (models: " + Joined(kModels) + ")");
  }
  if (std::find(kDatasets.begin(), kDatasets.end(), o.dataset) == kDatasets.end()) {
    throw InputError("unknown dataset '" + o.dataset + "' (datasets: " + Joined(kDatasets) + ")");
  }
  const auto scheme = ParseScheme(o.scheme);
  if (!scheme) {
    throw InputError("unknown scheme '" + o.scheme + "' (schemes: " + JoinSchemeNames(SchemeSet::kAll, ", ", ", ") +
                     ")");
  }
  const auto policy = ParsePolicy(o.policy);
  if (!policy) throw InputError("unknown policy '" + o.policy + "' (policies: static, accordion)");
  CheckNumbers(o);
  CheckCombination(o, *scheme);
  if (*policy == Policy::kAccordion && !Describe(*scheme).has_levels()) {
    throw InputError("--policy accordion needs a compressing --scheme (" +
                     JoinSchemeNames(SchemeSet::kWithLevels, ", ", " or ") + ")");
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
  if (*scheme != Scheme::kTopK && (o.topk_dense_vectors || o.topk_error_feedback)) {
    throw InputError(std::string(o.topk_dense_vectors ? "--topk-dense-vectors" : "--topk-error-feedback") +
                     " belongs to --scheme topk, not " + o.scheme);
  }
  const LevelPlan levels = LevelsOf(o);
  CheckLevel(levels.scheme.scheme(), levels.low, levels.policy == Policy::kStatic ? "--level" : "--low");
  CheckLevel(levels.scheme.scheme(), levels.high, "--high");
  CheckBatchLevels(o, levels);
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
  return levels.scheme.scheme() == Scheme::kBatch ? lr * level / levels.low : lr;
}

int64_t MicroBatchOf(const TrainOptions& o) {
  const LevelPlan levels = LevelsOf(o);
  if (levels.scheme.scheme() != Scheme::kBatch) return o.batch_size;
  return o.micro_batch > 0 ? o.micro_batch : static_cast<int64_t>(levels.low);
}

bool NcclAvailable() {
#ifdef ACCORDION_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::string DataDirOf(const TrainOptions& o) {
  return o.data_dir.empty() ? "/usr/share/datasets/" + o.dataset : o.data_dir;
}

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
  const LevelPlan levels = LevelsOf(o);
  nlohmann::json j;
  j["model"] = o.model;
  j["dataset"] = o.dataset;
  j["data_dir"] = DataDirOf(o);
  j["data_file"] = o.data_file;
  j["valid_file"] = o.valid_file;
  j["valid_fraction"] = o.valid_fraction;
  j["augment"] = o.augment;
  j["epochs"] = o.epochs;
  j["batch_size"] = o.batch_size;
  j["lr"] = o.lr;
  j["momentum"] = o.momentum;
  j["nesterov"] = o.nesterov;
  j["weight_decay"] = o.weight_decay;
  j["warmup_epochs"] = o.warmup_epochs;
  j["warmup_from"] = o.warmup_from ? nlohmann::json(*o.warmup_from) : nlohmann::json(nullptr);
  j["decay_epochs"] = o.decay_epochs;
  j["decay_factor"] = o.decay_factor;
  j["clip"] = o.clip;
  j["scheme"] = o.scheme;
  j["policy"] = o.policy;
  j["level_low"] = levels.low;
  j["level_high"] = levels.high;
  j["topk_dense_vectors"] = o.topk_dense_vectors;
  j["topk_error_feedback"] = o.topk_error_feedback.value_or(true) ? "on" : "off";
  j["micro_batch"] = MicroBatchOf(o);
  j["eta"] = o.eta;
  j["interval"] = o.interval;
  j["bptt"] = o.bptt;
  j["lstm_size"] = o.lstm_size;
  j["dropout"] = o.dropout;
  j["tie_weights"] = o.tie_weights;
  j["hessian_every"] = o.hessian_every;
  j["hessian_batch"] = o.hessian_batch;
  j["hessian_tolerance"] = o.hessian_tolerance;
  j["hessian_max_iterations"] = o.hessian_max_iterations;
  j["hessian_blocks"] = o.hessian_blocks;
  j["backend"] = o.backend;
  j["device"] = o.device;
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
  // A setting the checkpoint does not name did not exist yet: that run had its default.
  const nlohmann::json defaults = nlohmann::json::parse(ConfigJson(TrainOptions()));
  for (const auto& [key, value] : defaults.items()) {
    if (!saved.contains(key)) saved[key] = value;
  }
  // What may change between the interrupted run and its continuation.
  for (const char* free : {"threads", "trace", "overwrite", "checkpoint_dir", "resume", "data_dir", "data_file",
                           "valid_file", "bind_addr", "timeout_s", "trace_iterations", "trace_sample"}) {
    saved.erase(free);
  }
  for (const auto& [key, value] : saved.items()) {
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
    for (const char* own : {"threads", "data_dir", "data_file", "valid_file", "bind_addr", "timeout_s"}) {
      j.erase(own);
    }
    for (const char* given : {"trace", "checkpoint_dir"}) {
      if (j.contains(given)) j[given] = j[given].is_string() && !j[given].get<std::string>().empty();
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
        if (v.is_boolean() && (name == "trace" || name == "checkpoint_dir")) return std::string(v ? "given" : "none");
        return v.is_null() ? std::string("absent") : v.dump();
      };
      return "the workers were started with different flags: " + (flag.empty() ? key : flag) + " is " +
             shown(value) + " on rank 0 and " + shown(theirs) + " on rank " + std::to_string(rank) +
             " (every worker needs the same flags; only data paths, --threads, --bind-addr and --timeout may differ)";
    }
  }
  return "";
}

std::string FlagOfConfigKey(const std::string& key, const std::string& policy) {
  // Keys named otherwise than their flag; the rest are the flag with '-' for '_'.
  if (key == "level_low") return policy == "static" ? "--level" : "--low";
  if (key == "level_high") return policy == "static" ? "--level" : "--high";
  if (key == "hessian_max_iterations") return "--hessian-iterations";
  if (key == "timeout_s") return "--timeout";
  if (key == "trace_sample") return "";
  std::string flag = key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return "--" + flag;
}

}  // namespace accordion
