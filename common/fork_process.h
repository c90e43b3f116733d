// fork() for a process that may be running other threads.
//
// glibc's malloc is safe to use in the child of a multi-threaded process;
// the allocator of GCC 12's AddressSanitizer is not: it has no fork handlers
// (LLVM added them in 2023), so a child forked while another thread held
// one of its locks waits on that lock forever at its first allocation. The
// GUI forks simulations from a pool thread while its main thread runs, and
// its tests hung that way under the sanitize preset. There, and only there,
// this holds the sanitizer's locks across the fork; elsewhere it is fork().
//
// One lock stays out of reach: that of ASan's quarantine of freed memory,
// which a thread takes for microseconds once per megabyte it frees and no
// function of the runtime's exports. A child that frees memory may still,
// rarely, wait on it forever: once in 400 forks with two threads freeing
// without pause, never in the GUI's tests (docs/fuzzing.md).
//
// Thread safety: ForkProcess may be called from several threads at once (the
// GUI's pools do); the child holds only the calling thread.
#ifndef ACCORDION_COMMON_FORK_PROCESS_H_
#define ACCORDION_COMMON_FORK_PROCESS_H_

#include <sys/types.h>

namespace accordion {

// As fork(): the child's pid in the parent, 0 in the child, -1 and errno on
// failure.
pid_t ForkProcess();

}  // namespace accordion

#endif  // ACCORDION_COMMON_FORK_PROCESS_H_
