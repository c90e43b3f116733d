#!/usr/bin/env bash
# Runs the same inputs through the tools of two builds and says where their
# outputs differ: for a change that must keep behaviour identical (a
# refactoring), build the commit before it and the one after, then
#   scripts/compare-builds.sh OLD_BUILD/bin NEW_BUILD/bin
# It compares accordion-analyze and accordion-sim on the sample traces (text
# and JSON, bad input, --help) and three short accordion-train runs (PowerSGD,
# TopK, batch under Accordion; 2 workers, fixed seed) by every trace column
# that does not measure time. Exit 0 when all agree, 1 otherwise.
set -uo pipefail
if [[ $# -ne 2 || ! -x $1/accordion-sim || ! -x $2/accordion-sim ]]; then
  echo "usage: $0 OLD_BIN_DIR NEW_BIN_DIR (each holding accordion-analyze, accordion-sim, accordion-train)" >&2
  exit 2
fi
old=$(cd "$1" && pwd); new=$(cd "$2" && pwd)
samples=$(cd "$(dirname "$0")/../traces/samples" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
S=$samples
commands=(
  "accordion-analyze info $S/fmnist-mlp-powersgd-accordion.trace"
  "accordion-analyze schedule $S/fmnist-mlp-powersgd-accordion.trace"
  "accordion-analyze schedule $S/fmnist-mlp-topk-accordion.trace --eta 0.3 --interval 3"
  "accordion-analyze schedule $S/fmnist-mlp-batch-accordion.trace --format json"
  "accordion-analyze regimes $S/fmnist-mlp-powersgd-accordion.trace"
  "accordion-analyze table $S/fmnist-mlp-powersgd-static-1.trace $S/fmnist-mlp-powersgd-static-2.trace $S/fmnist-mlp-powersgd-accordion.trace"
  "accordion-analyze validate $S/fmnist-mlp-dense.trace"
  "accordion-sim replay $S/fmnist-mlp-powersgd-accordion.trace --timing analytic --workers 64 --bandwidth-gbps 10 --format json"
  "accordion-sim replay $S/fmnist-mlp-powersgd-accordion.trace --workers 8 --bandwidth-gbps 1"
  "accordion-sim replay $S/fmnist-mlp-topk-accordion.trace --workers 16 --topology fat-tree --bandwidth-gbps 25 --format json"
  "accordion-sim replay $S/fmnist-mlp-batch-accordion.trace --timing analytic --workers 32"
  "accordion-sim replay $S/fmnist-mlp-dense.trace --timing recorded"
  "accordion-sim sweep $S/fmnist-mlp-powersgd-accordion.trace --timing analytic --bandwidth-gbps 1 10 100 --etas 0.3 0.5"
  "accordion-sim collective --op allreduce --bytes 1000000 --workers 8"
  "accordion-analyze schedule $S/fmnist-mlp-powersgd-accordion.trace --eta -1"
  "accordion-sim replay $S/fmnist-mlp-powersgd-accordion.trace --bandwidth-gbps -1"
  "accordion-train --scheme foo"
  "accordion-train --help"
  "accordion-sim replay --help"
  "accordion-analyze schedule --help"
)
# The columns of a trace that no clock measured.
query="SELECT epoch, lr, batch_size, iterations, critical, model_grad_norm, train_loss, train_acc, test_loss,
         test_acc, floats_sent FROM epochs; SELECT * FROM epoch_layers; SELECT * FROM layers;
       SELECT epoch, iteration, rank, seq, op, bucket, tag, bytes FROM collectives;"
train="--dataset synthetic --limit-samples 1024 --model mlp --nproc 2 --epochs 4 --seed 7 --policy accordion --interval 1 --eta 0.1"
runs=("--scheme powersgd --batch-size 64" "--scheme topk --batch-size 64" "--scheme batch --batch-size 32")

same=0; differ=0
compare() {  # compare <what> <old file> <new file>
  if cmp -s "$2" "$3"; then
    same=$((same + 1)); echo "same: $1"
  else
    differ=$((differ + 1)); echo "=== differs: $1"; diff "$2" "$3" | head -20
  fi
}
i=0
for c in "${commands[@]}"; do
  i=$((i + 1))
  for side in old new; do
    bin=$([[ $side == old ]] && echo "$old" || echo "$new")
    (cd "$work" && $bin/$c > "$work/$side.$i" 2>&1; echo "exit $?" >> "$work/$side.$i")
    sed -i "s#$bin#BIN#g" "$work/$side.$i"
  done
  compare "$c" "$work/old.$i" "$work/new.$i"
done
for r in "${runs[@]}"; do
  i=$((i + 1))
  for side in old new; do
    bin=$([[ $side == old ]] && echo "$old" || echo "$new")
    $bin/accordion-train $train $r --trace "$work/$side.$i.trace" > /dev/null 2>&1
    sqlite3 "$work/$side.$i.trace" "$query" > "$work/$side.$i" 2>&1
  done
  if [[ ! -s $work/new.$i ]] || grep -q '^Error' "$work/new.$i"; then
    differ=$((differ + 1)); echo "=== no trace to compare: accordion-train $r"; head -3 "$work/new.$i"; continue
  fi
  compare "accordion-train $r (trace columns that measure no time: $(wc -l < "$work/new.$i") rows)" \
    "$work/old.$i" "$work/new.$i"
done
echo "identical: $same of $i; different: $differ"
[[ $differ -eq 0 ]]
