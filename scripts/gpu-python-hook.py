"""The Accordion DDP hook on CUDA tensors over NCCL: the GPU check of the Python package.

Scenario: a user's DDP script on a GPU machine - torchvision's ResNet-18 on
Fashion-MNIST, NCCL, one GPU per rank - attaches the hook, trains two epochs
under PowerSGD with Accordion (rank 2 / rank 1, a regime check every epoch)
and writes a trace that accordion-analyze then validates (scripts/gpu-check.sh).

Run:  torchrun --nproc_per_node 1 scripts/gpu-python-hook.py DATA_DIR TRACE
"""

import gzip
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp

data_dir, trace = sys.argv[1], sys.argv[2]
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda", rank % torch.cuda.device_count())
torch.cuda.set_device(device)
torch.manual_seed(0)


def read_idx(path):
    with gzip.open(path) as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(raw[4 + 4 * dims:]), dtype=torch.uint8).view(shape)


samples, batch = 4096, 128
images = read_idx(f"{data_dir}/train-images-idx3-ubyte.gz")[:samples].float().div(255).unsqueeze(1).to(device)
labels = read_idx(f"{data_dir}/train-labels-idx1-ubyte.gz")[:samples].long().to(device)
mine = torch.arange(rank, samples, world, device=device)

net = torchvision.models.resnet18(num_classes=10)
net.conv1 = torch.nn.Conv2d(1, 64, kernel_size=3, padding=1, bias=False)
model = DDP(net.to(device), device_ids=[device.index])
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
acc = accordion.ddp.attach(model, scheme="powersgd", low=2, high=1, interval=1, trace=trace, overwrite=True,
                           model_name="resnet18", dataset="fashion-mnist", train_samples=samples,
                           batch_size=batch, epochs=2)
for epoch in range(2):
    start = time.perf_counter()
    for step in range(0, len(mine), batch // world):
        idx = mine[step:step + batch // world]
        loss = F.cross_entropy(model(images[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    summary = acc.end_epoch(lr=0.05, train_loss=loss.item())
    if rank == 0:
        levels = sorted(set(summary["next_levels"]))
        print(f"epoch {epoch}: {time.perf_counter() - start:.2f} s, loss {loss.item():.3f}, "
              f"{len(summary['next_levels'])} tensors, next ranks {levels}", flush=True)
acc.close()
dist.destroy_process_group()
