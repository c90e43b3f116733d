#!/usr/bin/env python3
"""How long one Gloo all-reduce between two local processes takes, by size.

Explains docs/bench-trainer.md: on a small VM the cost is mostly latency, so
a PowerSGD step (two dependent all-reduces) cannot beat a dense one (one)
over loopback, whatever it saves in bytes.

  .venv/bin/python bench/trainer/gloo_latency.py
"""
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = (256, 2304, 235146)  # floats: 1 KB, 9 KB (PowerSGD's Q), the MLP's gradients
REPEAT = 300


def worker(rank, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    for n in SIZES:
        t = torch.ones(n)
        for _ in range(20):
            dist.all_reduce(t)
        start = time.perf_counter()
        for _ in range(REPEAT):
            dist.all_reduce(t)
        if rank == 0:
            print("%9d bytes: %7.0f us per all-reduce" % (4 * n, (time.perf_counter() - start) / REPEAT * 1e6))
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(port,), nprocs=2)
