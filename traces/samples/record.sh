#!/usr/bin/env bash
# Records the sample traces in this directory: real 2-worker Fashion-MNIST
# runs (MLP, 16 epochs, LR /10 at epochs 10 and 14), one per scheme and policy.
#   traces/samples/record.sh [BUILD_DIR]      (default build/release)
# About 8 minutes on 2 cores with OpenBLAS. See README.md for what each is.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../build/release}/bin"
common=(--nproc 2 --model mlp --dataset fashion-mnist --epochs 16 --batch-size 128 --lr 0.1
        --decay-epochs 10 14 --seed 1 --eta 0.5 --interval 2 --trace-iterations 4 --overwrite)
run() {
  local name=$1; shift
  echo "== $name: accordion-train ${common[*]} $*"
  "$bin/accordion-train" "${common[@]}" "$@" --trace "$here/$name.trace"
  "$bin/accordion-analyze" validate "$here/$name.trace"
}
run fmnist-mlp-dense             --scheme dense
run fmnist-mlp-powersgd-static-2 --scheme powersgd --policy static --level 2
run fmnist-mlp-powersgd-static-1 --scheme powersgd --policy static --level 1
run fmnist-mlp-powersgd-accordion --scheme powersgd --policy accordion --low 2 --high 1
run fmnist-mlp-topk-static-0.99  --scheme topk --policy static --level 0.99
run fmnist-mlp-topk-static-0.1   --scheme topk --policy static --level 0.1
run fmnist-mlp-topk-accordion    --scheme topk --policy accordion --low 0.99 --high 0.1
