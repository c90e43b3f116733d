#include "trainer/checkpoint_manifest.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/input_file.h"
#include "common/output_file.h"

namespace accordion {

namespace {

std::string ManifestPath(const std::string& dir) { return dir + "/checkpoint.json"; }

}  // namespace

std::optional<CheckpointManifest> ReadCheckpointManifest(const std::string& dir) {
  struct stat st {};
  if (::lstat(ManifestPath(dir).c_str(), &st) != 0) return std::nullopt;
  CheckInputFile(ManifestPath(dir));  // a FIFO there would block the launcher
  std::ifstream in(ManifestPath(dir));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError(ManifestPath(dir) + ": not JSON");
  CheckpointManifest m;
  try {
    // Whole numbers that fit: get<int>() of 1e300 or 2^32 + 3 would be
    // undefined or wrap to 3.
    for (const char* key : {"epoch", "world_size"}) {
      const nlohmann::json& v = j.at(key);
      if (!v.is_number_integer() || v.get<int64_t>() != static_cast<int>(v.get<int64_t>())) {
        throw InputError(ManifestPath(dir) + ": manifest values out of range");
      }
    }
    if (!j.at("steps_done").is_number_integer()) throw InputError(ManifestPath(dir) + ": manifest values out of range");
    m.epoch = j.at("epoch").get<int>();
    m.world_size = j.at("world_size").get<int>();
    m.steps_done = j.at("steps_done").get<int64_t>();
    m.config_json = j.at("config").dump();
    if (j.contains("run_id")) m.run_id = j.at("run_id").get<std::string>();
    if (j.contains("state_files")) {
      for (const nlohmann::json& f : j.at("state_files")) {
        if (!f.at("crc32").is_number_integer() || !f.at("bytes").is_number_integer()) {
          throw InputError(ManifestPath(dir) + ": state file digest out of range");
        }
        const int64_t crc = f.at("crc32").get<int64_t>();
        if (crc < 0 || crc > 0xFFFFFFFFLL || f.at("bytes").get<int64_t>() < 0) {
          throw InputError(ManifestPath(dir) + ": state file digest out of range");
        }
        m.state_files.push_back({f.at("bytes").get<int64_t>(), static_cast<uint32_t>(crc)});
      }
    }
  } catch (const nlohmann::json::exception&) {
    throw InputError(ManifestPath(dir) + ": not a checkpoint manifest");
  }
  if (m.epoch < 0 || m.world_size < 1 || m.steps_done < 0) {
    throw InputError(ManifestPath(dir) + ": manifest values out of range");
  }
  if (!m.state_files.empty() && static_cast<int>(m.state_files.size()) != m.world_size) {
    throw InputError(ManifestPath(dir) + ": " + std::to_string(m.state_files.size()) + " state file digests for " +
                     std::to_string(m.world_size) + " workers");
  }
  return m;
}

void WriteCheckpointManifest(const std::string& dir, const CheckpointManifest& m) {
  nlohmann::json j;
  j["epoch"] = m.epoch;
  j["world_size"] = m.world_size;
  j["steps_done"] = m.steps_done;
  j["config"] = nlohmann::json::parse(m.config_json);
  j["run_id"] = m.run_id;
  j["state_files"] = nlohmann::json::array();
  for (const FileDigest& f : m.state_files) {
    j["state_files"].push_back({{"bytes", f.bytes}, {"crc32", f.crc32}});
  }
  WriteOutput(ManifestPath(dir), [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

FileDigest DigestOfFile(const std::string& path) {
  CheckInputFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read");
  FileDigest d;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(got));
    d.bytes += got;
  }
  if (in.bad()) throw InputError(path + ": read failed");
  d.crc32 = static_cast<uint32_t>(crc);
  return d;
}

int RemoveUncommittedCheckpointFiles(const std::string& dir) {
  std::optional<CheckpointManifest> committed;
  try {
    committed = ReadCheckpointManifest(dir);
  } catch (const InputError&) {
    return 0;  // not ours to judge: leave everything as it is
  }
  const std::string kept_prefix = committed ? "epoch-" + std::to_string(committed->epoch) + ".rank-" : "";
  auto ends_with = [](const std::string& name, const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto ours = [&](const std::string& name) {
    if (name == "checkpoint.json.partial") return true;
    if (name.rfind("epoch-", 0) != 0 || name.find(".rank-") == std::string::npos) return false;
    if (ends_with(name, ".pt.partial")) return true;
    return ends_with(name, ".pt") && (kept_prefix.empty() || name.rfind(kept_prefix, 0) != 0);
  };
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && ours(entry.path().filename().string()) &&
        std::filesystem::remove(entry.path(), ec)) {
      ++removed;
    }
  }
  return removed;
}

FileDigest DigestOfBytes(const std::string& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {
    const size_t chunk = std::min<size_t>(bytes.size() - at, size_t{1} << 30);  // uInt-sized pieces
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(chunk));
    at += chunk;
  }
  return {static_cast<int64_t>(bytes.size()), static_cast<uint32_t>(crc)};
}

std::string CheckpointStatePath(const std::string& dir, int epoch, int rank) {
  return dir + "/epoch-" + std::to_string(epoch) + ".rank-" + std::to_string(rank) + ".pt";
}

}  // namespace accordion
