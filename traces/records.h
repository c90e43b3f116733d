// Plain value types for what a trace holds, one struct per table row.
//
// Times are in seconds and floats_* count 4-byte words sent by one worker.
// docs/trace-format.md is the column-by-column reference.
//
// Thread safety: plain values, safe to read from several threads at once; the
// functions here are pure (they read constant tables only).
#ifndef ACCORDION_TRACES_RECORDS_H_
#define ACCORDION_TRACES_RECORDS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace accordion {

// How gradients travel. The meaning of a "level" depends on it:
//   kDense:    always 0 (no compression);
//   kPowerSgd: the PowerSGD rank r (>= 1);
//   kTopK:     the fraction of entries kept, in (0, 1];
//   kBatch:    the global batch size (dense gradients, fewer steps per epoch);
//   kFp16, kBf16: always 0 (every gradient cast to 16 bits for the all-reduce).
// traces/scheme_description.h describes each one; the names and level
// checks below are built from it.
enum class Scheme { kDense, kPowerSgd, kTopK, kBatch, kFp16, kBf16 };

// What chooses the levels (analysis/level_policy.h):
//   kStatic:    one level throughout;
//   kAccordion: critical regimes from gradient-norm changes (Algorithm 1);
//   kAdaqs:     AdaQS (Guo et al. 2020): the compression halves each time
//               the gradients' mean-to-standard-deviation ratio falls by
//               run.msdr_factor (PowerSGD, TopK; schema v4);
//   kSmith:     Smith et al. 2017: the batch grows by the LR's decay factor
//               where the LR would decay (batch scheme; schema v4).
enum class Policy { kStatic, kAccordion, kAdaqs, kSmith };

// Lifecycle of the run that wrote the trace. Only kComplete means every
// planned epoch is in the file.
// kStoppedEarly: the training loop ended it on purpose before its planned
// epochs (early stopping) and closed it; its finished epochs are whole.
enum class RunStatus { kRunning, kComplete, kInterrupted, kFailed, kStoppedEarly };

const char* ToString(Scheme scheme);
const char* ToString(Policy policy);
const char* ToString(RunStatus status);
// Why `level` is not a level of `scheme` ("" when it is one), e.g. "must be
// a PowerSGD rank in 1..65536".
std::string LevelProblem(Scheme scheme, double level);

// Upper bounds LevelProblem enforces, so a level always fits the integer it
// becomes: a rank far above any layer's size only pads Q with zeros, and a
// batch of 2^31 samples is more than any dataset here holds.
inline constexpr double kMaxPowerSgdRank = 65536;
inline constexpr double kMaxBatchLevel = 2147483648.0;

// Parsers return std::nullopt for unknown names.
std::optional<Scheme> ParseScheme(const std::string& name);
std::optional<Policy> ParsePolicy(const std::string& name);
std::optional<RunStatus> ParseRunStatus(const std::string& name);

struct RunInfo {
  RunStatus status = RunStatus::kRunning;
  bool synthetic = false;  // true for generated traces that no training produced
  std::string model;
  std::string dataset;
  int64_t train_samples = 0;  // examples in one epoch of the training set
  Scheme scheme = Scheme::kDense;
  Policy policy = Policy::kStatic;
  double level_low = 0;   // level inside critical regimes (low compression)
  double level_high = 0;  // level outside them (high compression)
  double eta = 0.5;       // Accordion threshold
  int interval = 10;      // Accordion check interval, epochs
  int world_size = 1;
  std::string backend;     // gloo, nccl, synthetic
  std::string device;      // cpu, cuda, ...
  int64_t batch_size = 0;  // global batch size at the start of the run
  int epochs_planned = 0;
  int64_t seed = 0;
  std::string config_json = "{}";    // the configuration as given
  std::string versions_json = "{}";  // library versions
  std::string started_utc;
  std::string finished_utc;  // empty while running
  // Names the run (random, 32 hex digits) in its trace's meta table and its
  // checkpoints, so a resume can prove they belong together. Empty in traces
  // written before it existed and in synthetic ones.
  std::string run_id;
  // What wrote the trace: kWriterTrainer, kWriterPythonHook,
  // kWriterSynthetic, kWriterLibrary or a library user's own name. Schema v2; "" in v1
  // files (unknown).
  std::string writer;
  // Ranks that shared one host (the hosts' layout: world_size /
  // ranks_per_node hosts). Schema v2; 0 in v1 files (unknown).
  int ranks_per_node = 0;
  // AdaQS: the MSDR must fall to 1 / msdr_factor of the value it had at the
  // last switch for the compression to halve. Schema v4; 2 in older files.
  double msdr_factor = 2;
};

inline constexpr const char* kWriterTrainer = "accordion-train";

// The largest AdaQS MSDR factor any tool takes (accordion-train, the hook,
// a trace's run row and every reader's --msdr-factor): a fall of a million
// times is past any run's.
inline constexpr double kMaxMsdrFactor = 1e6;
inline constexpr const char* kWriterPythonHook = "accordion.ddp";
inline constexpr const char* kWriterSynthetic = "accordion-make-synthetic-trace";
// A program that uses TraceWriter and did not name itself.
inline constexpr const char* kWriterLibrary = "accordion-traces library";

struct LayerInfo {
  int layer_id = 0;
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  bool compressible = false;  // the run's compressor shrinks it at level_high
  double floats_dense = 0;    // floats per step sent uncompressed
  double floats_low = 0;      // floats per step at level_low
  double floats_high = 0;     // floats per step at level_high
};

