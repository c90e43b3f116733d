#!/usr/bin/env bash
# The package as a user installs it: a fresh virtual environment with PyPI's
# torch (the pins of scripts/python-requirements.txt; pip's cache makes the
# download once per machine), `pip install --no-build-isolation .` from the
# source tree, then the package's tests against that install (not the build
# tree's copy). ctest runs it as python.pip_install (labels pip, slow).
#   pip_install_check.sh SOURCE_DIR PYTHON BIN_DIR
set -euo pipefail
root=$1 python=$2 bin_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
base=$("$python" -c 'import sys; print(sys._base_executable)')
"$base" -m venv "$work/venv"
pins=$(grep -E '^(torch|pytest|numpy|scikit-build-core)==' "$root/scripts/python-requirements.txt")
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins
(cd "$root" && "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation .)
cd "$root/tests/python"
"$work/venv/bin/python" - <<'PY'
import os, accordion, accordion.ddp, torch
here = os.path.dirname(accordion.__file__)
assert "site-packages" in here, here
assert os.path.exists(os.path.join(here, "py.typed")), "py.typed is not installed"
print(f"accordion {accordion.__version__} installed in {here}, against torch {torch.__version__}")
PY
ACCORDION_PYTHON_DIR=installed ACCORDION_BIN_DIR="$bin_dir" OMP_NUM_THREADS=1 \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider test_bad_arguments.py test_ddp_hook.py
