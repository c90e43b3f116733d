#include "common/fork_process.h"

#include <unistd.h>

#ifdef ACCORDION_ASAN_FORK_LOCKS
// The sanitizer runtime's own lock functions, which its leak checker takes
// before it stops the world. They are not exported by libasan.so, so the
// sanitize preset links the runtime statically (-static-libasan).
namespace __lsan {
void LockThreadRegistry();
void UnlockThreadRegistry();
void LockAllocator();
void UnlockAllocator();
}  // namespace __lsan
namespace __sanitizer {
void StackDepotLockAll();
void StackDepotUnlockAll();
}  // namespace __sanitizer
#endif

namespace accordion {

pid_t ForkProcess() {
#ifdef ACCORDION_ASAN_FORK_LOCKS
  // The order of LLVM's fork handlers: threads, allocator, stack depot.
  // Nothing here allocates while they are held.
  __lsan::LockThreadRegistry();
  __lsan::LockAllocator();
  __sanitizer::StackDepotLockAll();
  const pid_t pid = ::fork();
  __sanitizer::StackDepotUnlockAll();
  __lsan::UnlockAllocator();
  __lsan::UnlockThreadRegistry();
  return pid;
#else
  return ::fork();
#endif
}

}  // namespace accordion
