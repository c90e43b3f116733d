#include "trainer/checkpointer.h"

#include <sys/stat.h>

#include <cstdio>

#include <torch/torch.h>

#include "common/errors.h"
#include "common/output_file.h"

namespace accordion {

Checkpointer::Checkpointer(std::string dir, Communicator& comm, std::string config_json)
    : dir_(std::move(dir)), comm_(comm), config_json_(std::move(config_json)) {
  ::mkdir(dir_.c_str(), 0755);  // may exist, or be made by another rank
}

void Checkpointer::Save(int epoch, int64_t steps_done,
                        const std::function<void(torch::serialize::OutputArchive&)>& fill) {
  torch::serialize::OutputArchive archive;
  fill(archive);
  WriteOutput(CheckpointStatePath(dir_, epoch, comm_.rank()), [&](std::ostream& out) { archive.save_to(out); });
  comm_.Barrier();
  if (comm_.rank() == 0) {
    WriteCheckpointManifest(dir_, {epoch, comm_.world_size(), steps_done, config_json_});
  }
  comm_.Barrier();
  if (previous_epoch_ >= 0 && previous_epoch_ != epoch) {
    std::remove(CheckpointStatePath(dir_, previous_epoch_, comm_.rank()).c_str());
  }
  previous_epoch_ = epoch;
}

CheckpointManifest Checkpointer::Load(const std::function<void(torch::serialize::InputArchive&)>& read) {
  const std::optional<CheckpointManifest> m = ReadCheckpointManifest(dir_);
  if (!m) throw InputError("no checkpoint in " + dir_);
  if (m->world_size != comm_.world_size()) {
    throw InputError("the checkpoint in " + dir_ + " is of " + std::to_string(m->world_size) +
                     " workers, this run has " + std::to_string(comm_.world_size()));
  }
  const std::string path = CheckpointStatePath(dir_, m->epoch, comm_.rank());
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
    read(archive);
  } catch (const c10::Error& e) {
    throw InputError(path + ": unreadable checkpoint (" + e.what_without_backtrace() + ")");
  }
  previous_epoch_ = m->epoch;
  return *m;
}

}  // namespace accordion
