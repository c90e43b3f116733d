#include "trainer/checkpointer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <sstream>

#include <torch/torch.h>

#include "analysis/accordion_controller.h"
#include "analysis/level_policy.h"
#include "common/errors.h"
#include "common/output_file.h"
#include "trainer/gradient_exchange.h"
#include "trainer/run_outputs.h"

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

std::vector<double> Doubles(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// A policy's state as `name` stores it, in float64 tensors "name.key";
// checkpoints before LevelPolicy stored the Accordion controllers' under the
// same names, some as int64, which Doubles reads alike.
void WritePolicyState(torch::serialize::OutputArchive& a, const std::string& name, const LevelPolicy& policy) {
  for (const auto& [key, values] : policy.Save()) a.write(name + "." + key, torch::tensor(values, torch::kFloat64));
}

void ReadPolicyState(torch::serialize::InputArchive& a, const std::string& name, LevelPolicy& policy) {
  const PolicyState fresh = policy.Save();
  PolicyState saved;
  for (const auto& entry : fresh) {
    torch::Tensor t;
    if (a.try_read(name + "." + entry.first, t)) saved[entry.first] = Doubles(t);
  }
  // What checkpoints from before the post-decay hold lack: no hold, and
  // the checks' regimes as in force.
  if (name != "policy") {
    if (!saved.count("critical_through") && fresh.count("critical_through")) {
      saved["critical_through"] = fresh.at("critical_through");
    }
    if (!saved.count("check_critical") && saved.count("critical")) saved["check_critical"] = saved["critical"];
  }
  for (const auto& entry : fresh) {
    if (!saved.count(entry.first)) throw InputError("the checkpoint holds no " + name + "." + entry.first);
  }
  policy.Restore(saved);
}

void WriteRankState(torch::serialize::OutputArchive& a, const RankState& state) {
  torch::serialize::OutputArchive model_archive, optimizer_archive, exchange_archive;
  state.model->save(model_archive);
  state.optimizer->save(optimizer_archive);
  state.exchange->Save(exchange_archive);
  a.write("model", model_archive);
  a.write("optimizer", optimizer_archive);
  a.write("exchange", exchange_archive);
  for (const auto& [name, policy] : state.policies) WritePolicyState(a, name, *policy);
  a.write("rng", torch::globalContext().defaultGenerator(torch::kCPU).get_state());
  if (state.device.is_cuda()) a.write("cuda_rng", torch::globalContext().defaultGenerator(state.device).get_state());
}

void ReadRankState(torch::serialize::InputArchive& a, const RankState& state) {
  torch::serialize::InputArchive model_archive, optimizer_archive, exchange_archive;
  a.read("model", model_archive);
  a.read("optimizer", optimizer_archive);
  a.read("exchange", exchange_archive);
  state.model->load(model_archive);
  state.optimizer->load(optimizer_archive);
  state.exchange->Load(exchange_archive);
  for (const auto& [name, policy] : state.policies) ReadPolicyState(a, name, *policy);
  torch::Tensor rng;
  a.read("rng", rng);
  at::Generator generator = torch::globalContext().defaultGenerator(torch::kCPU);
  generator.set_state(rng);
  torch::Tensor cuda_rng;
  if (state.device.is_cuda() && a.try_read("cuda_rng", cuda_rng)) {
    at::Generator cuda_generator = torch::globalContext().defaultGenerator(state.device);
    cuda_generator.set_state(cuda_rng.to(torch::kCPU));
  }
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

void Checkpointer::Save(int epoch, int64_t steps_done, const RankState& state) {
  torch::serialize::OutputArchive archive;
  WriteRankState(archive, state);
  // Serialised in memory first: LibTorch's writer throws from its destructor
  // when a write fails (a full disk), which ends the process on the spot.
  std::ostringstream buffer;
  archive.save_to(buffer);
  const std::string bytes = buffer.str();
  const std::string path = CheckpointStatePath(dir_, epoch, comm_.rank());
  const std::optional<uint64_t> free_bytes = FreeBytesIn(dir_);
  if (free_bytes && *free_bytes < bytes.size()) {
    throw IoError(path + ": disk full: the checkpoint needs " + MiB(static_cast<double>(bytes.size())) + ", " +
                  MiB(static_cast<double>(*free_bytes)) + " are free");
  }
  CheckPartialFile(path + ".partial");  // said as it is: below, every failure becomes a write error
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

CheckpointManifest Checkpointer::Load(const RankState& state) {
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
    ReadRankState(archive, state);
  } catch (const c10::Error& e) {
    throw InputError(path + ": unreadable checkpoint (" + e.what_without_backtrace() + ")");
  }
  previous_epoch_ = m->epoch;
  return *m;
}

}  // namespace accordion
