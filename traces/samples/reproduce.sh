#!/usr/bin/env bash
# The three-seed reproduction of the paper's Tables 1-6 format on
# Fashion-MNIST (docs/reproduction.md): records seeds 1, 2 and 3 of every
# schedule with record.sh - seed 1 into this directory (the samples, with
# Hessian eigenvalues), seeds 2 and 3 into seeds/seed-N/ - then prints the
# table with accordion-analyze table.
#
#   traces/samples/reproduce.sh [BUILD_DIR]       (default build/release)
#   traces/samples/reproduce.sh [BUILD_DIR] --table-only   (just the table)
#
# About 50 minutes on 2 cores; run nothing else meanwhile if the time column
# is to mean anything.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/release}"
if [ "${2:-}" != "--table-only" ]; then
  "$here/record.sh" "$build" 1 "$here" --hessian-every 1 --hessian-blocks
  for seed in 2 3; do "$here/record.sh" "$build" "$seed" "$here/seeds/seed-$seed"; done
fi
"$build/bin/accordion-analyze" table "$here"/*.trace "$here"/seeds/seed-*/*.trace
