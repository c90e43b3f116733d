#include "trainer/device_timing.h"

#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace accordion {

void WaitForDevice(const c10::Device& device) {
  if (device.is_cpu()) return;
  // Only the compute stream: collectives on their own streams keep running.
  c10::impl::getDeviceGuardImpl(device.type())->getStream(device).synchronize();
}

}  // namespace accordion
