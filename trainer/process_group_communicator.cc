#include "trainer/process_group_communicator.h"

#include <atomic>

#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

// One c10d work; Wait() turns its failure into a CommunicationError.
class ProcessGroupWork : public CollectiveWork {
 public:
  ProcessGroupWork(c10::intrusive_ptr<c10d::Work> work, const char* what)
      : work_(std::move(work)), what_(what), done_ns_(std::make_shared<std::atomic<int64_t>>(0)) {
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
    int64_t expected = 0;
    done_ns_->compare_exchange_strong(expected, Clock::now().time_since_epoch().count());
  }

  Clock::time_point completed_at() const override { return Clock::time_point(Clock::duration(done_ns_->load())); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  const char* what_;
  std::shared_ptr<std::atomic<int64_t>> done_ns_;
};

template <typename Launch>
std::unique_ptr<CollectiveWork> Start(const char* what, Launch&& launch) {
  try {
    return std::make_unique<ProcessGroupWork>(launch(), what);
  } catch (const std::exception& e) {
    throw CommunicationError(std::string(what) + " failed: " + FirstLineOf(e));
  }
}

}  // namespace

ProcessGroupCommunicator::ProcessGroupCommunicator(c10::intrusive_ptr<c10d::ProcessGroup> group, int rank,
                                                   int world_size, std::string backend,
                                                   c10::intrusive_ptr<c10d::Store> store)
    : store_(std::move(store)),
      group_(std::move(group)),
      rank_(rank),
      world_size_(world_size),
      backend_(std::move(backend)) {}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::AllReduceSum(torch::Tensor tensor) {
  return Start("all-reduce", [&] {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return group_->allreduce(tensors);
  });
}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::AllGather(torch::Tensor input, torch::Tensor output) {
  return Start("all-gather", [&] {
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < world_size_; ++r) outputs[0].push_back(output[r]);
    std::vector<at::Tensor> inputs{std::move(input)};
    return group_->allgather(outputs, inputs);
  });
}

std::unique_ptr<CollectiveWork> ProcessGroupCommunicator::Broadcast(torch::Tensor tensor, int root) {
  return Start("broadcast", [&] {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions broadcast;
    broadcast.rootRank = root;
    return group_->broadcast(tensors, broadcast);
  });
}

void ProcessGroupCommunicator::Barrier() {
  Start("barrier", [&] { return group_->barrier(); })->Wait();
}

}  // namespace accordion
