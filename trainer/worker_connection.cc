#include "trainer/worker_connection.h"

#include <chrono>

#include "trainer/gloo_communicator.h"
#include "trainer/nccl_communicator.h"

namespace accordion {

std::unique_ptr<Communicator> ConnectWorker(const std::string& backend, const WorkerEnvironment& env,
                                            const std::string& bind_addr, double timeout_s) {
  const RendezvousOptions rendezvous = RendezvousOptions()
                                           .rank(env.rank)
                                           .world_size(env.world_size)
                                           .master_addr(env.master_addr)
                                           .master_port(env.master_port)
                                           .timeout(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  if (backend == "nccl") return ConnectNccl(NcclOptions().rendezvous(rendezvous).device_index(env.local_rank));
  return ConnectGloo(GlooOptions().rendezvous(rendezvous).bind_addr(bind_addr));
}

}  // namespace accordion
