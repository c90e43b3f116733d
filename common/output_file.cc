#include "common/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/errors.h"

namespace accordion {

namespace {

bool IsStdout(const std::string& path) { return path.empty() || path == "-"; }

// A FIFO or a character device: written as a stream, never renamed over.
bool IsStream(const struct stat& st) { return S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode); }

std::string Normalised(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
  return ec ? std::filesystem::absolute(path).lexically_normal().string() : p.string();
}

std::string ParentDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Whether a shared flock() on `path` is refused: only another open file's
// exclusive lock does that (a live TraceWriter's, a LockDirectory()).
bool ExclusivelyLocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return locked;
}

// Throws InputError when `path` is a FIFO that no process reads: opening it
// for writing would block for ever. A reader that comes later is too late.
void CheckFifoHasReader(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) {
    throw InputError(what + " is a FIFO that no process reads; start its reader first (writing would block)");
  }
  if (fd >= 0) ::close(fd);
}

std::string BeingWrittenMessage(const std::string& what) {
  return what + " is being written by another process (a running accordion-train?); --overwrite never replaces it";
}

}  // namespace

bool FileBeingWritten(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ExclusivelyLocked(path);
}

std::string DirectoryLockPath(const std::string& dir) {
  return (std::filesystem::path(dir) / ".accordion.lock").string();
}

bool DirectoryInUse(const std::string& dir) { return ExclusivelyLocked(DirectoryLockPath(dir)); }

void LockDirectory(const std::string& dir, const std::string& what) {
  ::mkdir(dir.c_str(), 0755);  // may exist
  const std::string lock = DirectoryLockPath(dir);
  // No O_CLOEXEC: the workers a launcher starts keep the lock alive with it.
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
  if (fd < 0) throw InputError(what + ": cannot create " + lock + " (" + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      throw InputError(what + " is in use by a running accordion-train; wait for it or choose another directory");
    }
    throw InputError(what + ": cannot lock " + lock + " (" + std::strerror(error) + ")");
  }
  // Kept open on purpose: the lock ends with the process.
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  return Normalised(a) == Normalised(b);
}

