// Makes host clocks measure GPU work: waits until a device has done what was
// queued on its current stream.
//
// CUDA kernels run after the host launched them, so a host clock read right
// after a launch measures the launch, and the next blocking call (a
// collective's wait) absorbs the kernel's time. The trainer waits for the
// device at each point where a trace's compute, compression or
// gradient-ready time ends, so a GPU trace splits a step as a CPU trace
// does. The cost is the launch-ahead lost at those points.
#ifndef ACCORDION_TRAINER_DEVICE_TIMING_H_
#define ACCORDION_TRAINER_DEVICE_TIMING_H_

#include <c10/core/Device.h>

namespace accordion {

// Blocks until `device`'s current stream is idle; returns at once for the CPU.
void WaitForDevice(const c10::Device& device);

}  // namespace accordion

#endif  // ACCORDION_TRAINER_DEVICE_TIMING_H_
