"""What the Python benchmarks (and bench/trainer/ddp_baseline.py) share: the machine's load, a
free port for torchrun, the Fashion-MNIST reader and accordion-train's CNN."""

import gzip
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


def read_idx(path):
    """An IDX file (Fashion-MNIST's format, gzip'd or not) as a NumPy uint8 array."""
    import numpy as np
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def trainer_cnn():
    """accordion-train's --model cnn, layer for layer, as a PyTorch module (torch imported here:
    the launcher side of the benchmarks does not need it)."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
            self.conv2 = nn.Conv2d(16, 32, 5, padding=2)
            self.fc1, self.fc2 = nn.Linear(32 * 7 * 7, 128), nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc2(F.relu(self.fc1(x.flatten(1))))

    return Cnn()
