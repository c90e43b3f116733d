#!/usr/bin/python3
"""accordion-train against PyTorch's DistributedDataParallel, side by side.

Runs, on the same Fashion-MNIST job (model, global batch, workers, threads per
worker, epochs), each configuration --repeat times, alternating between ours
and theirs so background load hits both alike, keeps each one's best
samples/s in training steps and prints the ratios:

  ours dense            vs DDP dense                        (target >= 1.25x)
  ours PowerSGD rank 2  vs DDP dense                        (target >= 1.5x)
  ours PowerSGD rank 2  vs DDP + powerSGD_hook rank 2       (where it runs)
  Accordion bookkeeping as a share of step time             (target < 1 %)

  /usr/bin/python3 bench/trainer/compare_with_ddp.py --build build/release
  sudo /usr/bin/python3 bench/trainer/compare_with_ddp.py --link 1gbit   # over a shaped link

By default the workers talk over loopback. With --link RATE (root, iproute2)
each of the two workers runs in its own network namespace, the two joined by
a veth pair shaped with tc tbf to RATE each way - a network whose bandwidth
matters, as between the paper's machines; both sides use it alike.
Needs python3-torch (scripts/install-deps.sh --bench). Not a test: it prints
what it measured and never fails on a target.
"""
import argparse
import json
import os
import re
import atexit
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAMESPACES = ["accddp-w0", "accddp-w1"]  # --link: one per worker
LINK_PORT = 29511


def address(rank):
    return "10.232.0.%d" % (rank + 1)


