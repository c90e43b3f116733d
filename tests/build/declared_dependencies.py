"""Fails where the build uses a Debian package that scripts/install-deps.sh does not install.

A machine keeps what was installed on it by hand, so a build that passes here can
still fail on a fresh one (the Gloo headers did, 2026-11-29). This check does not
ask what is installed; it asks what is *declared*: every system header the
compiler read (ninja's dependency log) and every shared library the built tools
and modules load (ldd) must belong to a package that install-deps.sh names, or to
one those depend on (apt-cache depends --recurse), or to Debian's required base.
What comes from the project's .venv (PyTorch from PyPI, scripts/python-requirements.txt)
and the CUDA toolkit under /usr/local/cuda (part of this machine kind) is not Debian's
and is left out.

Usage: declared_dependencies.py SOURCE_DIR BUILD_DIR [--without PACKAGE]...
--without: check as if install-deps.sh did not name PACKAGE (the test of this check).
Exit 0: all declared; 1: what is undeclared, one line each; 2: bad arguments.
"""

import glob
import os
import re
import subprocess
import sys


def canonical(path):
    """The path as dpkg lists it on a merged-/usr system (/lib -> /usr/lib)."""
    path = os.path.normpath(path)
    for top in ("/lib64/", "/lib/", "/bin/", "/sbin/"):
        if path.startswith(top):
            return "/usr" + path
    return path


def owners():
    """Every file a Debian package installed -> that package (dpkg's own lists)."""
    owner = {}
    for listing in glob.glob("/var/lib/dpkg/info/*.list"):
        package = os.path.basename(listing)[:-len(".list")].split(":")[0]
        with open(listing, errors="replace") as f:
            for line in f:
                owner.setdefault(canonical(line.rstrip("\n")), package)
    return owner


def declared_closure(source, without):
    """install-deps.sh's packages, what they depend on, and Debian's required base."""
    listed = subprocess.run([os.path.join(source, "scripts", "install-deps.sh"), "--list-packages"],
                            capture_output=True, text=True, check=True).stdout.split()
    listed = [p for p in listed if p not in without]
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *listed],
                         capture_output=True, text=True, check=True).stdout
    closure = set(listed)
    for line in out.splitlines():
        name = line.strip()
        if line.startswith(" "):
            # "  Depends: pkg" or, under a virtual "<name>", its providers "    pkg"
            name = name.split(":", 1)[1].strip() if ":" in name else name
        name = name.strip("<>").split(":")[0]
        if name:
            closure.add(name)
    base = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential} ${Priority}\n"],
                          capture_output=True, text=True, check=True).stdout
    for line in base.splitlines():
        package, essential, priority = (line.split() + ["", "", ""])[:3]
        if essential == "yes" or priority == "required":
            closure.add(package)
    return listed, closure


def outside(path, excluded):
    return any(path == e or path.startswith(e + os.sep) for e in excluded)


def headers(build):
    """Every header ninja's dependency log says the compiler read."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    paths = set()
    for line in out.splitlines():
        if line.startswith("    "):
            path = line.strip()
            paths.add(os.path.normpath(path if os.path.isabs(path) else os.path.join(build, path)))
    return paths


def loaded_libraries(build):
    """Every shared library the built executables and modules load."""
    binaries = [p for p in glob.glob(os.path.join(build, "bin", "*")) if os.access(p, os.X_OK) and os.path.isfile(p)]
    binaries += glob.glob(os.path.join(build, "**", "*.so"), recursive=True)
    paths = set()
    for binary in binaries:
        run = subprocess.run(["ldd", binary], capture_output=True, text=True)
        for line in run.stdout.splitlines():
            m = re.search(r"=>\s+(/\S+)", line) or re.match(r"\s*(/\S+)\s+\(", line)
            if m:
                paths.add(os.path.normpath(m.group(1)))
            elif "not found" in line:
                print(f"declared_dependencies: {binary} loads {line.split()[0]}, which is not found", file=sys.stderr)
    return binaries, paths


def main(argv):
    args, without = argv[1:], []
    while "--without" in args:
        i = args.index("--without")
        if i + 1 >= len(args):
            args = []
            break
        without.append(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2 or not os.path.isdir(args[0]) or not os.path.isdir(args[1]):
        print("usage: declared_dependencies.py SOURCE_DIR BUILD_DIR [--without PACKAGE]...", file=sys.stderr)
        return 2
    source, build = os.path.realpath(args[0]), os.path.realpath(args[1])
    excluded = [source, build, os.path.join(source, ".venv"), "/usr/local/cuda", os.path.realpath("/usr/local/cuda")]
    listed, closure = declared_closure(source, without)
    owner = owners()
    header_paths = headers(build)
    binaries, libraries = loaded_libraries(build)
    problems = []
    checked = {"header": 0, "library": 0}
    for kind, paths in (("header", header_paths), ("library", libraries)):
        for path in sorted(paths):
            if outside(path, excluded) or outside(os.path.realpath(path), excluded):
                continue
            checked[kind] += 1
            package = owner.get(canonical(path)) or owner.get(canonical(os.path.realpath(path)))
            if package is None:
                problems.append(f"{kind} {path} belongs to no Debian package (installed by hand?)")
            elif package not in closure:
                problems.append(f"{kind} {path} is from {package}, which scripts/install-deps.sh does not install "
                                "(nor anything it installs depends on it)")
    if not header_paths or not binaries:
        problems.append(f"nothing to check in {build}: build it first (with Ninja)")
    # One line per package (or per folder of files no package owns) is enough to act on.
    seen = set()
    for line in problems:
        if " is from " in line:
            key = line.split(" is from ")[1].split(",")[0]
        elif " belongs to no " in line:
            key = os.sep.join(line.split()[1].split(os.sep)[:5])
        else:
            key = line
        if key not in seen:
            seen.add(key)
            print("declared_dependencies: " + line)
    print(f"declared_dependencies: {checked['header']} system headers and {checked['library']} shared libraries "
          f"of {len(binaries)} binaries checked against {len(listed)} declared packages "
          f"({len(closure)} with their dependencies): {len(seen)} undeclared")
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