// A metric a run did not record (the Python hook given no test accuracy):
// NaN in the record, NULL in the trace (schema v3; older files hold a value
// in every row). Displays show it as "—", plots leave the point out.
inline constexpr double kNotRecorded = std::numeric_limits<double>::quiet_NaN();
inline bool Recorded(double metric) { return !std::isnan(metric); }

struct EpochRecord {
  int epoch = 0;
  double lr = 0;
  int64_t batch_size = 0;      // global batch size used in this epoch
  int64_t iterations = 0;      // optimizer steps (communication rounds) in this epoch
  bool critical = false;       // whole-model regime in this epoch
  double model_grad_norm = 0;  // norm of the epoch's accumulated raw gradient, whole model
  // Loss and accuracy (a fraction); kNotRecorded where the run gave none.
  double train_loss = 0;
  double train_acc = 0;
  double test_loss = 0;
  double test_acc = 0;
  double compute_s = 0;    // forward + backward, summed over the epoch (rank 0)
  double compress_s = 0;   // compression and decompression
  double comm_s = 0;       // time blocked in communication (not hidden by backward)
  double total_s = 0;      // wall time of the epoch
  double floats_sent = 0;  // floats sent by one worker during the epoch
  // The LR the run's schedule gives this epoch before any batch factor
  // (what the policies read: Smith grows the batch where it decays). Schema
  // v4; kNotRecorded in older files (TraceView derives it from lr).
  double schedule_lr = kNotRecorded;
};

struct EpochLayerRecord {
  int epoch = 0;
  int layer_id = 0;
  double grad_norm = 0;         // norm of the layer's accumulated raw gradient
  std::optional<double> ratio;  // |prev - curr| / prev where a check ran this epoch
  bool critical = false;        // the layer's regime during this epoch
  double level = 0;             // level used during this epoch
  double floats_sent = 0;       // floats this layer sent during the epoch, one worker
  // The moments AdaQS reads (schema v4; kNotRecorded where not recorded): of
  // one worker's per-step raw gradient g over the epoch's steps and all
  // ranks, the norm of its mean |E[g]| and its standard deviation
  // sqrt(E[|g - E[g]|^2]). Their ratio is the layer's MSDR.
  double grad_mean_norm = kNotRecorded;
  double grad_std = kNotRecorded;
};

// A layer's relative compression error at one candidate level, measured at a
// regime check on the epoch's accumulated raw gradient D (all ranks):
// |D - C(D)| / |D| (schema v4). C is the scheme's compressor at `level`:
// TopK keeps that fraction of entries, PowerSGD its best rank-`level`
// approximation (the point its warm-started power iteration approaches);
// 0 where the level sends the layer dense.
struct ErrorProfileRecord {
  int epoch = 0;
  int layer_id = 0;
  double level = 0;
  double rel_error = 0;
};

struct IterationRecord {
  int epoch = 0;
  int64_t iteration = 0;
  int rank = 0;
  double forward_s = 0;
  double backward_s = 0;
  double compress_s = 0;
  double comm_s = 0;   // blocked waiting for collectives after backward ended
  double total_s = 0;  // the whole step, optimizer included
};

// When a layer's gradient became ready, relative to the start of backward.
struct GradReadyRecord {
  int epoch = 0;
  int64_t iteration = 0;
  int rank = 0;
  int layer_id = 0;
  double offset_s = 0;
};

enum class CollectiveOp { kAllReduce, kAllGather, kBroadcast };
const char* ToString(CollectiveOp op);
std::optional<CollectiveOp> ParseCollectiveOp(const std::string& name);

struct CollectiveRecord {
  int epoch = 0;
  int64_t iteration = 0;
  int rank = 0;
  int seq = 0;  // order of issue within the iteration
  CollectiveOp op = CollectiveOp::kAllReduce;
  int bucket = 0;      // gradient bucket it carries
  std::string tag;     // what it carries: dense, powersgd-p, powersgd-q, topk, ...
  int64_t bytes = 0;   // payload one rank contributes
  double start_s = 0;  // relative to the start of the iteration
  double duration_s = 0;
};

// One timed collective of the network probe a run makes at start, after
// its ranks meet and before training (schema v2): `op` of `bytes` per rank
// over the run's world_size ranks, on an idle network, after a barrier.
// seconds is the slowest rank's time, so it is what a synchronous step
// would wait for. Repeats of one (op, bytes) are numbered from 0.
struct NetworkProbeRecord {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int64_t bytes = 0;
  int repeat = 0;
  double seconds = 0;
};

struct HessianRecord {
  int epoch = 0;
  std::string block;  // "" for the whole model, else a layer block name
  double eigenvalue = 0;
  int iterations = 0;
  double seconds = 0;
};

// Everything one epoch adds to a trace; written in one transaction.
struct EpochData {
  EpochRecord epoch;
  std::vector<EpochLayerRecord> layers;
  std::vector<IterationRecord> iterations;
  std::vector<GradReadyRecord> grad_ready;
  std::vector<CollectiveRecord> collectives;
  std::vector<HessianRecord> hessian;
  std::vector<ErrorProfileRecord> error_profile;  // at regime checks only
};

}  // namespace accordion

#endif  // ACCORDION_TRACES_RECORDS_H_
