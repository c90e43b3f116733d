#!/usr/bin/env python3
"""The report of bench/simulator/netns_validation.sh: what accordion-sim predicts
against what the namespaces measured. Standard library only.

Reads OUT/manifest.tsv (one row per benchmark or training run: kind, workers,
rate, label, repeat, status, path, wall seconds), OUT/calibration.txt and
OUT/calibrated.json; runs `accordion-sim collective` for every measured
all-reduce (calibrated platform; uncalibrated default star under LV08 and
CM02) and `accordion-sim replay` for every trace (calibrated platform; and
--timing recorded); writes OUT/validation.md and prints it.

Beside the calibrated route, the route a user takes (issue 25): each trace
replayed with no flags at all (identity: anchored on its own network probe,
the median step's error), and each trace recorded at one rate replayed at
every other rate with --bandwidth-gbps alone (the default route), against
what that rate's runs measured.

The break-even (issue 48), where powersgd and one of dense, bf16 or fp16 ran:
per rate, PowerSGD's and the whole gradients' measured and predicted median
steps (the default route from the recorded rate; bf16 and fp16 also projected
from the dense trace with --scheme), and the rate where PowerSGD stops beating
them, interpolated on a log scale where the sign of the difference changes.
"""
import argparse
import csv
import datetime
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


def replay_json(sim, trace, args, dest):
    """The replay's measured_vs_replayed and notes, or None and why not."""
    out, err = run([sim, "replay", trace, "--format", "json", "--out", dest, "--overwrite"] + args)
    if out is None:
        return None, err
    try:
        j = json.load(open(dest))
        return (j["measured_vs_replayed"], j.get("notes", [])), None
    except (OSError, ValueError, KeyError) as e:
        return None, f"no measured_vs_replayed in {dest}: {e}"


def replay(sim, trace, args, dest):
    got, err = replay_json(sim, trace, args, dest)
    if got is None:
        return None, err
    j = got[0]
    return (j["measured_iteration_s"], j["replayed_iteration_s"]), None


ANCHORED = re.compile(r"anchored on the recorded network \((.*?)\): host cost")


def anchor_of(notes):
    """The probe's fit a replay anchored on ("probe of 14 sizes on 2 ranks: ..."), or None."""
    for n in notes:
        m = ANCHORED.search(n)
        if m:
            return m.group(1)
    return None


def sim_note(sim):
    """Which accordion-sim the report ran: its version line and the binary's build time (the replay's
    defaults change with the code, so a report re-run later on the same runs may differ)."""
    out, _ = run([sim, "--version"])
    version = (out or "").strip().splitlines()[0] if out and out.strip() else "version unknown"
    try:
        built = datetime.datetime.fromtimestamp(os.path.getmtime(sim), datetime.timezone.utc)
        when = built.strftime("%Y-%m-%d %H:%M UTC")
    except OSError:
        when = "unknown"
    return f"`{sim}` ({version}; binary of {when}), report written " + \
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


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
        errs = [abs(p[1]) for p in pts if p[1] is not None]
        run_errs = [abs(p[1]) for p in rns if p[1] is not None]
        if not errs:
            lines.append(f"- {name}, {label}: no points")
            return
        failed = len(pts) - len(errs)
        within = sum(e <= 0.10 for e in errs)
        med = statistics.median(errs)
        line = (f"- {name}, {label}: {within}/{len(errs)} points within 10 % "
                f"({'met' if within == len(errs) else 'NOT met'}: every point within 10 %); "
                f"median |error| {med * 100:.1f} % ({'met' if med <= 0.05 else 'NOT met'}: within 5 %); "
                f"largest |error| {max(errs) * 100:.1f} %")
        if run_errs:
            line += f"; single runs within 10 %: {sum(e <= 0.10 for e in run_errs)}/{len(run_errs)}"
        if failed:
            line += f"; {failed} point(s) FAILED (no prediction)"
        lines.append(line)

    one("all rates", points, runs)
    others_p = [p for p in points if p[0].lower() != cal_rate.lower()]
    others_r = [p for p in runs if p[0].lower() != cal_rate.lower()]
    if others_p and len(others_p) != len(points):
        one(f"predicted rates only (not {cal_rate})", others_p, others_r)
        # By worker count, where the points carry it (training steps).
        worlds = sorted({p[2] for p in others_p if len(p) > 2})
        if len(worlds) > 1:
            for w in worlds:
                one(f"predicted rates, {w} workers", [p for p in others_p if p[2] == w],
                    [p for p in others_r if p[2] == w])
    return lines


def default_route_summary(points, runs, worlds):
    """points: (W, rate, from, scheme, error of the medians); runs: (W, rate, from, scheme, one run's error).
    Targets: every point with 2 and 4 workers within 10 %, their median |error| within 5 %."""
    lines = []

    def stats(pts):
        errs = [abs(p[4]) for p in pts if p[4] is not None]
        if not errs:
            return None
        return (sum(e <= 0.10 for e in errs), len(errs), statistics.median(errs), max(errs), len(pts) - len(errs))

    for w in worlds:
        st = stats([p for p in points if p[0] == w])
        if st is None:
            continue
        within, n, med, mx, failed = st
        rn = [abs(p[4]) for p in runs if p[0] == w and p[4] is not None]
        lines.append(f"- training steps (default route), {w} workers: {within}/{n} points within 10 %, "
                     f"median |error| {med * 100:.1f} %, largest {mx * 100:.1f} %"
                     + (f"; single runs within 10 %: {sum(e <= 0.10 for e in rn)}/{len(rn)}" if rn else "")
                     + (f"; {failed} point(s) FAILED" if failed else ""))
    small = [p for p in points if p[0] in (2, 4)]
    st = stats(small)
    if st is not None:
        within, n, med, mx, failed = st
        ok_all = within == n and failed == 0
        lines.append(f"- **training steps (default route), 2 and 4 workers: {within}/{n} points within 10 % "
                     f"({'met' if ok_all else 'NOT met'}: every point within 10 %); median |error| {med * 100:.1f} % "
                     f"({'met' if med <= 0.05 else 'NOT met'}: within 5 %); largest {mx * 100:.1f} %**"
                     + (f"; {failed} point(s) FAILED" if failed else ""))
    st = stats(points)
    if st is not None:
        within, n, med, mx, failed = st
        lines.append(f"- training steps (default route), all worker counts: {within}/{n} points within 10 %, "
                     f"median |error| {med * 100:.1f} %, largest {mx * 100:.1f} %")
    return lines


