// Checkpointer: one checkpoint per finished epoch, consistent across ranks,
// and what a rank's state file holds (RankState).
//
// Each rank writes its own state file (weights, optimizer, error-feedback
// memories, warm Qs, controllers, RNG) atomically; after a barrier rank 0
// commits the epoch by renaming the manifest into place; after another, the
// ranks drop their previous files. A crash at any point leaves the last
// committed checkpoint whole. The manifest holds each state file's size and
// CRC-32 and the run's id: a damaged file is refused on load, not resumed.
#ifndef ACCORDION_TRAINER_CHECKPOINTER_H_
#define ACCORDION_TRAINER_CHECKPOINTER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainer/checkpoint_manifest.h"
#include "trainer/communicator.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn
namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace accordion {

class GradientExchange;
class LevelPolicy;

// The live objects a rank's state file holds, saved from and restored into
// in place: weights and buffers, SGD momentum, the exchange's error-feedback
// memories and warm Qs, every level policy's state (the Accordion
// controllers', and AdaQS's or Smith et al.'s when one decides), and the rank's own
// default random generators (the CPU's, and the GPU's when `device` is one:
// dropout there draws from it).
struct RankState {
  torch::nn::Module* model = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  GradientExchange* exchange = nullptr;
  // The level policies by the names they are stored under (RunPlanner::Policies).
  std::vector<std::pair<std::string, LevelPolicy*>> policies;
  torch::Device device = torch::kCPU;
};

class Checkpointer {
 public:
  // `config_json` (ConfigJson) and `run_id` identify the run in the manifest.
  // A checkpoint of another run already in `dir` is replaced by the first
  // Save (the caller checked it may be).
  Checkpointer(std::string dir, Communicator& comm, std::string config_json, std::string run_id);

  // Collective. Writes `state` as this rank's state of `epoch`. IoError (one
  // line, the partial file removed) when it cannot be written, e.g. on a
  // full disk.
  void Save(int epoch, int64_t steps_done, const RankState& state);

  // Restores this rank's state of the committed epoch into `state`; returns
  // the manifest. Throws InputError when there is none, it does not fit, or
  // the state file is not the one the manifest committed.
  CheckpointManifest Load(const RankState& state);

 private:
  std::string dir_;
  Communicator& comm_;
  std::string config_json_;
  std::string run_id_;
  int previous_epoch_ = -1;  // state file of this rank to drop after the next commit
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_CHECKPOINTER_H_
