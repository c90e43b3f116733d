"""A model of the user's own, recorded dense, then explored as PowerSGD and TopK.

Scenario: before changing how a model communicates, record one ordinary
dense run. Its per-layer gradient norms are all Accordion needs to say when
the model is in a critical regime and what PowerSGD or TopK would have sent;
accordion-analyze answers from the trace, and accordion-sim replays it on 64
workers. No second training run.

Run:  torchrun --nproc_per_node 2 own_model_explored.py OUT_DIR
"""

import gc
import os
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp


class TinyNet(torch.nn.Module):
    """The user's own model: two convolutions and a classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.head = torch.nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(x.flatten(1))


out_dir = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(TinyNet())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
trace = os.path.join(out_dir, "tinynet-dense.trace")

# Dense: every gradient all-reduced as DDP would, and recorded.
with accordion.ddp.attach(model, scheme="dense", trace=trace, overwrite=True, model_name="tinynet",
                          dataset="random", train_samples=256, batch_size=32, epochs=4) as acc:
    for epoch in range(4):
        g = torch.Generator().manual_seed(10 * epoch + rank)
        for step in range(8):
            x, y = torch.randn(16, 1, 28, 28, generator=g), torch.randint(0, 10, (16,), generator=g)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc.end_epoch(lr=0.1, train_loss=loss.item())
del model, opt
gc.collect()
dist.destroy_process_group()

if rank == 0:
    bin_dir = os.environ.get("ACCORDION_BIN_DIR", "")
    for scheme in ("powersgd", "topk"):
        # What Accordion would have scheduled on this run's gradient norms.
        schedule = subprocess.run([os.path.join(bin_dir, "accordion-analyze"), "schedule", trace,
                                   "--scheme", scheme, "--interval", "2", "--format", "csv"],
                                  capture_output=True, text=True, check=True)
        rows = schedule.stdout.strip().splitlines()
        print(f"{scheme}: a schedule of {len(rows) - 1} rows from the dense trace")
    replay = subprocess.run([os.path.join(bin_dir, "accordion-sim"), "replay", trace, "--scheme", "powersgd",
                             "--workers", "64"], capture_output=True, text=True, check=True)
    print("replayed as PowerSGD on 64 workers:", "yes" if "Accordion" in replay.stdout else "no")