def median_step_summary(points):
    """points: (W, rate, from, scheme, median-step error, spread of the runs at R)."""
    small = [p for p in points if p[0] in (2, 4) and p[4] is not None]
    if not small:
        return []
    errs = [abs(p[4]) for p in small]
    within = sum(e <= 0.10 for e in errs)
    noisy = [p for p in small if p[5] is not None and p[5] > 0.10]
    beyond = [p for p in small if abs(p[4]) > 0.10 and (p[5] is None or abs(p[4]) > p[5])]
    lines = [f"- **training steps (default route, median step), 2 and 4 workers: {within}/{len(errs)} points within "
             f"10 % ({'met' if within == len(errs) else 'NOT met'}); median |error| "
             f"{statistics.median(errs) * 100:.1f} % ({'met' if statistics.median(errs) <= 0.05 else 'NOT met'}: "
             f"within 5 %); largest {max(errs) * 100:.1f} %**",
             f"- the runs' own spread: at {len(noisy)} of these {len(small)} points the repeats at R differ by more "
             f"than 10 % from each other (median spread "
             f"{statistics.median([p[5] for p in small if p[5] is not None] or [0]) * 100:.1f} %); "
             f"{len(beyond)} point(s) miss by more than both 10 % and their runs' spread"]
    all_pts = [p for p in points if p[4] is not None]
    if len(all_pts) != len(small):
        ae = [abs(p[4]) for p in all_pts]
        lines.append(f"- training steps (default route, median step), all worker counts: "
                     f"{sum(e <= 0.10 for e in ae)}/{len(ae)} points within 10 %, median |error| "
                     f"{statistics.median(ae) * 100:.1f} %, largest {max(ae) * 100:.1f} %")
    return lines


# --- break-even: compress or send whole gradients ---------------------------------
WHOLE = ("dense", "bf16", "fp16")  # whole gradients (fp32, or cast to 16 bits)
COMPRESSED = "powersgd"


def crossings(points):
    """points: (Gb/s, t_compressed - t_whole) in rising rate, None where either is missing. The rates where
    the sign changes, interpolated on a log scale between the two rates around it: (Gb/s, 'up' where
    compression stops winning as the rate rises, 'down' where it starts to)."""
    pts = [(g, d) for g, d in points if d is not None]
    out = []
    for (g1, d1), (g2, d2) in zip(pts, pts[1:]):
        if d1 == 0:
            continue  # counted as its own point below
        if d1 * d2 < 0 or d2 == 0:
            f = -d1 / (d2 - d1)
            out.append((g1 ** (1 - f) * g2 ** f, "up" if d1 < 0 else "down"))
    if pts and pts[0][1] == 0:
        out.insert(0, (pts[0][0], "at"))
    return out


def gbps_name(g):
    return f"{g:.3g} Gb/s" if g >= 1 else f"{g * 1000:.3g} Mb/s"


def crossing_text(points, rates_g):
    """One crossing's words; (text, the single crossing's Gb/s or None)."""
    xs = crossings(points)
    valid = [d for _, d in points if d is not None]
    lo, hi = gbps_name(min(rates_g)), gbps_name(max(rates_g))
    if not valid:
        return "no points", None
    if not xs:
        if all(d < 0 for d in valid):
            return f"none between {lo} and {hi}: PowerSGD faster at every rate", None
        if all(d > 0 for d in valid):
            return f"none between {lo} and {hi}: PowerSGD slower at every rate", None
        return "none", None
    words = []
    for g, kind in xs:
        words.append(gbps_name(g) + ("" if kind == "up" else " (PowerSGD starts to win above it)"
                                     if kind == "down" else " (equal there)"))
    if len(xs) == 1 and xs[0][1] in ("up", "at"):
        return words[0], xs[0][0]
    return f"{len(xs)} sign changes: " + ", ".join(words) + " (no single break-even)", None


