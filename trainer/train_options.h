// TrainOptions: what one accordion-train run is asked to do, as given on the
// command line, and the checks that must pass before any worker starts.
//
// Nothing here touches LibTorch: the launcher validates a run (flags, dataset
// files, trace and checkpoint paths) in the parent process, so a bad run ends
// with one line and exit code 2 before a worker, a socket or a file exists.
#ifndef ACCORDION_TRAINER_TRAIN_OPTIONS_H_
#define ACCORDION_TRAINER_TRAIN_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/records.h"

namespace CLI {
class App;
}

namespace accordion {

struct TrainOptions {
  std::string model = "mlp";               // mlp, cnn, resnet18
  std::string dataset = "fashion-mnist";   // fashion-mnist, mnist, synthetic
  std::string data_dir;                    // empty: /usr/share/datasets/<dataset>
  int epochs = 10;
  int64_t batch_size = 128;                // global, split evenly over the workers
  double lr = 0.1;
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 1e-4;
  int warmup_epochs = 0;                   // linear ramp to lr over these epochs
  std::vector<int> decay_epochs;           // lr *= decay_factor from each of these on
  double decay_factor = 0.1;
  std::string scheme = "dense";            // dense, powersgd, topk
  std::string policy = "static";           // static, accordion
  std::optional<double> level;             // static: the one level
  std::optional<double> low;               // accordion: level in critical regimes
  std::optional<double> high;              // accordion: level outside them
  double eta = 0.5;
  int interval = 10;
  int nproc = 1;                           // local workers to start
  int threads = 0;                         // per worker; 0: cores / nproc
  int64_t seed = 1;
  std::string trace;                       // trace file to write ("" = none)
  bool overwrite = false;                  // replace an existing trace
  std::string checkpoint_dir;              // "" = no checkpoints
  bool resume = false;
  int trace_iterations = 4;                // sampled iterations per epoch and rank
  double bucket_mb = 25;
  int64_t limit_samples = 0;               // train on the first N samples (0 = all)
  std::string bind_addr = "127.0.0.1";     // address Gloo binds to
  double timeout_s = 45;                   // a silent peer fails the run after this
};

// Declares every flag of accordion-train on `app`, bound to `options`.
void AddTrainFlags(CLI::App& app, TrainOptions& options);

// Throws InputError naming the first problem: values out of range, levels
// that do not fit the scheme, a missing or malformed dataset and, with
// `check_paths`, a trace that exists without --overwrite, an unusable
// checkpoint directory or nothing to resume. Paths are checked once, before
// the run creates them: by the launcher, or by rank 0 under torchrun.
void ValidateOptions(const TrainOptions& options, bool check_paths = true);

// The options' levels as the trace records them.
struct LevelPlan {
  Scheme scheme = Scheme::kDense;
  Policy policy = Policy::kStatic;
  double low = 0;   // == high for static runs
  double high = 0;
};
LevelPlan LevelsOf(const TrainOptions& options);

// LR of `epoch`: linear warm-up ((e + 1) / warmup of lr), then step decay.
double LearningRate(const TrainOptions& options, int epoch);

// Dataset directory actually used.
std::string DataDirOf(const TrainOptions& options);

// Worker threads actually used (resolves threads == 0).
int ThreadsOf(const TrainOptions& options, int workers_on_this_node);

// All options as JSON (the trace's run.config_json and the checkpoint's
// identity). The sampling policy of the per-iteration tables is spelled out.
std::string ConfigJson(const TrainOptions& options);

// Why a checkpoint written under `saved_config` (ConfigJson) cannot be resumed
// with `options` ("" when it can): everything that shapes the trajectory
// must match (--epochs too: the trace plans them); --threads, --timeout,
// --trace-iterations and paths may change.
std::string ResumeMismatch(const std::string& saved_config, const TrainOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TRAIN_OPTIONS_H_
