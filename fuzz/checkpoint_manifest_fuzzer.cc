// Fuzz target: the checkpoint manifest reader (trainer/checkpoint_manifest.h).
//
// The input is written as checkpoint.json in a scratch directory and
// ReadCheckpointManifest() reads that directory: JSON parsing, the four
// fields and their ranges. A manifest that reads is written back with
// WriteCheckpointManifest() (into a second directory) and read again, which must give the same values.
// Seeds: manifests as accordion-train writes them (fuzz/corpus/
// checkpoint_manifest). InputError is the expected answer to a bad file;
// anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <sys/stat.h>
#include <unistd.h>

#include "common/errors.h"
#include "fuzz/fuzz_support.h"
#include "trainer/checkpoint_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accordion;
  const std::string& dir = fuzz::ScratchDir();
  fuzz::WriteInput("checkpoint.json", data, size);
  try {
    const std::optional<CheckpointManifest> m = ReadCheckpointManifest(dir);
    if (!m) std::abort();  // the file is there
    const std::string copy = dir + "/written";
    ::mkdir(copy.c_str(), 0700);
    ::unlink((copy + "/checkpoint.json").c_str());
    WriteCheckpointManifest(copy, *m);
    const std::optional<CheckpointManifest> again = ReadCheckpointManifest(copy);
    if (!again || again->epoch != m->epoch || again->world_size != m->world_size ||
        again->steps_done != m->steps_done || again->config_json != m->config_json) {
      std::abort();
    }
  } catch (const InputError&) {
  }
  return 0;
}
