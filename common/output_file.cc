#include "common/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

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

// The FIFOs CheckOutput() opened for writing, kept open until WriteOutput()
// writes into them: closing one would end its reader's input (a `cat` reading
// it sees end-of-file and leaves) before the output is written.
std::mutex g_fifos_mutex;
std::map<std::string, int> g_fifos;

// Opens the FIFO at `path` for writing, or throws InputError when no process
// reads it: opening it blocking would wait for ever. A reader that comes
// later is too late.
int OpenFifoWithReader(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) {
    throw InputError(what + " is a FIFO that no process reads; start its reader first (writing would block)");
  }
  if (fd < 0) throw InputError(what + ": cannot write (" + std::strerror(errno) + ")");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a slow reader makes writes wait, not fail
  return fd;
}

// The FIFO CheckOutput() kept open for `path`, or a new one.
int TakeFifo(const std::string& path) {
  {
    const std::lock_guard<std::mutex> lock(g_fifos_mutex);
    auto it = g_fifos.find(path);
    if (it != g_fifos.end()) {
      const int fd = it->second;
      g_fifos.erase(it);
      return fd;
    }
  }
  return OpenFifoWithReader(path, path);
}

// Writes all of `bytes` to `fd`.
void WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(path + ": cannot write (" + std::strerror(errno) + ")");
    done += static_cast<size_t>(n);
  }
}

// What a partial file this toolkit created carries, so that a stopped run's
// can be told from a file of the user's that happens to have the name.
constexpr char kClaimAttribute[] = "user.accordion.output-claim";
constexpr char kClaimMark[] = "accordion-toolkit";

// Creates `partial`, locked (exclusive flock) and marked as ours before its
// name appears - made under a random name and hard-linked into place, which
// fails rather than replaces - so that no other writer ever finds it
// unlocked and unmarked (a plain exclusive create had another writer find it
// so, between its creation and its lock, and refuse it as not the
// toolkit's). Returns its descriptor, or -1 with errno set: EEXIST when
// something is there already.
int CreateMarkedPartial(const std::string& partial) {
  // No hard links (some FUSE file systems) or no room for a second name: an
  // exclusive create, marked and locked just after.
  auto plain = [&partial] {
    const int fd = ::open(partial.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    ::fsetxattr(fd, kClaimAttribute, kClaimMark, sizeof kClaimMark - 1, 0);
    ::flock(fd, LOCK_EX | LOCK_NB);
    return fd;
  };
  std::string name = partial + ".XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return plain();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);  // as open(..., 0666) would have made it
  // Where the file system keeps no user attributes, a partial this run
  // leaves behind (a SIGKILL) is refused by the next as not provably ours:
  // the user removes it. Never the other way round.
  ::fsetxattr(fd, kClaimAttribute, kClaimMark, sizeof kClaimMark - 1, 0);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    ::unlink(name.c_str());
    errno = EIO;
    return -1;
  }
  if (::link(name.c_str(), partial.c_str()) == 0) {
    ::unlink(name.c_str());
    return fd;
  }
  const int error = errno;
  ::close(fd);
  ::unlink(name.c_str());
  if (error == EEXIST) {
    errno = EEXIST;
    return -1;
  }
  return plain();
}

bool MarkedAsOurs(int fd) {
  char value[sizeof kClaimMark] = {};
  const ssize_t n = ::fgetxattr(fd, kClaimAttribute, value, sizeof value);
  return n == static_cast<ssize_t>(sizeof kClaimMark - 1) && std::memcmp(value, kClaimMark, sizeof kClaimMark - 1) == 0;
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
      if (o.streams() && S_ISFIFO(st.st_mode)) {
        const int fd = OpenFifoWithReader(path, what);
        const std::lock_guard<std::mutex> lock(g_fifos_mutex);
        auto [it, added] = g_fifos.emplace(path, fd);
        if (!added) ::close(fd);  // checked twice: the first stays open
      }
      if (o.streams()) return;
      throw InputError(what + " is not a regular file; give the path of a new file");
    }
    if (!S_ISREG(st.st_mode)) throw InputError(what + " exists and is not a regular file");
    if (ExclusivelyLocked(path)) throw InputError(BeingWrittenMessage(what));
    if (!o.overwrite()) throw InputError(what + " exists (--overwrite replaces it)");
  } else if (errno != ENOENT) {
    throw InputError(what + ": " + std::strerror(errno));
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
  if (o.claim()) ClaimOutput(path, what);
}

