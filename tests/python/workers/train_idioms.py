"""A user's own model under the Accordion hook, written the way PyTorch scripts are
(run by torchrun): the trace on rank 0 only, and, on request, one rank that
disagrees with the others in one way.

The model has what real models have and the built-in ones lack: GroupNorm, a
gated residual block, a weight used twice and a frozen parameter. Each rank
writes what happened to it as JSON to <--out>.rank<N>.json: "ok", or the
exception's type and message."""

import argparse
import datetime
import json
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import accordion.ddp


class GatedNet(torch.nn.Module):
    def __init__(self, head_name="head"):
        super().__init__()
        self.embed = torch.nn.Linear(16, 32)
        self.norm = torch.nn.GroupNorm(4, 32)
        self.gate = torch.nn.Linear(32, 32)
        self.value = torch.nn.Linear(32, 32)  # used twice in forward
        self.frozen = torch.nn.Linear(32, 32)
        self.frozen.requires_grad_(False)
        # Another name on one rank: a model of another version. DDP compares
        # the shapes of the ranks' parameters itself, but not their names.
        self.head_name = head_name
        setattr(self, head_name, torch.nn.Linear(32, 4))

    def forward(self, x):
        h = self.norm(self.embed(x))
        h = h + torch.sigmoid(self.gate(h)) * self.value(h)
        h = h + self.value(torch.relu(h))
        h = self.frozen(h)
        return getattr(self, self.head_name)(h)


# How the disagreeing rank (the last one) differs: attach keywords, or what it does.
SETTING_CHANGES = {
    "scheme": {"scheme": "topk", "low": 0.5, "high": 0.1},
    "low": {"low": 4},
    "eta": {"eta": 0.3},
    "interval": {"interval": 2},
    "bucket_mb": {"bucket_mb": 1.0},
    "network_probe": {"network_probe": False},
    "seed": {"seed": 7},
    "bad_value": {"eta": float("nan")},
}
BEHAVIOURS = ("renamed_layer", "one_step_fewer", "one_step_more", "end_epoch_skipped", "lr", "close_early", "join")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scheme", default="powersgd")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--trace", default=None)
    ap.add_argument("--eta", type=float, default=None)
    ap.add_argument("--interval", type=int, default=1)
    ap.add_argument("--trace-on", choices=("all", "rank0"), default="rank0")
    ap.add_argument("--disagree", choices=("none",) + tuple(SETTING_CHANGES) + BEHAVIOURS, default="none")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    # A short timeout: should the hook miss a disagreement, the test sees a
    # RuntimeError in seconds rather than a hang of Gloo's default 30 minutes.
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    rank, world = dist.get_rank(), dist.get_world_size()
    odd = rank == world - 1 and a.disagree != "none"
    result = {"rank": rank}
    start = time.monotonic()
    try:
        torch.manual_seed(0)
        model = DDP(GatedNet(head_name="out" if odd and a.disagree == "renamed_layer" else "head"))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        kwargs = {"scheme": a.scheme, "interval": a.interval}
        if a.eta is not None:
            kwargs["eta"] = a.eta
        if a.scheme == "batch":
            kwargs.update(low=8 * world, high=16 * world)
        elif a.scheme == "topk":
            kwargs.update(low=0.5, high=0.1)
        elif a.scheme == "powersgd":
            kwargs.update(low=2, high=1)
        if odd and a.disagree in SETTING_CHANGES:
            kwargs.update(SETTING_CHANGES[a.disagree])
        trace = a.trace if (a.trace_on == "all" or rank == 0) else None
        acc = accordion.ddp.attach(model, trace=trace, epochs=a.epochs, batch_size=8 * world,
                                   train_samples=8 * world * a.steps, dataset="random", model_name="gated",
                                   **kwargs)
        result["layers"] = [layer["name"] for layer in acc.layers]
        with acc:
            g = torch.Generator().manual_seed(rank)
            for epoch in range(a.epochs):
                # A decay for the last epoch: the controller holds every layer critical.
                lr = 0.05 if epoch < a.epochs - 1 else 0.005
                for group in opt.param_groups:
                    group["lr"] = lr
                steps = a.steps
                if odd and epoch == 1:
                    steps += {"one_step_fewer": -1, "one_step_more": 1}.get(a.disagree, 0)
                per_rank = acc.batch_size // world
                context = model.join() if (a.disagree == "join" and epoch == 1) else None
                if context is not None:
                    context.__enter__()
                for _ in range(steps):
                    x, y = torch.randn(per_rank, 16, generator=g), torch.randint(0, 4, (per_rank,), generator=g)
                    opt.zero_grad()
                    loss = F.cross_entropy(model(x), y)
                    loss.backward()
                    opt.step()
                if context is not None:
                    context.__exit__(None, None, None)
                if odd and epoch == 1 and a.disagree == "close_early":
                    break
                if odd and epoch == 1 and a.disagree == "end_epoch_skipped":
                    continue
                next_lr = 0.005 if epoch >= a.epochs - 2 else 0.05
                if odd and a.disagree == "lr" and epoch == 1:
                    lr = 0.01
                acc.end_epoch(lr=lr, next_lr=next_lr, train_loss=loss.item())
        result["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - the test reads what each rank saw
        result["status"] = type(e).__name__
        result["error"] = str(e)
    result["seconds"] = time.monotonic() - start
    with open(f"{a.out}.rank{rank}.json", "w") as f:
        json.dump(result, f)
    if result["status"] == "ok":
        dist.destroy_process_group()
    sys.exit(0 if result["status"] == "ok" else 3)


if __name__ == "__main__":
    main()
