#!/usr/bin/env bash
# Derives the small trace seeds in fuzz/corpus/trace from committed sample
# traces: the first two epochs of each, in 512-byte pages, so a fuzzer's
# mutations land on a few kilobytes instead of 90 KB and each run reads a
# few dozen rows. Needs the sqlite3 shell. Run from the repository root:
#   fuzz/make_trace_seeds.sh && build/rel/bin/accordion-analyze validate fuzz/corpus/trace/*.trace
set -euo pipefail
out=fuzz/corpus/trace
mkdir -p "$out"
for name in fmnist-mlp-dense fmnist-mlp-topk-accordion fmnist-mlp-powersgd-static-2 lstm/perldiag-lstm-topk-accordion; do
  dest="$out/$(basename "$name").trace"
  cp "traces/samples/$name.trace" "$dest"
  sqlite3 "$dest" <<'SQL'
DELETE FROM epochs WHERE epoch >= 2;
DELETE FROM epoch_layers WHERE epoch >= 2;
DELETE FROM iterations WHERE epoch >= 2;
DELETE FROM grad_ready WHERE epoch >= 2;
DELETE FROM collectives WHERE epoch >= 2;
DELETE FROM hessian WHERE epoch >= 2;
UPDATE run SET epochs_planned = 2;
PRAGMA page_size = 512;
VACUUM;
SQL
done
ls -l "$out"
