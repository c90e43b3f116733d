// Two ranks in one test process: two threads, each with its own real Gloo
// process group over loopback, on a free port per call (so tests run side
// by side under ctest -j). An exception on either rank fails the test.
//
// c10d's flight recorder (PyTorch 2.x) is one per process, and two process
// groups enqueueing at once from two threads corrupt it (a segfault in
// FlightRecorder::recordWithResetEnabled, about 1 in 50 runs of a test with
// a few dozen collectives under load): the ranks of one process turn it off.
// A real run has one group per process and is not affected.
#ifndef ACCORDION_TESTS_TRAINER_GLOO_RANKS_H_
#define ACCORDION_TESTS_TRAINER_GLOO_RANKS_H_

#include <cstdlib>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "trainer/gloo_communicator.h"
#include "trainer/launcher.h"

namespace accordion::test_support {

inline void OnTwoRanks(const std::function<void(Communicator&)>& body) {
  setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  const int port = PickFreePort("127.0.0.1");
  std::vector<std::exception_ptr> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      try {
        const auto comm = ConnectGloo(GlooOptions().rendezvous(
            RendezvousOptions().rank(r).world_size(2).master_port(port).timeout(std::chrono::seconds(20))));
        body(*comm);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace accordion::test_support

#endif  // ACCORDION_TESTS_TRAINER_GLOO_RANKS_H_
