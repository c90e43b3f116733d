"""Floats each rank all-reduces per step under PyTorch's powerSGD_hook and under
the Accordion hook at the same rank (run by torchrun); rank 0 writes JSON."""

import argparse
import gc
import json

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp
from train_small import batches, build

counted = [0]
_all_reduce = dist.all_reduce


def counting_all_reduce(tensor, *args, **kwargs):
    counted[0] += tensor.numel()
    return _all_reduce(tensor, *args, **kwargs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    # PyTorch's hook: compressing from its third step (before start_powerSGD_iter
    # it all-reduces plainly), every matrix whose low-rank form is smaller.
    torch.manual_seed(0)
    theirs = DDP(build("cnn"))
    state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=a.rank, start_powerSGD_iter=2,
                               min_compression_rate=2.0, use_error_feedback=True, warm_start=True)
    theirs.register_comm_hook(state, psgd.powerSGD_hook)
    dist.all_reduce = counting_all_reduce
    psgd.dist.all_reduce = counting_all_reduce
    per_step = []
    for x, y in batches(0, a.steps, dist.get_rank()):
        counted[0] = 0
        F.cross_entropy(theirs(x), y).backward()
        per_step.append(counted[0])
    psgd.dist.all_reduce = _all_reduce
    dist.all_reduce = _all_reduce
    # Ours at the same rank, from its first step.
    torch.manual_seed(0)
    ours = DDP(build("cnn"))
    with accordion.ddp.attach(ours, scheme="powersgd", level=a.rank, network_probe=False) as acc:
        floats = sum(layer["floats_low"] for layer in acc.layers)
        compressed = [layer["name"] for layer in acc.layers if layer["compressible"]]
        for x, y in batches(0, 2, dist.get_rank()):
            F.cross_entropy(ours(x), y).backward()
    if dist.get_rank() == 0:
        with open(a.out, "w") as f:
            json.dump({"pytorch_per_step": per_step, "accordion_per_step": floats, "compressed": compressed}, f)
    # The teardown order that keeps Gloo's worker threads from freeing
    # Python-owned tensors while the process group is destroyed (docs/python.md).
    dist.barrier()
    del theirs, state, ours
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
