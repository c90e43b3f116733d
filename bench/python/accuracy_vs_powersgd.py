#!/usr/bin/env python3
"""Final test accuracy: the Accordion hook's PowerSGD against PyTorch's powerSGD_hook.

Issue 26's accuracy comparison (a documented table, not a test). The same
small CNN (accordion-train's --model cnn, layer for layer) on Fashion-MNIST,
2 Gloo ranks under torchrun, trained with

  ours   accordion.ddp.attach(scheme="powersgd", policy="static", level=R)
  torch  torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook with
         PowerSGDState(matrix_approximation_rank=R, use_error_feedback=True,
         warm_start=True, start_powerSGD_iter=2, min_compression_rate=2)

for each seed, with plain DDP (dense all-reduce) alongside as the reference.
The seed sets the model's initialisation, the data order and both hooks'
PowerSGD seed. Every run: the same training subset (the first --train-samples
images), split over the ranks DistributedSampler-style and reshuffled each
epoch; SGD lr 0.1 (x0.1 in the last epoch), momentum 0.9, weight decay 1e-4;
the full 10 000-image test set after every epoch. The order of the runs
rotates from seed to seed (ours torch ddp, torch ddp ours, ...) so machine
noise does not favour one. The table gives each seed's final test accuracy,
the mean and a 95 % confidence interval (Student's t, n - 1 degrees of
freedom) per configuration, and whether ours and torch's intervals overlap.

  PYTHONPATH=build/release/python .venv/bin/python bench/python/accuracy_vs_powersgd.py \
      --seeds 1,2,3 --epochs 3 --out bench/python/results/accuracy-vs-powersgd-DATE.md
"""
import argparse
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import free_port, loadavg, read_idx, trainer_cnn

DATA_DIR = "/usr/share/datasets/fashion-mnist"
# Student's t, two-sided 95 %, by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def load(data_dir, split, limit):
    import numpy as np
    import torch
    prefix = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if limit > 0:
        x, y = x[:limit], y[:limit]
    x = torch.from_numpy(x.astype(np.float32)).div_(255.0).sub_(0.2860).div_(0.3530).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


def worker(args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = load(args.data_dir, "train", args.train_samples)
    tx, ty = load(args.data_dir, "test", 0)
    torch.manual_seed(args.seed)
    model = DDP(trainer_cnn())
    acc = None
    if args.hook == "ddp":
        pass  # DDP's own dense all-reduce: the uncompressed reference
    elif args.hook == "torch":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
        state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=args.rank,
                                   use_error_feedback=True, warm_start=True, start_powerSGD_iter=2,
                                   min_compression_rate=2, random_seed=args.seed)
        model.register_comm_hook(state, psgd.powerSGD_hook)
    else:
        import accordion.ddp
        acc = accordion.ddp.attach(model, scheme="powersgd", policy="static", level=args.rank, seed=args.seed,
                                   trace=args.trace, overwrite=True, network_probe=False, model_name="cnn",
                                   dataset="fashion-mnist", train_samples=x.shape[0],
                                   batch_size=args.batch * world, epochs=args.epochs)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    n = x.shape[0]
    per_rank = (n + world - 1) // world
    steps = (per_rank + args.batch - 1) // args.batch
    history = []
    t_start = time.time()
    def lr_of(epoch):
        return args.lr * (args.decay if epoch >= args.epochs - args.decay_epochs else 1.0)

    for epoch in range(args.epochs):
        for group in opt.param_groups:
            group["lr"] = lr_of(epoch)
        model.train()
        g = torch.Generator()
        g.manual_seed(args.seed * 1000 + epoch)
        order = torch.randperm(n, generator=g)
        order = torch.cat([order, order[: per_rank * world - n]])[rank::world]
        loss_sum = torch.zeros(2, dtype=torch.float64)
        for s in range(steps):
            ids = order[s * args.batch:(s + 1) * args.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x[ids]), y[ids])
            loss.backward()
            opt.step()
            loss_sum += torch.tensor([loss.item() * len(ids), len(ids)], dtype=torch.float64)
        # Test: each rank half of the test set, counts summed.
        model.eval()
        correct = torch.zeros(2, dtype=torch.float64)
        with torch.no_grad():
            part = torch.arange(rank, tx.shape[0], world)
            for i in range(0, len(part), 1000):
                ids = part[i:i + 1000]
                correct += torch.tensor([(model(tx[ids]).argmax(1) == ty[ids]).sum().item(), len(ids)],
                                        dtype=torch.float64)
        dist.all_reduce(correct)
        dist.all_reduce(loss_sum)
        test_acc = float(correct[0] / correct[1])
        train_loss = float(loss_sum[0] / loss_sum[1])
        history.append({"epoch": epoch, "train_loss": train_loss, "test_accuracy": test_acc})
        if acc is not None:
            acc.end_epoch(lr=lr_of(epoch), next_lr=lr_of(epoch + 1), train_loss=train_loss, test_accuracy=test_acc)
    seconds = time.time() - t_start
    if rank == 0:
        with open(args.json, "w") as f:
            json.dump({"history": history, "seconds": seconds, "steps_per_epoch": steps}, f)
    if acc is not None:
        acc.close()
    dist.barrier()
    dist.destroy_process_group()


