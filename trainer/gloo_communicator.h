// GlooCommunicator: the Communicator over c10d's ProcessGroupGloo, with
// rendezvous through a c10d TCPStore that rank 0 hosts at MASTER_ADDR:PORT.
//
// Gloo's own sockets bind to `bind_addr` (loopback by default, so a local run
// opens nothing to the network). Every collective fails after `timeout`, so
// a hung peer ends the run instead of blocking it; a dead one fails it at
// once, when its sockets close.
#ifndef ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
#define ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_

#include <chrono>
#include <memory>
#include <string>

#include "trainer/communicator.h"

namespace accordion {

class GlooOptions {
 public:
  GlooOptions& rank(int v) { rank_ = v; return *this; }
  GlooOptions& world_size(int v) { world_size_ = v; return *this; }
  GlooOptions& master_addr(std::string v) { master_addr_ = std::move(v); return *this; }
  GlooOptions& master_port(int v) { master_port_ = v; return *this; }
  GlooOptions& bind_addr(std::string v) { bind_addr_ = std::move(v); return *this; }
  GlooOptions& timeout(std::chrono::milliseconds v) { timeout_ = v; return *this; }
  GlooOptions& threads(int v) { threads_ = v; return *this; }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  const std::string& master_addr() const { return master_addr_; }
  int master_port() const { return master_port_; }
  const std::string& bind_addr() const { return bind_addr_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  int threads() const { return threads_; }

 private:
  int rank_ = 0;
  int world_size_ = 1;
  std::string master_addr_ = "127.0.0.1";
  int master_port_ = 29500;
  std::string bind_addr_ = "127.0.0.1";
  std::chrono::milliseconds timeout_ = std::chrono::seconds(45);
  int threads_ = 2;  // Gloo's worker threads, as in PyTorch
};

class GlooCommunicator : public Communicator {
 public:
  // Rendezvous with the other ranks; throws CommunicationError when they do
  // not all arrive within the timeout.
  explicit GlooCommunicator(const GlooOptions& options);
  ~GlooCommunicator() override;

  int rank() const override;
  int world_size() const override;
  std::string backend() const override { return "gloo"; }
  std::unique_ptr<CollectiveWork> AllReduceSum(torch::Tensor tensor) override;
  std::unique_ptr<CollectiveWork> AllGather(torch::Tensor input, torch::Tensor output) override;
  std::unique_ptr<CollectiveWork> Broadcast(torch::Tensor tensor, int root) override;
  void Barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_GLOO_COMMUNICATOR_H_
