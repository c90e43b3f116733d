#include "trainer/checkpoint_manifest.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/output_file.h"

namespace accordion {

namespace {

std::string ManifestPath(const std::string& dir) { return dir + "/checkpoint.json"; }

}  // namespace

std::optional<CheckpointManifest> ReadCheckpointManifest(const std::string& dir) {
  std::ifstream in(ManifestPath(dir));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw InputError(ManifestPath(dir) + ": not JSON");
  CheckpointManifest m;
  try {
    m.epoch = j.at("epoch").get<int>();
    m.world_size = j.at("world_size").get<int>();
    m.steps_done = j.at("steps_done").get<int64_t>();
    m.config_json = j.at("config").dump();
  } catch (const nlohmann::json::exception&) {
    throw InputError(ManifestPath(dir) + ": not a checkpoint manifest");
  }
  if (m.epoch < 0 || m.world_size < 1 || m.steps_done < 0) {
    throw InputError(ManifestPath(dir) + ": manifest values out of range");
  }
  return m;
}

void WriteCheckpointManifest(const std::string& dir, const CheckpointManifest& m) {
  nlohmann::json j;
  j["epoch"] = m.epoch;
  j["world_size"] = m.world_size;
  j["steps_done"] = m.steps_done;
  j["config"] = nlohmann::json::parse(m.config_json);
  WriteOutput(ManifestPath(dir), [&](std::ostream& out) { out << j.dump(1) << "\n"; });
}

std::string CheckpointStatePath(const std::string& dir, int epoch, int rank) {
  return dir + "/epoch-" + std::to_string(epoch) + ".rank-" + std::to_string(rank) + ".pt";
}

}  // namespace accordion
