// The manifest of a checkpoint directory: which epoch it holds, for how many
// ranks, under which configuration. Rank 0 writes it (temp file + rename,
// common/output_file.h) only after every rank's state file for that epoch is
// complete, so the manifest's rename is the moment a checkpoint exists.
#ifndef ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_
#define ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>

namespace accordion {

struct CheckpointManifest {
  int epoch = -1;          // last finished epoch the checkpoint holds
  int world_size = 0;
  int64_t steps_done = 0;  // optimizer steps since the start of the run
  std::string config_json;  // ConfigJson() of the run that wrote it
};

// std::nullopt when `dir` holds no manifest; InputError when it is unreadable.
std::optional<CheckpointManifest> ReadCheckpointManifest(const std::string& dir);
void WriteCheckpointManifest(const std::string& dir, const CheckpointManifest& manifest);

// Path of one rank's state file for `epoch`.
std::string CheckpointStatePath(const std::string& dir, int epoch, int rank);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_
