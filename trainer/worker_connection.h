// Turns a worker's rendezvous into a Communicator over the chosen backend:
// the one place the trainer and the collective benchmark connect, so both
// reach their peers the same way.
#ifndef ACCORDION_TRAINER_WORKER_CONNECTION_H_
#define ACCORDION_TRAINER_WORKER_CONNECTION_H_

#include <memory>
#include <string>

#include "trainer/communicator.h"
#include "trainer/launcher.h"

namespace accordion {

// `backend`: "gloo" (CPU tensors; sockets bound to `bind_addr`) or "nccl"
// (the GPU LOCAL_RANK names). A collective that takes longer than
// `timeout_s` fails with CommunicationError.
std::unique_ptr<Communicator> ConnectWorker(const std::string& backend, const WorkerEnvironment& env,
                                            const std::string& bind_addr, double timeout_s);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_WORKER_CONNECTION_H_
