#include "trainer/gloo_communicator.h"

#include <atomic>
#include <cstdlib>

#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

class GlooWork : public CollectiveWork {
 public:
  GlooWork(c10::intrusive_ptr<c10d::Work> work, const char* what)
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

class GlooCommunicator : public Communicator {
 public:
  explicit GlooCommunicator(const GlooOptions& options) : options_(options.rendezvous()) {
    try {
      store_ = ConnectStore(options_);
      auto group_options = c10d::ProcessGroupGloo::Options::create(options_.timeout());
      // GLOO_SOCKET_IFNAME picks an interface, as in PyTorch; otherwise the
      // address we were told to bind (loopback unless multi-node).
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      group_options->devices.push_back(ifname != nullptr && *ifname != '\0'
                                           ? c10d::ProcessGroupGloo::createDeviceForInterface(ifname)
                                           : c10d::ProcessGroupGloo::createDeviceForHostname(options.bind_addr()));
      group_options->threads = options.threads();
      group_ =
          c10::make_intrusive<c10d::ProcessGroupGloo>(store_, options_.rank(), options_.world_size(), group_options);
    } catch (const std::exception& e) {
      throw CommunicationError(RendezvousFailure(options_, e));
    }
  }

  int rank() const override { return options_.rank(); }
  int world_size() const override { return options_.world_size(); }
  std::string backend() const override { return "gloo"; }

  std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) override {
    return Start("all-reduce", [&] {
      std::vector<at::Tensor> tensors{std::move(tensor)};
      return group_->allreduce(tensors);
    });
  }

  std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) override {
    return Start("all-gather", [&] {
      std::vector<std::vector<at::Tensor>> outputs(1);
      for (int r = 0; r < world_size(); ++r) outputs[0].push_back(output[r]);
      std::vector<at::Tensor> inputs{std::move(input)};
      return group_->allgather(outputs, inputs);
    });
  }

  std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) override {
    return Start("broadcast", [&] {
      std::vector<at::Tensor> tensors{std::move(tensor)};
      c10d::BroadcastOptions broadcast;
      broadcast.rootRank = root;
      return group_->broadcast(tensors, broadcast);
    });
  }

  void Barrier() override {
    Start("barrier", [&] { return group_->barrier(); })->Wait();
  }

 private:
  template <typename Launch>
  std::unique_ptr<CollectiveWork> Start(const char* what, Launch&& launch) {
    try {
      return std::make_unique<GlooWork>(launch(), what);
    } catch (const std::exception& e) {
      throw CommunicationError(std::string(what) + " failed: " + FirstLineOf(e));
    }
  }

  RendezvousOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

std::unique_ptr<Communicator> ConnectGloo(const GlooOptions& options) {
  return std::make_unique<GlooCommunicator>(options);
}

}  // namespace accordion
