#!/usr/bin/env python3
"""accordion-train against PyTorch's DistributedDataParallel, side by side,
over one or several links.

Runs, on the same Fashion-MNIST job (model, global batch, workers, threads per
worker, epochs), each configuration --repeat times, alternating between ours
and theirs so background load hits both alike, keeps each one's best
samples/s in training steps and prints one table: a row per link, the
samples/s of every configuration and each one's ratio against DDP dense.

Configurations (--configs, comma-separated; default all but the variants):
  dense       ours, --scheme dense
  psgd1       ours, --scheme powersgd --level 1
  psgd2       ours, --scheme powersgd --level 2
  topk        ours, --scheme topk --level F   (F = --topk-fraction, 0.01)
  accordion   ours, --scheme powersgd --policy accordion --low 2 --high 1
  ddp         PyTorch DDP, dense (25 MB buckets, its default)
  ddp-psgd2   PyTorch DDP with powerSGD_hook, rank 2
  ddp-fp16    PyTorch DDP with fp16_compress_hook (dense, float16 on the wire; not in the default)
  NAME@MB     any of ours with --bucket-mb MB, e.g. dense@0.1
Targets (marked in the table, never a failure): ours dense >= 1.2x DDP
dense on every link; ours PowerSGD rank 2 >= 1.5x DDP dense at 1 Gbit/s and
below.

  .venv/bin/python bench/trainer/compare_with_ddp.py --build build/release          # loopback
  sudo .venv/bin/python bench/trainer/compare_with_ddp.py --links loopback,100mbit,1gbit,10gbit \\
      --epochs 1 --limit-samples 20000 --repeat 3 --out bench-out

"loopback": the workers talk over 127.0.0.1. A rate (tc syntax: 100mbit,
1gbit, 10gbit; needs root and iproute2): each of the two workers runs in its
own network namespace, the two joined by a veth pair whose ends are shaped
with tc tbf to RATE each way - a network whose bandwidth matters; both sides
use it alike. The namespaces are made once, the shaping is replaced per link,
and both are removed on exit, also on Ctrl-C, SIGTERM or an error. Each
shaped link is probed first with one TCP stream (the "probe" column). --link
RATE is kept as a one-link --links.

--out DIR writes the table as DIR/compare_with_ddp.md and every run as
DIR/compare_with_ddp.json. Needs a torch: the project's .venv
(scripts/install-deps.sh), or Debian's python3-torch. Not a test: a failed run is a cell marked failed, and targets are
reported, never enforced.
"""
import argparse
import atexit
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NAMESPACES = ["accddp-w0", "accddp-w1"]  # shaped links: one per worker
VETH = ["accddp-v0", "accddp-v1"]
LINK_PORT = 29511  # + a counter, so that no run meets the last one's sockets in TIME_WAIT
DENSE_TARGET = 1.2
POWERSGD_TARGET = 1.5
POWERSGD_TARGET_MAX_BITS = 1e9  # the PowerSGD target applies at 1 Gbit/s and below

_children = []  # process groups of the runs in flight, killed on the way out
_port = [0]


class Interrupted(Exception):
    pass


def _on_signal(signum, frame):
    raise Interrupted("signal %d" % signum)


def kill_children():
    for p in list(_children):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    _children.clear()


def address(rank):
    return "10.232.0.%d" % (rank + 1)


def next_port():
    _port[0] += 1
    return LINK_PORT + _port[0] % 200


def rate_bits(rate):
    """tc's rate syntax to bits/s (None where it is not one)."""
    m = re.fullmatch(r"([\d.]+)\s*([kmgt]?)(bit|bps)?", rate.strip().lower())
    if not m:
        return None
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
    return value * 8 if m.group(3) == "bps" else value


# ---------------------------------------------------------------- the link

