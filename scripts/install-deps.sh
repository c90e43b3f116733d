#!/usr/bin/env bash
# Installs what the Accordion Toolkit needs and only what is missing; running
# it again does nothing. Uses sudo when not root.
#   1. Debian 12 packages (compilers, SQLite, SimGrid, Qt 6, Eigen, ...).
#   2. The project's Python environment, .venv: a pinned PyTorch 2.x from
#      PyPI (scripts/python-requirements.txt). Its LibTorch, with c10d's Gloo
#      and NCCL, is what accordion-train, the accordion package and the tests
#      build against (the CMake presets); the CUDA toolkit under
#      /usr/local/cuda, where there is one, compiles the NCCL communicator.
#      Remade only when the pins change.
#   scripts/install-deps.sh                 Debian packages and .venv (about 2.6 GB downloaded)
#   scripts/install-deps.sh --debian-torch  also Debian's LibTorch 1.13 (CPU only), for the
#                                           debian-torch and sanitize presets
#   scripts/install-deps.sh --no-venv       the Debian packages only
#   scripts/install-deps.sh --list-packages print the Debian packages it installs, one a line
#                                           (tests/build checks the build needs no others)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libeigen3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libfuzzer-14-dev clang-format-14
  libopenblas0-openmp
  libsimgrid-dev
  libgloo-dev
  qt6-base-dev libqcustomplot-dev
  pybind11-dev python3-dev python3-venv
  dataset-fashion-mnist
)
venv=1
list=0
for arg in "$@"; do
  case "$arg" in
    --list-packages) list=1 ;;
    --venv) venv=1 ;;  # the default; kept so that older notes still work
    --no-venv) venv=0 ;;
    --debian-torch) packages+=(libtorch-dev python3-torch python3-torchvision python3-pytest) ;;
    --bench) ;;  # NumPy for the benchmarks is in .venv now
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: error: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$list" -eq 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$venv" -eq 1 ] || exit 0
requirements="$root/scripts/python-requirements.txt"
stamp="$root/.venv/.accordion-requirements"
if [ -x "$root/.venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  echo "install-deps: .venv up to date"
else
  # Debian's Python 3.11, whatever python3 comes first on PATH (pyenv, conda):
  # the CMake presets and the tests use .venv/bin/python.
  start=$(date +%s)
  rm -f "$stamp"
  /usr/bin/python3 -m venv "$root/.venv"
  echo "install-deps: installing $(grep -c '^[a-z]' "$requirements") pinned Python packages into .venv" \
       "(PyTorch with CUDA: about 4.7 GB installed)"
  "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
  echo "install-deps: .venv made in $(( $(date +%s) - start )) s"
fi
# What the build will compile against (CI prints it with every run).
"$root/.venv/bin/python" - <<'EOF'
import torch
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.version.cuda else "none"
print(f"install-deps: torch {torch.__version__}, CUDA {torch.version.cuda or 'none'}, NCCL {nccl}")
EOF
