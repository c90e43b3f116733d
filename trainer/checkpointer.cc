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

void WriteAccordionState(torch::serialize::OutputArchive& a, const std::string& prefix, const AccordionState& s) {
  std::vector<int64_t> critical(s.critical.begin(), s.critical.end());
  std::vector<int64_t> check_critical(s.check_critical.begin(), s.check_critical.end());
  a.write(prefix + ".next_epoch", torch::tensor(int64_t{s.next_epoch}));
  a.write(prefix + ".check_epoch", torch::tensor(int64_t{s.check_epoch}));
  a.write(prefix + ".critical_through", torch::tensor(int64_t{s.critical_through}));
  a.write(prefix + ".critical", torch::tensor(critical, torch::kInt64));
  a.write(prefix + ".check_critical", torch::tensor(check_critical, torch::kInt64));
  a.write(prefix + ".levels", torch::tensor(s.levels, torch::kFloat64));
  a.write(prefix + ".check_norms", torch::tensor(s.check_norms, torch::kFloat64));
}

std::vector<double> Doubles(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

AccordionState ReadAccordionState(torch::serialize::InputArchive& a, const std::string& prefix) {
  // A fresh tensor per key: reading into a defined tensor set_()s its
  // storage and keeps its dtype, reinterpreting the bits.
  auto get = [&](const char* key) {
    torch::Tensor t;
    a.read(prefix + key, t);
    return t;
  };
  AccordionState s;
  s.next_epoch = static_cast<int>(get(".next_epoch").item<int64_t>());
  s.check_epoch = static_cast<int>(get(".check_epoch").item<int64_t>());
  for (double c : Doubles(get(".critical"))) s.critical.push_back(c != 0);
  // Checkpoints from before the post-decay hold: no hold, checks as in force.
  torch::Tensor t;
  if (a.try_read(prefix + ".critical_through", t)) s.critical_through = static_cast<int>(t.item<int64_t>());
  torch::Tensor found;
  if (a.try_read(prefix + ".check_critical", found)) {
    for (double c : Doubles(found)) s.check_critical.push_back(c != 0);
  } else {
    s.check_critical = s.critical;
  }
  s.levels = Doubles(get(".levels"));
  s.check_norms = Doubles(get(".check_norms"));
  return s;
}

void WriteRankState(torch::serialize::OutputArchive& a, const RankState& state) {
  torch::serialize::OutputArchive model_archive, optimizer_archive, exchange_archive;
  state.model->save(model_archive);
  state.optimizer->save(optimizer_archive);
  state.exchange->Save(exchange_archive);
  a.write("model", model_archive);
  a.write("optimizer", optimizer_archive);
  a.write("exchange", exchange_archive);
  WriteAccordionState(a, "controller", state.controller->state());
  WriteAccordionState(a, "model_controller", state.model_controller->state());
  if (state.policy != nullptr) {
    for (const auto& [key, values] : state.policy->Save()) {
      a.write("policy." + key, torch::tensor(values, torch::kFloat64));
    }
  }
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
  state.controller->Restore(ReadAccordionState(a, "controller"));
  state.model_controller->Restore(ReadAccordionState(a, "model_controller"));
  if (state.policy != nullptr) {
    PolicyState saved;
    for (const auto& [key, values] : state.policy->Save()) {
      torch::Tensor t;
      if (!a.try_read("policy." + key, t)) throw InputError("the checkpoint holds no " + key + " of the policy");
      saved[key] = Doubles(t);
    }
    state.policy->Restore(saved);
  }
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