def breakeven(a, manifest, worlds, rates, schemes, platform, have_cal, problems):
    """The report's break-even section: markdown lines, and summary lines."""
    wholes = [s for s in WHOLE if s in schemes]
    if COMPRESSED not in schemes or not wholes:
        return [], []
    traces = {}  # (W, scheme, rate) -> {repeat: path}
    for r in manifest:
        if r["kind"] == "train" and r["status"] == "ok":
            traces.setdefault((int(r["workers"]), r["label"], r["rate"].lower()), {})[r["repeat"]] = r["path"]
    cal = a.calibrate_on.lower()
    g_cal = rate_gbps(a.calibrate_on)
    rates = sorted(rates, key=rate_gbps)
    rates_g = [rate_gbps(r) for r in rates]

    def stem(p):
        return p[:-len(".trace")] if p.endswith(".trace") else p

    def med(xs):
        return statistics.median(xs) if xs else None

    def diff(c, w):
        return None if c is None or w is None else c - w

    def band(xs):
        """The repeats' range: min–max, or the middle half (quartiles) from 4 repeats on."""
        if not xs:
            return None, None
        if len(xs) >= 4:
            q = statistics.quantiles(xs, n=4)
            return q[0], q[2]
        return min(xs), max(xs)

    # Measured: each run's median step and mean step (its --timing recorded replay).
    meas = {}  # (W, scheme, rate) -> ([median steps], [mean steps])
    for (W, scheme, rate), runs in traces.items():
        if scheme not in wholes + [COMPRESSED]:
            continue
        mm, mn = [], []
        for rep, path in sorted(runs.items()):
            got, err = replay_json(a.sim, path, ["--timing", "recorded"], stem(path) + ".recorded.json")
            if err:
                problems.append(f"break-even: replay --timing recorded W={W} {rate} {scheme} r{rep}: {err}")
                continue
            mm.append(got[0]["median_measured_iteration_s"])
            mn.append(got[0]["measured_iteration_s"])
        meas[(W, scheme, rate)] = (mm, mn)

    # Predicted from the runs at the recorded rate C, every repeat's trace: the default route
    # (--bandwidth-gbps R alone, at C too), the calibrated route (as the training-step table),
    # and the whole gradients cast to 16 bits projected from the dense trace (--scheme bf16|fp16).
    cache = {}

    def predict(W, scheme, rate, extra, tag, from_scheme=None):
        """(median of the replays' median steps, median of their mean steps) over the recorded repeats. A
        replay under another scheme than the trace's has no measured_vs_replayed: its schedule's mean step."""
        key = (W, scheme, rate, tag, from_scheme)
        if key not in cache:
            cache[key] = predict_once(W, scheme, rate, extra, tag, from_scheme)
        return cache[key]

    def predict_once(W, scheme, rate, extra, tag, from_scheme):
        srcs = traces.get((W, from_scheme or scheme, cal), {})
        medians, means = [], []
        for rep, src in sorted(srcs.items()):
            dest = f"{stem(src)}.breakeven-{tag}-{rate}.json"
            args = extra + ["--bandwidth-gbps", f"{rate_gbps(rate):g}"]
            if from_scheme:
                _, err = run([a.sim, "replay", src, "--format", "json", "--out", dest, "--overwrite"] + args)
                try:
                    if err is None:
                        means.append(json.load(open(dest))["schedules"]["static-high"]["total"]["iteration_s"])
                except (OSError, ValueError, KeyError) as e:
                    err = f"no schedules in {dest}: {e}"
            else:
                got, err = replay_json(a.sim, src, args, dest)
                if err is None:
                    medians.append(got[0]["median_replayed_iteration_s"])
                    means.append(got[0]["replayed_iteration_s"])
            if err:
                problems.append(f"break-even: replay ({tag}) W={W} {a.calibrate_on} -> {rate} "
                                f"{from_scheme or scheme} r{rep}: {err}")
        return med(medians), med(means)

    md = ["## Break-even: compress or send whole gradients", "",
          f"PowerSGD (rank 2) against the whole gradients ({', '.join(wholes)}): the rate below which "
          "compression wins. Measured: each run's median sampled step (`median_measured_iteration_s`), median of "
          "the repeats (min–max of the repeats). Predicted: the runs recorded at "
          f"{rate_name(a.calibrate_on)} (every repeat), `accordion-sim replay TRACE@{a.calibrate_on} "
          "--bandwidth-gbps R` (the default route, anchored on that trace's probe; at the recorded rate too), "
          "`median_replayed_iteration_s`, median over the recorded repeats. Projected: what the advisor does "
          "without a 16-bit run, the dense trace at the recorded rate replayed with `--scheme bf16` (or fp16) "
          "`--bandwidth-gbps R`; such a replay has no measured step to anchor a median on, so it gives the "
          "schedule's mean step, compared with the runs' mean step (`measured_iteration_s`) and, for its crossing, "
          "with PowerSGD's mean step by the default route. Calibrated route (where the calibration ran): "
          "`--platform calibrated.json --recorded-bandwidth-gbps C --bandwidth-gbps R`, mean steps. "
          "Δ = t(PowerSGD) − t(whole): negative, PowerSGD faster. The crossing: where Δ changes sign, "
          "interpolated on a log scale of the rate between the two rates around it (none is named where Δ keeps "
          "its sign over the measured rates). \"overlap\": the two schemes' repeats overlap (min–max; from 4 "
          "repeats on, their middle halves, first to third quartile), so which is faster there is within the "
          "runs' noise.", ""]
    summ = []
    for W in worlds:
        for whole in wholes:
            proj = whole in ("bf16", "fp16") and "dense" in schemes
            rows, pm, pp, pj, pmn, pc_p = [], [], [], [], [], []
            agree = agree_n = agree_clear = clear_n = 0
            verdicts = {"PowerSGD": [], whole: [], "overlap": []}  # measured: rates by which wins clearly
            for rate, g in zip(rates, rates_g):
                mc, mw = meas.get((W, COMPRESSED, rate.lower()), ([], [])), meas.get((W, whole, rate.lower()), ([], []))
                tc_m, tw_m = med(mc[0]), med(mw[0])
                tc_p, tc_pmean = predict(W, COMPRESSED, rate, [], "default")
                tw_p, _ = predict(W, whole, rate, [], "default")
                # The projection has a mean step only: against the runs' mean steps.
                tw_j = predict(W, whole, rate, ["--scheme", whole], "from-dense", from_scheme="dense")[1] \
                    if proj else None
                tc_mn, tw_mn = med(mc[1]), med(mw[1])
                pmn.append((g, diff(tc_mn, tw_mn)))
                if have_cal:
                    calx = ["--platform", platform, "--recorded-bandwidth-gbps", f"{g_cal:g}"]
                    # The calibrated route against the runs' mean step, as the training-step table.
                    tc_c = predict(W, COMPRESSED, rate, calx, "calibrated")[1]
                    tw_c = predict(W, whole, rate, calx, "calibrated")[1]
                    pc_p.append((g, diff(tc_c, tw_c)))
                dm, dp, dj = diff(tc_m, tw_m), diff(tc_p, tw_p), diff(tc_pmean, tw_j)
                pm.append((g, dm))
                pp.append((g, dp))
                pj.append((g, dj))
                # The repeats' ranges overlap: the measured winner is within the runs' noise.
                (c_lo, c_hi), (w_lo, w_hi) = band(mc[0]), band(mw[0])
                overlap = bool(mc[0] and mw[0]) and c_lo <= w_hi and w_lo <= c_hi
                if dm is not None:
                    verdicts["overlap" if overlap else ("PowerSGD" if dm < 0 else whole)].append(rate_name(rate))
                if dm is not None and dp is not None:
                    agree_n += 1
                    agree += (dm < 0) == (dp < 0)
                    if not overlap:
                        clear_n += 1
                        agree_clear += (dm < 0) == (dp < 0)

                def cell(xs):
                    if not xs:
                        return "n/a"
                    return ms(med(xs)) + (f" ({ms(min(xs))}–{ms(max(xs))})" if len(xs) > 1 else "")

                def win(d):
                    return "n/a" if d is None else ("PowerSGD" if d < 0 else whole)

                here = " (recorded)" if rate.lower() == cal else ""
                row = (f"| {W} | {rate_name(rate)}{here} | {cell(mc[0])} | {cell(mw[0])} "
                       f"| {win(dm)}{', overlap' if overlap and dm is not None else ''} "
                       f"| {ms(tc_p) if tc_p is not None else 'n/a'} | {ms(tw_p) if tw_p is not None else 'n/a'} "
                       f"| {win(dp)} | {pct(rel(tc_p, tc_m))} | {pct(rel(tw_p, tw_m))} |")
                if proj:
                    row += (f" {ms(tw_j) if tw_j is not None else 'n/a'} | {pct(rel(tw_j, tw_mn))} | {win(dj)} |")
                rows.append(row)
            head = (f"| W | rate | PowerSGD measured ms | {whole} measured ms | faster (measured) "
                    f"| PowerSGD predicted ms | {whole} predicted ms | faster (predicted) | PowerSGD error "
                    f"| {whole} error |")
            sep = "|---|---|---|---|---|---|---|---|---|---|"
            if proj:
                head += f" {whole} projected from dense, mean ms | its error (mean step) | faster (projected) |"
                sep += "---|---|---|"
            md += [f"### PowerSGD against {whole}, {W} workers", "", head, sep] + rows + [""]
            mt, mg = crossing_text(pm, rates_g)
            pt, pg = crossing_text(pp, rates_g)
            lines = [f"- measured crossing: **{mt}**; beyond the repeats' overlap, PowerSGD faster at: "
                     f"{', '.join(verdicts['PowerSGD']) or 'none'}; {whole} faster at: "
                     f"{', '.join(verdicts[whole]) or 'none'}; the repeats overlap at: "
                     f"{', '.join(verdicts['overlap']) or 'none'}",
                     f"- predicted crossing (default route from {rate_name(a.calibrate_on)}): **{pt}**"
                     + (f"; {pct(rel(pg, mg))} of the measured rate" if pg and mg else "")]
            cmt, cmg = crossing_text(pmn, rates_g)
            lines.append(f"- on mean steps (`measured_iteration_s`), measured crossing: {cmt}")
            if proj:
                jt, jg = crossing_text(pj, rates_g)
                lines.append(f"- predicted crossing, {whole} projected from the dense trace (mean steps, PowerSGD "
                             f"by the default route): **{jt}**"
                             + (f"; {pct(rel(jg, cmg))} of the measured mean-step crossing" if jg and cmg else ""))
            if have_cal:
                cpt, cpg = crossing_text(pc_p, rates_g)
                lines.append(f"- predicted crossing, calibrated route (mean steps, as the training-step table): {cpt}"
                             + (f"; {pct(rel(cpg, cmg))} of the measured mean-step crossing" if cpg and cmg else ""))
            lines.append(f"- the faster of the two, predicted against measured: the same at {agree} of {agree_n} "
                         f"rates; {agree_clear} of {clear_n} where the repeats do not overlap")
            md += lines + [""]
            summ.append(f"- break-even, PowerSGD against {whole}, {W} workers: measured {mt}; predicted {pt}"
                        + (f" ({pct(rel(pg, mg))})" if pg and mg else ""))
    # The runs' own spread: (max - min) / median of the repeats' median steps, every scheme and rate here.
    spreads = [(max(v[0]) - min(v[0])) / statistics.median(v[0]) for k, v in meas.items() if len(v[0]) > 1]
    if spreads:
        md.append(f"The repeats' spread in median step ((max − min) / median, {len(spreads)} scheme-rate points of "
                  f"these schemes): median {statistics.median(spreads) * 100:.1f} %, "
                  f"largest {max(spreads) * 100:.1f} %.")
        iqr = [(q[2] - q[0]) / statistics.median(v[0]) for v in meas.values() if len(v[0]) >= 4
               for q in [statistics.quantiles(v[0], n=4)]]
        if iqr:
            md[-1] += (f" Interquartile range / median (from 4 repeats on): median "
                       f"{statistics.median(iqr) * 100:.1f} %, largest {max(iqr) * 100:.1f} %.")
        md.append("")
    return md, summ



