#!/usr/bin/env bash
# Records one seed of the sample traces: real 2-worker Fashion-MNIST runs of
# the MLP, 30 epochs (LR warm-up over 5, / 10 at epoch 20), one per scheme and
# schedule - dense; PowerSGD rank 2 / rank 1, TopK 99 % / 10 %, batch 128 /
# 1024 (global), each static low, static high and Accordion; and the paper's
# baselines AdaQS (PowerSGD) and Smith et al. (batch).
#
#   traces/samples/record.sh [BUILD_DIR [SEED [OUT_DIR [EXTRA FLAGS...]]]]
#
# Defaults: build/release, seed 1, this directory. The committed samples are
# seed 1 with the top Hessian eigenvalue every epoch (whole model and per
# layer block):
#   traces/samples/record.sh build/release 1 traces/samples --hessian-every 1 --hessian-blocks
# About 16 minutes on 2 cores with OpenBLAS. See README.md for what each is
# and reproduce.sh for the three-seed table. RECORD_ONLY=REGEX records only
# the runs whose name matches (e.g. RECORD_ONLY=accordion after a change of
# the controller).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../build/release}/bin"
seed="${2:-1}"
out="${3:-$here}"
extra=("${@:4}")
mkdir -p "$out"
common=(--nproc 2 --model mlp --dataset fashion-mnist --epochs 30 --batch-size 128 --warmup-epochs 5
        --decay-epochs 20 --momentum 0.9 --weight-decay 1e-4 --seed "$seed" --eta 0.5 --interval 2
        --trace-iterations 2 --overwrite "${extra[@]}")
run() {
  local name=$1; shift
  [[ -z ${RECORD_ONLY:-} || $name =~ $RECORD_ONLY ]] || return 0
  echo "== seed $seed $name: accordion-train ${common[*]} $*"
  "$bin/accordion-train" "${common[@]}" "$@" --trace "$out/$name.trace"
  "$bin/accordion-analyze" validate "$out/$name.trace"
}
# LR 0.05 for batch 128: PowerSGD rank 1 diverges on this MLP at 0.1 with
# momentum 0.9 (PyTorch's powerSGD_hook too), at 0.05 every schedule trains.
run fmnist-mlp-dense                --lr 0.05 --scheme dense
run fmnist-mlp-powersgd-static-2    --lr 0.05 --scheme powersgd --level 2
run fmnist-mlp-powersgd-static-1    --lr 0.05 --scheme powersgd --level 1
run fmnist-mlp-powersgd-accordion   --lr 0.05 --scheme powersgd --policy accordion --low 2 --high 1
# The paper's Figure 7 baseline: AdaQS from rank 1 to rank 2 when the MSDR halves.
run fmnist-mlp-powersgd-adaqs       --lr 0.05 --scheme powersgd --policy adaqs --low 2 --high 1
run fmnist-mlp-topk-static-0.99     --lr 0.05 --scheme topk --level 0.99
run fmnist-mlp-topk-static-0.1      --lr 0.05 --scheme topk --level 0.1
run fmnist-mlp-topk-accordion       --lr 0.05 --scheme topk --policy accordion --low 0.99 --high 0.1
# Batch size: levels are global batches; a larger batch accumulates micro-
# batches of 128 (64 per worker) before one all-reduce, and its LR scales
# linearly (0.05 x 1024 / 128 = 0.4), as Accordion's switch to 1024 does.
run fmnist-mlp-batch-static-128     --lr 0.05 --scheme batch --level 128
run fmnist-mlp-batch-static-1024    --lr 0.4  --scheme batch --level 1024 --micro-batch 128
run fmnist-mlp-batch-accordion      --lr 0.05 --scheme batch --policy accordion --low 128 --high 1024
# The paper's Figure 5 baseline: Smith et al. grow the batch where the LR
# would decay (at epoch 20, x10, capped at 1024: the LR keeps 8 of the 10).
run fmnist-mlp-batch-smith          --lr 0.05 --scheme batch --policy smith --low 128 --high 1024
