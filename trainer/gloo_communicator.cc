#include "trainer/gloo_communicator.h"

#include <cstdlib>
#include <type_traits>

#include "trainer/process_group_communicator.h"
#include "trainer/rendezvous.h"
#include "trainer/torch_pch.h"

namespace accordion {

namespace {

// PyTorch 1.13's Gloo group is a c10d::ProcessGroup; from PyTorch 2.0 on it is
// a c10d::Backend, which a ProcessGroup holds.
using GlooGroup = std::conditional_t<std::is_base_of_v<c10d::ProcessGroup, c10d::ProcessGroupGloo>, c10d::ProcessGroup,
                                     c10d::Backend>;

}  // namespace

std::unique_ptr<Communicator> ConnectGloo(const GlooOptions& options) {
  const RendezvousOptions& rendezvous = options.rendezvous();
  const RendezvousGuard guard(rendezvous);
  try {
    c10::intrusive_ptr<c10d::Store> store = ConnectStore(rendezvous);
    auto group_options = c10d::ProcessGroupGloo::Options::create(rendezvous.timeout());
    // GLOO_SOCKET_IFNAME picks an interface, as in PyTorch; otherwise the
    // address we were told to bind (loopback unless multi-node).
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    group_options->devices.push_back(ifname != nullptr && *ifname != '\0'
                                         ? c10d::ProcessGroupGloo::createDeviceForInterface(ifname)
                                         : c10d::ProcessGroupGloo::createDeviceForHostname(options.bind_addr()));
    group_options->threads = options.threads();
    c10::intrusive_ptr<GlooGroup> group =
        c10::make_intrusive<c10d::ProcessGroupGloo>(store, rendezvous.rank(), rendezvous.world_size(), group_options);
    return std::make_unique<ProcessGroupCommunicator>(std::move(group), rendezvous.rank(), rendezvous.world_size(),
                                                      "gloo", std::move(store));
  } catch (const std::exception& e) {
    ThrowIfNotAStore(rendezvous, e);
    throw CommunicationError(RendezvousFailure(rendezvous, e));
  }
}

}  // namespace accordion