class Link:
    """The two namespaces and their veth pair; set(rate) reshapes both ends."""

    def __init__(self, burst):
        self.burst = burst
        self.made = False

    def remove(self):
        kill_children()
        for ns in NAMESPACES:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        for dev in VETH:  # only there if a setup failed half-way
            subprocess.run(["ip", "link", "del", dev], stderr=subprocess.DEVNULL)
        self.made = False

    def make(self):
        if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
            raise RuntimeError("a shaped link needs root and iproute2 (ip, tc)")
        self.remove()
        atexit.register(self.remove)
        try:
            sh("ip", "link", "add", VETH[0], "type", "veth", "peer", "name", VETH[1])
            for rank, ns in enumerate(NAMESPACES):
                sh("ip", "netns", "add", ns)
                sh("ip", "link", "set", VETH[rank], "netns", ns)
                sh("ip", "-n", ns, "addr", "add", address(rank) + "/24", "dev", VETH[rank])
                sh("ip", "-n", ns, "link", "set", VETH[rank], "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.remove()
            raise
        self.made = True

    def set(self, rate):
        if not self.made:
            self.make()
        for rank, ns in enumerate(NAMESPACES):
            sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", VETH[rank], "root", "tbf",
               "rate", rate, "burst", self.burst, "latency", "400ms")


def sh(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), (p.stderr.strip() or "exit %d" % p.returncode)))


PROBE = r"""
import socket, sys, time
n = int(sys.argv[2])
if sys.argv[1] == "recv":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[3], int(sys.argv[4]))); s.listen(1); c, _ = s.accept()
    got = 0
    while got < n:
        b = c.recv(1 << 20)
        if not b: break
        got += len(b)
    c.sendall(b"k"); c.close()
else:
    for _ in range(100):
        try:
            c = socket.create_connection((sys.argv[3], int(sys.argv[4]))); break
        except OSError:
            time.sleep(0.05)
    buf = b"\0" * (1 << 20); start = time.perf_counter(); left = n
    while left > 0:
        c.sendall(buf[:min(left, len(buf))]); left -= min(left, len(buf))
    c.recv(1); print(n * 8 / (time.perf_counter() - start))
"""


def probe(rate):
    """One TCP stream's throughput from worker 0's namespace to worker 1's, bits/s."""
    bits = rate_bits(rate) or 1e9
    n = int(min(64 << 20, max(4 << 20, bits / 8 * 0.5)))  # about half a second's worth
    port = str(next_port())
    recv = spawn(["ip", "netns", "exec", NAMESPACES[1], sys.executable, "-c", PROBE, "recv", str(n),
                  address(1), port])
    send = spawn(["ip", "netns", "exec", NAMESPACES[0], sys.executable, "-c", PROBE, "send", str(n),
                  address(1), port])
    try:
        out, _ = send.communicate(timeout=60)
        recv.wait(timeout=10)
        return float(out.strip())
    except (subprocess.TimeoutExpired, ValueError):
        return None
    finally:
        kill_children()


# ---------------------------------------------------------------- the runs

