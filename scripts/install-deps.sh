#!/usr/bin/env bash
# Installs the Debian 12 packages the Accordion Toolkit needs, and only those
# that are missing; running it again does nothing. Uses sudo when not root.
#   scripts/install-deps.sh          build, tests and the main job
#   scripts/install-deps.sh --bench  also NumPy, for bench/ comparisons
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libeigen3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libfuzzer-14-dev clang-format-14
  libtorch-dev libgloo-dev libopenblas0-openmp
  libsimgrid-dev
  qt6-base-dev libqcustomplot-dev
  pybind11-dev python3-dev python3-torch python3-torchvision python3-pytest
  dataset-fashion-mnist
)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(python3-numpy) ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: error: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
