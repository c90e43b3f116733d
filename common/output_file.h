// Writes a result to stdout ("-" or empty path) or to a file that appears
// only once it is complete: written beside it, then renamed over it, so a
// failure never leaves a partial file that looks whole.
//
// A user's data is sacred: a tool checks every output with CheckOutput()
// while it checks its flags - before any long computation - so that it never
// writes over a file it reads, nor over anything it did not create unless
// told to (--overwrite):
//
//   CheckOutput(out, OutputOptions().flag("--out").inputs({trace}).overwrite(overwrite));
//   ... hours of simulation ...
//   WriteOutput(out, [&](std::ostream& o) { ... });
#ifndef ACCORDION_COMMON_OUTPUT_FILE_H_
#define ACCORDION_COMMON_OUTPUT_FILE_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/options.h"

namespace accordion {

// What CheckOutput() allows at an output path.
class OutputOptions {
  /// Replace an existing regular file (a tool's --overwrite). Never lets an
  /// output replace one of the inputs. Default: false.
  ACCORDION_ARG(bool, overwrite) = false;
  /// The files the tool reads; the output may not be any of them, whatever
  /// name (symbolic or hard link) it is given by. Default: none.
  ACCORDION_ARG(std::vector<std::string>, inputs);
  /// The flag that named the output, for messages. Default: "--out".
  ACCORDION_ARG(std::string, flag) = "--out";
  /// Whether an existing FIFO or character device (/dev/null, /dev/stdout)
  /// may be written into as a stream: what a user asks for with
  /// --out /dev/null. True for text outputs; false for databases, which need
  /// a regular file. Default: true.
  ACCORDION_ARG(bool, streams) = true;
  /// Claim the output for this process (ClaimOutput) once it passes: no
  /// other process can then claim it until this one has written it, released
  /// it or ended. Default: true.
  ACCORDION_ARG(bool, claim) = true;
};

// Throws InputError, one line naming the flag, unless `path` can be written
// under `options`: stdout ("-" or empty); an absent file in an existing,
// writable directory; an existing regular file with overwrite(); an existing
// FIFO or character device with streams() (a FIFO only while a process reads
// it: writing into one nobody reads would block for ever; the FIFO is then
// kept open until WriteOutput() writes into it, so that its reader does not
// see its end first). An input, a
// directory, anything else, a file another process is writing
// (FileBeingWritten) and any path in a directory a live run holds
// (DirectoryInUse) are refused. Then, with claim(), the output is claimed
// (ClaimOutput): a second writer of the same path is refused here, before
// it has computed or written anything.
void CheckOutput(const std::string& path, const OutputOptions& options);

// Claims `path` for this process: "<path>.partial" is created (or a stale
// one taken over: one whose claim no live process holds, left by a SIGKILL
// or a power cut, and that this toolkit made - it marks what it creates with
// an extended attribute; a file of the user's at that name, or a hard link,
// is refused and left as it is) and held under an exclusive flock() until WriteOutput()
// renames it into place, ReleaseOutput() gives it up, or the process ends
// (a signal that ends it, or its exit, removes it). Claiming what this
// process holds already does nothing. Throws InputError, one line starting
// with `what`, when another live process holds it.
void ClaimOutput(const std::string& path, const std::string& what);

// Gives up this process's claim on `path` and removes its partial file, if
// it holds one, and its staging directory. For writers that put the output
// in place themselves.
void ReleaseOutput(const std::string& path);

// Names the directory this process builds `path`'s output in before it
// renames it into place (a report's): while `path` is claimed, a signal
// that ends the process, its exit and ReleaseOutput() remove it with the
// partial file. `path` must be claimed (ClaimOutput) first.
void StageOutputDirectory(const std::string& path, const std::string& staging);

// Whether another process holds an exclusive flock() on the file at `path`:
// a trace a live TraceWriter is writing (traces/trace_writer.h). Neither
// CheckOutput() nor WriteOutput() replaces such a file, --overwrite or not.
bool FileBeingWritten(const std::string& path);

// The lock file a live run holds in a directory it owns for its lifetime (a
// trainer's --checkpoint-dir): "<dir>/.accordion.lock".
std::string DirectoryLockPath(const std::string& dir);

// Whether a live process holds `dir` with LockDirectory(). CheckOutput()
// refuses every output in such a directory.
bool DirectoryInUse(const std::string& dir);

// Takes an exclusive flock() on DirectoryLockPath(dir), creating `dir` and
// the lock file as needed, for the rest of this process's life: the lock is
// released only when this process and the children it starts (which inherit
// the descriptor) have all ended, however they end. Throws InputError, one
// line starting with `what`, when another live process holds it.
void LockDirectory(const std::string& dir, const std::string& what);

// Whether two paths name the same file (through links too); paths that do
// not exist yet are compared by their absolute, normalised names.
bool SameFile(const std::string& a, const std::string& b);

// Throws InputError, one line, when `partial` - the "<output>.partial" a
// writer fills and then renames into place - exists and is not a regular
// file: opening a FIFO there to write would block for ever (and a device or
// a link would take the output elsewhere). WriteOutput() checks its own;
// writers of their own partial files call it before opening them.
void CheckPartialFile(const std::string& partial);

// Writes `write`'s output to `path`. A FIFO or character device there is
// written into directly; otherwise "<path>.partial" is claimed (where
// CheckOutput() has not), written and renamed over `path` once complete;
// SIGINT, SIGTERM or SIGHUP (when the process has no handler of its own for
// it) removes the partial file before the signal ends the process, so that
// it blocks no rerun. Throws InputError when the file cannot be
// written (a FIFO whose reader has gone included), and when another process started writing `path` meanwhile
// (FileBeingWritten: then `path` is left as it is). It does not check the
// path otherwise: call CheckOutput() first.
void WriteOutput(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace accordion

#endif  // ACCORDION_COMMON_OUTPUT_FILE_H_