namespace {

// The outputs this process has claimed: "<path>.partial", open and under an
// exclusive flock() from the tool's check to the final rename. A signal that
// ends the process (Ctrl-C, SIGTERM, a closed terminal's SIGHUP) and the
// process's exit remove those still there, so they block no rerun; a SIGKILL
// leaves the file, but not its lock, and the next claim takes it over. The
// table is fixed so that a signal handler may read it; `owner` keeps a forked
// child (a sweep's simulations) from removing its parent's files.
struct Claim {
  char partial[4096];
  char staging[4096];  // a directory to remove with it; empty: none
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  pid_t owner = 0;
};
constexpr int kMaxClaims = 64;
Claim g_claims[kMaxClaims];
std::mutex g_claims_mutex;
std::atomic<bool> g_handlers_installed{false};
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Whether the name still holds the file this claim opened: after the rename,
// or once another process has taken the name over, it does not.
bool StillOurs(const Claim& c) {
  struct stat st;
  return ::lstat(c.partial, &st) == 0 && st.st_dev == c.dev && st.st_ino == c.ino;
}

// The tree at `name` in `parent_fd`, removed with async-signal-safe calls
// only (openat, getdents64, unlinkat, close): it runs in a signal handler.
// A staging directory is a few levels deep; deeper ones are left.
constexpr int kMaxTreeDepth = 8;
void RemoveTree(int parent_fd, const char* name, int depth) {
  const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buffer[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long offset = 0; offset < n;) {
        // linux_dirent64: inode, offset, record length, type, name.
        unsigned short length;
        std::memcpy(&length, buffer + offset + 16, sizeof length);
        const char* entry = buffer + offset + 19;
        offset += length;
        if (std::strcmp(entry, ".") == 0 || std::strcmp(entry, "..") == 0) continue;
        if (::unlinkat(fd, entry, 0) != 0 && errno == EISDIR && depth < kMaxTreeDepth) RemoveTree(fd, entry, depth + 1);
      }
    }
    ::close(fd);
  }
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

// Async-signal-safe: lstat, unlink, getpid, RemoveTree.
void RemoveOurPartials() {
  const pid_t self = ::getpid();
  for (Claim& c : g_claims) {
    if (c.fd < 0 || c.owner != self) continue;
    if (c.staging[0] != '\0') RemoveTree(AT_FDCWD, c.staging, 0);
    if (StillOurs(c)) ::unlink(c.partial);
  }
}

void RemovePartialsAndEnd(int signal) {
  RemoveOurPartials();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// The ending signals that would kill the process as it is (their default
// action) first remove the claimed files. A handler someone installed is
// left alone: it means to end the process its own way.
void InstallHandlersOnce() {
  if (g_handlers_installed.exchange(true)) return;
  for (int signal : kEndingSignals) {
    struct sigaction now {};
    if (::sigaction(signal, nullptr, &now) != 0 || (now.sa_flags & SA_SIGINFO) != 0 || now.sa_handler != SIG_DFL) {
      continue;
    }
    struct sigaction remove {};
    remove.sa_handler = RemovePartialsAndEnd;
    sigemptyset(&remove.sa_mask);
    ::sigaction(signal, &remove, nullptr);
  }
}

// At exit, what this process claimed and did not rename into place goes.
struct ClaimsAtExit {
  ~ClaimsAtExit() { RemoveOurPartials(); }
} g_claims_at_exit;

Claim* FindClaim(const std::string& partial) {
  for (Claim& c : g_claims) {
    if (c.fd >= 0 && c.owner == ::getpid() && partial == c.partial) return &c;
  }
  return nullptr;
}

void Release(Claim& c, bool remove) {
  if (c.staging[0] != '\0') RemoveTree(AT_FDCWD, c.staging, 0);
  c.staging[0] = '\0';
  if (remove && StillOurs(c)) ::unlink(c.partial);
  ::close(c.fd);
  c.fd = -1;
  c.owner = 0;
}

// How many times a claim retries a name another process renamed or removed
// between its open and its lock.
constexpr int kClaimAttempts = 16;

}  // namespace

