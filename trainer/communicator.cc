#include "trainer/communicator.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include <torch/torch.h>

#include "common/cli.h"
#include "common/errors.h"
#include "trainer/nccl_communicator.h"
#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

// What RendezvousGuard's handler prints: set before it is installed, read
// only by it (the rendezvous is one at a time per process).
std::string guarded_rendezvous;
int guarded_rank = 0;

std::string RendezvousName(const RendezvousOptions& options) {
  return "rendezvous of " + std::to_string(options.world_size()) + " workers at " + options.master_addr() + ":" +
         std::to_string(options.master_port());
}

// Another service on the port: said the same way whichever thread of c10d's
// read its reply first.
std::string NotAStore(const std::string& rendezvous, const std::string& why) {
  return rendezvous + " failed: what answers there is not a c10d store (" + why +
         "); is MASTER_PORT another service's port?";
}

[[noreturn]] void NotAStoreTerminate() {
  std::string why = "an exception in a c10d thread";
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    why = FirstLineOf(e);
  } catch (...) {
  }
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: rank %d: %s\n", program_invocation_short_name, guarded_rank,
               NotAStore(guarded_rendezvous, why).c_str());
  std::fflush(stderr);
  ::_exit(kExitBadInput);
}

}  // namespace

RendezvousGuard::RendezvousGuard(const RendezvousOptions& options) {
  guarded_rendezvous = RendezvousName(options);
  guarded_rank = options.rank();
  previous_ = std::set_terminate(NotAStoreTerminate);
}

RendezvousGuard::~RendezvousGuard() { std::set_terminate(previous_); }

c10::intrusive_ptr<c10d::Store> ConnectStore(const RendezvousOptions& options) {
  c10d::TCPStoreOptions store;
  store.port = static_cast<uint16_t>(options.master_port());
  store.isServer = options.rank() == 0;
  store.numWorkers = static_cast<size_t>(options.world_size());
  store.waitWorkers = true;
  store.timeout = options.timeout();
  return c10::make_intrusive<c10d::TCPStore>(options.master_addr(), store);
}

void ThrowIfNotAStore(const RendezvousOptions& options, const std::exception& e) {
  // c10d checks each reply of the store ("Stop_waiting response is
  // expected"): a reply it did not expect, or a length no reply has, comes
  // from another service.
  const std::string why = FirstLineOf(e);
  if (why.find("response is expected") != std::string::npos || dynamic_cast<const std::length_error*>(&e) != nullptr) {
    throw InputError(NotAStore(RendezvousName(options), why));
  }
}

std::string RendezvousFailure(const RendezvousOptions& options, const std::exception& e) {
  return RendezvousName(options) + " failed: " + FirstLineOf(e);
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
