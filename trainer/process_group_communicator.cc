#include "trainer/process_group_communicator.h"

#include <atomic>

#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

// One c10d work; Wait() turns its failure into a CommunicationError and
// copies a staged result back into the host tensor the caller passed.
class ProcessGroupWork : public CollectiveWork {
 public:
  // `host` / `staged`: a CPU tensor the caller passed and its device copy
  // the collective ran on (both undefined when nothing was staged).
  ProcessGroupWork(c10::intrusive_ptr<c10d::Work> work, const char* what, torch::Tensor host, torch::Tensor staged)
      : work_(std::move(work)),
        what_(what),
        host_(std::move(host)),
        staged_(std::move(staged)),
        done_ns_(std::make_shared<std::atomic<int64_t>>(0)) {
    // The future completes on Gloo's thread the moment the data is in place:
    // that, not the later Wait(), is when the collective finished.
    auto done = done_ns_;
    work_->getFuture()->addCallback(
        [done](c10::ivalue::Future&) { done->store(Clock::now().time_since_epoch().count()); });
  }

  void Wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      throw CommunicationError(std::string(what_) + " failed: " + FirstLineOf(e));
    }
    // A copy into host memory waits for the stream the collective's wait()
    // ordered it on.
    if (host_.defined()) host_.copy_(staged_);
    int64_t expected = 0;
    done_ns_->compare_exchange_strong(expected, Clock::now().time_since_epoch().count());
  }

  Clock::time_point completed_at() const override { return Clock::time_point(Clock::duration(done_ns_->load())); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  const char* what_;
  torch::Tensor host_, staged_;
  std::shared_ptr<std::atomic<int64_t>> done_ns_;
};

template <typename Launch>
std::unique_ptr<CollectiveWork> Start(const char* what, Launch&& launch, torch::Tensor host = {},
                                      torch::Tensor staged = {}) {
  try {
    if (host.defined() && host.is_same(staged)) host = staged = torch::Tensor();
    return std::make_unique<ProcessGroupWork>(launch(), what, std::move(host), std::move(staged));
  } catch (const std::exception& e) {
    throw CommunicationError(std::string(what) + " failed: " + FirstLineOf(e));
  }
}

}  // namespace

// c10d::ProcessGroup and c10d::Backend declare the same collectives, unrelated
// by inheritance: one interface over both.
class ProcessGroupCommunicator::Collectives {
 public:
  virtual ~Collectives() = default;
  virtual c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors) = 0;
  virtual c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                   std::vector<at::Tensor>& inputs) = 0;
  virtual c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                                   const c10d::BroadcastOptions& options) = 0;
  virtual c10::intrusive_ptr<c10d::Work> barrier() = 0;

  template <typename Group>
  class Of;
};

template <typename Group>
class ProcessGroupCommunicator::Collectives::Of : public Collectives {
 public:
  explicit Of(c10::intrusive_ptr<Group> group) : group_(std::move(group)) {}
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors) override {
    return group_->allreduce(tensors);
  }
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs) override {
    return group_->allgather(outputs, inputs);
  }
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& options) override {
    return group_->broadcast(tensors, options);
  }
  c10::intrusive_ptr<c10d::Work> barrier() override { return group_->barrier(); }

 private:
  c10::intrusive_ptr<Group> group_;
};

ProcessGroupCommunicator::ProcessGroupCommunicator(c10::intrusive_ptr<c10d::ProcessGroup> group, int rank,
                                                   int world_size, std::string backend,
                                                   c10::intrusive_ptr<c10d::Store> store)
    : store_(std::move(store)),
      group_(std::make_unique<Collectives::Of<c10d::ProcessGroup>>(std::move(group))),
      rank_(rank),
      world_size_(world_size),
      backend_(std::move(backend)) {}

ProcessGroupCommunicator::ProcessGroupCommunicator(c10::intrusive_ptr<c10d::Backend> group, int rank, int world_size,
                                                   std::string backend, c10::intrusive_ptr<c10d::Store> store)
    : store_(std::move(store)),
      group_(std::make_unique<Collectives::Of<c10d::Backend>>(std::move(group))),
      rank_(rank),
      world_size_(world_size),
      backend_(std::move(backend)) {}

ProcessGroupCommunicator::~ProcessGroupCommunicator() = default;

void ProcessGroupCommunicator::StageHostTensorsOn(torch::Device device) { stage_device_ = device; }

torch::Tensor ProcessGroupCommunicator::Staged(const torch::Tensor& tensor) const {
  return stage_device_ && tensor.device().is_cpu() ? tensor.to(*stage_device_) : tensor;
}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::AllReduceSum(torch::Tensor tensor) {
  torch::Tensor staged = Staged(tensor);
  return Start(
      "all-reduce",
      [&] {
        std::vector<at::Tensor> tensors{staged};
        return group_->allreduce(tensors);
      },
      tensor, staged);
}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::AllGather(torch::Tensor input, torch::Tensor output) {
  torch::Tensor in = Staged(input);
  torch::Tensor out = Staged(output);
  return Start(
      "all-gather",
      [&] {
        std::vector<std::vector<at::Tensor>> outputs(1);
        for (int r = 0; r < world_size_; ++r) outputs[0].push_back(out[r]);
        std::vector<at::Tensor> inputs{in};
        return group_->allgather(outputs, inputs);
      },
      output, out);
}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::Broadcast(torch::Tensor tensor, int root) {
  torch::Tensor staged = Staged(tensor);
  return Start(
      "broadcast",
      [&] {
        std::vector<at::Tensor> tensors{staged};
        c10d::BroadcastOptions broadcast;
        broadcast.rootRank = root;
        return group_->broadcast(tensors, broadcast);
      },
      tensor, staged);
}

void ProcessGroupCommunicator::Barrier() {
  Start("barrier", [&] { return group_->barrier(); })->Wait();
}

}  // namespace accordion