void ClaimOutput(const std::string& path, const std::string& what) {
  if (IsStdout(path)) return;
  const std::string partial = path + ".partial";
  const std::lock_guard<std::mutex> lock(g_claims_mutex);
  if (FindClaim(partial) != nullptr) return;
  if (partial.size() >= sizeof(Claim::partial)) throw InputError(what + ": the path is too long");
  CheckPartialFile(partial);
  Claim* slot = nullptr;
  for (Claim& c : g_claims) slot = slot == nullptr && c.fd < 0 ? &c : slot;
  if (slot == nullptr) throw InputError(what + ": more than " + std::to_string(kMaxClaims) + " outputs at once");
  InstallHandlersOnce();
  for (int attempt = 0; attempt < kClaimAttempts; ++attempt) {
    // O_NOFOLLOW: a link planted at the partial name must not redirect the
    // write onto someone else's file. O_NONBLOCK: nor may a FIFO made there
    // since the check hold the open for ever.
    constexpr int kFlags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = CreateMarkedPartial(partial);
    const bool created = fd >= 0;
    if (!created) {
      fd = ::open(partial.c_str(), kFlags);
      if (fd < 0 && errno == ENOENT) continue;  // renamed into place or removed since: try again
    }
    if (fd < 0) throw InputError(what + ": cannot write " + partial + " (" + std::strerror(errno) + ")");
    if (!created && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) {
        throw InputError(what + " is being written by another process (it holds " + partial +
                         "); wait for it to finish or choose another path");
      }
      throw InputError(what + ": cannot lock " + partial + " (" + std::strerror(error) + ")");
    }
    struct stat held;
    if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      ::close(fd);
      throw InputError(what + ": " + partial + " is not a regular file");
    }
    // One we created is ours, locked and marked before its name appeared;
    // one we found must prove it.
    if (!created && held.st_nlink > 1) {
      // Truncating it would empty the file it is linked to (an input, say).
      ::close(fd);
      throw InputError(what + ": " + partial +
                       " is a hard link to another file, not a partial file a tool left; "
                       "remove it (writing there would change that file)");
    }
    if (!created && !MarkedAsOurs(fd)) {
      ::close(fd);
      throw InputError(what + ": " + partial +
                       " exists and was not made by this toolkit; move it away or remove it "
                       "(it would be written over)");
    }
    std::memcpy(slot->partial, partial.c_str(), partial.size() + 1);
    slot->staging[0] = '\0';
    slot->dev = held.st_dev;
    slot->ino = held.st_ino;
    if (!StillOurs(*slot)) {  // renamed into place, or removed, since the open: try the name again
      ::close(fd);
      continue;
    }
    // A partial whose lock nobody held is a stopped run's (a SIGKILL, a
    // power cut): its bytes are not an output; this run replaces them.
    if (held.st_size > 0 && ::ftruncate(fd, 0) != 0) {
      ::close(fd);
      throw InputError(what + ": cannot truncate the stale " + partial + " (" + std::strerror(errno) + ")");
    }
    slot->fd = fd;
    slot->owner = ::getpid();
    return;
  }
  throw InputError(what + ": " + partial + " keeps changing under this process; another writer is at work");
}

void StageOutputDirectory(const std::string& path, const std::string& staging) {
  const std::lock_guard<std::mutex> lock(g_claims_mutex);
  Claim* c = FindClaim(path + ".partial");
  if (c == nullptr) throw std::logic_error("StageOutputDirectory: " + path + " is not claimed");
  const std::string absolute = std::filesystem::absolute(staging).string();
  if (absolute.size() >= sizeof(Claim::staging)) throw InputError(staging + ": the path is too long");
  std::memcpy(c->staging, absolute.c_str(), absolute.size() + 1);
}

void ReleaseOutput(const std::string& path) {
  const std::lock_guard<std::mutex> lock(g_claims_mutex);
  if (Claim* c = FindClaim(path + ".partial")) Release(*c, true);
}

namespace {

// Releases `path`'s claim without removing anything: its partial was renamed.
void ReleaseRenamed(const std::string& path) {
  const std::lock_guard<std::mutex> lock(g_claims_mutex);
  if (Claim* c = FindClaim(path + ".partial")) Release(*c, false);
}

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
    if (S_ISFIFO(st.st_mode)) {
      std::ostringstream bytes;
      write(bytes);
      const int fd = TakeFifo(path);
      try {
        WriteAll(fd, bytes.str(), path);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      return;
    }
    std::ofstream stream(path);
    if (!stream) throw InputError(path + ": cannot write");
    write(stream);
    if (!stream.flush()) throw IoError(path + ": write failed");
    return;
  }
  const std::string partial = path + ".partial";
  ClaimOutput(path, path);  // held since CheckOutput() where it was called
  {
    std::ofstream file(partial, std::ios::trunc);
    if (!file) {
      ReleaseOutput(path);
      throw IoError(path + ": cannot write " + partial);
    }
    try {
      write(file);
    } catch (...) {
      file.close();
      ReleaseOutput(path);
      throw;
    }
    if (!file.flush()) {
      ReleaseOutput(path);
      throw IoError(path + ": write failed");
    }
  }
  // A run may have started writing `path` since CheckOutput(): leave it be.
  if (FileBeingWritten(path)) {
    ReleaseOutput(path);
    throw InputError(BeingWrittenMessage(path));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    ReleaseOutput(path);
    throw InputError(path + ": cannot rename " + partial + " over it");
  }
  ReleaseRenamed(path);
}

}  // namespace accordion
