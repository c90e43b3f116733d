// Built only with CUDA and NCCL headers (see trainer/CMakeLists.txt): against
// a CUDA LibTorch it is linked into the trainer; against a CPU-only LibTorch
// (Debian's) it is compiled as a check and not linked.
#include "trainer/nccl_communicator.h"

#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include <torch/types.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "trainer/rendezvous.h"

#if TORCH_VERSION_MAJOR < 1 || (TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR < 13)
#error "the NCCL communicator needs LibTorch 1.13 or newer"
#endif

namespace accordion {

namespace {

// PyTorch 2.2 renamed the NCCL process group's environment switches
// (the old names still work there, with a deprecation warning).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
constexpr const char* kBlockingWait = "TORCH_NCCL_BLOCKING_WAIT";
constexpr const char* kAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
#else
constexpr const char* kBlockingWait = "NCCL_BLOCKING_WAIT";
constexpr const char* kAsyncErrorHandling = "NCCL_ASYNC_ERROR_HANDLING";
#endif

// PyTorch 2.x's process group warns at exit ("destroy_process_group() was
// not called") unless it was shut down, which 1.13's cannot be: call
// shutdown() where the group has one. A template, so that the call is not
// compiled where it does not exist.
template <typename Group, typename = void>
struct HasShutdown : std::false_type {};
template <typename Group>
struct HasShutdown<Group, std::void_t<decltype(std::declval<Group&>().shutdown())>> : std::true_type {};

template <typename Group>
void ShutDown(Group& group) {
  if constexpr (HasShutdown<Group>::value) group.shutdown();
}

class NcclWork : public CollectiveWork {
 public:
  // `host` / `staged`: a CPU tensor the caller passed and its device copy,
  // copied back once the collective is done (undefined when not staged).
  NcclWork(c10::intrusive_ptr<c10d::Work> work, const char* what, c10::DeviceIndex device, torch::Tensor host,
           torch::Tensor staged)
      : work_(std::move(work)), what_(what), device_(device), host_(std::move(host)), staged_(std::move(staged)) {}

  void Wait() override {
    try {
      work_->wait();
      c10::cuda::getCurrentCUDAStream(device_).synchronize();
    } catch (const std::exception& e) {
      throw CommunicationError(std::string(what_) + " failed: " + FirstLineOf(e));
    }
    done_ = Clock::now();
    if (host_.defined()) host_.copy_(staged_);
  }

  Clock::time_point completed_at() const override { return done_; }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  const char* what_;
  c10::DeviceIndex device_;
  torch::Tensor host_, staged_;
  Clock::time_point done_;
};

class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(const NcclOptions& options)
      : options_(options.rendezvous()), device_(static_cast<c10::DeviceIndex>(options.device_index())) {
    // Collectives that outlive the timeout throw from wait() instead of
    // blocking forever; errors tear the communicator down.
    ::setenv(kBlockingWait, "1", /*overwrite=*/0);
    ::setenv(kAsyncErrorHandling, "1", /*overwrite=*/0);
    const RendezvousGuard guard(options_);
    try {
      c10::cuda::set_device(device_);
      store_ = ConnectStore(options_);
      auto group_options = c10d::ProcessGroupNCCL::Options::create();
      group_options->timeout = options_.timeout();
      group_ =
          c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, options_.rank(), options_.world_size(), group_options);
    } catch (const std::exception& e) {
      ThrowIfNotAStore(options_, e);
      throw CommunicationError("NCCL " + RendezvousFailure(options_, e));
    }
  }

  ~NcclCommunicator() override {
    try {
      if (group_) ShutDown(*group_);
    } catch (const std::exception&) {
      // A group a failed peer broke cannot shut down cleanly; the process is ending anyway.
    }
  }

  int rank() const override { return options_.rank(); }
  int world_size() const override { return options_.world_size(); }
  std::string backend() const override { return "nccl"; }

  std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) override {
    torch::Tensor on_device = OnDevice(tensor);
    return Start("all-reduce", tensor, on_device, [&] {
      std::vector<at::Tensor> tensors{on_device};
      return group_->allreduce(tensors);
    });
  }

  std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) override {
    torch::Tensor in = OnDevice(input);
    torch::Tensor out = OnDevice(output);
    return Start("all-gather", output, out, [&] {
      std::vector<std::vector<at::Tensor>> outputs(1);
      for (int r = 0; r < world_size(); ++r) outputs[0].push_back(out[r]);
      std::vector<at::Tensor> inputs{in};
      return group_->allgather(outputs, inputs);
    });
  }

  std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) override {
    torch::Tensor on_device = OnDevice(tensor);
    return Start("broadcast", tensor, on_device, [&] {
      std::vector<at::Tensor> tensors{on_device};
      c10d::BroadcastOptions broadcast;
      broadcast.rootRank = root;
      return group_->broadcast(tensors, broadcast);
    });
  }

  void Barrier() override {
    Start("barrier", torch::Tensor(), torch::Tensor(), [&] { return group_->barrier(); })->Wait();
  }

 private:
  // The tensor itself when it is on our device, else a device copy.
  torch::Tensor OnDevice(const torch::Tensor& t) const {
    return t.is_cuda() ? t : t.to(torch::Device(torch::kCUDA, device_));
  }

  template <typename Launch>
  std::unique_ptr<CollectiveWork> Start(const char* what, const torch::Tensor& given, const torch::Tensor& used,
                                        Launch&& launch) {
    try {
      c10::cuda::CUDAGuard guard(device_);
      const bool staged = given.defined() && !given.is_cuda();
      return std::make_unique<NcclWork>(launch(), what, device_, staged ? given : torch::Tensor(),
                                        staged ? used : torch::Tensor());
    } catch (const std::exception& e) {
      throw CommunicationError(std::string(what) + " failed: " + FirstLineOf(e));
    }
  }

  RendezvousOptions options_;
  c10::DeviceIndex device_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
};

}  // namespace

std::string NcclBuildVersion() {
  return "NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH) +
         ", CUDA " + std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

std::unique_ptr<Communicator> ConnectNccl(const NcclOptions& options) {
  return std::make_unique<NcclCommunicator>(options);
}

}  // namespace accordion