def remove_link():
    for ns in NAMESPACES:
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def make_link(rate):
    """Two namespaces joined by a veth pair, each end shaped to `rate`."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        sys.exit("compare_with_ddp.py: error: --link needs root and iproute2 (ip, tc)")
    remove_link()
    atexit.register(remove_link)
    sh = lambda *cmd: subprocess.run(cmd, check=True)
    for ns in NAMESPACES:
        sh("ip", "netns", "add", ns)
    sh("ip", "link", "add", "accddp-v0", "type", "veth", "peer", "name", "accddp-v1")
    for rank, ns in enumerate(NAMESPACES):
        dev = "accddp-v%d" % rank
        sh("ip", "link", "set", dev, "netns", ns)
        sh("ip", "-n", ns, "addr", "add", address(rank) + "/24", "dev", dev)
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
           "burst", "256kb", "latency", "400ms")


def run_on_link(commands):
    """Runs command[r] as worker r in namespace r; returns rank 0's result."""
    procs = [subprocess.Popen(["ip", "netns", "exec", NAMESPACES[r]] + cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r, cmd in enumerate(commands)]
    outs = [p.communicate(timeout=1800) for p in procs]
    return procs[0].returncode, outs[0][0], outs[0][1] + outs[1][1]


def run_ours(args, extra):
    cmd = [os.path.join(args.build, "bin", "accordion-train"), "--threads", str(args.threads),
           "--model", args.model, "--batch-size", str(args.batch_size), "--epochs", str(args.epochs),
           "--lr", "0.1", "--limit-samples", str(args.limit_samples), "--data-dir", args.data_dir] + extra
    if args.link:
        # torchrun-style workers, one per namespace.
        code, out, err = run_on_link([
            ["env", "RANK=%d" % r, "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1",
             "MASTER_ADDR=" + address(0), "MASTER_PORT=%d" % LINK_PORT] + cmd + ["--bind-addr", address(r)]
            for r in range(2)])
    else:
        p = subprocess.run(cmd + ["--nproc", str(args.nproc)], capture_output=True, text=True)
        code, out, err = p.returncode, p.stdout, p.stderr
    m = re.search(r"([\d.]+) samples/s in training steps, Accordion bookkeeping ([\d.]+)% of step time", out)
    if code != 0 or not m:
        return {"error": (err.strip().splitlines() or ["exit %d" % code])[-1]}
    return {"samples_per_s": float(m.group(1)), "bookkeeping_pct": float(m.group(2))}


def run_theirs(args, powersgd_rank=0):
    cmd = [sys.executable, os.path.join(HERE, "ddp_baseline.py"), "--nproc", str(args.nproc),
           "--threads", str(args.threads), "--model", args.model, "--batch-size", str(args.batch_size),
           "--epochs", str(args.epochs), "--limit-samples", str(args.limit_samples), "--data-dir", args.data_dir]
    if powersgd_rank:
        cmd += ["--powersgd-rank", str(powersgd_rank)]
    if args.link:
        code, out, err = run_on_link([
            ["env", "OMP_NUM_THREADS=%d" % args.threads, "GLOO_SOCKET_IFNAME=accddp-v%d" % r] + cmd +
            ["--rank", str(r), "--master-addr", address(0), "--master-port", str(LINK_PORT)] for r in range(2)])
    else:
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        code, out, err = p.returncode, p.stdout, p.stderr
    lines = [l for l in out.splitlines() if l.startswith("{")]
    terminate = [l.strip() for l in err.splitlines() if "terminate" in l or "what()" in l]
    if not lines:
        tail = [l for l in (err + out).strip().splitlines() if l.strip()]
        why = "exit %d" % code if code >= 0 else "killed by signal %d" % -code
        return {"error": why + ": " + (tail[-1] if tail else "no output")}
    result = json.loads(lines[-1])
    if args.link and code != 0:
        result["aborted"] = "rank 0 exited with %s" % ("code %d" % code if code > 0 else "signal %d" % -code)
    if "aborted" in result and terminate:
        result["aborted"] += " [" + terminate[0] + "]"
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build/release", help="build directory holding bin/accordion-train")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="compute threads per worker, both sides")
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--batch-size", type=int, default=128, help="global")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--limit-samples", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--link", default="", help="e.g. 1gbit: two workers in namespaces over a shaped veth link")
    args = p.parse_args()
    if args.link:
        if args.nproc != 2:
            sys.exit("compare_with_ddp.py: error: --link runs exactly 2 workers")
        make_link(args.link)

    configs = {
        "ours dense": lambda: run_ours(args, ["--scheme", "dense"]),
        "ours PowerSGD rank 2": lambda: run_ours(args, ["--scheme", "powersgd", "--level", "2"]),
        "ours Accordion PowerSGD 2/1": lambda: run_ours(args, ["--scheme", "powersgd", "--policy", "accordion"]),
        "DDP dense": lambda: run_theirs(args),
        "DDP powerSGD_hook rank 2": lambda: run_theirs(args, powersgd_rank=2),
    }
    results = {name: [] for name in configs}
    for _ in range(args.repeat):
        for name, run in configs.items():
            results[name].append(run())

    print(f"model {args.model}, global batch {args.batch_size}, {args.nproc} workers x {args.threads} "
          f"thread(s), {args.epochs} epochs, best of {args.repeat}, samples/s in training steps, "
          + (f"link {args.link} (veth, tc tbf)" if args.link else "loopback"))
    best = {}
    for name, runs in results.items():
        ok = [r for r in runs if "error" not in r]
        if ok:
            best[name] = max(ok, key=lambda r: r["samples_per_s"])
            spread = [r["samples_per_s"] for r in ok]
            extra = ""
            if "bookkeeping_pct" in best[name]:
                extra = "  Accordion bookkeeping %.2f%% of step time (median %.2f%%)" % (
                    best[name]["bookkeeping_pct"], statistics.median(r["bookkeeping_pct"] for r in ok))
            print("  %-30s %9.1f  (runs: %s)%s" % (name, best[name]["samples_per_s"],
                                                   ", ".join("%.0f" % s for s in spread), extra))
            aborts = [r["aborted"] for r in ok if "aborted" in r]
            if aborts:
                print("  %-30s aborted after training in %d of %d runs: %s" % ("", len(aborts), len(ok), aborts[0]))
        else:
            print("  %-30s    failed: %s" % (name, runs[-1]["error"]))

    def ratio(a, b, target=None):
        if a in best and b in best:
            r = best[a]["samples_per_s"] / best[b]["samples_per_s"]
            goal = "" if target is None else ("  (target >= %.2fx: %s)" % (target, "met" if r >= target else "NOT met"))
            print("  %-52s %.2fx%s" % (a + " / " + b, r, goal))
        else:
            print("  %-52s n/a (%s did not run)" % (a + " / " + b, a if a not in best else b))

    print("ratios:")
    ratio("ours dense", "DDP dense", 1.25)
    ratio("ours PowerSGD rank 2", "DDP dense", 1.5)
    ratio("ours PowerSGD rank 2", "DDP powerSGD_hook rank 2")
    if "ours Accordion PowerSGD 2/1" in best:
        pct = best["ours Accordion PowerSGD 2/1"]["bookkeeping_pct"]
        print("  %-52s %.2f%%  (target < 1%%: %s)" % ("Accordion bookkeeping / step time", pct,
                                                       "met" if pct < 1 else "NOT met"))


if __name__ == "__main__":
    main()
