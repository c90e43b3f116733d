"""Shared helpers for the accordion package's tests: where the build put things,
and torchrun with real worker processes."""

import json
import os
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = os.path.join(HERE, "workers")
BIN_DIR = os.environ.get("ACCORDION_BIN_DIR", os.path.join(HERE, "..", "..", "build", "release", "bin"))
PACKAGE_DIR = os.environ.get("ACCORDION_PYTHON_DIR", os.path.join(HERE, "..", "..", "build", "release", "python"))

# "installed": the package pip installed into this Python (pip_install_check.sh).
if PACKAGE_DIR != "installed" and PACKAGE_DIR not in sys.path:
    sys.path.insert(0, PACKAGE_DIR)


def tool(name):
    path = os.path.join(BIN_DIR, name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(script, *args, nproc=2, timeout=180):
    """Runs tests/python/workers/<script> under torchrun with `nproc` Gloo ranks.

    Debian 12's torch 1.13 on Python 3.11 parses torchrun's default --redirects 0
    into None and crashes; --redirects 1 --tee 1 avoids it (stdout lines get a
    "[defaultN]:" prefix)."""
    path = os.environ.get("PYTHONPATH", "")
    if PACKAGE_DIR != "installed":
        path = PACKAGE_DIR + os.pathsep + path
    env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
           "--nproc_per_node", str(nproc), "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
           os.path.join(WORKERS, script), *map(str, args)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def load_json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def core():
    try:
        import accordion._core as c  # noqa: F401
    except ImportError as e:
        pytest.skip(f"the accordion package is not built: {e}")
    return c
