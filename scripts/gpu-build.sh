#!/usr/bin/env bash
# Configures and builds the GPU tools against python3's PyTorch (CUDA,
# NCCL): accordion-train with the NCCL communicator, accordion-analyze,
# accordion-bench-collectives and, with PYTHON=1, the accordion Python
# package (the DDP hook) for the same python3. Used by scripts/gpu-run.sh
# and scripts/gpu-check.sh on a GPU machine.
#
#   scripts/gpu-build.sh BUILD_DIR LOG_DIR SECONDS [PREFIX] [PYTHON]
#
# PREFIX: an install prefix holding what the machine lacks (SQLite, zlib,
# nlohmann-json, CLI11, Eigen, Gloo's headers: include/, lib/, share/).
# Prints the machine (also to LOG_DIR/machine.txt) and exits non-zero, with
# the log's errors printed, when a step fails.
set -uo pipefail
B=${1:?usage: scripts/gpu-build.sh BUILD_DIR LOG_DIR SECONDS [PREFIX] [PYTHON]}
LOGS=${2:?}
SECONDS_LEFT=${3:?}
PREFIX=${4:-}
PYTHON=${5:-0}

{
  echo "== machine"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nproc
  g++ --version | head -n 1
  cmake --version | head -n 1
  python3 -c 'import torch, torch.distributed as d; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI, "nccl", torch.cuda.nccl.version(), "gloo", d.is_gloo_available())'
  hdr=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp"))')
  echo "ProcessGroupNCCL::shutdown declared: $(grep -c "void shutdown(" "$hdr")"
} 2>&1 | tee "$LOGS/machine.txt"

# NCCL's header and library: CUDA's folder, else the nvidia-nccl wheel's.
ARGS=()
if [ ! -f /usr/local/cuda/include/nccl.h ]; then
  NCCL_DIR=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
  if [ -n "$NCCL_DIR" ]; then
    NCCL_LIB=$(ls "$NCCL_DIR"/lib/libnccl.so* | head -n 1)
    ARGS+=(-DACCORDION_NCCL_INCLUDE_DIR="$NCCL_DIR/include" -DACCORDION_NCCL_LIBRARY="$NCCL_LIB")
    echo "NCCL from $NCCL_DIR ($NCCL_LIB)"
  fi
fi
if [ -n "$PREFIX" ]; then
  PREFIX=$(cd "$PREFIX" && pwd)
  # The machine's own shared SQLite and zlib (Python's modules need them, so
  # they are there) before the prefix's static ones: Debian's static
  # libraries are not position-independent, and the Python module is a
  # shared object ("final link failed: bad value").
  lib_or_static() { ls /usr/lib/x86_64-linux-gnu/"$1" 2>/dev/null || echo "$PREFIX/lib/$2"; }
  ARGS+=(-DCMAKE_PREFIX_PATH="$PREFIX" -DSQLite3_INCLUDE_DIR="$PREFIX/include"
         -DSQLite3_LIBRARY="$(lib_or_static libsqlite3.so.0 libsqlite3.a)" -DZLIB_INCLUDE_DIR="$PREFIX/include"
         -DZLIB_LIBRARY="$(lib_or_static libz.so.1 libz.a)")
fi
TARGETS=(accordion-train accordion-analyze accordion-bench-collectives)
if [ "$PYTHON" = 1 ]; then
  # The package is a torch extension for this python3: its headers and
  # pybind11's CMake files come from the same installation.
  ARGS+=(-DACCORDION_BUILD_PYTHON=ON -DACCORDION_PYTHON_EXECUTABLE="$(command -v python3)"
         -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)")
  TARGETS+=(accordion_python)
else
  ARGS+=(-DACCORDION_BUILD_PYTHON=OFF)
fi

START=$(date +%s)
if ! cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DACCORDION_TORCH_FROM_PYTHON=ON \
    -DACCORDION_BUILD_GUI=OFF -DACCORDION_BUILD_SIMULATOR=OFF -DACCORDION_BUILD_TESTS=OFF \
    -DACCORDION_BUILD_BENCH=OFF -DACCORDION_NCCL=ON "${ARGS[@]}" >"$LOGS/configure.log" 2>&1; then
  tail -n 40 "$LOGS/configure.log"
  exit 1
fi
grep -E "NCCL communicator|trainer|python|LibTorch from" "$LOGS/configure.log"
if ! timeout "$SECONDS_LEFT" cmake --build "$B" -j "$(nproc)" --target "${TARGETS[@]}" >"$LOGS/build.log" 2>&1; then
  grep -E "error|Error" "$LOGS/build.log" | head -n 30
  tail -n 5 "$LOGS/build.log"
  exit 1
fi
echo "built ${TARGETS[*]} in $(($(date +%s) - START)) s"
