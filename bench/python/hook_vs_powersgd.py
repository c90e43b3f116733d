#!/usr/bin/env python3
"""Step time of the Accordion DDP hook against PyTorch's own powerSGD_hook, side by side.

Issue 26's performance check (a benchmark, never a timed test). Two Gloo ranks
on CPU, started by torchrun; in one run, for each model (a small CNN on 28x28
Fashion-MNIST and torchvision's ResNet-18 on the same images padded to 32x32,
3 channels), every configuration trains the same freshly initialised model on
the same batches:

  ddp          plain DDP, dense all-reduce (DDP's default hook): the reference
  torch        DDP + torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook,
               PowerSGDState(matrix_approximation_rank=R, use_error_feedback=True,
               warm_start=True, start_powerSGD_iter=2, min_compression_rate=2)
  ours         accordion.ddp.attach(scheme="powersgd", policy="static", level=R), no trace
  ours+trace   the same, recording a trace (every step sampled unless --sample-iterations)

min_compression_rate=2 is PyTorch's default and the same rule as the toolkit's
accounting (a matrix view rows x cols is compressed when 2 R (rows+cols) <
rows cols), so both compress the same tensors; the script checks that and says
so. PyTorch's hook sends the first 2 steps dense (start_powerSGD_iter=2, the
least 1.13 allows with error feedback): the warm-up covers them.

Repeats interleave the configurations (rotating the order each repeat: A B C
D, B C D A, ...) so that machine noise hits all of them. One step is
zero_grad + forward + loss + backward (DDP's communication inside) + SGD step;
each step's time is the slower rank's. Per (configuration, repeat) the median
of the timed steps; the table gives the median over repeats, the spread
(min-max of the repeat medians) and ratios taken repeat by repeat (the
configurations of one repeat ran back to back) then their median.

Run it plainly (it starts torchrun itself, with Debian 12's --redirects 1 --tee 1
workaround) with the package on PYTHONPATH:

  PYTHONPATH=build/release/python .venv/bin/python bench/python/hook_vs_powersgd.py \
      --repeats 5 --out bench/python/results/hook-vs-powersgd-DATE.md

or as a worker under your own torchrun (``--worker``, writes JSON to --json).
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import free_port, loadavg, read_idx, trainer_cnn

CONFIGS = ("ddp", "torch", "ours", "ours+trace")
MODELS = ("cnn", "resnet18")
DATA_DIR = "/usr/share/datasets/fashion-mnist"


# -- the worker (one per rank, under torchrun) --------------------------------

def batches(model_name, n_batches, batch, rank, world, data_dir):
    """The rank's batches: Fashion-MNIST training images, normalised; ResNet-18
    gets them padded to 32x32 and repeated over 3 channels."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    images = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"))
    need = n_batches * batch * world
    x = torch.from_numpy(images[:need].astype(np.float32)).div_(255.0).sub_(0.2860).div_(0.3530).unsqueeze(1)
    y = torch.from_numpy(labels[:need].astype(np.int64))
    if model_name == "resnet18":
        x = F.pad(x, (2, 2, 2, 2), value=float(x.min())).repeat(1, 3, 1, 1).contiguous()
    out = []
    for b in range(n_batches):
        lo = (world * b + rank) * batch
        out.append((x[lo:lo + batch].clone(), y[lo:lo + batch].clone()))
    return out


def make_model(name, seed):
    import torch
    torch.manual_seed(seed)
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18(num_classes=10)

    return trainer_cnn()


def torch_compresses(model, rank, min_compression_rate):
    """The parameters PyTorch's powerSGD_hook compresses (its _should_compress
    on the tensor viewed as shape[0] x rest; 1-D tensors travel dense)."""
    names = []
    for n, p in model.named_parameters():
        if p.dim() <= 1:
            continue
        rows, cols = p.shape[0], p.numel() // p.shape[0]
        r = min(rows, cols, rank)
        if (rows + cols) * r * min_compression_rate < rows * cols:
            names.append(n)
    return names