def spawn(cmd, env=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    _children.append(p)
    return p


def run_all(commands, timeout, envs=None):
    """Runs the commands together; returns [(code, stdout, stderr)], code None on a timeout."""
    procs = [spawn(c, env=(envs[i] if envs else None)) for i, c in enumerate(commands)]
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            try:
                out, err = p.communicate(timeout=max(1, deadline - time.monotonic()))
                outs.append((p.returncode, out, err))
            except subprocess.TimeoutExpired:
                kill_children()
                out, err = p.communicate()
                outs.append((None, out, err))
        return outs
    finally:
        kill_children()


def why(code, out, err, timeout):
    if code is None:
        return "timed out after %d s" % timeout
    tail = [l.strip() for l in (err + out).splitlines() if l.strip()]
    what = "exit %d" % code if code >= 0 else "killed by signal %d" % -code
    return what + (": " + tail[-1] if tail else "")


def run_ours(args, link, extra):
    cmd = [os.path.join(args.build, "bin", "accordion-train"), "--threads", str(args.threads),
           "--model", args.model, "--batch-size", str(args.batch_size), "--epochs", str(args.epochs),
           "--lr", "0.1", "--limit-samples", str(args.limit_samples), "--data-dir", args.data_dir] + extra
    if link != "loopback":
        port = next_port()  # torchrun-style workers, one per namespace
        outs = run_all([["ip", "netns", "exec", NAMESPACES[r], "env", "RANK=%d" % r, "WORLD_SIZE=2",
                         "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1", "MASTER_ADDR=" + address(0),
                         "MASTER_PORT=%d" % port] + cmd + ["--bind-addr", address(r)] for r in range(2)],
                       args.run_timeout)
        code, out = outs[0][0], outs[0][1]
        err = outs[0][2] + outs[1][2]
        if code == 0 and outs[1][0] != 0:
            code = outs[1][0]
    else:
        code, out, err = run_all([cmd + ["--nproc", str(args.nproc)]], args.run_timeout)[0]
    m = re.search(r"([\d.]+) samples/s in training steps, Accordion bookkeeping ([\d.]+)% of step time", out)
    if code != 0 or not m:
        return {"error": why(code if code != 0 else 1, out if not m else "", err, args.run_timeout)}
    return {"samples_per_s": float(m.group(1)), "bookkeeping_pct": float(m.group(2))}


def run_theirs(args, link, powersgd_rank=0, fp16=False):
    cmd = [sys.executable, os.path.join(HERE, "ddp_baseline.py"), "--nproc", str(args.nproc),
           "--threads", str(args.threads), "--model", args.model, "--batch-size", str(args.batch_size),
           "--epochs", str(args.epochs), "--limit-samples", str(args.limit_samples), "--data-dir", args.data_dir]
    if powersgd_rank:
        cmd += ["--powersgd-rank", str(powersgd_rank)]
    if fp16:
        cmd += ["--fp16"]
    if link != "loopback":
        port = next_port()
        outs = run_all([["ip", "netns", "exec", NAMESPACES[r], "env", "OMP_NUM_THREADS=%d" % args.threads,
                         "GLOO_SOCKET_IFNAME=" + VETH[r]] + cmd +
                        ["--rank", str(r), "--master-addr", address(0), "--master-port", str(port)]
                        for r in range(2)], args.run_timeout)
        code, out, err = outs[0][0], outs[0][1], outs[0][2] + outs[1][2]
    else:
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        code, out, err = run_all([cmd], args.run_timeout, envs=[env])[0]
    lines = [l for l in out.splitlines() if l.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    if "samples_per_s" not in result:
        return {"error": why(code if code != 0 else 1, out, err, args.run_timeout)}
    # powerSGD_hook runs often abort at teardown, after rank 0 reported: a
    # measurement, and we say it crashed (docs/bench-trainer.md).
    if link != "loopback" and code != 0:
        result["aborted"] = "rank 0 " + ("timed out" if code is None else
                                         "exited with code %d" % code if code > 0 else
                                         "exited with signal %d" % -code)
    terminate = [l.strip() for l in err.splitlines() if "terminate" in l or "what()" in l]
    if "aborted" in result and terminate:
        result["aborted"] += " [" + terminate[0] + "]"
    return result


OURS = {
    "dense": ("ours dense", ["--scheme", "dense"]),
    "psgd1": ("ours PowerSGD r1", ["--scheme", "powersgd", "--level", "1"]),
    "psgd2": ("ours PowerSGD r2", ["--scheme", "powersgd", "--level", "2"]),
    "topk": ("ours TopK {pct}", ["--scheme", "topk", "--level", "{fraction}"]),
    "accordion": ("ours Accordion r2/1", ["--scheme", "powersgd", "--policy", "accordion", "--low", "2",
                                          "--high", "1"]),
}
THEIRS = {"ddp": ("DDP dense", 0, False), "ddp-psgd2": ("DDP PowerSGD hook r2", 2, False),
          "ddp-fp16": ("DDP dense fp16 hook", 0, True)}
DEFAULT_CONFIGS = "dense,ddp,psgd2,ddp-psgd2,psgd1,topk,accordion"  # ours and theirs alternate


def make_configs(args):
    """[(key, label, run(link))] in the order they run each repeat."""
    configs = []
    for key in [k.strip() for k in args.configs.split(",") if k.strip()]:
        base, _, bucket = key.partition("@")
        if base in OURS:
            label, extra = OURS[base]
            label = label.format(pct="%g%%" % (100 * args.topk_fraction))
            extra = [e.format(fraction=args.topk_fraction) for e in extra]
            bucket = bucket or args.bucket_mb
            if bucket:
                try:
                    float(bucket)
                except ValueError:
                    sys.exit("compare_with_ddp.py: error: '%s': bucket size %s is not a number" % (key, bucket))
                extra = extra + ["--bucket-mb", bucket]
                if "@" in key:
                    label += " %s MiB buckets" % bucket
            configs.append((key, label, lambda link, extra=extra: run_ours(args, link, extra)))
        elif key in THEIRS:
            label, rank, fp16 = THEIRS[key]
            configs.append((key, label, lambda link, rank=rank, fp16=fp16: run_theirs(args, link, rank, fp16)))
        else:
            sys.exit("compare_with_ddp.py: error: unknown configuration '%s' (see --help)" % key)
    if len({k for k, _, _ in configs}) != len(configs):
        sys.exit("compare_with_ddp.py: error: a configuration is listed twice")
    return configs


# ---------------------------------------------------------------- the table

def target_of(key, link):
    """The ratio against DDP dense this configuration should reach on this link, or None."""
    base = key.partition("@")[0]
    if base == "dense":
        return DENSE_TARGET
    if base == "psgd2" and link != "loopback":
        bits = rate_bits(link)
        if bits is not None and bits <= POWERSGD_TARGET_MAX_BITS:
            return POWERSGD_TARGET
    return None


def summarise(configs, links, results, link_errors, probes):
    """Per link: best samples/s, spread, ratios against DDP dense, targets."""
    rows = []
    for link in links:
        row = {"link": link, "probe_bits_per_s": probes.get(link), "configs": {}}
        if link in link_errors:
            row["failed"] = link_errors[link]
        for key, label, _ in configs:
            runs = results[link][key]
            ok = [r for r in runs if "samples_per_s" in r]
            cell = {"label": label, "runs": runs}
            if ok:
                best = max(ok, key=lambda r: r["samples_per_s"])
                cell["best"] = best["samples_per_s"]
                cell["median"] = statistics.median(r["samples_per_s"] for r in ok)
                if "bookkeeping_pct" in best:
                    cell["bookkeeping_pct"] = best["bookkeeping_pct"]
                aborted = [r["aborted"] for r in ok if "aborted" in r]
                if aborted:
                    cell["aborted"] = "%d of %d runs aborted after training: %s" % (len(aborted), len(ok),
                                                                                    aborted[0])
            elif runs:
                cell["failed"] = runs[-1].get("error", "failed")
            row["configs"][key] = cell
        base = row["configs"].get("ddp", {}).get("best")
        for key, _, _ in configs:
            cell = row["configs"][key]
            if key == "ddp":
                continue
            if base and "best" in cell:
                cell["vs_ddp_dense"] = cell["best"] / base
            target = target_of(key, link)
            if target is not None:
                cell["target"] = target
                if "vs_ddp_dense" in cell:
                    cell["target_met"] = cell["vs_ddp_dense"] >= target
        rows.append(row)
    return rows


def fmt_rate(bits):
    if bits is None:
        return "-"
    return "%.2f Gb/s" % (bits / 1e9) if bits >= 1e9 else "%.0f Mb/s" % (bits / 1e6)


def table(configs, rows, markdown):
    """Rows = links; samples/s of every configuration, then ratios against DDP dense."""
    tick, cross = ("✓", "✗")
    head = ["link", "probe"] + [label + " samples/s" for _, label, _ in configs] + \
           [label + " / DDP dense" for key, label, _ in configs if key != "ddp"]
    body = []
    for row in rows:
        line = [row["link"] + (" (failed)" if "failed" in row else ""), fmt_rate(row["probe_bits_per_s"])]
        for key, _, _ in configs:
            cell = row["configs"][key]
            if "best" in cell:
                line.append("{:,.0f}".format(cell["best"]).replace(",", " ") + ("†" if "aborted" in cell else ""))
            else:
                line.append("failed" if "failed" in cell else "-")
        for key, _, _ in configs:
            if key == "ddp":
                continue
            cell = row["configs"][key]
            text = "%.2f×" % cell["vs_ddp_dense"] if "vs_ddp_dense" in cell else "n/a"
            if "target" in cell:
                mark = "" if "target_met" not in cell else " " + (tick if cell["target_met"] else cross)
                text += "%s (≥ %.1f×)" % (mark, cell["target"])
            line.append(text)
        body.append(line)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(l) + " |" for l in body]
        return "\n".join(out)
    widths = [max(len(h), *(len(l[i]) for l in body)) if body else len(h) for i, h in enumerate(head)]
    # Too wide for one screen line: the console gets one block per part.
    n = 2 + len(configs)
    parts = [[0, 1] + list(range(2, n)), [0] + list(range(n, len(head)))]
    out = []
    for cols in parts:
        out.append("  ".join(head[i].rjust(widths[i]) if i else head[i].ljust(widths[i]) for i in cols))
        for l in body:
            out.append("  ".join(l[i].rjust(widths[i]) if i else l[i].ljust(widths[i]) for i in cols))
        out.append("")
    return "\n".join(out)


def notes(configs, rows):
    out = []
    for row in rows:
        if "failed" in row:
            out.append("%s: link failed: %s" % (row["link"], row["failed"]))
        for key, label, _ in configs:
            cell = row["configs"][key]
            runs = [r["samples_per_s"] for r in cell["runs"] if "samples_per_s" in r]
            if "failed" in cell and "failed" not in row:
                out.append("%s, %s: failed in every run: %s" % (row["link"], label, cell["failed"]))
            elif len(runs) < len(cell["runs"]):
                errs = [r["error"] for r in cell["runs"] if "error" in r]
                out.append("%s, %s: %d of %d runs failed: %s" % (row["link"], label, len(errs),
                                                               len(cell["runs"]), errs[0]))
            if "aborted" in cell:
                out.append("%s, %s: † %s" % (row["link"], label, cell["aborted"]))
    return out


def spreads(configs, rows):
    out = []
    for row in rows:
        parts = []
        for key, label, _ in configs:
            cell = row["configs"][key]
            runs = [r["samples_per_s"] for r in cell["runs"] if "samples_per_s" in r]
            if runs:
                s = "%s %s" % (key, "/".join("%.0f" % v for v in runs))
                if "bookkeeping_pct" in cell and key.startswith("accordion"):
                    s += " (bookkeeping %.2f%%)" % cell["bookkeeping_pct"]
                parts.append(s)
        out.append("%s: %s" % (row["link"], "; ".join(parts)))
    return out


# ---------------------------------------------------------------- main

def binary_id(build):
    """accordion-train's size and modification time (other work may relink it during a sweep)."""
    st = os.stat(os.path.join(build, "bin", "accordion-train"))
    return "%d bytes, modified %s" % (st.st_size, datetime.datetime.fromtimestamp(st.st_mtime).isoformat(" ", "seconds"))


def main():
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
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
    p.add_argument("--links", default="", help="comma-separated: loopback and/or tc rates (100mbit,1gbit,10gbit)")
    p.add_argument("--link", default="", help="one shaped link, e.g. 1gbit (same as --links 1gbit)")
    p.add_argument("--burst", default="256kb", help="tc tbf burst of each shaped end")
    p.add_argument("--configs", default=DEFAULT_CONFIGS, help="comma-separated, in run order (see above)")
    p.add_argument("--topk-fraction", type=float, default=0.01, help="static TopK's fraction of entries sent")
    p.add_argument("--bucket-mb", default="", help="--bucket-mb for all of ours without @MB (default: the trainer's, 25)")
    p.add_argument("--run-timeout", type=int, default=1200, help="seconds after which one run counts as failed")
    p.add_argument("--out", default="", help="directory for compare_with_ddp.md and compare_with_ddp.json")
    args = p.parse_args()
    if args.link and args.links:
        sys.exit("compare_with_ddp.py: error: give --link or --links, not both")
    links = [l.strip() for l in (args.links or args.link or "loopback").split(",") if l.strip()]
    if len(set(links)) != len(links):
        sys.exit("compare_with_ddp.py: error: a link is listed twice")
    shaped = [l for l in links if l != "loopback"]
    if shaped and args.nproc != 2:
        sys.exit("compare_with_ddp.py: error: a shaped link runs exactly 2 workers")
    if not os.access(os.path.join(args.build, "bin", "accordion-train"), os.X_OK):
        sys.exit("compare_with_ddp.py: error: %s/bin/accordion-train not found" % args.build)
    configs = make_configs(args)
    binary = binary_id(args.build)
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)
    link = Link(args.burst)
    results = {l: {k: [] for k, _, _ in configs} for l in links}
    link_errors, probes, loads = {}, {}, [("start", os.getloadavg())]
    started = time.time()
    interrupted = None
    try:
        for repeat in range(args.repeat):
            for l in links:
                if l in link_errors:
                    continue
                if l != "loopback":
                    try:
                        link.set(l)
                        if l not in probes:
                            probes[l] = probe(l)
                    except RuntimeError as e:
                        link_errors[l] = str(e)
                        print("link %s failed: %s" % (l, e), file=sys.stderr, flush=True)
                        continue
                for key, label, run in configs:
                    t = time.time()
                    r = run(l)
                    r["wall_s"] = round(time.time() - t, 1)
                    results[l][key].append(r)
                    print("[%d/%d] %-8s %-32s %s  (%.0f s, load %.2f)" % (
                        repeat + 1, args.repeat, l, label,
                        "%.1f samples/s" % r["samples_per_s"] if "samples_per_s" in r else "FAILED: " + r["error"],
                        r["wall_s"], os.getloadavg()[0]), file=sys.stderr, flush=True)
            loads.append(("after repeat %d" % (repeat + 1), os.getloadavg()))
    except (KeyboardInterrupt, Interrupted) as e:
        interrupted = str(e) or "Ctrl-C"
        print("interrupted (%s): the table holds the runs done so far" % interrupted, file=sys.stderr)
    finally:
        link.remove()
    elapsed = time.time() - started
    if binary_id(args.build) != binary:
        print("warning: %s/bin/accordion-train changed during the sweep (was %s, now %s)" % (
            args.build, binary, binary_id(args.build)), file=sys.stderr)
        binary += "; changed during the sweep to " + binary_id(args.build)

    rows = summarise(configs, links, results, link_errors, probes)
    desc = ("model %s, global batch %d, %d workers x %d thread(s), %d epoch(s)%s, best of %d alternating runs, "
            "samples/s in training steps; shaped links: veth between two namespaces, tc tbf each way, burst %s; "
            "TopK fraction %g%s" % (args.model, args.batch_size, args.nproc, args.threads, args.epochs,
                                  ", %d samples" % args.limit_samples if args.limit_samples else "",
                                  args.repeat, args.burst, args.topk_fraction,
                                  "; ours with --bucket-mb %s unless @MB says otherwise" % args.bucket_mb
                                  if args.bucket_mb else ""))
    load_text = ", ".join("%s %.2f/%.2f/%.2f" % ((w,) + tuple(v)) for w, v in loads)
    print(desc)
    print(table(configs, rows, markdown=False))
    for n in notes(configs, rows):
        print("  " + n)
    print("runs (samples/s, in order):")
    for s in spreads(configs, rows):
        print("  " + s)
    print("targets: ours dense >= %.1fx DDP dense everywhere; ours PowerSGD r2 >= %.1fx DDP dense at 1 Gbit/s "
          "and below. † = the run aborted after reporting." % (DENSE_TARGET, POWERSGD_TARGET))
    print("load average (1/5/15 min): " + load_text)
    print("sweep took %.0f s%s" % (elapsed, " (interrupted: %s)" % interrupted if interrupted else ""))

    if args.out:
        command = " ".join([sys.executable] + sys.argv)
        date = datetime.date.today().isoformat()
        with open(os.path.join(args.out, "compare_with_ddp.md"), "w") as f:
            f.write("# accordion-train vs PyTorch DDP (%s)\n\n%s.\n\n" % (date, desc))
            f.write(table(configs, rows, markdown=True) + "\n\n")
            f.write("Targets: ours dense ≥ %.1f× DDP dense on every link; ours PowerSGD r2 ≥ %.1f× DDP dense at "
                    "1 Gbit/s and below (✓ met, ✗ not). Probe: one TCP stream's throughput over the shaped link. "
                    "† the run aborted after it reported (PyTorch's powerSGD_hook at teardown).\n\n" %
                    (DENSE_TARGET, POWERSGD_TARGET))
            for n in notes(configs, rows):
                f.write("- %s\n" % n)
            f.write("\nRuns (samples/s, in order):\n\n")
            for s in spreads(configs, rows):
                f.write("- %s\n" % s)
            f.write("\nLoad average (1/5/15 min): %s. Sweep: %.0f s%s.\n\n```sh\n%s\n```\n" % (
                load_text, elapsed, " (interrupted: %s)" % interrupted if interrupted else "", command))
        with open(os.path.join(args.out, "compare_with_ddp.json"), "w") as f:
            json.dump({"date": date, "command": command, "description": desc, "host": socket.gethostname(),
                       "cpus": os.cpu_count(), "accordion_train": binary, "load_average": loads, "elapsed_s": round(elapsed, 1),
                       "interrupted": interrupted, "burst": args.burst, "topk_fraction": args.topk_fraction,
                       "targets": {"dense_vs_ddp_dense": DENSE_TARGET,
                                   "powersgd_r2_vs_ddp_dense_at_1gbit_and_below": POWERSGD_TARGET},
                       "configs": [{"key": k, "label": label} for k, label, _ in configs],
                       "links": rows}, f, indent=1)
        print("wrote %s/compare_with_ddp.md and .json" % args.out)
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
