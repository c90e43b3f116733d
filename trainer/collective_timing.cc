#include "trainer/collective_timing.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace accordion {

std::unique_ptr<CollectiveWork> IssueShape(Communicator& comm, const BenchShape& s, const torch::Tensor& in,
                                           const torch::Tensor& out) {
  const torch::Tensor send = in.narrow(0, 0, s.elements_per_rank);
  switch (s.op) {
    case CollectiveOp::kAllReduce:
      return comm.AllReduceSum(send);
    case CollectiveOp::kAllGather:
      return comm.AllGather(
          send, out.narrow(0, 0, s.elements_per_rank * s.world_size).view({s.world_size, s.elements_per_rank}));
    case CollectiveOp::kBroadcast:
      return comm.Broadcast(send, 0);
  }
  throw std::logic_error("unknown collective");
}

std::vector<double> TimeShape(Communicator& comm, const BenchShape& s, int warmup, int timed, const torch::Tensor& in,
                              const torch::Tensor& out) {
  std::vector<double> seconds;
  for (int it = 0; it < warmup + timed; ++it) {
    comm.Barrier();
    const auto start = CollectiveWork::Clock::now();
    std::unique_ptr<CollectiveWork> work = IssueShape(comm, s, in, out);
    work->Wait();
    if (it >= warmup) seconds.push_back(std::chrono::duration<double>(work->completed_at() - start).count());
  }
  return seconds;
}

std::vector<std::vector<double>> GatherTimes(Communicator& comm, const std::vector<double>& mine) {
  const std::string bytes(reinterpret_cast<const char*>(mine.data()), mine.size() * sizeof(double));
  std::vector<std::vector<double>> all;
  for (const std::string& b : AllGatherBytes(comm, bytes)) {
    std::vector<double> v(b.size() / sizeof(double));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(double));
    all.push_back(std::move(v));
  }
  return all;
}

}  // namespace accordion
