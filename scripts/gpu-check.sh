#!/usr/bin/env bash
# The short device check of the GPU path (a few minutes on one GPU): builds
# the GPU tools and the Python package against python3's PyTorch
# (scripts/gpu-build.sh), then
#   1. trains ResNet-18 under PowerSGD with Accordion over NCCL, 2 epochs,
#      and a CNN under TopK on two Gloo ranks sharing the GPU;
#   2. starts a worker whose MASTER_PORT is answered by another service, and
#      one whose peer never comes, both over NCCL: each must end in one line,
#      exit 2, within its --timeout;
#   3. records a DDP script through the accordion Python hook on CUDA tensors
#      over NCCL (scripts/gpu-python-hook.py);
# and validates every trace. One GPU: NCCL runs at world size 1.
#
#   scripts/gpu-check.sh OUT [DATA_DIR] [PREFIX] [SECONDS]
#
# OUT gets gpu-check.tar.gz (logs and traces, however the script ends).
set -uo pipefail
OUT=${1:?usage: scripts/gpu-check.sh OUT [DATA_DIR] [PREFIX] [SECONDS]}
DATA=${2:-/usr/share/datasets/fashion-mnist}
PREFIX=${3:-}
BUDGET=${4:-420}
START=$(date +%s)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DATA=$(cd "$DATA" && pwd)
W=$(mktemp -d /tmp/gpu-check.XXXXXX)
trap 'tar -C "$W" -czf "$OUT/gpu-check.tar.gz" .' EXIT
left() { echo $((BUDGET - ($(date +%s) - START))); }
elapsed() { python3 -c "import sys; print(round($(date +%s.%N) - float(sys.argv[1]), 1))" "$1"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# lone_worker NAME RANK PORT TIMEOUT: one worker of 2 started by hand over
# NCCL, whatever answers (or not) at PORT; prints its exit code, time and
# standard error, which must be one line.
lone_worker() {
  local t0
  t0=$(date +%s.%N)
  RANK=$2 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$3 \
    timeout -k 5 60 $B/bin/accordion-train --backend nccl --device cuda --dataset fashion-mnist --data-dir "$DATA" \
    --limit-samples 1024 --model mlp --epochs 1 --timeout "$4" >"$W/$1.out" 2>"$W/$1.err"
  echo "exit $? after $(elapsed "$t0") s, $(wc -l <"$W/$1.err") line(s) on stderr:"
  cat "$W/$1.err"
}

echo "== build ($(left) s left)"
B=build/gpu
PY=1
mkdir -p "$W/build-with-python"
if ! scripts/gpu-build.sh $B "$W/build-with-python" $(($(left) - 150)) "$PREFIX" 1; then
  echo "== the Python package did not build; the trainer alone"
  B=build/gpu-trainer
  PY=0
  scripts/gpu-build.sh $B "$W" $(($(left) - 120)) "$PREFIX" 0 || exit 1
fi

echo "== 1. ResNet-18, PowerSGD under Accordion, NCCL ($(left) s left)"
t0=$(date +%s.%N)
timeout -s TERM 120 $B/bin/accordion-train --nproc 1 --backend nccl --device cuda --dataset fashion-mnist \
  --data-dir "$DATA" --limit-samples 8192 --model resnet18 --batch-size 256 --epochs 2 --interval 1 \
  --scheme powersgd --policy accordion --low 2 --high 1 --hessian-every 1 --hessian-batch 128 \
  --trace "$W/train-nccl.trace" >"$W/train-nccl.log" 2>&1
echo "exit $? after $(elapsed "$t0") s"
tail -n 4 "$W/train-nccl.log"
$B/bin/accordion-analyze validate "$W/train-nccl.trace" 2>&1 | tail -n 1

echo "== 1b. two Gloo ranks sharing the GPU (PyTorch 2's Gloo is a c10d::Backend)"
t0=$(date +%s.%N)
timeout -s TERM 90 $B/bin/accordion-train --nproc 2 --backend gloo --device cuda --dataset fashion-mnist \
  --data-dir "$DATA" --limit-samples 4096 --model cnn --batch-size 128 --epochs 1 --scheme topk --policy accordion \
  --trace "$W/train-gloo2.trace" >"$W/train-gloo2.log" 2>&1
echo "exit $? after $(elapsed "$t0") s"
tail -n 2 "$W/train-gloo2.log"
$B/bin/accordion-analyze validate "$W/train-gloo2.trace" 2>&1 | tail -n 1

echo "== 2a. MASTER_PORT answered by another service, NCCL"
PORT=$(free_port)
python3 - "$PORT" <<'PY' &
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); s.settimeout(60)
held = []
try:
    while True:
        c, _ = s.accept(); c.sendall(b"\xff" * 4096 + b"HTTP/1.0 200 OK\r\n\r\n"); held.append(c)
except Exception:
    pass
PY
SERVER=$!
sleep 1
lone_worker bad-port 1 "$PORT" 15
kill $SERVER 2>/dev/null

echo "== 2b. rank 0 of 2 whose peer never comes, NCCL, --timeout 10"
lone_worker no-peer 0 "$(free_port)" 10

if [ "$PY" = 1 ]; then
  echo "== 3. the DDP hook on CUDA tensors over NCCL ($(left) s left)"
  t0=$(date +%s.%N)
  PYTHONPATH=$B/python timeout -s TERM 150 torchrun --nproc_per_node 1 scripts/gpu-python-hook.py "$DATA" \
    "$W/hook-nccl.trace" >"$W/hook-nccl.log" 2>&1
  echo "exit $? after $(elapsed "$t0") s"
  grep -E "^epoch|Error|error" "$W/hook-nccl.log" | head -n 12
  $B/bin/accordion-analyze validate "$W/hook-nccl.trace" 2>&1 | tail -n 1
  $B/bin/accordion-analyze info "$W/hook-nccl.trace" 2>&1 | head -n 12
fi
echo "== done, $(left) s of $BUDGET left"