void CheckPartialFile(const std::string& partial) {
  struct stat st;
  if (::lstat(partial.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO"
                     : S_ISLNK(st.st_mode) ? "a symbolic link"
                     : S_ISDIR(st.st_mode) ? "a directory"
                     : S_ISCHR(st.st_mode) ? "a character device"
                                           : "not a regular file";
  throw InputError(partial + " is " + kind + ", not a partial file a tool left; remove it (writing there would " +
                   (S_ISFIFO(st.st_mode) ? "block" : "go elsewhere") + ")");
}

void CheckOutput(const std::string& path, const OutputOptions& o) {
  if (IsStdout(path)) return;
  const std::string what = o.flag() + " " + path;
  for (const std::string& input : o.inputs()) {
    // Always refused: --overwrite means "replace an old result", never
    // "replace what this run reads".
    if (SameFile(path, input)) throw InputError(what + " is the input " + input + "; refusing to write over it");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(what + " is a directory; give a file name");
    if (IsStream(st)) {
      if (o.streams() && S_ISFIFO(st.st_mode)) CheckFifoHasReader(path, what);
      if (o.streams()) return;
      throw InputError(what + " is not a regular file; give the path of a new file");
    }
    if (!S_ISREG(st.st_mode)) throw InputError(what + " exists and is not a regular file");
    if (ExclusivelyLocked(path)) throw InputError(BeingWrittenMessage(what));
    if (!o.overwrite()) throw InputError(what + " exists (--overwrite replaces it)");
  } else if (errno != ENOENT) {
    throw InputError(what + ": " + std::strerror(errno));
  }
  const std::string partial = path + ".partial";
  if (::lstat(partial.c_str(), &st) == 0) {
    throw InputError(what + ": " + partial + " exists; another run may be writing it (remove it if not)");
  }
  const std::string dir = ParentDirectory(path);
  struct stat dir_st;
  if (::stat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)) {
    throw InputError(what + ": directory " + dir + " does not exist");
  }
  if (DirectoryInUse(dir)) {
    throw InputError(what + ": directory " + dir + " is in use by a running accordion-train; choose another");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw InputError(what + ": cannot write in directory " + dir + " (" + std::strerror(errno) + ")");
  }
}

namespace {

// The "<path>.partial" a WriteOutput of this process is writing, for a
// signal that ends the process mid-write (Ctrl-C, SIGTERM, a closed
// terminal's SIGHUP during a long sweep): left behind, it would look like
// another writer's and block the rerun. One at a time; the pid keeps a
// forked child (a sweep's simulations) from removing its parent's file.
char g_partial[4096];
std::atomic<pid_t> g_partial_owner{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read in a signal handler");
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

void RemovePartialAndEnd(int signal) {
  if (g_partial_owner.load() == ::getpid()) ::unlink(g_partial);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// For its lifetime, the ending signals that would kill the process as it is
// (their default action) first remove the partial file. A handler someone
// installed is left alone: it may mean to let the write finish.
class PartialFileGuard {
 public:
  explicit PartialFileGuard(const std::string& partial) {
    pid_t none = 0;
    if (partial.size() >= sizeof g_partial || !g_partial_owner.compare_exchange_strong(none, -1)) return;
    std::memcpy(g_partial, partial.c_str(), partial.size() + 1);
    g_partial_owner = ::getpid();
    owner_ = true;
    for (size_t i = 0; i < std::size(kEndingSignals); ++i) {
      struct sigaction now {};
      if (::sigaction(kEndingSignals[i], nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) != 0 ||
          now.sa_handler != SIG_DFL) {
        continue;
      }
      struct sigaction remove {};
      remove.sa_handler = RemovePartialAndEnd;
      sigemptyset(&remove.sa_mask);
      installed_[i] = ::sigaction(kEndingSignals[i], &remove, &saved_[i]) == 0;
    }
  }
  ~PartialFileGuard() {
    if (!owner_) return;
    for (size_t i = 0; i < std::size(kEndingSignals); ++i) {
      if (installed_[i]) ::sigaction(kEndingSignals[i], &saved_[i], nullptr);
    }
    g_partial_owner = 0;
  }
  PartialFileGuard(const PartialFileGuard&) = delete;
  PartialFileGuard& operator=(const PartialFileGuard&) = delete;

 private:
  bool owner_ = false;
  bool installed_[std::size(kEndingSignals)] = {};
  struct sigaction saved_[std::size(kEndingSignals)] = {};
};

}  // namespace

void WriteOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (IsStdout(path)) {
    write(std::cout);
    std::cout.flush();
    return;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && IsStream(st)) {
    // /dev/null, a pipe: nothing to rename, and nothing of the user's is lost.
    if (S_ISFIFO(st.st_mode)) CheckFifoHasReader(path, path);
    std::ofstream stream(path);
    if (!stream) throw InputError(path + ": cannot write");
    write(stream);
    if (!stream.flush()) throw IoError(path + ": write failed");
    return;
  }
  const std::string partial = path + ".partial";
  CheckPartialFile(partial);
  const PartialFileGuard guard(partial);
  {
    // O_NOFOLLOW: a link planted at the partial name must not redirect the
    // write onto someone else's file. O_NONBLOCK: nor may a FIFO made there
    // since the check hold the open for ever.
    const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0) throw InputError(path + ": cannot write " + partial + " (" + std::strerror(errno) + ")");
    ::close(fd);
    std::ofstream file(partial);
    if (!file) throw IoError(path + ": cannot write");
    try {
      write(file);
    } catch (...) {
      file.close();
      std::remove(partial.c_str());
      throw;
    }
    if (!file.flush()) {
      std::remove(partial.c_str());
      throw IoError(path + ": write failed");
    }
  }
  // A run may have started writing `path` since CheckOutput(): leave it be.
  if (FileBeingWritten(path)) {
    std::remove(partial.c_str());
    throw InputError(BeingWrittenMessage(path));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    throw InputError(path + ": cannot rename " + partial + " over it");
  }
}

}  // namespace accordion