def ci95(values):
    m = statistics.mean(values)
    if len(values) < 2:
        return m, float("nan")
    half = T95.get(len(values) - 1, 1.96) * statistics.stdev(values) / math.sqrt(len(values))
    return m, half


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--hooks", default="ours,torch,ddp",
                   help="ours, torch (PyTorch's powerSGD_hook), ddp (dense all-reduce, the reference)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--train-samples", type=int, default=30000)
    p.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--decay", type=float, default=0.1, help="LR factor for the last --decay-epochs epochs")
    p.add_argument("--decay-epochs", type=int, default=1)
    p.add_argument("--rank", type=int, default=2, help="PowerSGD rank, both hooks")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--out", default=None)
    # worker only
    p.add_argument("--worker", action="store_true")
    p.add_argument("--hook", default="ours")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None)
    p.add_argument("--trace", default=None, help="(worker, ours) record a trace here")
    args = p.parse_args()
    if args.worker:
        worker(args)
        return

    seeds = [int(s) for s in args.seeds.split(",") if s]
    hooks = [h for h in args.hooks.split(",") if h]
    command = "PYTHONPATH=" + os.environ.get("PYTHONPATH", "") + " " + " ".join(
        shlex.quote(a) for a in [sys.executable] + sys.argv)
    load_before = loadavg()
    started = datetime.datetime.now()
    runs = {h: {} for h in hooks}
    notes = []
    with tempfile.TemporaryDirectory(prefix="acc-accuracy-") as tmp:
        for seed in seeds:
            for hook in hooks[(seed - 1) % len(hooks):] + hooks[:(seed - 1) % len(hooks)]:
                js = os.path.join(tmp, f"{hook}-{seed}.json")
                cmd = [sys.executable, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
                       "--nproc_per_node", str(args.nproc), "--master_addr", "127.0.0.1",
                       "--master_port", str(free_port()), os.path.abspath(__file__), "--worker",
                       "--hook", hook, "--seed", str(seed), "--json", js, "--epochs", str(args.epochs),
                       "--train-samples", str(args.train_samples), "--batch", str(args.batch),
                       "--lr", str(args.lr), "--decay", str(args.decay), "--decay-epochs",
                       str(args.decay_epochs), "--rank", str(args.rank), "--threads", str(args.threads),
                       "--data-dir", args.data_dir]
                env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
                t0 = time.time()
                proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                wall = time.time() - t0
                if not os.path.exists(js):
                    sys.stdout.write(proc.stdout[-5000:])
                    notes.append(f"{hook} seed {seed}: FAILED, torchrun exit {proc.returncode}, no result")
                    print(f"# {hook} seed {seed}: FAILED (exit {proc.returncode})", file=sys.stderr, flush=True)
                    continue
                with open(js) as f:
                    r = json.load(f)
                r["exit"] = proc.returncode
                r["wall_s"] = wall
                if proc.returncode != 0:
                    tail = [l for l in proc.stdout.splitlines() if "terminate" in l or "what()" in l or
                            "Signal" in l or "exitcode" in l][:6]
                    notes.append(f"{hook} seed {seed}: torchrun exit {proc.returncode} after the results were "
                                 f"written: {' | '.join(tail)}")
                runs[hook][seed] = r
                print(f"# {hook} seed {seed}: test accuracy "
                      + ", ".join(f"{h['test_accuracy']:.4f}" for h in r["history"])
                      + f" ({r['seconds']:.0f} s training, {wall:.0f} s wall, exit {proc.returncode})",
                      file=sys.stderr, flush=True)
    load_after = loadavg()

    lines = [f"# Accordion hook vs PyTorch powerSGD_hook: final test accuracy ({started:%Y-%m-%d %H:%M})", "",
             f"- Machine: {platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}; Python "
             f"{platform.python_version()}",
             f"- Load average (1, 5, 15 min) before: {load_before}; after: {load_after}",
             f"- CNN (accordion-train's), Fashion-MNIST: first {args.train_samples} training images, full "
             f"10 000-image test set; {args.nproc} Gloo ranks, {args.threads} thread(s) each; batch {args.batch} "
             f"per rank ({args.batch * args.nproc} global); {args.epochs} epochs; SGD lr {args.lr} "
             f"(x{args.decay:g} in the last {args.decay_epochs} epoch(s)), momentum 0.9, "
             f"weight decay 1e-4; PowerSGD rank {args.rank}, error feedback, warm start in both",
             "", "Command:", "", "```sh", command, "```", "", ""]
    header = "| seed | " + " | ".join(f"{h} final test acc. (per epoch)" for h in hooks) + " |"
    lines += [header, "|---|" + "---|" * len(hooks)]
    for seed in seeds:
        cells = []
        for h in hooks:
            r = runs[h].get(seed)
            if r is None:
                cells.append("failed")
            else:
                hist = r["history"]
                cells.append(f"**{100 * hist[-1]['test_accuracy']:.2f} %** ("
                             + ", ".join(f"{100 * e['test_accuracy']:.2f}" for e in hist) + ")")
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    intervals = {}
    cells_mean = []
    for h in hooks:
        finals = [100 * runs[h][s]["history"][-1]["test_accuracy"] for s in seeds if s in runs[h]]
        if len(finals) >= 2:
            m, half = ci95(finals)
            intervals[h] = (m - half, m + half)
            cells_mean.append(f"{m:.2f} % ± {half:.2f} (95 % CI {m - half:.2f}–{m + half:.2f}, n={len(finals)})")
        elif finals:
            cells_mean.append(f"{finals[0]:.2f} % (one run, no interval)")
        else:
            cells_mean.append("no runs")
    lines.append("| mean ± half-width | " + " | ".join(cells_mean) + " |")
    lines.append("")
    if "ours" in intervals and "torch" in intervals:
        (a_lo, a_hi), (b_lo, b_hi) = intervals["ours"], intervals["torch"]
        overlap = a_lo <= b_hi and b_lo <= a_hi
        lines.append(f"The 95 % confidence intervals of ours and torch {'OVERLAP' if overlap else 'do NOT overlap'}.")
    secs = {h: [runs[h][s]["seconds"] for s in seeds if s in runs[h]] for h in hooks}
    lines.append("Training time per run (s, epochs incl. evaluation): " + "; ".join(
        f"{h} " + ", ".join(f"{v:.0f}" for v in secs[h]) for h in hooks) + ".")
    exits = {h: [runs[h][s]["exit"] for s in seeds if s in runs[h]] for h in hooks}
    lines.append("torchrun exit codes per run: " + "; ".join(f"{h} {exits[h]}" for h in hooks) + ".")
    for n in notes:
        lines.append(f"- {n}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
        with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
            json.dump({"load_before": load_before, "load_after": load_after, "command": command, "runs": runs},
                      f)
        print(f"wrote {args.out}", file=sys.stderr)
    sys.exit(0 if all(runs[h] for h in hooks) else 1)


if __name__ == "__main__":
    main()