def worker_count_section(a, traces, worlds, rates, schemes, med_by_setting, problems):
    """The worker-count what-if: the fewest workers' runs replayed at each larger worker count,
    at the same rate, against what those runs measured."""
    if len(worlds) < 2:
        return []
    base = min(worlds)
    rows, points = [], []
    for W in sorted(w for w in worlds if w != base):
        for rate in rates:
            for scheme in schemes:
                srcs = traces.get((base, scheme, rate.lower()), {})
                measured = med_by_setting.get((W, scheme, rate.lower()), [])
                if not srcs or not measured:
                    continue
                preds, lows, highs = [], [], []
                for rep, src in sorted(srcs.items()):
                    stem = src[:-len(".trace")] if src.endswith(".trace") else src
                    dest = f"{stem}.workers-{W}.json"
                    out, err = run([a.sim, "replay", src, "--format", "json", "--out", dest, "--overwrite",
                                    "--workers", str(W)])
                    if out is None:
                        problems.append(f"replay (worker count) W={base} -> {W} {rate} {scheme} r{rep}: {err}")
                        continue
                    try:
                        total = json.load(open(dest))["schedules"]["static-high"]["total"]
                    except (OSError, ValueError, KeyError) as e:
                        problems.append(f"replay (worker count) W={base} -> {W} {rate} {scheme}: {e}")
                        continue
                    preds.append(total["iteration_s"])
                    lows.append(total["iteration_low_s"])
                    highs.append(total["iteration_high_s"])
                if not preds:
                    continue
                m, p = statistics.median(measured), statistics.median(preds)
                lo, hi = statistics.median(lows), statistics.median(highs)
                covered = lo <= m <= hi
                points.append((W, rate, scheme, rel(p, m), covered))
                rows.append(f"| {base} → {W} | {rate_name(rate)} | {scheme} | {len(measured)} | {ms(m)} | {ms(p)} "
                            f"| {pct(rel(p, m))} | {ms(lo)}–{ms(hi)} | {'yes' if covered else 'no'} |")
    if not rows:
        return []
    md = ["## Worker count by the default route", "",
          f"What a user asks next: recorded on {base} workers, how fast on more? `accordion-sim replay "
          f"TRACE@{base} --workers W --format json` (the same rate; the trace's per-worker batch), its projected "
          "mean step (static-high's `iteration_s`) and band (`iteration_low_s` to `iteration_high_s`), against "
          "the median sampled step the W-worker runs measured (median of the repeats). Every rank of every run "
          "shares this host's cores: where the step is the hosts' rather than the network's (PowerSGD; any "
          "scheme at the faster rate) more ranks than cores slow each other, which a cluster of one host per "
          "worker would not, and the projection does not model.", "",
          "| workers | rate | scheme | runs | measured median ms | projected ms | error | band ms | measured in band |",
          "|---|---|---|---|---|---|---|---|---|"]
    md += rows
    md += ["", f"**Worker count: {sum(p[4] for p in points)} of {len(points)} points inside the band; "
           f"median |error| {statistics.median(abs(p[3]) for p in points) * 100:.1f} %.**", ""]
    return md

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
    model_points = []  # (W, |LV08 error|, |CM02 error|) where both ran
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
                    model_points.append((W, abs(dflt["LV08"]), abs(dflt["CM02"])))
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
    # The default route: every ok trace by (W, scheme, rate), repeat -> path.
    traces = {}
    for r in manifest:
        if r["kind"] == "train" and r["status"] == "ok":
            traces.setdefault((int(r["workers"]), r["label"], r["rate"].lower()), {})[r["repeat"]] = r["path"]
    g_cal = rate_gbps(a.calibrate_on)
    step_rows, step_points, step_runs, recorded_errs = [], [], [], []
    # Identity: each trace replayed with no flags, its median-step error.
    identity_runs = []  # (W, rate, scheme, repeat, error or None, why)
    anchors = {}  # (W, rate) -> [the probe's fit per trace]
    # Default route: (W, rate, scheme, from rate) -> measured, replayed, per-run errors.
    dflt_rows, dflt_points, dflt_runs = [], [], []
    dflt_coverage = []
    # Each setting's measured median steps, for the worker-count what-if.
    med_by_setting = {}
    dflt_median_points = []  # (W, rate, from, scheme, median-step error, spread of the runs at R)
    same_source = []  # (W, default-route error, calibrated-route error), both from the calibration rate
    for W in worlds:
        for rate in rates:
            for scheme in schemes:
                rows = train_rows.get((W, rate, scheme), [])
                if not rows:
                    continue
                g = rate_gbps(rate)
                meas, repl, errs, rec, ident, med_meas = [], [], [], [], [], []
                # meas, repl, errs (mean steps); median measured, median replayed (median steps)
                dflt = {r0: ([], [], [], [], [], [], []) for r0 in rates if r0.lower() != rate.lower()}
                for r in rows:
                    if r["status"] != "ok":
                        continue
                    trace = r["path"]
                    stem = trace[:-len(".trace")] if trace.endswith(".trace") else trace
                    # --timing recorded: the step model alone, and what the run measured.
                    got_rec_j, err = replay_json(a.sim, trace, ["--timing", "recorded"], stem + ".recorded.json")
                    if err:
                        problems.append(f"replay --timing recorded W={W} {rate} {scheme} r{r['repeat']}: {err}")
                        continue
                    got_rec = (got_rec_j[0]["measured_iteration_s"], got_rec_j[0]["replayed_iteration_s"])
                    med_meas.append(got_rec_j[0]["median_measured_iteration_s"])
                    med_by_setting.setdefault((W, scheme, rate.lower()), []).append(med_meas[-1])
                    meas.append(got_rec[0])
                    rec.append(rel(got_rec[1], got_rec[0]))
                    # Identity: no flags at all, anchored on the trace's own probe.
                    got_id, err = replay_json(a.sim, trace, [], stem + ".identity.json")
                    if err:
                        problems.append(f"replay (identity) W={W} {rate} {scheme} r{r['repeat']}: {err}")
                        identity_runs.append((W, rate, scheme, r["repeat"], None, "failed"))
                    else:
                        fit = anchor_of(got_id[1])
                        e_id = got_id[0]["median_relative_error"]
                        if fit is None:
                            problems.append(f"replay (identity) W={W} {rate} {scheme} r{r['repeat']}: not anchored "
                                            "(no 'anchored on the recorded network' note: no network probe?)")
                            identity_runs.append((W, rate, scheme, r["repeat"], e_id, "not anchored"))
                        else:
                            anchors.setdefault((W, rate), []).append(fit)
                            identity_runs.append((W, rate, scheme, r["repeat"], e_id, ""))
                        ident.append((e_id, fit is not None))
                    # The default route: the same workers and scheme recorded at each
                    # other rate R0, replayed here with --bandwidth-gbps R alone.
                    for r0, (d_meas, d_repl, d_errs, dm_meas, dm_repl, dm_low, dm_high) in dflt.items():
                        srcs = traces.get((W, scheme, r0.lower()), {})
                        src = srcs.get(r["repeat"]) or next(iter(srcs.values()), None)
                        if src is None:
                            problems.append(f"no run at {r0} to replay W={W} {rate} {scheme} from by the default route")
                            continue
                        src_stem = src[:-len(".trace")] if src.endswith(".trace") else src
                        got, err = replay_json(a.sim, src, ["--bandwidth-gbps", f"{g:g}"],
                                               f"{src_stem}.default-to-{rate}.json")
                        if err:
                            problems.append(f"replay (default route) W={W} {r0} -> {rate} {scheme} "
                                            f"r{r['repeat']}: {err}")
                            continue
                        if anchor_of(got[1]) is None:
                            problems.append(f"replay (default route) W={W} {r0} -> {rate} {scheme} r{r['repeat']}: "
                                            "not anchored (no network probe?)")
                        d_meas.append(got_rec[0])
                        d_repl.append(got[0]["replayed_iteration_s"])
                        d_errs.append(rel(got[0]["replayed_iteration_s"], got_rec[0]))
                        dm_meas.append(med_meas[-1])
                        dm_repl.append(got[0]["median_replayed_iteration_s"])
                        # The prediction band (90 % of the recorded steps, carried through the model).
                        dm_low.append(got[0].get("replayed_low_s"))
                        dm_high.append(got[0].get("replayed_high_s"))
                    if not have_cal:
                        continue
                    sources = source.get((W, scheme), {})
                    src = sources.get(r["repeat"]) or next(iter(sources.values()), None)
                    if src is None:
                        problems.append(f"no run at {a.calibrate_on} to predict W={W} {rate} {scheme} from")
                        continue
                    src_stem = src[:-len(".trace")] if src.endswith(".trace") else src
                    # --recorded-bandwidth-gbps: the host costs are split on the calibrated platform
                    # at C (it wins over the trace's probe).
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
                    step_rows.append(f"| {W} | {rate_name(rate)} | {scheme} | {status_note(rows)} | failed "
                                     "| | | | | failed | failed |")
                    for r0 in dflt:
                        dflt_rows.append(f"| {W} | {rate_name(rate)} | {rate_name(r0)} | {scheme} "
                                         f"| {status_note(rows)} | failed | | | | |")
                        dflt_points.append((W, rate, r0, scheme, None))
                    continue
                m = statistics.median(meas)
                p = statistics.median(repl) if repl else None
                e = rel(p, m)
                step_points.append((rate, e, W))
                step_runs.extend((rate, x, W) for x in errs)
                recorded_errs.extend(abs(x) for x in rec)
                spread = f" ({ms(min(meas))}–{ms(max(meas))})" if len(meas) > 1 else ""
                per_run = ", ".join(pct(x) for x in errs) if errs else "n/a"
                rec_note = pct(statistics.median(rec)) + (
                    f" (largest {max(abs(x) for x in rec) * 100:.1f} %)" if len(rec) > 1 else "")
                # Identity: each run's own error, in repeat order; not anchored runs marked so.
                id_note = ", ".join(pct(x) + ("" if ok else " (NOT anchored)") for x, ok in ident) if ident else "failed"
                d_notes = []
                # The runs' own spread: how far two recordings of one setting differ
                # in median step, the floor under any prediction's error.
                noise = (max(med_meas) - min(med_meas)) / statistics.median(med_meas) if len(med_meas) > 1 else None
                for r0, (d_meas, d_repl, d_errs, dm_meas, dm_repl, dm_low, dm_high) in dflt.items():
                    if not d_repl:
                        d_notes.append(f"from {rate_name(r0)}: failed")
                        dflt_rows.append(f"| {W} | {rate_name(rate)} | {rate_name(r0)} | {scheme} "
                                         f"| {status_note(rows)} | {ms(m)} | failed | | | | | |")
                        dflt_points.append((W, rate, r0, scheme, None))
                        dflt_median_points.append((W, rate, r0, scheme, None, noise))
                        continue
                    # The band of the replays (median of their ends) and whether the measured median lies in it.
                    band, covered = "n/a", None
                    if all(x is not None for x in dm_low + dm_high) and dm_low:
                        lo, hi = statistics.median(dm_low), statistics.median(dm_high)
                        covered = lo <= statistics.median(dm_meas) <= hi
                        band = f"{ms(lo)}–{ms(hi)} ({pct(rel(lo, statistics.median(dm_repl)))} / " \
                               f"{pct(rel(hi, statistics.median(dm_repl)))})"
                    dflt_coverage.append((W, rate, r0, scheme, covered))
                    # Measured: the median of the runs the replays are compared with.
                    dm = statistics.median(d_meas)
                    dp = statistics.median(d_repl)
                    de = rel(dp, dm)
                    dflt_points.append((W, rate, r0, scheme, de))
                    dme = rel(statistics.median(dm_repl), statistics.median(dm_meas))
                    dflt_median_points.append((W, rate, r0, scheme, dme, noise))
                    dflt_runs.extend((W, rate, r0, scheme, x) for x in d_errs)
                    d_notes.append(f"from {rate_name(r0)}: {pct(de)}")
                    # The calibrated route's error where it starts from the same rate.
                    cal_e = pct(e) if r0.lower() == a.calibrate_on.lower() else ""
                    if r0.lower() == a.calibrate_on.lower() and e is not None and de is not None:
                        same_source.append((W, de, e))
                    dflt_rows.append(f"| {W} | {rate_name(rate)} | {rate_name(r0)} | {scheme} | {status_note(rows)} "
                                     f"| {ms(dm)} | {ms(dp)} | {pct(de)} | {', '.join(pct(x) for x in d_errs)} "
                                     f"| {ms(statistics.median(dm_meas))} | {ms(statistics.median(dm_repl))} "
                                     f"| {pct(dme)} | {band} | {'yes' if covered else 'no' if covered is not None else 'n/a'} "
                                     f"| {pct(noise) if noise is not None else 'n/a'} | {cal_e} |")
                cal = " (calibrated here)" if rate.lower() == a.calibrate_on.lower() else ""
                step_rows.append(f"| {W} | {rate_name(rate)}{cal} | {scheme} | {status_note(rows)} | {ms(m)}{spread} "
                                 f"| {ms(p) if p is not None else 'n/a'} | {pct(e)} | {per_run} | {rec_note} "
                                 f"| {id_note} | {'; '.join(d_notes) or 'n/a'} |")

    # --- the report -----------------------------------------------------------
    md = ["# Simulator fidelity: network namespaces and tc against accordion-sim", ""]
    md += [f"- workers {a.workers}; rates {', '.join(rate_name(r) for r in rates)}; calibrated on "
           f"{rate_name(a.calibrate_on)}; schemes {a.schemes}; {a.repeats} repeat(s) of every run",
           f"- added latency: {a.latency_note}",
           f"- {a.setup}" if a.setup else None,
           f"- host: {a.host}" if a.host else None,
           f"- predictions and replays: {sim_note(a.sim)}",
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
           "--recorded-bandwidth-gbps C` (compute and each collective's host cost from that trace, "
           "split on the calibrated network at C; the calibrated network at R), median of the repeats; error of the medians, then each run's own error. "
           "Recorded: `--timing recorded` (every collective as the trace measured it: checks the step model). "
           "Identity: `accordion-sim replay TRACE --format json`, no flags at all (anchored on the trace's own "
           "network probe), each run's `median_relative_error` (median replayed step against median measured "
           "step), in repeat order; a run the replay did not anchor is marked NOT anchored. Default route: the "
           "same workers and scheme recorded at each other rate R0, `accordion-sim replay TRACE@R0 "
           "--bandwidth-gbps R` (no platform, no calibration flags), error of the medians (detail below).", "",
           "| W | rate | scheme | runs | measured ms/step | replayed ms/step | error | per run | recorded-model error "
           "| identity error (median step) | default-route error |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    md += step_rows or ["| | | | | no training ran | | | | | | |"]
    md += [""]

    md += ["## Training steps by the default route", "",
           "What a user does: record at R0, then `accordion-sim replay TRACE@R0 --bandwidth-gbps R --format json` "
           "(anchored by default on the network R0's probe fitted; only its bandwidth changed to R). Measured: "
           "the runs at R, their mean step (`measured_iteration_s` of `--timing recorded`, as above), median of "
           "the repeats. Replayed: `replayed_iteration_s` of the replay of the run at R0 with the same repeat "
           "number, median of the repeats; per run: each such pair's error. Calibrated route: the table above's "
           "error, where it starts from the same rate. Median step: each run's median sampled step "
           "(`median_measured_iteration_s`) against its replay's median step (`median_replayed_iteration_s`), "
           "median of the repeats: the principle's measure, robust to the stalls a shared host adds to a mean. "
           "Spread: how far the repeats at R differ from each other in median step ((max − min) / median), "
           "the floor under any prediction of them.", "",
           "| W | rate R | from R0 | scheme | runs | measured ms/step | replayed ms/step | error | per run "
           "| measured median ms | replayed median ms | median-step error | band ms (vs replayed) | measured in band "
           "| spread at R | calibrated-route error |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    md += dflt_rows or ["| | | | | | no default-route replay ran | | | | | | | | | | |"]
    md += [""]
    if dflt_coverage:
        known = [c for c in dflt_coverage if c[4] is not None]
        md += [f"Band: the replay's `replayed_low_s` to `replayed_high_s`, the range that held 90 % of the recorded "
               f"steps carried through the model with each collective's network / host split at either end of its "
               f"uncertainty (docs/simulator.md, \"Prediction bands\"). **Coverage: {sum(c[4] for c in known)} of "
               f"{len(known)} points' measured median step inside the band**"
               + ("; outside: " + ", ".join(f"W={c[0]} {rate_name(c[2])} → {rate_name(c[1])} {c[3]}"
                                            for c in known if not c[4]) if any(not c[4] for c in known) else "")
               + "."]
    md += [""]
    md += worker_count_section(a, traces, worlds, rates, schemes, med_by_setting, problems)
    md += [""]

    be_md, be_summary = breakeven(a, manifest, worlds, rates, schemes, platform, have_cal, problems)
    md += be_md

    if anchors:
        md += ["## Recorded networks", "",
               "The network each replay anchored on, fitted from the trainer's start-up probe (the first run's "
               "fit; the range of the fitted bandwidth over every run of that worker count and rate).", "",
               "| W | rate | probe's fit (first run) | fitted Gb/s, min–max over runs |", "|---|---|---|---|"]
        for (w, rate), fits in sorted(anchors.items(), key=lambda kv: (kv[0][0], rate_gbps(kv[0][1]))):
            bws = [float(m.group(1)) for m in (re.search(r"([0-9.eE+-]+) Gb/s", f) for f in fits) if m]
            rng = f"{min(bws):.3g}–{max(bws):.3g} ({len(bws)} runs)" if bws else "n/a"
            md.append(f"| {w} | {rate_name(rate)} | {fits[0]} | {rng} |")
        md += [""]

    if model_points:
        md += ["## Default network model", "",
               "The uncalibrated default star's |error| on the single all-reduces above, under each model.", "",
               "| W | points | LV08 mean | LV08 max | CM02 mean | CM02 max | closer point by point | lower mean |",
               "|---|---|---|---|---|---|---|---|"]
        for label, pts in [(str(w), [p for p in model_points if p[0] == w]) for w in worlds] + [("all", model_points)]:
            if not pts:
                continue
            lv = [p[1] for p in pts]
            cm = [p[2] for p in pts]
            n_lv = sum(x < y for x, y in zip(lv, cm))
            md.append(f"| {label} | {len(pts)} | {statistics.mean(lv) * 100:.1f} % | {max(lv) * 100:.1f} % "
                      f"| {statistics.mean(cm) * 100:.1f} % | {max(cm) * 100:.1f} % | LV08 {n_lv}, CM02 "
                      f"{len(pts) - n_lv} | {'LV08' if statistics.mean(lv) < statistics.mean(cm) else 'CM02'} |")
        md += [""]

    md += ["## Summary", "", "Targets: every point within 10 %, median |error| within 5 %; identity within 2 %; "
           "the default route within 10 % at every point with 2 and 4 workers, median within 5 %.", ""]
    md += summary("single all-reduces (calibrated)", coll_points, coll_runs, a.calibrate_on)
    md += summary("training steps (calibrated replay)", step_points, step_runs, a.calibrate_on)
    id_errs = [abs(x[4]) for x in identity_runs if x[4] is not None and not x[5]]
    id_bad = [x for x in identity_runs if x[5]]
    if identity_runs:
        line = (f"- **training steps, identity (no flags, median step): "
                + (f"{sum(e <= 0.02 for e in id_errs)}/{len(identity_runs)} runs within 2 % "
                   f"({'met' if len(id_errs) == len(identity_runs) and max(id_errs) <= 0.02 else 'NOT met'}); "
                   f"median |error| {statistics.median(id_errs) * 100:.2f} %, largest {max(id_errs) * 100:.2f} %**"
                   if id_errs else "no run anchored**"))
        if id_bad:
            line += "; not counted: " + "; ".join(f"W={x[0]} {x[1]} {x[2]} r{x[3]} {x[5]}" for x in id_bad)
        md.append(line)
    md += default_route_summary(dflt_points, dflt_runs, worlds)
    md += median_step_summary(dflt_median_points)
    if same_source:
        for label, pts in [(f"{w} workers", [p for p in same_source if p[0] == w]) for w in worlds] + \
                [("all", same_source)]:
            if not pts:
                continue
            d = [abs(p[1]) for p in pts]
            c = [abs(p[2]) for p in pts]
            md.append(f"- default route against the calibrated route, both from {rate_name(a.calibrate_on)}, "
                      f"{label}: mean |error| {statistics.mean(d) * 100:.1f} % against {statistics.mean(c) * 100:.1f} %, "
                      f"largest {max(d) * 100:.1f} % against {max(c) * 100:.1f} %; the default route closer at "
                      f"{sum(x < y for x, y in zip(d, c))} of {len(pts)} points")
    md += be_summary
    if recorded_errs:
        md.append(f"- training steps, `--timing recorded`: median |error| {statistics.median(recorded_errs) * 100:.1f} %, "
                  f"largest {max(recorded_errs) * 100:.1f} % over {len(recorded_errs)} runs")
    if default_errs["LV08"] and default_errs["CM02"]:
        means = {k: statistics.mean(v) for k, v in default_errs.items()}
        best = min(means, key=means.get)
        md.append(f"- uncalibrated default star: mean |error| LV08 {means['LV08'] * 100:.1f} %, CM02 "
                  f"{means['CM02'] * 100:.1f} % (medians {statistics.median(default_errs['LV08']) * 100:.1f} % and "
                  f"{statistics.median(default_errs['CM02']) * 100:.1f} %; largest "
                  f"{max(default_errs['LV08']) * 100:.1f} % and {max(default_errs['CM02']) * 100:.1f} %); closer on "
                  f"average: **{best}**; closer point by point: LV08 {closer['LV08']}, CM02 {closer['CM02']}")
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
