"""torchvision's ResNet-18 on Fashion-MNIST, data-parallel under Accordion.

Scenario: a user's ordinary DDP script - torchvision model, their own data
loading, SGD - gains three lines: attach the Accordion hook, end each epoch,
close. PowerSGD runs at rank 2 in critical regimes and rank 1 outside them;
the trace it writes is then replayed on 64 workers by accordion-sim.

Run:  torchrun --nproc_per_node 2 resnet18_fashion_mnist.py OUT_DIR
(Debian 12's torchrun also needs --redirects 1 --tee 1; run_example.sh does it.)
"""

import gc
import gzip
import json
import os
import subprocess
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp

out_dir = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)



def read_idx(path):
    """An IDX file (gzip'd) as a uint8 tensor: the user's own data loading."""
    with gzip.open(path) as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8).view(shape)


# The user's data: 512 Fashion-MNIST images, each rank its own half.
root = "/usr/share/datasets/fashion-mnist"
images = read_idx(f"{root}/train-images-idx3-ubyte.gz")[:512].float().div(255).unsqueeze(1)
labels = read_idx(f"{root}/train-labels-idx1-ubyte.gz")[:512].long()
mine = torch.arange(rank, 512, world)

# The user's model: torchvision's ResNet-18, one input channel, ten classes.
net = torchvision.models.resnet18(num_classes=10)
net.conv1 = torch.nn.Conv2d(1, 64, kernel_size=3, padding=1, bias=False)
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

# The Accordion lines: PowerSGD rank 2 / rank 1, a regime check every epoch.
trace = os.path.join(out_dir, "resnet18.trace")
acc = accordion.ddp.attach(model, scheme="powersgd", low=2, high=1, interval=1, trace=trace, overwrite=True,
                           model_name="resnet18", dataset="fashion-mnist", train_samples=512, batch_size=64,
                           epochs=2)
for epoch in range(2):
    for step in range(0, len(mine), 32):
        batch = mine[step:step + 32]
        loss = F.cross_entropy(model(images[batch]), labels[batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
    summary = acc.end_epoch(lr=0.05, train_loss=loss.item())
    if rank == 0:
        # The controller's choice for each of the 62 tensors, rank 2 or rank 1.
        ranks = sorted(set(summary["next_levels"]))
        print(f"epoch {epoch}: {len(summary['next_levels'])} tensors, next epoch's ranks within {{1, 2}}: "
              f"{set(ranks) <= {1.0, 2.0}}")
acc.close()
del model, opt
gc.collect()
dist.destroy_process_group()

# What would 64 workers gain? The trace answers without another run.
if rank == 0:
    sim = os.path.join(os.environ.get("ACCORDION_BIN_DIR", ""), "accordion-sim")
    replay = subprocess.run([sim, "replay", trace, "--workers", "64", "--format", "json"],
                            capture_output=True, text=True, check=True)
    r = json.loads(replay.stdout)
    print(f"replayed on {r['workers']} workers: schedules {', '.join(sorted(r['schedules']))}")
    info = subprocess.run([os.path.join(os.path.dirname(sim), "accordion-analyze"), "info", trace, "--format", "json"],
                          capture_output=True, text=True, check=True)
    run = json.loads(info.stdout)
    print(f"trace written by {run['writer']}: {run['epochs_recorded']} epochs, status {run['status']}")
