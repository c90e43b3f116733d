#!/usr/bin/env python3
"""PyTorch's own DistributedDataParallel on the same job accordion-train runs.

The baseline for bench/trainer/compare_with_ddp.py: the same model (the
trainer's MLP or CNN, same layers), the same Fashion-MNIST samples in memory,
normalised alike, the same global batch split over the same number of Gloo
workers with the same threads each, SGD with the same momentum and weight
decay. It times the training steps only (no evaluation), as accordion-train's
"samples/s in training steps" does, and prints one JSON line.

  ddp_baseline.py --nproc 2 --threads 1 --model mlp --batch-size 128 --epochs 3
  ddp_baseline.py ... --powersgd-rank 2     # DDP's powerSGD_hook instead of all-reduce
  ddp_baseline.py ... --fp16                # DDP's fp16_compress_hook: dense, half the bytes
  ddp_baseline.py ... --rank R --master-addr A --master-port P   # one worker of --nproc, started by hand
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

# The Fashion-MNIST reader, accordion-train's CNN and a free port, shared with bench/python.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))
from bench_common import free_port, read_idx, trainer_cnn  # noqa: E402


def load_fashion_mnist(data_dir, limit):
    def pick(name):
        for candidate in (os.path.join(data_dir, name + ".gz"), os.path.join(data_dir, name)):
            if os.path.exists(candidate):
                return candidate
        sys.exit(f"ddp_baseline.py: error: {data_dir}/{name}(.gz) not found")
    images = read_idx(pick("train-images-idx3-ubyte"))
    labels = read_idx(pick("train-labels-idx1-ubyte"))
    if limit > 0:
        images, labels = images[:limit], labels[:limit]
    x = torch.from_numpy(images.astype(np.float32)).div_(255.0).sub_(0.2860).div_(0.3530).unsqueeze(1)
    return x, torch.from_numpy(labels.astype(np.int64))


class Mlp(nn.Module):  # accordion-train --model mlp
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc3(F.relu(self.fc2(x)))


def worker(rank, args, port, queue):
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method=f"tcp://{args.master_addr}:{port}", rank=rank,
                            world_size=args.nproc)
    torch.manual_seed(args.seed)
    x, y = load_fashion_mnist(args.data_dir, args.limit_samples)
    model = nn.parallel.DistributedDataParallel(Mlp() if args.model == "mlp" else trainer_cnn())
    if args.powersgd_rank:
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
        # As the PyTorch documentation shows it, with our rank; compression
        # starts at the second step (1.13 needs at least 2 with error feedback).
        state = powerSGD.PowerSGDState(process_group=None, matrix_approximation_rank=args.powersgd_rank,
                                       start_powerSGD_iter=2)
        model.register_comm_hook(state, powerSGD.powerSGD_hook)
    elif args.fp16:
        # Dense, but each bucket travels as float16: half the bytes.
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    rank_batch = args.batch_size // args.nproc
    n = x.shape[0]
    per_rank = (n + args.nproc - 1) // args.nproc
    steps = (per_rank + rank_batch - 1) // rank_batch
    train_s, samples = 0.0, 0
    for epoch in range(args.epochs):
        # DistributedSampler's order: shuffled per epoch, padded, strided.
        g = torch.Generator()
        g.manual_seed(args.seed + epoch)
        order = torch.randperm(n, generator=g)
        order = torch.cat([order, order[: per_rank * args.nproc - n]])[rank::args.nproc]
        loss_sum, correct = 0.0, 0
        dist.barrier()
        start = time.perf_counter()
        for step in range(steps):
            ids = order[step * rank_batch:(step + 1) * rank_batch]
            inputs, targets = x.index_select(0, ids), y.index_select(0, ids)
            optimizer.zero_grad()
            logits = model(inputs)
            loss = F.cross_entropy(logits, targets)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(ids)
            correct += (logits.argmax(1) == targets).sum().item()
        train_s += time.perf_counter() - start
        samples += steps * args.batch_size
    if rank == 0:
        result = {"samples_per_s": samples / train_s, "train_s": train_s, "epochs": args.epochs,
                  "last_epoch_train_loss": loss_sum / (steps * rank_batch)}
        # Reported before the teardown, which is where powerSGD_hook runs abort.
        if queue is None:
            print(json.dumps(result), flush=True)
        else:
            queue.put(result)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--limit-samples", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--powersgd-rank", type=int, default=0)
    p.add_argument("--fp16", action="store_true", help="DDP's fp16_compress_hook (dense in float16 on the wire)")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--rank", type=int, default=-1, help="run only this worker (others started elsewhere)")
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=0)
    args = p.parse_args()
    if args.rank >= 0:
        worker(args.rank, args, args.master_port, None)
        return
    port = free_port()
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    aborted = None
    try:
        mp.spawn(worker, args=(args, port, queue), nprocs=args.nproc, join=True)
    except mp.ProcessExitedException as e:
        # Rank 0 reports before tearing the process group down; a crash in
        # the teardown still leaves a measurement, and we say it crashed.
        aborted = str(e)
    result = queue.get() if not queue.empty() else {}
    if aborted:
        result["aborted"] = aborted
    print(json.dumps(result))
    sys.exit(0 if "samples_per_s" in result else 1)


if __name__ == "__main__":
    main()
