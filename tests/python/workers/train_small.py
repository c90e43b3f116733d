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


def batches(epoch, steps, rank, batch=16, task="random"):
    """random: labels drawn at random (nothing to learn); rule: the label is marked in the
    first ten pixels (noise plus 6 at the label's), which a model learns within a few epochs."""
    g = torch.Generator().manual_seed(1000 * epoch + rank)
    for _ in range(steps):
        x = torch.randn(batch, 1, 28, 28, generator=g)
        y = torch.randint(0, 10, (batch,), generator=g)
        if task == "rule":
            x.view(batch, -1)[:, :10] += 6 * F.one_hot(y, 10)
        yield x, y


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
    ap.add_argument("--reference-hook", choices=["none", "fp16", "bf16"], default="none",
                    help="the plain DDP reference runs PyTorch's own fp16_compress_hook or bf16_compress_hook")
    ap.add_argument("--accumulate", type=int, default=1, help="micro-batches per step, all but the last under no_sync")
    ap.add_argument("--amp", choices=["none", "fp16", "bf16"], default="none",
                    help="autocast; fp16 with a GradScaler per model, as PyTorch documents it")
    ap.add_argument("--init-scale", type=float, default=2.0 ** 16, help="the GradScaler's first scale")
    ap.add_argument("--no-scaler-to-hook", action="store_true", help="do not tell the hook about the GradScaler")
    ap.add_argument("--inf-on-rank-1-at", type=int, default=-1,
                    help="rank 1's gradient of this step (counted over the run) is made infinite")
    ap.add_argument("--task", choices=["random", "rule"], default="random")
    ap.add_argument("--evaluate", choices=["none", "no_grad", "inference_mode", "grad"], default="none",
                    help="before each epoch, evaluate both models in eval mode: under no_grad, inference_mode, "
                         "or with grad mode on (a script that forgot no_grad; no backward follows)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--bypass-ddp-in-epoch", type=int, default=-1,
                    help="in this epoch train through model.module, which DDP and the hook never see")
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
        if a.reference_hook != "none":
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            reference.register_comm_hook(None, getattr(default_hooks, f"{a.reference_hook}_compress_hook"))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=a.lr) if reference else None
    kw = {k: v for k, v in (("policy", a.policy), ("low", a.low), ("high", a.high), ("level", a.level),
                            ("msdr_factor", a.msdr_factor)) if v is not None}
    fp16 = a.amp == "fp16"
    scalers = {id(net): torch.amp.GradScaler("cpu", init_scale=a.init_scale, enabled=fp16)
               for net in (model, reference) if net is not None}
    if fp16 and not a.no_scaler_to_hook:
        kw["grad_scaler"] = scalers[id(model)]
    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.amp)

    def forward_loss(net, xs, ys):
        if autocast_dtype is None:
            return F.cross_entropy(net(xs), ys)
        with torch.autocast("cpu", dtype=autocast_dtype):
            return F.cross_entropy(net(xs), ys)
    out_losses = {"hook": [], "plain": []}
    step_count = 0

    def schedule_lr(epoch):
        return a.lr * (0.5 if 0 <= a.decay_at <= epoch else 1.0)
    out = {"epochs": [], "losses": out_losses}
    acc = accordion.ddp.attach(model, scheme=a.scheme, interval=a.interval, trace=a.trace, bucket_mb=a.bucket_mb,
                               network_probe=False, epochs=a.epochs, batch_size=16 * dist.get_world_size(),
                               train_samples=16 * dist.get_world_size() * a.steps, dataset="random", **kw)
    with acc:
        out["layers"] = acc.layers
        for epoch in range(a.epochs):
            if epoch == a.stop_after:
                break
            levels = acc.levels
            if a.evaluate != "none":
                context = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode,
                           "grad": torch.enable_grad}[a.evaluate]
                for net in (model, reference):
                    if net is None:
                        continue
                    net.eval()
                    with context():
                        for x, y in batches(100 + epoch, 2, rank, task=a.task):
                            F.cross_entropy(net(x), y)
                    net.train()
            for x, y in batches(epoch, a.steps, rank, task=a.task):
                if epoch == a.raise_in_epoch:
                    raise RuntimeError("stopped on purpose")
                if epoch == a.nan_in_epoch:
                    with torch.no_grad():
                        next(model.parameters()).fill_(float("nan"))
                for net, optimizer, name in ((model, opt, "hook"), (reference, ref_opt, "plain")):
                    if net is None:
                        continue
                    if epoch == a.bypass_ddp_in_epoch:
                        net = net.module
                    scaler = scalers[id(model if name == "hook" else reference)]
                    optimizer.zero_grad()
                    if step_count == a.inf_on_rank_1_at and rank == 1:
                        # One rank's loss overflows: every rank must skip the step.
                        x = x.clone()
                        x[0].fill_(1e38)
                    # Gradient accumulation as DDP users write it: every
                    # micro-batch but the last under no_sync().
                    for i, (xs, ys) in enumerate(zip(x.chunk(a.accumulate), y.chunk(a.accumulate))):
                        if i + 1 < a.accumulate:
                            with net.no_sync():
                                scaler.scale(forward_loss(net, xs, ys)).backward()
                        else:
                            loss = forward_loss(net, xs, ys)
                            scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    out_losses[name].append(loss.item())
                step_count += 1
            summary = acc.end_epoch(lr=schedule_lr(epoch), next_lr=schedule_lr(epoch + 1),
                                    train_loss=loss.item()).to_dict()
            summary["levels"] = levels
            out["epochs"].append(summary)
    if reference is not None:
        out["max_param_difference"] = max((p - q).abs().max().item()
                                          for p, q in zip(model.parameters(), reference.parameters()))
    out["final_scale"] = scalers[id(model)].get_scale()
    # Every rank must hold the same model: a step skipped on one rank only would part them.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, flat)
    out["ranks_agree"] = all(torch.equal(gathered[0], g) for g in gathered)
    out["finite"] = bool(flat.isfinite().all())
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
