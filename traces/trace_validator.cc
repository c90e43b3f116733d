#include "traces/trace_validator.h"

#include <cmath>
#include <algorithm>
#include <map>

#include "traces/policy_description.h"
#include "traces/scheme_description.h"
#include "traces/trace_error.h"
#include "traces/trace_reader.h"

namespace accordion {

namespace {

[[noreturn]] void Inconsistent(const std::string& path, const std::string& what) {
  throw TraceError(TraceErrorCode::kInconsistent, path + ": " + what);
}

// Each probed (op, bytes) holds repeats 0..n-1, as the trainer numbers them.
void CheckProbeRepeats(const std::string& path, const std::vector<NetworkProbeRecord>& probe, TraceSummary& summary) {
  std::map<std::pair<CollectiveOp, int64_t>, int> next;
  for (const NetworkProbeRecord& r : probe) {
    int& expected = next[{r.op, r.bytes}];
    if (r.repeat != expected) {
      Inconsistent(path, std::string("network_probe: ") + ToString(r.op) + " of " + std::to_string(r.bytes) +
                             " bytes has repeat " + std::to_string(r.repeat) + " where " + std::to_string(expected) +
                             " was due");
    }
    ++expected;
    ++summary.network_probe_rows;
  }
  // What every replay refuses (recorded_network.h): a probe that timed
  // nothing cannot be a network.
  if (!probe.empty() &&
      std::none_of(probe.begin(), probe.end(), [](const NetworkProbeRecord& r) { return r.seconds > 0; })) {
    Inconsistent(path, "network_probe: no time is positive (" + std::to_string(probe.size()) +
                           " rows): a probe that timed nothing cannot be a network");
  }
}

bool Close(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

}  // namespace

TraceSummary ValidateTrace(const std::string& path) {
  auto reader = TraceReader::Open(path);
  const RunInfo& run = reader->run();
  const std::string& p = reader->path();
  TraceSummary summary;
  summary.layers = reader->num_layers();

  summary.schema_version = reader->schema_version();
  if (DescriptionOf(run.policy).one_level() && run.level_low != run.level_high) {
    Inconsistent(p, "run: a static run must have level_low == level_high");
  }
  // Version 2's rules; a v1 file has neither column (schema.h).
  if (summary.schema_version >= 2) {
    if (run.writer.empty()) Inconsistent(p, "run: writer is empty (schema v2 names what wrote the trace)");
    if (run.ranks_per_node > run.world_size) {
      Inconsistent(p, "run: ranks_per_node " + std::to_string(run.ranks_per_node) + " is more than world_size " +
                          std::to_string(run.world_size));
    }
  }
  CheckProbeRepeats(p, reader->NetworkProbe(), summary);

  const std::vector<EpochRecord> epochs = reader->Epochs();
  for (size_t i = 0; i < epochs.size(); ++i) {
    if (epochs[i].epoch != static_cast<int>(i)) {
      Inconsistent(p, "epochs: epoch " + std::to_string(i) + " is missing (next recorded is " +
                          std::to_string(epochs[i].epoch) + ")");
    }
  }
  // Version 3's: a metric not recorded is NULL; older files hold one in
  // every row (their columns are NOT NULL, so only a hand-made file lacks it).
  if (summary.schema_version < 3) {
    for (const EpochRecord& e : epochs) {
      if (Recorded(e.train_loss) && Recorded(e.train_acc) && Recorded(e.test_loss) && Recorded(e.test_acc)) continue;
      throw TraceError(TraceErrorCode::kInvalidValue, p + ": epochs row for epoch " + std::to_string(e.epoch) +
                                                          " lacks a loss or accuracy (NULL), "
                                                          "which schema v" +
                                                          std::to_string(summary.schema_version) + " requires");
    }
  }
  const int num_epochs = static_cast<int>(epochs.size());
  summary.epochs = num_epochs;
  if (run.status == RunStatus::kComplete && num_epochs != run.epochs_planned) {
    Inconsistent(p, "run is marked complete with " + std::to_string(num_epochs) + " of " +
                        std::to_string(run.epochs_planned) + " epochs");
  }
  if (run.status == RunStatus::kStoppedEarly && num_epochs >= run.epochs_planned) {
    Inconsistent(p, "run is marked stopped early with " + std::to_string(num_epochs) + " of " +
                        std::to_string(run.epochs_planned) + " epochs");
  }
  auto recorded = [&](int epoch, const char* table) {
    if (epoch >= num_epochs) {
      throw TraceError(TraceErrorCode::kOutOfRange, p + ": " + table + " row for epoch " + std::to_string(epoch) +
                                                        " but the epochs table ends at " +
                                                        std::to_string(num_epochs - 1));
    }
  };

  const auto rows = reader->EpochLayers();
  std::vector<int> per_epoch(num_epochs, 0);
  std::vector<double> floats(num_epochs, 0.0);
  for (const EpochLayerRecord& r : rows) {
    recorded(r.epoch, "epoch_layers");
    ++per_epoch[r.epoch];
    floats[r.epoch] += r.floats_sent;
    // AdaQS and Smith et al. step through the levels between the two ends.
    const bool stepping = DescriptionOf(run.policy).steps();
    const bool level_ok = r.level == run.level_low || r.level == run.level_high ||
                          (stepping && r.level >= std::min(run.level_low, run.level_high) &&
                           r.level <= std::max(run.level_low, run.level_high));
    if (!level_ok) {
      Inconsistent(p, "epoch_layers: epoch " + std::to_string(r.epoch) + " layer " + std::to_string(r.layer_id) +
                          " uses level " + std::to_string(r.level) +
                          (stepping ? ", which is outside level_low..level_high"
                                    : ", which is neither level_low nor level_high"));
    }
    if (DescriptionOf(run.scheme).level_kind == LevelKind::kGlobalBatch &&
        r.level != static_cast<double>(epochs[r.epoch].batch_size)) {
      Inconsistent(p, "epoch_layers: epoch " + std::to_string(r.epoch) + " level differs from the epoch's batch size");
    }
  }
  for (int e = 0; e < num_epochs; ++e) {
    if (per_epoch[e] != summary.layers) {
      Inconsistent(p, "epoch_layers: epoch " + std::to_string(e) + " has " + std::to_string(per_epoch[e]) +
                          " rows for " + std::to_string(summary.layers) + " layers");
    }
    if (!Close(floats[e], epochs[e].floats_sent)) {
      Inconsistent(p, "epochs: floats_sent of epoch " + std::to_string(e) + " is not the sum over its layers");
    }
    // A recorded epoch trained: a row of no steps and no traffic is a run
    // whose gradients never went through the recorder (a hook that was
    // bypassed), not an epoch anything can be projected from.
    if (epochs[e].iterations == 0 && epochs[e].floats_sent == 0) {
      Inconsistent(p, "epochs: epoch " + std::to_string(e) +
                          " records no step (0 iterations, 0 floats sent): its gradients never went through "
                          "the recorder");
    }
  }

  reader->ForEachIteration([&](const IterationRecord& r) {
    recorded(r.epoch, "iterations");
    if (r.iteration >= epochs[r.epoch].iterations) {
      throw TraceError(TraceErrorCode::kOutOfRange, p + ": iterations row " + std::to_string(r.iteration) +
                                                        " of epoch " + std::to_string(r.epoch) + " but the epoch has " +
                                                        std::to_string(epochs[r.epoch].iterations) + " iterations");
    }
    ++summary.iteration_rows;
  });
  reader->ForEachGradReady([&](const GradReadyRecord& r) {
    recorded(r.epoch, "grad_ready");
    ++summary.grad_ready_rows;
  });
  reader->ForEachCollective([&](const CollectiveRecord& r) {
    recorded(r.epoch, "collectives");
    ++summary.collective_rows;
  });
  for (const HessianRecord& h : reader->Hessian()) {
    recorded(h.epoch, "hessian");
    ++summary.hessian_rows;
  }
  for (const ErrorProfileRecord& r : reader->ErrorProfile()) {
    recorded(r.epoch, "error_profile");
    ++summary.error_profile_rows;
  }

  if (reader->status_read_as_stopped_early()) {
    summary.warnings.push_back("run marked complete by a schema v" + std::to_string(summary.schema_version) +
                               " Python hook that stopped early: read as stopped early");
  }
  if (run.status == RunStatus::kStoppedEarly) {
    summary.warnings.push_back("run stopped early: " + std::to_string(num_epochs) + " of " +
                               std::to_string(run.epochs_planned) +
                               " epochs, as its training loop chose (early stopping); every tool reads them");
  } else if (run.status != RunStatus::kComplete) {
    summary.warnings.push_back(std::string("run status is '") + ToString(run.status) +
                               "': " + std::to_string(num_epochs) + " of " + std::to_string(run.epochs_planned) +
                               " epochs recorded");
  }
  if (run.synthetic) summary.warnings.push_back("synthetic trace: no training produced it");
  if (summary.iteration_rows == 0) {
    summary.warnings.push_back("no per-iteration timings: the simulator cannot model overlap");
  }
  // The tools that probe unless told not to; a library's own writer may not.
  const bool probes = run.writer == kWriterTrainer || run.writer == kWriterPythonHook;
  if (probes && run.world_size > 1 && summary.network_probe_rows == 0) {
    summary.warnings.push_back(
        "no network probe: a replay knows the recorded network only from "
        "--recorded-bandwidth-gbps");
  }
  return summary;
}

}  // namespace accordion
