// The manifest of a checkpoint directory: which epoch it holds, for how many
// ranks, under which configuration. Rank 0 writes it (temp file + rename,
// common/output_file.h) only after every rank's state file for that epoch is
// complete, so the manifest's rename is the moment a checkpoint exists.
#ifndef ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_
#define ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accordion {

// Size and CRC-32 of a file: enough to tell a damaged or swapped state file
// from the one the manifest committed.
struct FileDigest {
  int64_t bytes = 0;
  uint32_t crc32 = 0;
  bool operator==(const FileDigest& o) const { return bytes == o.bytes && crc32 == o.crc32; }
};

struct CheckpointManifest {
  int epoch = -1;  // last finished epoch the checkpoint holds
  int world_size = 0;
  int64_t steps_done = 0;   // optimizer steps since the start of the run
  std::string config_json;  // ConfigJson() of the run that wrote it
  std::string run_id;       // the run's id (RunInfo::run_id); empty in old manifests
  // Per rank, the digest of its state file; empty in old manifests (not checked).
  std::vector<FileDigest> state_files;
};

// std::nullopt when `dir` holds no manifest; InputError when it is unreadable.
std::optional<CheckpointManifest> ReadCheckpointManifest(const std::string& dir);
void WriteCheckpointManifest(const std::string& dir, const CheckpointManifest& manifest);

// InputError when `path` cannot be read.
FileDigest DigestOfFile(const std::string& path);
// The digest of a file that would hold exactly `bytes`.
FileDigest DigestOfBytes(const std::string& bytes);

// Removes what a killed or failed save left in `dir`: half-written files
// (".partial") and state files of an epoch the manifest never committed.
// Returns how many. Only names this module writes are touched, and only
// while nobody saves.
int RemoveUncommittedCheckpointFiles(const std::string& dir);

// Path of one rank's state file for `epoch`.
std::string CheckpointStatePath(const std::string& dir, int epoch, int rank);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_CHECKPOINT_MANIFEST_H_
