#include "traces/record_checks.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/number_format.h"
#include "traces/policy_description.h"
#include "traces/trace_error.h"
#include "traces/trace_tables.h"

namespace accordion {

namespace {

[[noreturn]] void Invalid(const std::string& where, const std::string& what) {
  throw TraceError(TraceErrorCode::kInvalidValue, where + ": " + what);
}

// A description asking a column for a check its type cannot make is a bug
// in trace_tables.cc, found by the first test that writes such a row.
[[noreturn]] void Unsupported(ValueCheck check, const std::string& name) {
  throw std::logic_error("trace column " + name + " cannot have check " + std::to_string(static_cast<int>(check)));
}

void InRange(int64_t v, int64_t end, const std::string& where, const char* column, const char* bound) {
  if (v < 0 || v >= end) {
    throw TraceError(TraceErrorCode::kOutOfRange, where + ": " + column + " " + std::to_string(v) + " is outside [0, " +
                                                      std::to_string(end) + ") (" + bound + ")");
  }
}

// Checks the (epoch, iteration, rank) key the per-iteration tables share and
// returns the row's description for later messages.
std::string CheckIterationKey(const char* table, int epoch, int64_t iteration, int rank, const RunInfo& run) {
  const std::string where = std::string(table) + " row for epoch " + std::to_string(epoch) + " iteration " +
                            std::to_string(iteration) + " rank " + std::to_string(rank);
  InRange(epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  InRange(rank, run.world_size, where, "rank", "run.world_size");
  return where;
}

std::string EpochWhere(const char* table, int epoch) {
  return std::string(table) + " row for epoch " + std::to_string(epoch);
}

void CheckLevel(double level, Scheme scheme, const std::string& where, const char* column) {
  const std::string problem = LevelProblem(scheme, level);
  if (!problem.empty()) Invalid(where, std::string(column) + " " + problem + " (" + FormatNumber(level) + ")");
}

}  // namespace

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> shape;
  if (text.empty()) return shape;  // a scalar
  std::string::size_type pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma - pos);
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos) {
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

namespace {

void AtMost(int64_t v, int64_t limit, const std::string& where, const std::string& name) {
  if (v > limit) {
    throw TraceError(TraceErrorCode::kOutOfRange, where + ": " + name + " " + std::to_string(v) +
                                                      " is above the limit of " + std::to_string(limit) +
                                                      " (no run has so many; a damaged file?)");
  }
}

}  // namespace

void CheckValue(int64_t v, ValueCheck check, const std::string& where, const std::string& name) {
  switch (check) {
    case ValueCheck::kAny:
      return;
    case ValueCheck::kRanks:
    case ValueCheck::kElements:
      if (v < 1) Invalid(where, name + " must be >= 1");
      AtMost(v, check == ValueCheck::kRanks ? kMaxTraceRanks : kMaxTraceElements, where, name);
      return;
    case ValueCheck::kIterations:
    case ValueCheck::kBytes:
      if (v < 0) Invalid(where, name + " is negative");
      AtMost(v, check == ValueCheck::kIterations ? kMaxTraceIterations : kMaxTraceBytes, where, name);
      return;
    case ValueCheck::kNonNegative:
      if (v < 0) Invalid(where, name + " is negative");
      return;
    case ValueCheck::kAtLeastOne:
      if (v < 1) Invalid(where, name + " must be >= 1");
      return;
    case ValueCheck::kFinite:
    case ValueCheck::kFraction:
    case ValueCheck::kNotEmpty:
    case ValueCheck::kSeconds:
    case ValueCheck::kShortText:
    case ValueCheck::kJsonObject:
      break;
  }
  Unsupported(check, name);
}

void CheckValue(double v, ValueCheck check, const std::string& where, const std::string& name) {
  switch (check) {
    case ValueCheck::kAny:
      return;
    case ValueCheck::kFinite:
    case ValueCheck::kNonNegative:
    case ValueCheck::kFraction:
    case ValueCheck::kSeconds:
      if (!std::isfinite(v)) Invalid(where, name + " is not finite (" + FormatNumber(v) + ")");
      if (check == ValueCheck::kFinite) return;
      if (v < 0) Invalid(where, name + " is negative (" + FormatNumber(v) + ")");
      if (check == ValueCheck::kFraction && v > 1.0) Invalid(where, name + " is above 1 (" + FormatNumber(v) + ")");
      if (check == ValueCheck::kSeconds && v > kMaxTraceSeconds) {
        throw TraceError(TraceErrorCode::kOutOfRange, where + ": " + name + " " + FormatNumber(v) +
                                                          " s is above the limit of " + FormatNumber(kMaxTraceSeconds) +
                                                          " s (116 days; a damaged file?)");
      }
      return;
    case ValueCheck::kAtLeastOne:
    case ValueCheck::kNotEmpty:
    case ValueCheck::kRanks:
    case ValueCheck::kElements:
    case ValueCheck::kIterations:
    case ValueCheck::kBytes:
    case ValueCheck::kShortText:
    case ValueCheck::kJsonObject:
      break;
  }
  Unsupported(check, name);
}

void CheckValue(const std::string& v, ValueCheck check, const std::string& where, const std::string& name) {
  if (check == ValueCheck::kAny) return;
  if (check == ValueCheck::kShortText || check == ValueCheck::kJsonObject) {
    AtMost(static_cast<int64_t>(v.size()), kMaxTraceTextBytes, where, name + " bytes");
    if (check == ValueCheck::kJsonObject &&
        !nlohmann::json::parse(v, nullptr, /*allow_exceptions=*/false).is_object()) {
      Invalid(where, name + " is not a JSON object");
    }
    return;
  }
  if (check != ValueCheck::kNotEmpty) Unsupported(check, name);
  if (v.empty()) Invalid(where, name + " is empty");
}

void CheckRun(const RunInfo& run) {
  RunTable().CheckValues(run, "run");
  CheckLevel(run.level_low, run.scheme, "run", "level_low");
  CheckLevel(run.level_high, run.scheme, "run", "level_high");
  if (!(run.msdr_factor > 1) || !(run.msdr_factor <= kMaxMsdrFactor)) {
    Invalid("run", "msdr_factor must be above 1 and at most 1e6");
  }
  // A literature baseline's trace on a scheme it does not fit is not one it
  // wrote. (Older writers recorded policy accordion or static whatever the
  // scheme, and those traces stay readable.)
  const std::string misfit = PolicyFitProblem(run.policy, run.scheme);
  if (DescriptionOf(run.policy).literature_baseline && !misfit.empty()) {
    throw TraceError(TraceErrorCode::kInconsistent, "run: " + misfit);
  }
}

void CheckLayer(const LayerInfo& layer, int expected_id) {
  const std::string where = "layers row " + std::to_string(expected_id);
  if (layer.layer_id != expected_id) {
    throw TraceError(TraceErrorCode::kInconsistent,
                     where + ": layer ids must run 0..L-1 without gaps (found " + std::to_string(layer.layer_id) + ")");
  }
  LayersTable().CheckValues(layer, where);
  int64_t product = 1;
  for (int64_t d : layer.shape) {
    if (d < 1) Invalid(where, "shape has a zero dimension");
    if (product > std::numeric_limits<int64_t>::max() / d) Invalid(where, "shape is too large");
    product *= d;
  }
  if (product != layer.numel) {
    throw TraceError(TraceErrorCode::kInconsistent, where + ": numel " + std::to_string(layer.numel) +
                                                        " is not the product of shape " + FormatShape(layer.shape));
  }
}

void CheckEpoch(const EpochRecord& e, const RunInfo& run) {
  const std::string where = EpochWhere("epochs", e.epoch);
  InRange(e.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  EpochsTable().CheckValues(e, where);
}

void CheckEpochLayer(const EpochLayerRecord& row, const RunInfo& run, int num_layers) {
  const std::string where =
      "epoch_layers row for epoch " + std::to_string(row.epoch) + " layer " + std::to_string(row.layer_id);
  InRange(row.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  InRange(row.layer_id, num_layers, where, "layer_id", "number of layers");
  EpochLayersTable().CheckValues(row, where);
  CheckLevel(row.level, run.scheme, where, "level");
}

void CheckIteration(const IterationRecord& row, const RunInfo& run) {
  const std::string where = CheckIterationKey("iterations", row.epoch, row.iteration, row.rank, run);
  IterationsTable().CheckValues(row, where);
}

void CheckGradReady(const GradReadyRecord& row, const RunInfo& run, int num_layers) {
  const std::string where = CheckIterationKey("grad_ready", row.epoch, row.iteration, row.rank, run);
  InRange(row.layer_id, num_layers, where, "layer_id", "number of layers");
  GradReadyTable().CheckValues(row, where);
}

void CheckCollective(const CollectiveRecord& row, const RunInfo& run) {
  const std::string where = CheckIterationKey("collectives", row.epoch, row.iteration, row.rank, run);
  CollectivesTable().CheckValues(row, where);
}

void CheckNetworkProbe(const NetworkProbeRecord& row) {
  NetworkProbeTable().CheckValues(
      row, std::string("network_probe row for ") + ToString(row.op) + " of " + std::to_string(row.bytes) + " bytes");
}

void CheckErrorProfile(const ErrorProfileRecord& row, const RunInfo& run, int num_layers) {
  const std::string where = "error_profile row for epoch " + std::to_string(row.epoch) + " layer " +
                            std::to_string(row.layer_id) + " level " + std::to_string(row.level);
  InRange(row.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  InRange(row.layer_id, num_layers, where, "layer_id", "number of layers");
  ErrorProfileTable().CheckValues(row, where);
  CheckLevel(row.level, run.scheme, where, "level");
}

void CheckHessian(const HessianRecord& row, const RunInfo& run) {
  const std::string where = EpochWhere("hessian", row.epoch);
  InRange(row.epoch, run.epochs_planned, where, "epoch", "run.epochs_planned");
  HessianTable().CheckValues(row, where);
}

}  // namespace accordion
