// What accordion-train (and accordion-bench-collectives, for its --out)
// checks about where a run writes before any worker starts: a read-only or full file system, or a directory a live run
// holds, found after the workers had started (or after an epoch) cost a run's start-up, and the peers of the rank that
// hit it blamed the connection.
#ifndef ACCORDION_TRAINER_RUN_OUTPUTS_H_
#define ACCORDION_TRAINER_RUN_OUTPUTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "trainer/train_options.h"

namespace accordion {

// Below this much free space a file system counts as full: a trace's first
// epoch and the smallest model's checkpoint need about that.
inline constexpr int64_t kMinFreeOutputBytes = int64_t{1} << 20;

// Bytes an unprivileged writer may still use on the file system of `dir`;
// nullopt when the file system cannot be asked.
std::optional<uint64_t> FreeBytesIn(const std::string& dir);

// Throws, one line starting with `what` ("--out f.json"), unless the
// directory a new file at `path` goes into (its nearest existing ancestor)
// can take it: InputError (exit 2) when it cannot be written (a read-only
// file system refuses root too), IoError (exit 4) when its file system has
// less than kMinFreeOutputBytes free. A path that exists and is not a regular
// file (/dev/null, a FIFO) is not checked: nothing is stored there.
void CheckOutputRoom(const std::string& what, const std::string& path);

// Throws, one line naming the flag, unless the directories of --trace and
// --checkpoint-dir can take the run's files: InputError (exit 2) for a
// read-only one and for a --trace inside a live run's --checkpoint-dir,
// IoError (exit 4) for a file system with less than kMinFreeOutputBytes free.
// Call after the other path checks (ValidateOptions), before this run locks
// its --checkpoint-dir (the lock would make it look like another run's) and
// before any worker starts.
void CheckRunOutputsWritable(const TrainOptions& options);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RUN_OUTPUTS_H_
