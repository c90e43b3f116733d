#!/usr/bin/env bash
# Runs one Python example under torchrun with 2 Gloo ranks and prints rank
# 0's output (ctest compares it with the .expected file beside the example).
#   run_example.sh BUILD_DIR EXAMPLE.py
# Debian 12's torchrun (torch 1.13, Python 3.11) crashes on its default
# --redirects 0; --redirects 1 --tee 1 avoids it and prefixes each line.
set -euo pipefail
build=$1 example=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}" ACCORDION_BIN_DIR="$build/bin" OMP_NUM_THREADS=1 \
  /usr/bin/python3 -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 2 \
  --master_addr 127.0.0.1 --master_port "$port" "$example" "$out" >"$out/stdout" 2>"$out/stderr" || {
  cat "$out/stdout" "$out/stderr" >&2
  exit 1
}
sed -n 's/^\[default0\]://p' "$out/stdout"
