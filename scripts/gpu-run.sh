#!/usr/bin/env bash
# Builds accordion-train against python3's PyTorch (CUDA, NCCL) and records
# the GPU traces of docs/gpu.md: ResNet-18 and VGG-19-BN on Fashion-MNIST,
# PowerSGD under Accordion and dense, over NCCL (world size 1), then two
# Gloo workers sharing the one GPU. Every trace is validated.
#
#   scripts/gpu-run.sh OUT [DATA_DIR] [PREFIX] [SECONDS]
#
# OUT: gets gpu-run.tar.gz (traces and logs, written however the script
# ends) and a copy of each trace. DATA_DIR: the Fashion-MNIST IDX files
# (default /usr/share/datasets/fashion-mnist). PREFIX: an install prefix
# holding what the machine lacks (SQLite, zlib, nlohmann-json, CLI11, Eigen:
# include/, lib/, share/). SECONDS: the whole script's budget (default 560);
# each run gets a share of what the build left and is stopped (SIGTERM: the
# trace keeps its finished epochs) when its share is spent.
set -uo pipefail
OUT=${1:?usage: scripts/gpu-run.sh OUT [DATA_DIR] [PREFIX] [SECONDS]}
DATA=${2:-/usr/share/datasets/fashion-mnist}
PREFIX=${3:-}
BUDGET=${4:-560}
START=$(date +%s)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d /tmp/gpu-run.XXXXXX)
trap 'tar -C "$W" -czf "$OUT/gpu-run.tar.gz" . && cp "$W"/*.trace "$OUT"/ 2>/dev/null' EXIT
left() { echo $((BUDGET - ($(date +%s) - START))); }

echo "== build ($(left) s left)"
B=build/gpu
scripts/gpu-build.sh $B "$W" $(($(left) - 60)) "$PREFIX" || exit 1

# name | arguments. Runs share what is left; a stopped run keeps its epochs.
COMMON="--dataset fashion-mnist --data-dir $DATA --batch-size 256 --lr 0.1 --decay-epochs 6
        --interval 2 --hessian-every 2 --hessian-batch 256 --hessian-iterations 20 --trace-iterations 8"
RUNS=(
  "resnet18-powersgd-accordion|--nproc 1 --backend nccl --device cuda --model resnet18 --scheme powersgd --policy accordion --low 2 --high 1 --epochs 8"
  "resnet18-dense|--nproc 1 --backend nccl --device cuda --model resnet18 --scheme dense --epochs 8"
  "vgg19bn-powersgd-accordion|--nproc 1 --backend nccl --device cuda --model vgg19bn --scheme powersgd --policy accordion --low 2 --high 1 --epochs 8"
  "vgg19bn-dense|--nproc 1 --backend nccl --device cuda --model vgg19bn --scheme dense --epochs 8"
  "resnet18-powersgd-gloo2|--nproc 2 --backend gloo --device cuda --model resnet18 --scheme powersgd --policy accordion --low 2 --high 1 --epochs 2"
)
n=${#RUNS[@]}
for i in "${!RUNS[@]}"; do
  name=${RUNS[$i]%%|*}
  args=${RUNS[$i]#*|}
  share=$(($(left) / (n - i) - 5))
  if [ "$share" -lt 20 ]; then
    echo "== $name: skipped, $(left) s left"
    continue
  fi
  echo "== $name (up to $share s)"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  timeout -s TERM "$share" $B/bin/accordion-train $COMMON $args --trace "$W/$name.trace" \
    >"$W/$name.log" 2>&1
  echo "exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
  tail -n 3 "$W/$name.log"
  $B/bin/accordion-analyze validate "$W/$name.trace" 2>&1 | tail -n 2
  $B/bin/accordion-analyze info "$W/$name.trace" >"$W/$name.info" 2>&1
done
# NCCL's own cost on one GPU: what a collective costs before any network.
if [ "$(left)" -gt 40 ]; then
  echo "== NCCL all-reduce, one rank"
  timeout $(($(left) - 10)) $B/bin/accordion-bench-collectives --nproc 1 --backend nccl --ops allreduce \
    --min-bytes 1K --max-bytes 256M --out "$W/nccl-allreduce-1rank.json" 2>&1 | tail -n 12
fi
echo "== done, $(left) s of $BUDGET left"
