// Checkpointer: one checkpoint per finished epoch, consistent across ranks.
//
// Each rank writes its own state file (weights, optimizer, error-feedback
// memories, warm Qs, controller, RNG) atomically; after a barrier rank 0
// commits the epoch by renaming the manifest into place; after another, the
// ranks drop their previous files. A crash at any point leaves the last
// committed checkpoint whole. The manifest holds each state file's size and
// CRC-32 and the run's id: a damaged file is refused on load, not resumed.
#ifndef ACCORDION_TRAINER_CHECKPOINTER_H_
#define ACCORDION_TRAINER_CHECKPOINTER_H_

#include <functional>
#include <string>

#include "trainer/checkpoint_manifest.h"
#include "trainer/communicator.h"

namespace torch::serialize {
class InputArchive;
class OutputArchive;
}  // namespace torch::serialize

namespace accordion {

class Checkpointer {
 public:
  // `config_json` (ConfigJson) and `run_id` identify the run in the manifest.
  // A checkpoint of another run already in `dir` is replaced by the first
  // Save (the caller checked it may be).
  Checkpointer(std::string dir, Communicator& comm, std::string config_json, std::string run_id);

  // Collective. `fill` writes this rank's state. InputError (one line, the
  // partial file removed) when it cannot be written, e.g. on a full disk.
  void Save(int epoch, int64_t steps_done, const std::function<void(torch::serialize::OutputArchive&)>& fill);

  // Reads this rank's state of the committed epoch through `read`; returns
  // the manifest. Throws InputError when there is none, it does not fit, or
  // the state file is not the one the manifest committed.
  CheckpointManifest Load(const std::function<void(torch::serialize::InputArchive&)>& read);

 private:
  std::string dir_;
  Communicator& comm_;
  std::string config_json_;
  std::string run_id_;
  int previous_epoch_ = -1;  // state file of this rank to drop after the next commit
};

}  // namespace accordion

#endif  // ACCORDION_TRAINER_CHECKPOINTER_H_
