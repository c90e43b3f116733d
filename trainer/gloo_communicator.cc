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
    work_->getFuture()->addCallback([done](c10::ivalue::Future&) {
      done->store(Clock::now().time_since_epoch().count());
    });
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

  Clock::time_point completed_at() const override {
    return Clock::time_point(Clock::duration(done_ns_->load()));
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  const char* what_;
  std::shared_ptr<std::atomic<int64_t>> done_ns_;
};

}  // namespace

struct GlooCommunicator::Impl {
  GlooOptions options;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;

  template <typename Launch>
  std::unique_ptr<CollectiveWork> Start(const char* what, Launch&& launch) {
    try {
      return std::make_unique<GlooWork>(launch(), what);
    } catch (const std::exception& e) {
      throw CommunicationError(std::string(what) + " failed: " + FirstLineOf(e));
    }
  }
};

GlooCommunicator::GlooCommunicator(const GlooOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  try {
    impl_->store = ConnectStore(options.master_addr(), options.master_port(), options.rank(),
                                options.world_size(), options.timeout());

    auto group_options = c10d::ProcessGroupGloo::Options::create(options.timeout());
    // GLOO_SOCKET_IFNAME picks an interface, as in PyTorch; otherwise the
    // address we were told to bind (loopback unless multi-node).
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    group_options->devices.push_back(
        ifname != nullptr && *ifname != '\0'
            ? c10d::ProcessGroupGloo::createDeviceForInterface(ifname)
            : c10d::ProcessGroupGloo::createDeviceForHostname(options.bind_addr()));
    group_options->threads = options.threads();
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank(),
                                                               options.world_size(), group_options);
  } catch (const std::exception& e) {
    throw CommunicationError("rendezvous of " + std::to_string(options.world_size()) +
                             " workers at " + options.master_addr() + ":" +
                             std::to_string(options.master_port()) + " failed: " + FirstLineOf(e));
  }
}

GlooCommunicator::~GlooCommunicator() = default;

int GlooCommunicator::rank() const { return impl_->options.rank(); }
int GlooCommunicator::world_size() const { return impl_->options.world_size(); }

std::unique_ptr<CollectiveWork> GlooCommunicator::AllReduceSum(torch::Tensor tensor) {
  return impl_->Start("all-reduce", [&] {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return impl_->group->allreduce(tensors);
  });
}

std::unique_ptr<CollectiveWork> GlooCommunicator::AllGather(torch::Tensor input,
                                                            torch::Tensor output) {
  return impl_->Start("all-gather", [&] {
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < world_size(); ++r) outputs[0].push_back(output[r]);
    std::vector<at::Tensor> inputs{std::move(input)};
    return impl_->group->allgather(outputs, inputs);
  });
}

std::unique_ptr<CollectiveWork> GlooCommunicator::Broadcast(torch::Tensor tensor, int root) {
  return impl_->Start("broadcast", [&] {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return impl_->group->broadcast(tensors, options);
  });
}

void GlooCommunicator::Barrier() { impl_->Start("barrier", [&] { return impl_->group->barrier(); })->Wait(); }

}  // namespace accordion
