// Trainer: one worker's share of a data-parallel training run - the epoch
// loop that ties model, data, GradientExchange, AccordionController,
// TraceRecorder and Checkpointer together.
#ifndef ACCORDION_TRAINER_TRAINER_H_
#define ACCORDION_TRAINER_TRAINER_H_

#include <cstdint>
#include <memory>

#include "trainer/launcher.h"
#include "trainer/train_options.h"

namespace accordion {

class Trainer {
 public:
  Trainer(TrainOptions options, WorkerEnvironment env);
  ~Trainer();

  // Trains until the last epoch (returns 0) or a stop request (returns
  // kExitInterrupted after committing the finished epochs). Throws
  // InputError for bad input, CommunicationError when a peer fails.
  int Run();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The seed of `rank`'s default random generator once the initial weights
// are shared: distinct per rank (dropout masks must differ between workers)
// and the same on every run with `seed`.
uint64_t WorkerSeed(int64_t seed, int rank);

// Asks the trainer to stop before its next step; the running epoch is
// dropped, the finished ones stay. Every rank must be asked (a terminal's
// Ctrl-C, the launcher and Slurm signal them all): ranks do not agree on the
// step, a peer that leaves first only makes the others stop too.
// Async-signal-safe: call it from a SIGINT handler.
void RequestStop();
bool StopRequested();

}  // namespace accordion

#endif  // ACCORDION_TRAINER_TRAINER_H_
