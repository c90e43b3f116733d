// Helpers shared by the fuzz targets: the readers under test take paths, so
// each input is written to a file in a private temporary directory (one per
// fuzzing process, removed at exit) and the reader is pointed at it.
#ifndef ACCORDION_FUZZ_FUZZ_SUPPORT_H_
#define ACCORDION_FUZZ_FUZZ_SUPPORT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace accordion::fuzz {

// The process's scratch directory: /dev/shm/accordion-fuzz-XXXXXX where
// /dev/shm is a writable directory, else under $TMPDIR (or /tmp). Every
// input is a file created and written afresh: on a disk-backed /tmp that
// alone held the small-input targets to about 350 exec/s, where memory gives
// 3,700 (token files) to 9,300 (checkpoint manifests).
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    const char* base = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm"
                       : tmp != nullptr && *tmp != '\0'       ? tmp
                                                              : "/tmp";
    std::string pattern = std::string(base) + "/accordion-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string remove_at_exit;
    remove_at_exit = "rm -rf '" + pattern + "'";
    std::atexit([] {
      if (std::system(remove_at_exit.c_str()) != 0) std::perror("removing the fuzz scratch directory");
    });
    return pattern;
  }();
  return dir;
}

// Writes the input to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteInput(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// Removes a file and whatever SQLite may have left beside it (a mutated
// header can ask for WAL mode, which creates -wal and -shm files).
inline void RemoveWithSidecars(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((path + suffix).c_str());
}

}  // namespace accordion::fuzz

#endif  // ACCORDION_FUZZ_FUZZ_SUPPORT_H_
