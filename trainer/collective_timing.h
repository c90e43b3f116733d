// Timing one collective shape over and over through a Communicator: what
// accordion-bench-collectives measures and the network probe a training run
// makes at start (network_probe.h) share this.
#ifndef ACCORDION_TRAINER_COLLECTIVE_TIMING_H_
#define ACCORDION_TRAINER_COLLECTIVE_TIMING_H_

#include <memory>
#include <vector>

#include "trainer/collective_bench.h"
#include "trainer/communicator.h"
#include "trainer/torch_pch.h"

namespace accordion {

// Issues `s` once: its payload is the head of `in`; an all-gather writes
// into the head of `out` (at least world x the per-rank payload).
std::unique_ptr<CollectiveWork> IssueShape(Communicator& comm, const BenchShape& s, const torch::Tensor& in,
                                           const torch::Tensor& out);

// Seconds from issue to completion of each of `timed` runs of `s` on this
// rank, after `warmup` untimed ones. Every run starts at a barrier, so what
// is timed is the transfer, not how far apart the ranks arrived.
std::vector<double> TimeShape(Communicator& comm, const BenchShape& s, int warmup, int timed, const torch::Tensor& in,
                              const torch::Tensor& out);

// Every rank's timings, in rank order, on every rank.
std::vector<std::vector<double>> GatherTimes(Communicator& comm, const std::vector<double>& mine);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_COLLECTIVE_TIMING_H_
