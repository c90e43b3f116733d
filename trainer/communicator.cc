#include "trainer/communicator.h"

#include <cstring>

#include <torch/torch.h>

#include "common/errors.h"
#include "trainer/nccl_communicator.h"
#include "trainer/torch_pch.h"

namespace accordion {

#ifndef ACCORDION_HAVE_NCCL
std::unique_ptr<Communicator> ConnectNccl(const NcclOptions&) {
  throw InputError(
      "this accordion-train was built without the NCCL communicator (it needs a CUDA LibTorch; "
      "see docs/gpu.md)");
}
std::string NcclBuildVersion() { return ""; }
#endif

std::vector<std::string> AllGatherBytes(Communicator& comm, const std::string& mine) {
  const int world = comm.world_size();
  torch::Tensor size = torch::tensor({static_cast<int64_t>(mine.size())}, torch::kInt64);
  torch::Tensor sizes = torch::empty({world, 1}, torch::kInt64);
  comm.AllGather(size, sizes)->Wait();
  const int64_t longest = sizes.max().item<int64_t>();
  torch::Tensor send = torch::zeros({std::max<int64_t>(longest, 1)}, torch::kUInt8);
  std::memcpy(send.data_ptr<uint8_t>(), mine.data(), mine.size());
  torch::Tensor all = torch::empty({world, send.numel()}, torch::kUInt8);
  comm.AllGather(send, all)->Wait();
  std::vector<std::string> out;
  for (int r = 0; r < world; ++r) {
    const auto* row = all[r].data_ptr<uint8_t>();
    out.emplace_back(reinterpret_cast<const char*>(row), static_cast<size_t>(sizes[r][0].item<int64_t>()));
  }
  return out;
}

std::vector<double> AllReduceSumDoubles(Communicator& comm, const std::vector<double>& values) {
  torch::Tensor t = torch::tensor(values, torch::kFloat64);
  comm.AllReduceSum(t)->Wait();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

}  // namespace accordion
