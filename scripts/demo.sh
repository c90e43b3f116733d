#!/usr/bin/env bash
# The main job: take a trace, derive the Accordion schedule from its recorded
# gradient norms and print it with its communication savings.
#   scripts/demo.sh [BUILD_DIR]     (default build/release)
#
# Until the trainer records real runs (see the trainer issue), the trace is a
# SYNTHETIC ResNet-18-shaped one, and the output says so.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/release}/bin"
out="$root/runs/demo"
mkdir -p "$out"

trace="$out/resnet18-synthetic.trace"
"$bin/accordion-make-synthetic-trace" "$trace" --model resnet18 --epochs 60 --decay 40 >/dev/null
"$bin/accordion-analyze" validate "$trace"
echo
"$bin/accordion-analyze" schedule "$trace" --eta 0.5 --interval 10 --low 2 --high 1
