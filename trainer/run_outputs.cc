#include "trainer/run_outputs.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/errors.h"
#include "common/number_format.h"
#include "common/output_file.h"

namespace accordion {

namespace {

// The directory a file at `path` goes into; a checkpoint directory still to
// be made goes into its parent's file system.
std::string ExistingDirectoryOf(const std::string& path) {
  std::filesystem::path p = std::filesystem::absolute(path);
  std::error_code ec;
  while (!std::filesystem::is_directory(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  return p.string();
}

// The directory a new file at `path` goes into.
std::string DirectoryOfNewFile(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return ExistingDirectoryOf(parent.empty() ? "." : parent);
}

std::string KiB(uint64_t bytes) { return FormatNumber(static_cast<double>(bytes) / 1024, 4) + " KiB"; }

void CheckDirectoryRoom(const std::string& what, const std::string& dir) {
  // access() answers for the file system too: a read-only mount refuses even root.
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw InputError(what + ": cannot write in " + dir + " (" + std::strerror(errno) + ")");
  }
  const std::optional<uint64_t> free_bytes = FreeBytesIn(dir);
  if (!free_bytes) return;  // nothing to tell: the writes will say
  if (*free_bytes < static_cast<uint64_t>(kMinFreeOutputBytes)) {
    throw IoError(what + ": the file system of " + dir + " is full (" + KiB(*free_bytes) +
                  " free; a run needs at least " + KiB(static_cast<uint64_t>(kMinFreeOutputBytes)) +
                  "); free some space or write elsewhere");
  }
}

}  // namespace

std::optional<uint64_t> FreeBytesIn(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return std::nullopt;
  return uint64_t{fs.f_bavail} * fs.f_frsize;
}

void CheckOutputRoom(const std::string& what, const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) return;
  CheckDirectoryRoom(what, DirectoryOfNewFile(path));
}

void CheckRunOutputsWritable(const TrainOptions& options) {
  if (!options.trace.empty()) {
    const std::string dir = DirectoryOfNewFile(options.trace);
    // Another run's checkpoint directory is that run's for its lifetime.
    const bool own = !options.checkpoint_dir.empty() && SameFile(dir, options.checkpoint_dir);
    if (!own && DirectoryInUse(dir)) {
      throw InputError("--trace " + options.trace + ": directory " + dir +
                       " is the --checkpoint-dir of a running accordion-train; choose another");
    }
    CheckDirectoryRoom("--trace " + options.trace, dir);
  }
  if (!options.checkpoint_dir.empty()) {
    CheckDirectoryRoom("--checkpoint-dir " + options.checkpoint_dir, ExistingDirectoryOf(options.checkpoint_dir));
  }
}

}  // namespace accordion
