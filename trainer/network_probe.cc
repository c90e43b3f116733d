#include "trainer/network_probe.h"

#include <algorithm>

#include "common/statistics.h"
#include "trainer/collective_bench.h"
#include "trainer/collective_timing.h"

namespace accordion {

namespace {

constexpr CollectiveOp kProbedOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather};

}  // namespace

std::vector<NetworkProbeRecord> ProbeNetwork(Communicator& comm, torch::Device device,
                                             const NetworkProbeOptions& options) {
  std::vector<NetworkProbeRecord> records;
  const int world = comm.world_size();
  if (world < 2) return records;
  torch::NoGradGuard no_grad;
  const int64_t max_elements = std::max<int64_t>(1, options.max_bytes() / static_cast<int64_t>(sizeof(float)));
  // Zeros: sums stay finite however often they are added up.
  const auto tensor_options = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const torch::Tensor in = torch::zeros({max_elements}, tensor_options);
  const torch::Tensor out = torch::zeros({max_elements}, tensor_options);

  // Decisions use only the gathered times, which every rank holds alike, so
  // all ranks stop at the same size without a word more between them. They
  // go by each size's fastest run: on a loaded host (more workers than
  // cores) the slowest runs of a small size take milliseconds of waiting
  // for a core, and a budget scaled up from those stops the probe before
  // the sizes whose transfer shows.
  const double runs = options.repeats() + 1;  // with the untimed one
  double spent_s = 0;                         // what the probe took so far, by its own times
  double first_size_s = 0;                    // the fastest run of each op at the smallest size
  double last_size_s = 0;                     // ... at the previous size
  int64_t growth = options.factor();          // from the previous size to this one
  int sizes = 0;
  // The previous size's all-reduce time per byte (its fastest run), or 0
  // while no transfer shows.
  double last_per_byte = 0;
  for (int64_t size = options.min_bytes(); size <= options.max_bytes(); size *= growth) {
    if (sizes >= options.min_sizes() &&
        spent_s + last_size_s * static_cast<double>(growth) * runs > options.budget_s()) {
      break;
    }
    double size_s = 0, allreduce_fastest = 0;
    for (const CollectiveOp op : kProbedOps) {
      const BenchShape shape = ShapeOf(op, size, world);
      const std::vector<std::vector<double>> times =
          GatherTimes(comm, TimeShape(comm, shape, /*warmup=*/1, options.repeats(), in, out));
      double fastest = 0, slowest_run = 0;
      for (int r = 0; r < options.repeats(); ++r) {
        double slowest = 0;
        for (const std::vector<double>& rank : times) slowest = std::max(slowest, rank[r]);
        records.push_back({op, shape.bytes, r, slowest});
        fastest = r == 0 ? slowest : std::min(fastest, slowest);
        slowest_run = std::max(slowest_run, slowest);
        spent_s += slowest;
      }
      spent_s += slowest_run;  // the untimed run, taken at the worst
      size_s += fastest;
      if (op == CollectiveOp::kAllReduce) allreduce_fastest = fastest;
    }
    if (sizes++ == 0) first_size_s = size_s;
    last_size_s = size_s;
    // A burst used up: two successive sizes whose transfer shows cross at
    // the same rate, which is then the sustained one. The untimed run of a
    // size takes what is left of a burst and back-to-back runs leave it no
    // time to refill, so past it even the fastest run is at that rate.
    const bool transfer_shows = sizes > 1 && size_s >= 2 * first_size_s;
    const double per_byte = transfer_shows ? allreduce_fastest / static_cast<double>(size) : 0;
    if (sizes >= options.min_sizes() && AgreeWithin(per_byte, last_per_byte, options.agreement())) break;
    last_per_byte = per_byte;
    if (spent_s > options.budget_s() && sizes >= options.min_sizes()) break;
    // While the times do not grow with size yet (latency, or a loaded host)
    // the next size tells little: skip one, so that the budget reaches sizes
    // whose transfer shows.
    growth = options.factor();
    if (sizes >= options.min_sizes() && size_s < 2 * first_size_s) growth *= options.factor();
    if (size > options.max_bytes() / growth) break;  // the next would pass the end, or overflow
  }
  return records;
}

}  // namespace accordion
