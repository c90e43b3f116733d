"""What the two Python benchmarks share: the machine's load and a free port for torchrun."""

import socket


def loadavg():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on now (torchrun's --master_port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
