// TrainOptions: what one accordion-train run is asked to do, as given on the
// command line, and the checks that must pass before any worker starts.
//
// Nothing here touches LibTorch: the launcher validates a run (flags, dataset
// files, trace and checkpoint paths) in the parent process, so a bad run ends
// with one line and exit code 2 before a worker, a socket or a file exists.
#ifndef ACCORDION_TRAINER_TRAIN_OPTIONS_H_
#define ACCORDION_TRAINER_TRAIN_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "analysis/communication_plan.h"
#include "analysis/run_settings.h"
#include "traces/records.h"
#include "trainer/communicator_options.h"
#include "trainer/hessian_options.h"
#include "trainer/token_file.h"

namespace CLI {
class App;
}

namespace accordion {

inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// Each setting of accordion-train is described once by a row of the flag
// table in train_options.cc: its flag, help, check, ConfigJson key and
// whether a resume or another rank may change it ("How to add a training
// flag" in docs/trainer.md). Settings that another options class owns are
// that class, nested (options.accordion.eta(0.3)), or take their default
// from it where the flag's unit differs (seconds, MiB): each default is
// written once, where it acts.
struct TrainOptions {
  std::string model = "mlp";              // mlp, cnn, resnet18, vgg19bn, lstm, or a TorchScript file
  std::string dataset = "fashion-mnist";  // fashion-mnist, mnist, cifar10, cifar100, tokens, synthetic
  std::string data_dir;                   // empty: /usr/share/datasets/<dataset>
  std::string data_file;                  // tokens: the training text
  std::string valid_file;                 // tokens: validation text ("" = split data_file)
  double valid_fraction = 0.1;            // tokens without valid_file: last share of lines
  bool augment = false;                   // random crop (padding 4) + horizontal flip
  int epochs = 10;
  // Global, split evenly over the workers. Language model: the number of
  // token streams trained side by side. Batch scheme: only the default
  // levels (B / 8B).
  int64_t batch_size = 128;
  double lr = 0.1;
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 1e-4;
  int warmup_epochs = 0;              // linear ramp to lr over these epochs
  std::optional<double> warmup_from;  // the ramp's first LR (default lr / warmup_epochs)
  std::vector<int> decay_epochs;      // lr *= decay_factor from each of these on
  double decay_factor = 0.1;
  double clip = 0;                          // clip the gradient's global norm to this (0 = off)
  std::string scheme = "dense";             // dense, powersgd, topk, batch
  std::string policy = "static";            // static, accordion, adaqs, smith
  double msdr_factor = kDefaultMsdrFactor;  // adaqs: AdaqsOptions::factor
  std::optional<double> level;              // static: the one level
  std::optional<double> low;                // accordion: level in critical regimes
  std::optional<double> high;               // accordion: level outside them
  bool topk_dense_vectors = false;          // topk: 1-D tensors go dense (the reference code's choice)
  std::optional<bool> topk_error_feedback;  // topk: keep what was not sent for the next step (default on)
  // Batch scheme: the global batch of one forward/backward pass, split over
  // the workers (0 = the low level; GlobalMicroBatchOf resolves it).
  int64_t global_micro_batch = 0;
  // --eta and --interval. Its levels and mode are the scheme's (LevelsOf),
  // set where the trainer builds its controllers.
  AccordionOptions accordion;
  int bptt = 35;                // language model: tokens per truncated-backprop window
  int lstm_size = 650;          // language model: embedding and hidden width
  double dropout = 0.4;         // language model: dropout
  bool tie_weights = false;     // language model: decoder shares the embedding
  int hessian_every = 0;        // top Hessian eigenvalue every K epochs (0 = never)
  int64_t hessian_batch = 512;  // samples (LM: sequences) in its fixed batch
  // --hessian-tolerance and --hessian-iterations; its seed is --seed.
  HessianOptions hessian;
  bool hessian_blocks = false;   // also per layer block (top-level module)
  std::string backend = "gloo";  // gloo (CPU) or nccl (CUDA)
  std::string device = "cpu";    // cpu or cuda
  int nproc = 1;                 // local workers to start
  int threads = 0;               // per worker; 0: cores / nproc
  int64_t seed = kDefaultRunSeed;
  std::string trace;           // trace file to write ("" = none)
  bool overwrite = false;      // replace an existing trace
  std::string checkpoint_dir;  // "" = no checkpoints
  bool resume = false;
  int trace_iterations = kDefaultSampleIterations;              // sampled iterations per epoch and rank
  bool no_network_probe = false;                                // skip the collective probe at start (network_probe.h)
  double network_probe_budget_s = kDefaultNetworkProbeBudgetS;  // the probe's time budget (NetworkProbeOptions)
  double bucket_mb = kDefaultBucketBytes / kBytesPerMiB;        // gradient bucket size, in MiB
  int64_t limit_samples = 0;                                    // first N samples (LM: tokens) only (0 = all)
  std::string bind_addr = GlooOptions().bind_addr();            // address Gloo binds to
  // A silent peer fails the run after this (the rendezvous' timeout, in seconds).
  double timeout_s = std::chrono::duration<double>(RendezvousOptions().timeout()).count();
};

// Whether --model names a TorchScript file (torch.jit.script(model).save(path)
// in Python) rather than a built-in model: a path ending in ".pt" or holding
// a '/' (./my_model, models/net.ts).
bool IsModelFile(const std::string& model);

// What the trace's run.model says of --model: the built-in model's name, or
// "torchscript:<file name>" for a TorchScript file (run.config_json keeps
// the path as given).
std::string ModelLabel(const std::string& model);

// Whether this build has the NCCL communicator (a CUDA LibTorch was found).
bool NcclAvailable();

// Declares every flag of accordion-train on `app`, bound to `options`; the
// help shows the defaults of a default-constructed TrainOptions.
void AddTrainFlags(CLI::App& app, TrainOptions& options);

// Throws InputError naming the first problem: values out of range, levels
// that do not fit the scheme, a missing or malformed dataset, a --model file
// that is missing, a directory or unreadable (whether it is TorchScript,
// and trains on the data, models.h's CheckModelFile says) and, with
// `check_paths`, a trace that exists without --overwrite, an unusable
// checkpoint directory or nothing to resume. Paths are checked once, before
// the run creates them: by the launcher, or by rank 0 under torchrun.
void ValidateOptions(const TrainOptions& options, bool check_paths = true);

// The options' scheme and levels as the trace records them.
struct LevelPlan {
  CommunicationScheme scheme;  // with --topk-dense-vectors and --topk-error-feedback
  Policy policy = Policy::kStatic;
  double low = 0;  // == high for static runs
  double high = 0;
};
LevelPlan LevelsOf(const TrainOptions& options);

// The run settings these options give (analysis/run_settings.h), levels
// resolved: what ConfigJson records of them, what the controllers, the
// exchange and the trace's run row are built from.
RunSettings RunSettingsOf(const TrainOptions& options);

// LR of `epoch` at the run's first level: a linear warm-up over
// warmup_epochs - from warmup_from to lr when given, else (e + 1) / warmup of
// lr - then step decay.
double LearningRate(const TrainOptions& options, int epoch);

// LR of `epoch` at `level`: the batch scheme scales it linearly with the
// batch, lr x level / low (Goyal et al.), on top of warm-up and decay; the
// other schemes ignore the level.
double ScaledLearningRate(const TrainOptions& options, int epoch, double level);

// Batch scheme: the global batch of one forward/backward pass, split over
// the workers (--micro-batch, default the low level). A step at a larger
// level accumulates level / global micro-batch of them before one
// all-reduce. Other schemes: the batch size.
int64_t GlobalMicroBatchOf(const TrainOptions& options);

// Dataset directory actually used.
std::string DataDirOf(const TrainOptions& options);

// What --data-file, --valid-file, --valid-fraction and --limit-samples ask
// of the token corpus (--dataset tokens).
TokenCorpusOptions TokenCorpusOptionsOf(const TrainOptions& options);

// Worker threads actually used (resolves threads == 0).
int ThreadsOf(const TrainOptions& options, int workers_on_this_node);

// All options as JSON (the trace's run.config_json and the checkpoint's
// identity). The sampling policy of the per-iteration tables is spelled out.
std::string ConfigJson(const TrainOptions& options);

// Why a checkpoint written under `saved_config` (ConfigJson) cannot be resumed
// with `options` ("" when it can): everything that shapes the trajectory
// must match (--epochs too: the trace plans them); --threads, --timeout,
// --trace-iterations and paths may change. A setting the checkpoint does not
// name (it predates the setting) counts as that setting's default.
std::string ResumeMismatch(const std::string& saved_config, const TrainOptions& options);

// Why workers whose ConfigJson()s are `configs` (in rank order) cannot train
// together ("" when they can), naming the first flag that differs from rank
// 0's. Data paths, --threads, --bind-addr and --timeout are each node's own;
// of --trace and --checkpoint-dir only whether they are given must agree
// (rank 0 writes the trace; each rank its state file).
std::string RankConfigMismatch(const std::vector<std::string>& configs);

// The accordion-train flag that sets a ConfigJson key (level_low is --low
// under Accordion and --level under a static policy); "" for keys no flag
// sets (trace_sample) and keys this build does not record.
std::string FlagOfConfigKey(const std::string& key, const std::string& policy);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TRAIN_OPTIONS_H_
