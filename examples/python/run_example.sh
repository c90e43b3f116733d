#!/usr/bin/env bash
# Runs one Python example under torchrun with 2 Gloo ranks and prints rank
# 0's output (ctest compares it with the .expected file beside the example).
#   run_example.sh BUILD_DIR EXAMPLE.py [PYTHON]
# PYTHON: the interpreter whose torch the package was built against (default
# /usr/bin/python3). --redirects 1 --tee 1 prefixes each line with its
# rank (Debian 12's torch 1.13 crashed on torchrun's default --redirects 0).
set -euo pipefail
build=$1 example=$2
python=${3:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" ACCORDION_BIN_DIR="$build/bin" OMP_NUM_THREADS=1 \
  "$python" -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 2 \
  --master_addr 127.0.0.1 --master_port "$port" "$example" "$out" >"$out/stdout" 2>"$out/stderr" || {
  cat "$out/stdout" "$out/stderr" >&2
  exit 1
}
sed -n 's/^\[default0\]://p' "$out/stdout"
