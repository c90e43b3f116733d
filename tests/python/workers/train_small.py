"""A small DDP training under the Accordion hook, for the tests (run by torchrun).

Writes what the test checks as JSON to --out (rank 0)."""

import argparse
import gc
import json

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp


def build(name):
    if name == "mlp":
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 64), torch.nn.ReLU(),
                                   torch.nn.Linear(64, 10))
    return torch.nn.Sequential(torch.nn.Conv2d(1, 8, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Conv2d(8, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                               torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 10))


def batches(epoch, steps, rank, batch=16):
    g = torch.Generator().manual_seed(1000 * epoch + rank)
    for _ in range(steps):
        yield torch.randn(batch, 1, 28, 28, generator=g), torch.randint(0, 10, (batch,), generator=g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--scheme", default="powersgd")
    ap.add_argument("--policy", default=None)
    ap.add_argument("--low", type=float, default=None)
    ap.add_argument("--high", type=float, default=None)
    ap.add_argument("--level", type=float, default=None)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--interval", type=int, default=1)
    ap.add_argument("--msdr-factor", type=float, default=None)
    ap.add_argument("--decay-at", type=int, default=-1, help="the schedule's LR halves from this epoch on")
    ap.add_argument("--trace", default=None)
    ap.add_argument("--bucket-mb", type=float, default=0.01)
    ap.add_argument("--raise-in-epoch", type=int, default=-1)
    ap.add_argument("--nan-in-epoch", type=int, default=-1)
    ap.add_argument("--stop-after", type=int, default=-1, help="early stopping: leave the loop after this many epochs")
    ap.add_argument("--against-plain-ddp", action="store_true")
    ap.add_argument("--accumulate", type=int, default=1, help="micro-batches per step, all but the last under no_sync")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(build(a.model))
    reference = None
    if a.against_plain_ddp:
        torch.manual_seed(0)
        reference = DDP(build(a.model))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05) if reference else None
    kw = {k: v for k, v in (("policy", a.policy), ("low", a.low), ("high", a.high), ("level", a.level),
                            ("msdr_factor", a.msdr_factor)) if v is not None}

    def schedule_lr(epoch):
        return 0.05 * (0.5 if 0 <= a.decay_at <= epoch else 1.0)
    out = {"epochs": []}
    acc = accordion.ddp.attach(model, scheme=a.scheme, interval=a.interval, trace=a.trace, bucket_mb=a.bucket_mb,
                               network_probe=False, epochs=a.epochs, batch_size=16 * dist.get_world_size(),
                               train_samples=16 * dist.get_world_size() * a.steps, dataset="random", **kw)
    with acc:
        out["layers"] = acc.layers
        for epoch in range(a.epochs):
            if epoch == a.stop_after:
                break
            levels = acc.levels
            for x, y in batches(epoch, a.steps, rank):
                if epoch == a.raise_in_epoch:
                    raise RuntimeError("stopped on purpose")
                if epoch == a.nan_in_epoch:
                    with torch.no_grad():
                        next(model.parameters()).fill_(float("nan"))
                for net, optimizer in ((model, opt), (reference, ref_opt)):
                    if net is None:
                        continue
                    optimizer.zero_grad()
                    # Gradient accumulation as DDP users write it: every
                    # micro-batch but the last under no_sync().
                    for i, (xs, ys) in enumerate(zip(x.chunk(a.accumulate), y.chunk(a.accumulate))):
                        if i + 1 < a.accumulate:
                            with net.no_sync():
                                F.cross_entropy(net(xs), ys).backward()
                        else:
                            loss = F.cross_entropy(net(xs), ys)
                            loss.backward()
                    optimizer.step()
            summary = acc.end_epoch(lr=schedule_lr(epoch), next_lr=schedule_lr(epoch + 1), train_loss=loss.item())
            summary["levels"] = levels
            out["epochs"].append(summary)
    if reference is not None:
        out["max_param_difference"] = max((p - q).abs().max().item()
                                          for p, q in zip(model.parameters(), reference.parameters()))
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump(out, f)
    # The teardown order of docs/python.md: the hook closed (above), then
    # the models, then the process group.
    del model, reference, opt, ref_opt
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
