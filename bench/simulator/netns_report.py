#!/usr/bin/env python3
"""The report of bench/simulator/netns_validation.sh: what accordion-sim predicts
against what the namespaces measured. Standard library only.

Reads OUT/manifest.tsv (one row per benchmark or training run: kind, workers,
rate, label, repeat, status, path, wall seconds), OUT/calibration.txt and
OUT/calibrated.json; runs `accordion-sim collective` for every measured
all-reduce (calibrated platform; uncalibrated default star under LV08 and
CM02) and `accordion-sim replay` for every trace (calibrated platform; and
--model recorded); writes OUT/validation.md and prints it.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys

SIM_TIMEOUT_S = 900
# The veth / bridge path's own latency per link in the uncalibrated default
# star: the simulator's default link latency stands in for it.
BASE_LINK_US = 5.0


def rate_gbps(rate):
    r = rate.lower()
    if r.endswith("gbit"):
        return float(r[:-4])
    if r.endswith("mbit"):
        return float(r[:-4]) / 1000
    raise ValueError("bandwidths look like 100mbit or 5gbit, not " + rate)


def rate_name(rate):
    g = rate_gbps(rate)
    return f"{g:g} Gb/s" if g >= 1 else f"{g * 1000:g} Mb/s"


def size_name(b):
    for unit, n in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}iB"
    return f"{b} B"


def ms(s):
    v = s * 1e3
    if v >= 100:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def pct(e):
    return "n/a" if e is None else f"{e * 100:+.1f} %"


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=SIM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {SIM_TIMEOUT_S} s"
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return None, lines[-1] if lines else f"exit {p.returncode}"
    return p.stdout, None


SIMULATED = re.compile(r"^simulated \([^)]*\):\s*([0-9.eE+-]+) s", re.M)


def collective(sim, args):
    out, err = run([sim, "collective", "--op", "allreduce"] + args)
    if out is None:
        return None, err
    m = SIMULATED.search(out)
    return (float(m.group(1)), None) if m else (None, "no 'simulated' line in its output")


def replay(sim, trace, args, dest):
    out, err = run([sim, "replay", trace, "--format", "json", "--out", dest, "--overwrite"] + args)
    if out is None:
        return None, err
    try:
        j = json.load(open(dest))["measured_vs_replayed"]
        return (j["measured_iteration_s"], j["replayed_iteration_s"]), None
    except (OSError, ValueError, KeyError) as e:
        return None, f"no measured_vs_replayed in {dest}: {e}"


def rel(pred, meas):
    return None if pred is None or meas is None or meas <= 0 else (pred - meas) / meas


def status_note(rows):
    bad = [r["status"] for r in rows if r["status"] != "ok"]
    if not bad:
        return f"{len(rows)}"
    return f"{len(rows) - len(bad)}/{len(rows)} ok ({', '.join(sorted(set(bad)))})"


def summary(name, points, runs, cal_rate):
    """points: (rate, error of the median); runs: (rate, error of one run)."""
    lines = []

    def one(label, pts, rns):
        errs = [abs(e) for _, e in pts if e is not None]
        run_errs = [abs(e) for _, e in rns if e is not None]
        if not errs:
            lines.append(f"- {name}, {label}: no points")
            return
        within = sum(e <= 0.10 for e in errs)
        med = statistics.median(errs)
        line = (f"- {name}, {label}: {within}/{len(errs)} points within 10 % "
                f"({'met' if within == len(errs) else 'NOT met'}: every point within 10 %); "
                f"median |error| {med * 100:.1f} % ({'met' if med <= 0.05 else 'NOT met'}: within 5 %); "
                f"largest |error| {max(errs) * 100:.1f} %")
        if run_errs:
            line += f"; single runs within 10 %: {sum(e <= 0.10 for e in run_errs)}/{len(run_errs)}"
        lines.append(line)

    one("all rates", points, runs)
    others_p = [(r, e) for r, e in points if r.lower() != cal_rate.lower()]
    others_r = [(r, e) for r, e in runs if r.lower() != cal_rate.lower()]
    if others_p and len(others_p) != len(points):
        one(f"predicted rates only (not {cal_rate})", others_p, others_r)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--calibrate-on", required=True)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--latency-note", default="")
    ap.add_argument("--workers", default="")
    ap.add_argument("--rates", default="")
    ap.add_argument("--schemes", default="")
    ap.add_argument("--repeats", default="")
    ap.add_argument("--setup", default="")
    ap.add_argument("--host", default="")
    a = ap.parse_args()

    out = a.out
    with open(os.path.join(out, "manifest.tsv"), newline="") as f:
        manifest = list(csv.DictReader(f, delimiter="\t"))
    worlds = [int(w) for w in a.workers.split(",") if w]
    rates = [r for r in a.rates.split(",") if r]
    schemes = [s for s in a.schemes.split(",") if s]
    platform = os.path.join(out, "calibrated.json")
    have_cal = os.path.isfile(platform)
    # netem delays each worker's egress: one way, worker to worker, is one
    # delay over the star's two links.
    link_us = a.latency_ms * 1000 / 2 + BASE_LINK_US
    problems = [] if have_cal else ["no calibrated platform (the calibration failed or did not run): "
                                     "calibrated predictions are n/a"]

    # --- single collectives ---------------------------------------------------
    measured = {}  # (W, rate, bytes) -> [median_s per repeat]
    bench_rows = {}  # (W, rate) -> manifest rows
    for r in manifest:
        if r["kind"] != "bench" or r["label"] != "allreduce":
            continue
        key = (int(r["workers"]), r["rate"])
        bench_rows.setdefault(key, []).append(r)
        if r["status"] != "ok":
            continue
        try:
            samples = json.load(open(r["path"]))["samples"]
        except (OSError, ValueError, KeyError) as e:
            r["status"] = f"unreadable ({e})"
            continue
        for s in samples:
            if s.get("op") == "allreduce":
                measured.setdefault((key[0], key[1], int(s["bytes"])), []).append(s["median_s"])

    coll_rows, coll_points, coll_runs = [], [], []
    default_errs = {"LV08": [], "CM02": []}
    closer = {"LV08": 0, "CM02": 0}
    for W in worlds:
        for rate in rates:
            rows = bench_rows.get((W, rate), [])
            sizes = sorted(b for (w, rt, b) in measured if w == W and rt == rate)
            if not sizes:
                if rows:
                    coll_rows.append(f"| {W} | {rate_name(rate)} | all | {status_note(rows)} | failed | | | | |")
                continue
            g = rate_gbps(rate)
            for b in sizes:
                meds = measured[(W, rate, b)]
                m = statistics.median(meds)
                base = ["--workers", str(W), "--bytes", str(b), "--bandwidth-gbps", f"{g:g}"]
                pred, err = (collective(a.sim, base + ["--platform", platform]) if have_cal
                             else (None, "no calibrated platform"))
                if err and have_cal:
                    problems.append(f"collective W={W} {rate} {b} B, calibrated: {err}")
                dflt = {}
                for model in ("LV08", "CM02"):
                    t, err = collective(a.sim, base + ["--topology", "star", "--latency-us", f"{link_us:g}",
                                                       "--network-model", model])
                    if err:
                        problems.append(f"collective W={W} {rate} {b} B, {model}: {err}")
                    dflt[model] = rel(t, m)
                    if dflt[model] is not None:
                        default_errs[model].append(abs(dflt[model]))
                if dflt["LV08"] is not None and dflt["CM02"] is not None:
                    closer["LV08" if abs(dflt["LV08"]) < abs(dflt["CM02"]) else "CM02"] += 1
                e = rel(pred, m)
                coll_points.append((rate, e))
                coll_runs.extend((rate, rel(pred, x)) for x in meds)
                spread = f" ({ms(min(meds))}–{ms(max(meds))})" if len(meds) > 1 else ""
                cal = " (calibrated here)" if rate.lower() == a.calibrate_on.lower() else ""
                coll_rows.append(
                    f"| {W} | {rate_name(rate)}{cal} | {size_name(b)} | {status_note(rows)} | {ms(m)}{spread} "
                    f"| {ms(pred) if pred is not None else 'n/a'} | {pct(e)} | {pct(dflt['LV08'])} "
                    f"| {pct(dflt['CM02'])} |")

    # --- training steps -------------------------------------------------------
    train_rows = {}
    for r in manifest:
        if r["kind"] == "train":
            train_rows.setdefault((int(r["workers"]), r["rate"], r["label"]), []).append(r)
    # Each rate's steps are predicted from the run recorded at the calibration
    # rate (same workers, scheme and repeat where it exists): its compute and
    # its collectives' host costs, the calibrated network at the other rate.
    source = {}
    for r in manifest:
        if r["kind"] == "train" and r["status"] == "ok" and r["rate"].lower() == a.calibrate_on.lower():
            source.setdefault((int(r["workers"]), r["label"]), {})[r["repeat"]] = r["path"]
    g_cal = rate_gbps(a.calibrate_on)
    step_rows, step_points, step_runs, recorded_errs = [], [], [], []
    for W in worlds:
        for rate in rates:
            for scheme in schemes:
                rows = train_rows.get((W, rate, scheme), [])
                if not rows:
                    continue
                g = rate_gbps(rate)
                meas, repl, errs, rec = [], [], [], []
                for r in rows:
                    if r["status"] != "ok":
                        continue
                    trace = r["path"]
                    stem = trace[:-len(".trace")] if trace.endswith(".trace") else trace
                    # --model recorded: the step model alone, and what the run measured.
                    got_rec, err = replay(a.sim, trace, ["--model", "recorded"], stem + ".recorded.json")
                    if err:
                        problems.append(f"replay --model recorded W={W} {rate} {scheme} r{r['repeat']}: {err}")
                        continue
                    meas.append(got_rec[0])
                    rec.append(rel(got_rec[1], got_rec[0]))
                    if not have_cal:
                        continue
                    sources = source.get((W, scheme), {})
                    src = sources.get(r["repeat"]) or next(iter(sources.values()), None)
                    if src is None:
                        problems.append(f"no run at {a.calibrate_on} to predict W={W} {rate} {scheme} from")
                        continue
                    src_stem = src[:-len(".trace")] if src.endswith(".trace") else src
                    got, err = replay(a.sim, src, ["--platform", platform, "--bandwidth-gbps", f"{g:g}",
                                                   "--recorded-bandwidth-gbps", f"{g_cal:g}"],
                                      f"{src_stem}.to-{rate}.json")
                    if err:
                        problems.append(f"replay W={W} {rate} {scheme} r{r['repeat']}: {err}")
                        continue
                    # The source's replay at this rate against what this rate's run measured.
                    repl.append(got[1])
                    errs.append(rel(got[1], got_rec[0]))
                if not meas:
                    step_rows.append(f"| {W} | {rate_name(rate)} | {scheme} | {status_note(rows)} | failed | | | | |")
                    continue
                m = statistics.median(meas)
                p = statistics.median(repl) if repl else None
                e = rel(p, m)
                step_points.append((rate, e))
                step_runs.extend((rate, x) for x in errs)
                recorded_errs.extend(abs(x) for x in rec)
                spread = f" ({ms(min(meas))}–{ms(max(meas))})" if len(meas) > 1 else ""
                per_run = ", ".join(pct(x) for x in errs) if errs else "n/a"
                rec_note = pct(statistics.median(rec)) + (
                    f" (largest {max(abs(x) for x in rec) * 100:.1f} %)" if len(rec) > 1 else "")
                cal = " (calibrated here)" if rate.lower() == a.calibrate_on.lower() else ""
                step_rows.append(f"| {W} | {rate_name(rate)}{cal} | {scheme} | {status_note(rows)} | {ms(m)}{spread} "
                                 f"| {ms(p) if p is not None else 'n/a'} | {pct(e)} | {per_run} | {rec_note} |")

    # --- the report -----------------------------------------------------------
    md = ["# Simulator fidelity: network namespaces and tc against accordion-sim", ""]
    md += [f"- workers {a.workers}; rates {', '.join(rate_name(r) for r in rates)}; calibrated on "
           f"{rate_name(a.calibrate_on)}; schemes {a.schemes}; {a.repeats} repeat(s) of every run",
           f"- added latency: {a.latency_note}",
           f"- {a.setup}" if a.setup else None,
           f"- host: {a.host}" if a.host else None,
           "- errors are (predicted − measured) / measured; a point is the median over repeats",
           ""]
    md += ["## Calibration", "",
           "`accordion-sim calibrate` over the all-reduce benchmarks (1 KiB to 16 MiB) of every worker count at "
           f"{rate_name(a.calibrate_on)}, `--link-gbps {rate_gbps(a.calibrate_on):g}`:", "", "```"]
    try:
        md += open(os.path.join(out, "calibration.txt")).read().rstrip().splitlines()
    except OSError:
        md.append("(no calibration.txt)")
    md += ["```", ""]

    md += ["## Single all-reduces", "",
           "Measured: `accordion-bench-collectives` median over its timed iterations (the slowest rank's per "
           "iteration), median of the repeats (min–max of the repeats). Predicted: `accordion-sim collective "
           "--platform calibrated.json --bandwidth-gbps R`. Defaults: the uncalibrated star at the rate, "
           f"{link_us:g} µs per link (netem's one-way delay over the route's two links plus {BASE_LINK_US:g} µs), "
           "SimGrid's defaults otherwise, under `--network-model LV08` and `CM02`.", "",
           "| W | rate | size | runs | measured ms | calibrated ms | error | LV08 default error | CM02 default error |",
           "|---|---|---|---|---|---|---|---|---|"]
    md += coll_rows or ["| | | | | no benchmark ran | | | | |"]
    md += [""]

    md += ["## Training steps", "",
           "Measured: the trainer's mean step over its sampled steps (`measured_iteration_s`), median of the "
           "repeats (min–max). Replayed: the same workers and scheme recorded at the calibration rate C, "
           "replayed at this rate: `accordion-sim replay TRACE@C --platform calibrated.json --bandwidth-gbps R "
           "--recorded-bandwidth-gbps C` (compute and each collective's host cost from that trace, the "
           "calibrated network at R), median of the repeats; error of the medians, then each run's own error. "
           "Recorded: `--model recorded` (every collective as the trace measured it: checks the step model).", "",
           "| W | rate | scheme | runs | measured ms/step | replayed ms/step | error | per run | recorded-model error |",
           "|---|---|---|---|---|---|---|---|---|"]
    md += step_rows or ["| | | | | no training ran | | | | |"]
    md += [""]

    md += ["## Summary", "", "Targets: every point within 10 %, median |error| within 5 %.", ""]
    md += summary("single all-reduces (calibrated)", coll_points, coll_runs, a.calibrate_on)
    md += summary("training steps (calibrated replay)", step_points, step_runs, a.calibrate_on)
    if recorded_errs:
        md.append(f"- training steps, `--model recorded`: median |error| {statistics.median(recorded_errs) * 100:.1f} %, "
                  f"largest {max(recorded_errs) * 100:.1f} % over {len(recorded_errs)} runs")
    if default_errs["LV08"] and default_errs["CM02"]:
        means = {k: statistics.mean(v) for k, v in default_errs.items()}
        best = min(means, key=means.get)
        md.append(f"- uncalibrated default star: mean |error| LV08 {means['LV08'] * 100:.1f} %, CM02 "
                  f"{means['CM02'] * 100:.1f} % (medians {statistics.median(default_errs['LV08']) * 100:.1f} % and "
                  f"{statistics.median(default_errs['CM02']) * 100:.1f} %); closer on average: **{best}**; closer "
                  f"point by point: LV08 {closer['LV08']}, CM02 {closer['CM02']}")
    failed = [r for r in manifest if r["status"] != "ok"]
    md.append(f"- runs: {len(manifest)} in all, {len(failed)} not ok" +
              (": " + "; ".join(f"{r['kind']} W={r['workers']} {r['rate']} {r['label']} r{r['repeat']}: "
                                f"{r['status']}" for r in failed) if failed else ""))
    if problems:
        md += ["", "## Problems", ""] + [f"- {p}" for p in problems]
    md = [line for line in md if line is not None]
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "validation.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
