#include "traces/record_checks.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "traces/trace_error.h"

namespace accordion {

namespace {

std::string Num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

[[noreturn]] void Invalid(const std::string& where, const std::string& what) {
  throw TraceError(TraceErrorCode::kInvalidValue, where + ": " + what);
}

void Finite(double v, const std::string& where, const char* column) {
  if (!std::isfinite(v)) Invalid(where, std::string(column) + " is not finite (" + Num(v) + ")");
}

void NonNegative(double v, const std::string& where, const char* column) {
  Finite(v, where, column);
  if (v < 0) Invalid(where, std::string(column) + " is negative (" + Num(v) + ")");
}

void Fraction(double v, const std::string& where, const char* column) {
  NonNegative(v, where, column);
  if (v > 1.0) Invalid(where, std::string(column) + " is above 1 (" + Num(v) + ")");
}

void InRange(int64_t v, int64_t end, const std::string& where, const char* column,
             const char* bound) {
  if (v < 0 || v >= end) {
    throw TraceError(TraceErrorCode::kOutOfRange,
                     where + ": " + column + " " + std::to_string(v) + " is outside [0, " +
                         std::to_string(end) + ") (" + bound + ")");
  }
}

// Checks the (epoch, iteration, rank) key the per-iteration tables share and
// returns the row's description for later messages.
std::string CheckIterationKey(const char* table, int epoch, int64_t iteration, int rank,
                              const RunInfo& run) {
  const std::string where = std::string(table) + " row for epoch " + std::to_string(epoch) +
                            " iteration " + std::to_string(iteration) + " rank " +
                            std::to_string(rank);
  InRange(epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  InRange(rank, run.world_size, where, "rank", "run.world_size");
  if (iteration < 0) Invalid(where, "iteration is negative");
  return where;
}

std::string EpochWhere(const char* table, int epoch) {
  return std::string(table) + " row for epoch " + std::to_string(epoch);
}


void CheckLevel(double level, Scheme scheme, const std::string& where, const char* column) {
  const std::string problem = LevelProblem(scheme, level);
  if (!problem.empty()) Invalid(where, std::string(column) + " " + problem + " (" + Num(level) + ")");
}

}  // namespace

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> shape;
  if (text.empty()) return shape;  // a scalar
  std::string::size_type pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma - pos);
    if (part.empty() || part.size() > 12 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      Invalid("layers.shape", "'" + text + "' is not a comma-separated list of sizes");
    }
    shape.push_back(std::stoll(part));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return shape;
}

std::string FormatShape(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
  }
  return out;
}

void CheckRun(const RunInfo& run) {
  const std::string where = "run";
  if (run.world_size < 1) Invalid(where, "world_size must be >= 1");
  if (run.epochs_planned < 1) Invalid(where, "epochs_planned must be >= 1");
  if (run.interval < 1) Invalid(where, "interval must be >= 1");
  if (run.batch_size < 1) Invalid(where, "batch_size must be >= 1");
  if (run.train_samples < 1) Invalid(where, "train_samples must be >= 1");
  NonNegative(run.eta, where, "eta");
  CheckLevel(run.level_low, run.scheme, where, "level_low");
  CheckLevel(run.level_high, run.scheme, where, "level_high");
  if (run.model.empty()) Invalid(where, "model is empty");
}

void CheckLayer(const LayerInfo& layer, int expected_id) {
  const std::string where = "layers row " + std::to_string(expected_id);
  if (layer.layer_id != expected_id) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     where + ": layer ids must run 0..L-1 without gaps (found " +
                         std::to_string(layer.layer_id) + ")");
  }
  if (layer.name.empty()) Invalid(where, "name is empty");
  int64_t product = 1;
  for (int64_t d : layer.shape) {
    if (d < 1) Invalid(where, "shape has a zero dimension");
    if (product > std::numeric_limits<int64_t>::max() / d) Invalid(where, "shape is too large");
    product *= d;
  }
  if (layer.numel < 1) Invalid(where, "numel must be >= 1");
  if (product != layer.numel) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     where + ": numel " + std::to_string(layer.numel) +
                         " is not the product of shape " + FormatShape(layer.shape));
  }
  NonNegative(layer.floats_dense, where, "floats_dense");
  NonNegative(layer.floats_low, where, "floats_low");
  NonNegative(layer.floats_high, where, "floats_high");
}

void CheckEpoch(const EpochRecord& e, const RunInfo& run) {
  const std::string where = EpochWhere("epochs", e.epoch);
  InRange(e.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  NonNegative(e.lr, where, "lr");
  if (e.batch_size < 1) Invalid(where, "batch_size must be >= 1");
  if (e.iterations < 0) Invalid(where, "iterations is negative");
  NonNegative(e.model_grad_norm, where, "model_grad_norm");
  NonNegative(e.train_loss, where, "train_loss");
  NonNegative(e.test_loss, where, "test_loss");
  Fraction(e.train_acc, where, "train_acc");
  Fraction(e.test_acc, where, "test_acc");
  NonNegative(e.compute_s, where, "compute_s");
  NonNegative(e.compress_s, where, "compress_s");
  NonNegative(e.comm_s, where, "comm_s");
  NonNegative(e.total_s, where, "total_s");
  NonNegative(e.floats_sent, where, "floats_sent");
}

void CheckEpochLayer(const EpochLayerRecord& row, const RunInfo& run, int num_layers) {
  const std::string where = "epoch_layers row for epoch " + std::to_string(row.epoch) +
                            " layer " + std::to_string(row.layer_id);
  InRange(row.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  InRange(row.layer_id, num_layers, where, "layer_id", "number of layers");
  NonNegative(row.grad_norm, where, "grad_norm");
  if (row.ratio) NonNegative(*row.ratio, where, "ratio");
  CheckLevel(row.level, run.scheme, where, "level");
  NonNegative(row.floats_sent, where, "floats_sent");
}

void CheckIteration(const IterationRecord& row, const RunInfo& run) {
  const std::string where =
      CheckIterationKey("iterations", row.epoch, row.iteration, row.rank, run);
  NonNegative(row.forward_s, where, "forward_s");
  NonNegative(row.backward_s, where, "backward_s");
  NonNegative(row.compress_s, where, "compress_s");
  NonNegative(row.comm_s, where, "comm_s");
  NonNegative(row.total_s, where, "total_s");
}

void CheckGradReady(const GradReadyRecord& row, const RunInfo& run, int num_layers) {
  const std::string where =
      CheckIterationKey("grad_ready", row.epoch, row.iteration, row.rank, run);
  InRange(row.layer_id, num_layers, where, "layer_id", "number of layers");
  NonNegative(row.offset_s, where, "offset_s");
}

void CheckCollective(const CollectiveRecord& row, const RunInfo& run) {
  const std::string where =
      CheckIterationKey("collectives", row.epoch, row.iteration, row.rank, run);
  if (row.seq < 0) Invalid(where, "seq is negative");
  if (row.bucket < 0) Invalid(where, "bucket is negative");
  if (row.bytes < 0) Invalid(where, "bytes is negative");
  NonNegative(row.start_s, where, "start_s");
  NonNegative(row.duration_s, where, "duration_s");
}

void CheckHessian(const HessianRecord& row, const RunInfo& run) {
  const std::string where = EpochWhere("hessian", row.epoch);
  InRange(row.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  Finite(row.eigenvalue, where, "eigenvalue");  // may be negative on non-convex losses
  if (row.iterations < 0) Invalid(where, "iterations is negative");
  NonNegative(row.seconds, where, "seconds");
}

}  // namespace accordion
