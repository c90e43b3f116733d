#!/usr/bin/env bash
# The paper's Figures 5 and 7 at this machine's scale (docs/reproduction.md,
# "Accordion beside AdaQS and Smith et al."): seeds 1, 2 and 3 of PowerSGD
# rank 2, rank 1, Accordion and AdaQS, and of batch 128, Accordion and Smith
# et al. - the Fashion-MNIST MLP runs of record.sh - into
# traces/samples/policies/seed-N/, then the table over them.
#
#   traces/samples/policies.sh [BUILD_DIR]               (default build/release)
#   traces/samples/policies.sh [BUILD_DIR] --table-only
#
# 21 runs, about 30 minutes on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/release}"
if [ "${2:-}" != "--table-only" ]; then
  for seed in 1 2 3; do
    RECORD_ONLY='powersgd|batch-(static-128|accordion|smith)' \
      "$here/record.sh" "$build" "$seed" "$here/policies/seed-$seed"
  done
fi
"$build/bin/accordion-analyze" table "$here"/policies/seed-*/*.trace
