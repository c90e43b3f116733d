// TraceRecorder: what a run puts into its trace.
//
// Every rank keeps the per-iteration timings of the iterations it samples
// (the first `sample_iterations` of every epoch); at the end of an epoch they
// travel to rank 0 in one all-gather and rank 0 writes the whole epoch as
// one transaction. All ranks call EndEpoch, so all must agree on whether a
// trace is recorded at all.
//
// Thread safety: not thread-safe; the training thread drives it, after the
// step's backward and exchange are done.
#ifndef ACCORDION_TRAINER_TRACE_RECORDER_H_
#define ACCORDION_TRAINER_TRACE_RECORDER_H_

#include <memory>
#include <vector>

#include "analysis/accordion_controller.h"
#include "analysis/communication_accounting.h"
#include "traces/records.h"
#include "traces/trace_writer.h"
#include "trainer/communicator.h"
#include "trainer/gradient_exchange.h"
#include "trainer/network_probe.h"

namespace accordion {

class TraceRecorder {
 public:
  // `writer`: the open trace on rank 0, null elsewhere; `recording` is the
  // same on every rank (false: nothing is gathered, nothing written).
  TraceRecorder(Communicator& comm, std::unique_ptr<TraceWriter> writer, bool recording, int sample_iterations);

  bool Samples(int64_t iteration) const { return recording_ && iteration < sample_iterations_; }

  // Keeps one sampled iteration of this rank: `timing` holds its epoch,
  // iteration and durations; `exchange` its gradient and collective timings.
  void AddIteration(const IterationRecord& timing, const ExchangeTimings& exchange);

  // Gathers every rank's samples of the epoch to rank 0, which writes them
  // with `data` (the epoch and its layer rows). Collective.
  void EndEpoch(EpochData data);

  // Every rank: when recording, times the network (network_probe.h) on
  // `device` and rank 0 stores the probe in the trace. Collective; call it
  // after the ranks met and before the first step.
  void ProbeNetwork(torch::Device device, const NetworkProbeOptions& options);

  // Rank 0: marks the run finished with `status`.
  void Finish(RunStatus status);

 private:
  Communicator& comm_;
  std::unique_ptr<TraceWriter> writer_;
  bool recording_;
  int sample_iterations_;
  EpochData samples_;  // this rank's per-iteration rows of the running epoch
};

// What a recording run writes into run.versions_json: the toolkit's,
// LibTorch's, SQLite's and the compiler's versions, the same from
// accordion-train and the Python hook.
std::string RecordedVersionsJson();

// What accordion-train --version says of its build: the LibTorch and whether
// (and against which NCCL and CUDA) the NCCL communicator is linked.
std::string TrainerBuildDescription();

// The epoch's per-layer rows (norm, moments, ratio, regime, level, floats
// sent over data.epoch.iterations steps), added to `data` with their floats
// summed into data.epoch.floats_sent. `levels` and `critical` are the
// epoch's, per layer; `decision` the deciding controller's at its end (one
// group, or one per layer).
void FillEpochLayerRecords(const CommunicationScheme& scheme, const std::vector<LayerInfo>& layers, int epoch,
                           const std::vector<double>& levels, const std::vector<bool>& critical,
                           const AccordionDecision& decision, const RawGradientStatistics& stats, EpochData& data);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TRACE_RECORDER_H_
