"""The fast layer's set-up: the built package on the path, no ranks, no tools."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.environ.get("ACCORDION_PYTHON_DIR", os.path.join(HERE, "..", "..", "..", "build", "release", "python"))
BIN_DIR = os.environ.get("ACCORDION_BIN_DIR", os.path.join(HERE, "..", "..", "..", "build", "release", "bin"))
if PACKAGE_DIR != "installed" and PACKAGE_DIR not in sys.path:
    sys.path.insert(0, PACKAGE_DIR)
