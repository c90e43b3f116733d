#include "trainer/communicator.h"

#include <cstring>

#include <torch/torch.h>

#include "common/errors.h"
#include "trainer/nccl_communicator.h"
#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

c10::intrusive_ptr<c10d::Store> ConnectStore(const RendezvousOptions& options) {
  c10d::TCPStoreOptions store;
  store.port = static_cast<uint16_t>(options.master_port());
  store.isServer = options.rank() == 0;
  store.numWorkers = static_cast<size_t>(options.world_size());
  store.waitWorkers = true;
  store.timeout = options.timeout();
  return c10::make_intrusive<c10d::TCPStore>(options.master_addr(), store);
}

std::string RendezvousFailure(const RendezvousOptions& options, const std::exception& e) {
  return "rendezvous of " + std::to_string(options.world_size()) + " workers at " + options.master_addr() + ":" +
         std::to_string(options.master_port()) + " failed: " + FirstLineOf(e);
}

std::string FirstLineOf(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

#ifndef ACCORDION_HAVE_NCCL
std::unique_ptr<Communicator> ConnectNccl(const NcclOptions&) {
  throw InputError(
      "this accordion-train was built without the NCCL communicator (it needs a CUDA LibTorch; "
      "see docs/gpu.md)");
}
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
