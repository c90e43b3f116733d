#!/usr/bin/env bash
# The main job: record -> analyse -> simulate.
#   1. accordion-train records a real 2-worker Fashion-MNIST run (PowerSGD
#      under Accordion, 12 short epochs, about a minute) into a trace;
#   2. accordion-analyze validates it and re-derives Accordion's schedule from
#      its recorded gradient norms, with the floats saved against static
#      rank 2 and static rank 1;
#   3. accordion-sim projects the same run onto 8 workers behind a 100 Mb/s
#      switch: time to train under Accordion against both static schedules.
#      (This MLP's PowerSGD messages are a few KB: on fast networks they are
#      latency-bound and compression saves floats but no time.)
#   4. accordion-report writes the figures (regimes, level map, what-if,
#      comparison, timeline) as PNG and PDF with an index.html, and the demo
#      prints the accordion-gui command to explore the run interactively.
#
#   scripts/demo.sh [BUILD_DIR]     (default build/release)
#
# Without LibTorch the trainer is not built; the demo then says so and uses a
# SYNTHETIC ResNet-18-shaped trace instead of recording one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(realpath "${1:-$root/build/release}")/bin"
out="$root/runs/demo"
mkdir -p "$out"

if [ -x "$bin/accordion-train" ]; then
  trace="$out/fmnist-mlp-powersgd-accordion.trace"
  interval=2
  echo "== 1. record: 2 workers, MLP on Fashion-MNIST, PowerSGD rank 2 / rank 1 under Accordion"
  "$bin/accordion-train" --nproc 2 --model mlp --dataset fashion-mnist --epochs 12 --lr 0.05 \
    --limit-samples 20000 --decay-epochs 8 --scheme powersgd --policy accordion --low 2 --high 1 \
    --interval "$interval" --trace "$trace" --overwrite
else
  trace="$out/resnet18-synthetic.trace"
  interval=10
  echo "== 1. accordion-train is not built (no LibTorch): using a SYNTHETIC trace instead"
  "$bin/accordion-make-synthetic-trace" "$trace" --overwrite --model resnet18 --epochs 60 --decay 40 >/dev/null
fi

echo
echo "== 2. analyse: validate the trace, derive Accordion's schedule from its gradient norms"
"$bin/accordion-analyze" validate "$trace"
echo
"$bin/accordion-analyze" schedule "$trace" --eta 0.5 --interval "$interval"

if [ -x "$bin/accordion-sim" ]; then
  echo
  echo "== 3. simulate: the same run on 8 workers behind one 100 Mb/s switch"
  replay=$("$bin/accordion-sim" replay "$trace" --workers 8 --topology star --bandwidth-gbps 0.1 \
    --latency-us 5 --eta 0.5 --interval "$interval")
  # The per-epoch table whole, or (a long synthetic run) not at all.
  if [ "$(printf '%s\n' "$replay" | wc -l)" -le 40 ]; then
    printf '%s\n' "$replay"
  else
    printf '%s\n' "$replay" | sed '/^epoch /,$d'
    echo "(per-epoch table left out: accordion-sim replay $trace prints it)"
  fi
fi

if [ -x "$bin/accordion-report" ]; then
  echo
  echo "== 4. report: figures and an index.html, no display needed"
  report="$out/report"
  "$bin/accordion-report" "$trace" --out "$report" --overwrite \
    --workers 8 --topology star --bandwidth-gbps 0.1 --latency-us 5 >/dev/null
  echo "report:  $report/index.html"
  echo "explore: $bin/accordion-gui $trace"
fi