def run_config(cfg, model_name, batches_, args, trace_dir, rep):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    if args.ddp_buckets == "one":
        # One DDP bucket for every configuration (see --ddp-buckets): DDP reads
        # the first bucket's cap from dist._DEFAULT_FIRST_BUCKET_BYTES.
        saved = dist._DEFAULT_FIRST_BUCKET_BYTES
        dist._DEFAULT_FIRST_BUCKET_BYTES = 1 << 40
        try:
            model = DDP(make_model(model_name, args.seed), bucket_cap_mb=1 << 20)
        finally:
            dist._DEFAULT_FIRST_BUCKET_BYTES = saved
    else:
        model = DDP(make_model(model_name, args.seed))
    acc, state = None, None
    info = {}
    if cfg == "torch":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
        state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=args.rank,
                                   use_error_feedback=True, warm_start=True, start_powerSGD_iter=2,
                                   min_compression_rate=args.min_compression_rate, random_seed=args.seed)
        model.register_comm_hook(state, psgd.powerSGD_hook)
    elif cfg.startswith("ours"):
        import accordion.ddp
        trace = None
        if cfg == "ours+trace":
            trace = os.path.join(trace_dir, f"{model_name}-r{rep}.trace")
        steps_total = args.warmup + args.steps
        acc = accordion.ddp.attach(model, scheme="powersgd", policy="static", level=args.rank, trace=trace,
                                   overwrite=True, seed=args.seed, network_probe=args.network_probe,
                                   sample_iterations=(steps_total if args.sample_iterations < 0
                                                      else args.sample_iterations),
                                   model_name=model_name, dataset="fashion-mnist",
                                   batch_size=args.batch * dist.get_world_size(),
                                   train_samples=steps_total * args.batch * dist.get_world_size(), epochs=1)
        info["ours_compresses"] = [l["name"] for l in acc.layers if l["compressible"]]
        info["trace"] = trace
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    times = []
    dist.barrier()
    for i in range(args.warmup + args.steps):
        x, y = batches_[i % len(batches_)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if i >= args.warmup:
            times.append(t1 - t0)
    info["final_loss"] = float(loss.item())
    t = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # each step's time: the slower rank's
    if acc is not None:
        acc.end_epoch(lr=args.lr, train_loss=float(loss.item()))
        acc.close()
        if info.get("trace") and dist.get_rank() == 0:
            info["trace_bytes"] = os.path.getsize(info["trace"])
    del model, opt, state, acc
    return [float(v) for v in t.tolist()], info


def time_step_agreement(calls=300):
    """Seconds per call of what the hook adds to every step so that ranks that
    disagree fail instead of hanging: one all-gather of 6 float64 per rank
    (trainer/rank_agreement.h). Median over `calls`, the slower rank's."""
    import torch
    import torch.distributed as dist
    mine, everyone = torch.zeros(6, dtype=torch.float64), [torch.zeros(6, dtype=torch.float64)
                                                          for _ in range(dist.get_world_size())]
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        dist.all_gather(everyone, mine)
        times.append(time.perf_counter() - t)
    slowest = torch.tensor([statistics.median(times)], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return slowest.item()


def worker(args):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    results = {"models": {}, "world_size": dist.get_world_size()}
    trace_dir = args.trace_dir or tempfile.mkdtemp(prefix="acc-bench-")
    for model_name in args.models:
        steps = args.steps_cnn if model_name == "cnn" else args.steps_resnet
        wargs = argparse.Namespace(**vars(args))
        wargs.steps = steps
        data = batches(model_name, min(wargs.warmup + steps, 64), args.batch, rank, dist.get_world_size(),
                       args.data_dir)
        m = make_model(model_name, args.seed)
        per = {c: [] for c in args.configs}
        infos = {}
        for rep in range(args.repeats):
            k = rep % len(args.configs)
            order = list(args.configs[k:]) + list(args.configs[:k])
            for cfg in order:
                times, info = run_config(cfg, model_name, data, wargs, trace_dir, rep)
                per[cfg].append(times)
                infos.setdefault(cfg, info)
                if rank == 0:
                    print(f"# {model_name} rep {rep} {cfg:10s} median {1e3 * statistics.median(times):8.2f} ms"
                          f" loss {info['final_loss']:.3f}", file=sys.stderr, flush=True)
        results["models"][model_name] = {
            "steps": steps, "per_rep_step_s": per, "info": infos,
            "torch_compresses": torch_compresses(m, args.rank, args.min_compression_rate),
            "params": sum(p.numel() for p in m.parameters()),
        }
    results["agreement_s"] = time_step_agreement()
    if rank == 0:
        with open(args.json, "w") as f:
            json.dump(results, f)
    # The hooks are closed; tear the group down (PyTorch's powerSGD_hook state is gone too).
    dist.barrier()
    dist.destroy_process_group()


# -- the launcher and the report --------------------------------------------------

def summarise(results, args):
    lines = []
    rows = []
    for model_name, r in results["models"].items():
        per = r["per_rep_step_s"]
        med = {c: [statistics.median(t) * 1e3 for t in per[c]] for c in per}

        def ratio(a, b):
            if a not in med or b not in med:
                return None
            rs = [x / y for x, y in zip(med[a], med[b])]
            return statistics.median(rs), min(rs), max(rs), min(med[a]) / min(med[b])
        rows.append((model_name, r, med, {
            "ours/torch": ratio("ours", "torch"), "ours+trace/torch": ratio("ours+trace", "torch"),
            "ours+trace/ours": ratio("ours+trace", "ours"), "torch/ddp": ratio("torch", "ddp"),
            "ours/ddp": ratio("ours", "ddp")}))
    for model_name, r, med, ratios in rows:
        lines.append(f"### {model_name} ({r['params']:,} parameters, {r['steps']} timed steps x "
                     f"{len(next(iter(med.values())))} repeats, batch {args.batch} per rank)")
        lines.append("")
        lines.append("| configuration | median step (ms) | best repeat (ms) | spread of repeat medians (ms) | "
                     "every repeat's median (ms) | vs plain DDP |")
        lines.append("|---|---|---|---|---|---|")
        for c in args.configs:
            if c not in med:
                continue
            vs = ""
            if c != "ddp" and "ddp" in med:
                rs = [x / y for x, y in zip(med[c], med["ddp"])]
                vs = f"{statistics.median(rs):.2f}x"
            lines.append(f"| {c} | {statistics.median(med[c]):.2f} | {min(med[c]):.2f} | "
                         f"{min(med[c]):.2f}-{max(med[c]):.2f} | "
                         f"{', '.join(f'{v:.1f}' for v in med[c])} | {vs} |")
        lines.append("")
        targets = {"ours/torch": "target <= 1.10x", "ours+trace/torch": "target <= 1.10x (recording on)",
                   "ours+trace/ours": "recording cost, target < 1.03x"}
        lines.append("| ratio | median of per-repeat ratios | min-max of per-repeat ratios | best / best | target |")
        lines.append("|---|---|---|---|---|")
        for name, v in ratios.items():
            if v is None:
                continue
            t = targets.get(name, "")
            if name in ("ours/torch", "ours+trace/torch"):
                t += ": " + ("met" if max(v[0], v[3]) <= 1.10 else "NOT met" if min(v[0], v[3]) > 1.10 else
                             "unclear")
            elif name == "ours+trace/ours":
                t += ": " + ("met" if max(v[0], v[3]) < 1.03 else "NOT met" if min(v[0], v[3]) >= 1.03 else
                             "unclear")
            lines.append(f"| {name} | {v[0]:.3f}x | {v[1]:.3f}-{v[2]:.3f} | {v[3]:.3f}x | {t} |")
        lines.append("")
        ours = r["info"].get("ours", r["info"].get("ours+trace", {})).get("ours_compresses")
        theirs = r["torch_compresses"]
        if ours is not None:
            same = sorted(ours) == sorted(theirs)
            lines.append(f"Compressed tensors: {len(ours)} by ours, {len(theirs)} by PyTorch's hook "
                         f"(min_compression_rate={args.min_compression_rate:g}): "
                         f"{'the same' if same else 'DIFFERENT: ours ' + str(ours) + ' theirs ' + str(theirs)}.")
        if results.get("agreement_s") and "ours" in med:
            a = results["agreement_s"] * 1e3
            lines.append(f"Step agreement (one 48-byte all-gather per rank before each step, measured beside): "
                         f"{a:.3f} ms, {100 * a / statistics.median(med['ours']):.2f} % of ours' median step.")
        tb = r["info"].get("ours+trace", {}).get("trace_bytes")
        if tb:
            lines.append(f"Trace written per ours+trace run: {tb / 1024:.0f} KiB.")
        losses = {c: round(i["final_loss"], 3) for c, i in r["info"].items()}
        lines.append(f"Loss after the last step of the first repeat (sanity): {losses}.")
        lines.append("")
    return "\n".join(lines), rows


def torch_version():
    import torch
    return torch.__version__


def report(args, results, command, load_before, load_after, wall, teardown, started, out):
    table, _ = summarise(results, args)
    header = [
        f"# Accordion DDP hook vs PyTorch powerSGD_hook: step time ({started})",
        "",
        f"- Machine: {platform.node()}, {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
        f"{platform.platform()}; Python {platform.python_version()}, torch {torch_version()}",
        f"- Load average (1, 5, 15 min) before: {load_before}; after: {load_after}; wall "
        f"{'%.0f s' % wall if wall else 'not recorded'}",
        f"- {args.nproc} Gloo ranks on CPU under torchrun, {args.threads} torch thread(s) each, PowerSGD rank "
        f"{args.rank} in both hooks, warm-up {args.warmup} steps, SGD lr {args.lr} momentum 0.9, seed {args.seed}",
        f"- DDP buckets: {'one for the whole model, every configuration' if args.ddp_buckets == 'one' else 'DDP defaults'}",
        f"- Trace sampling for ours+trace: "
        f"{'every step' if args.sample_iterations < 0 else str(args.sample_iterations) + ' steps'}; "
        f"network probe {'on' if args.network_probe else 'off'} (it runs in attach, outside the timed steps)",
        f"- Teardown: {teardown}",
        "- Verdicts: 'met' when both the median of per-repeat ratios and the ratio of best repeats meet the "
        "target, 'NOT met' when neither does, 'unclear' otherwise",
        "",
        "Command:",
        "",
        "```sh",
        command,
        "```",
        "",
        "",
    ]
    text = "\n".join(header) + table
    print(text)
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            f.write(text + "\n")
        keep = {k: v for k, v in vars(args).items() if k not in ("out", "render", "json", "worker")}
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump({"load_before": load_before, "load_after": load_after, "command": command,
                       "wall_s": wall, "teardown": teardown, "started": started, "args": keep,
                       "results": results}, f)
        print(f"wrote {out}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="cnn,resnet18")
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps-cnn", type=int, default=40)
    p.add_argument("--steps-resnet", type=int, default=10)
    p.add_argument("--batch", type=int, default=32, help="samples per rank per step")
    p.add_argument("--rank", type=int, default=2, help="PowerSGD rank, both hooks")
    p.add_argument("--min-compression-rate", type=float, default=2.0)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--sample-iterations", type=int, default=-1,
                   help="steps the trace samples (-1: every step, the worst case)")
    p.add_argument("--ddp-buckets", choices=["one", "default"], default="one",
                   help="DDP's gradient buckets for every configuration: 'one' bucket (default), or DDP's "
                        "'default' (1 MiB first bucket, then 25 MiB). PyTorch 1.13's powerSGD_hook on Gloo "
                        "issues its P and Q all-reduces from Gloo's completion threads, so with more than one "
                        "bucket the ranks can issue them in different orders and Gloo aborts (seen on "
                        "ResNet-18: 'op.preamble.length <= op.nbytes'); one bucket avoids that race")
    p.add_argument("--network-probe", action="store_true", help="probe the network when the trace opens")
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--trace-dir", default=None)
    p.add_argument("--out", default=None, help="write the results markdown here")
    p.add_argument("--json", default=None, help="(worker) where rank 0 writes its measurements")
    p.add_argument("--worker", action="store_true", help="run as one rank (under torchrun)")
    p.add_argument("--render", default=None, help="only rewrite the report from a JSON an earlier run wrote")
    args = p.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    args.configs = [c for c in args.configs.split(",") if c]
    for m in args.models:
        if m not in MODELS:
            p.error(f"unknown model {m!r}")
    for c in args.configs:
        if c not in CONFIGS:
            p.error(f"unknown configuration {c!r}")
    if args.worker:
        worker(args)
        return

    if args.render:
        with open(args.render) as f:
            saved = json.load(f)
        for k, v in saved.get("args", {}).items():
            setattr(args, k, v)
        report(args, saved["results"], saved["command"], saved["load_before"], saved["load_after"],
               saved.get("wall_s"), saved.get("teardown", "not recorded"), saved.get("started", "?"),
               os.path.splitext(args.render)[0] + ".md")
        return
    command = "PYTHONPATH=" + os.environ.get("PYTHONPATH", "") + " " + " ".join(
        shlex.quote(a) for a in [sys.executable] + sys.argv)
    load_before = loadavg()
    started = datetime.datetime.now()
    with tempfile.TemporaryDirectory(prefix="acc-bench-") as tmp:
        js = os.path.join(tmp, "results.json")
        wargv = [a for a in sys.argv[1:]]
        # drop --out VALUE / --out=VALUE from the worker's arguments
        clean, skip = [], False
        for a in wargv:
            if skip:
                skip = False
                continue
            if a == "--out":
                skip = True
                continue
            if a.startswith("--out="):
                continue
            clean.append(a)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
               "--nproc_per_node", str(args.nproc), "--master_addr", "127.0.0.1",
               "--master_port", str(free_port()), os.path.abspath(__file__), "--worker", "--json", js,
               "--trace-dir", args.trace_dir or tmp] + clean
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        t0 = time.time()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.time() - t0
        if not os.path.exists(js):
            sys.stdout.write(proc.stdout)
            sys.exit(f"hook_vs_powersgd.py: the workers wrote no results (torchrun exit {proc.returncode})")
        with open(js) as f:
            results = json.load(f)
    load_after = loadavg()
    teardown = ("clean (torchrun exit 0)" if proc.returncode == 0 else
                f"torchrun exit {proc.returncode} AFTER the results were written; its output's tail:\n\n```\n"
                + "\n".join(proc.stdout.splitlines()[-15:]) + "\n```")
    report(args, results, command, load_before, load_after, wall, teardown, f"{started:%Y-%m-%d %H:%M}", args.out)
    sys.exit(0)


if __name__ == "__main__":
    main()
