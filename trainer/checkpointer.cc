#include "trainer/checkpointer.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <sstream>

#include <torch/torch.h>

#include "common/errors.h"
#include "common/output_file.h"

namespace accordion {

namespace {

std::string EncodeDigest(const FileDigest& d) { return std::to_string(d.bytes) + " " + std::to_string(d.crc32); }

std::string MiB(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

FileDigest DecodeDigest(const std::string& text) {
  FileDigest d;
  std::istringstream in(text);
  in >> d.bytes >> d.crc32;
  return d;
}

}  // namespace

Checkpointer::Checkpointer(std::string dir, Communicator& comm, std::string config_json, std::string run_id)
    : dir_(std::move(dir)), comm_(comm), config_json_(std::move(config_json)), run_id_(std::move(run_id)) {
  ::mkdir(dir_.c_str(), 0755);  // may exist, or be made by another rank
  // Leftovers of a save that was killed: nobody writes before the first epoch ends.
  if (comm_.rank() == 0) RemoveUncommittedCheckpointFiles(dir_);
  // An earlier run's files here go once this run's first epoch is committed.
  try {
    if (const std::optional<CheckpointManifest> old = ReadCheckpointManifest(dir_)) previous_epoch_ = old->epoch;
  } catch (const InputError&) {
    // An unreadable manifest is replaced by the first commit.
  }
}

void Checkpointer::Save(int epoch, int64_t steps_done,
                        const std::function<void(torch::serialize::OutputArchive&)>& fill) {
  torch::serialize::OutputArchive archive;
  fill(archive);
  // Serialised in memory first: LibTorch's writer throws from its destructor
  // when a write fails (a full disk), which ends the process on the spot.
  std::ostringstream buffer;
  archive.save_to(buffer);
  const std::string bytes = buffer.str();
  const std::string path = CheckpointStatePath(dir_, epoch, comm_.rank());
  struct statvfs fs {};
  if (::statvfs(dir_.c_str(), &fs) == 0 && uint64_t{fs.f_bavail} * fs.f_frsize < bytes.size()) {
    throw IoError(path + ": disk full: the checkpoint needs " + MiB(static_cast<double>(bytes.size())) + ", " +
                  MiB(static_cast<double>(uint64_t{fs.f_bavail} * fs.f_frsize)) + " are free");
  }
  try {
    WriteOutput(path, [&](std::ostream& out) { out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
  } catch (const InputError&) {
    const int err = errno;
    throw IoError(path + ": cannot write the checkpoint (" + std::strerror(err) + "); nothing of epoch " +
                  std::to_string(epoch) + " was kept");
  }
  // The digest of what was just written, from memory: no second read of the file.
  const std::vector<std::string> digests = AllGatherBytes(comm_, EncodeDigest(DigestOfBytes(bytes)));
  if (comm_.rank() == 0) {
    CheckpointManifest m{epoch, comm_.world_size(), steps_done, config_json_, run_id_, {}};
    for (const std::string& d : digests) m.state_files.push_back(DecodeDigest(d));
    WriteCheckpointManifest(dir_, m);
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
  if (!m->state_files.empty()) {
    const FileDigest expected = m->state_files[static_cast<size_t>(comm_.rank())];
    const FileDigest found = DigestOfFile(path);
    if (!(found == expected)) {
      throw InputError(path + ": damaged checkpoint (" + std::to_string(found.bytes) + " bytes, CRC-32 " +
                       std::to_string(found.crc32) + "; the manifest committed " + std::to_string(expected.bytes) +
                       " bytes, CRC-32 " + std::to_string(expected.crc32) + "); it cannot be resumed");
    }
  }
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
