"""Fails where product code compares with a specific Scheme or Policy value.

Every per-scheme and per-policy rule is one row of traces/scheme_description.cc
or traces/policy_description.cc; code elsewhere asks a description (InSet,
one_level(), PolicyFitProblem, BaselinePolicyFor). A comparison such as
`scheme == Scheme::kBatch`, `policy != Policy::kAdaqs`, `case Policy::kSmith:`
or `x == Scheme::kTopK ? a : b` is a rule written a second time, which a new
row silently escapes (a new scheme got no error profile, no AdaQS, no advice).
Naming a value is fine where it is not compared: a default member initialiser
(`Scheme scheme = Scheme::kDense;`), a row of a table, an argument.

Usage: enum_comparisons.py SOURCE_DIR [FILE...]
Without FILEs it scans the product folders. Exit 0: none; 1: one line each,
file:line: the comparison; 2: bad arguments.
"""

import os
import re
import sys

PRODUCT_DIRS = ("trainer", "analysis", "simulator", "common", "traces", "gui", "python/src")
SUFFIXES = (".cc", ".h", ".cpp", ".hpp")
# The tables themselves: their enum-to-row code compares by design.
TABLES = {"traces/scheme_description.cc", "traces/policy_description.cc"}

VALUE = r"\b(?:Scheme|Policy)::k\w+"
PATTERNS = (
    ("comparison", re.compile(r"[=!]=\s*(?:::)?(?:\w+::)*" + VALUE[2:])),
    ("comparison", re.compile(VALUE + r"\s*[=!]=")),
    ("case label", re.compile(r"\bcase\s+(?:::)?(?:\w+::)*" + VALUE[2:])),
    ("ternary condition", re.compile(VALUE + r"\s*\?")),
)


def strip_comments_and_strings(text):
    """The text with comments and literals blanked, line breaks kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if j < n and text[j] == c:
                out.append(c + " " * (j - i - 1) + c)
                i = j + 1
            else:  # not a literal after all (a digit separator): keep the line break
                out.append(c + " " * (j - i - 1))
                i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def findings(path, text):
    code = strip_comments_and_strings(text)
    lines = text.split("\n")
    seen = set()
    for what, pattern in PATTERNS:
        for m in pattern.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            if line in seen:
                continue
            seen.add(line)
            yield line, "%s:%d: %s with a Scheme/Policy value: %s" % (path, line, what, lines[line - 1].strip())


def product_files(source_dir):
    for top in PRODUCT_DIRS:
        for root, dirs, files in os.walk(os.path.join(source_dir, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(root, name), source_dir)


def main(argv):
    if len(argv) < 2 or not os.path.isdir(argv[1]):
        print("usage: enum_comparisons.py SOURCE_DIR [FILE...]", file=sys.stderr)
        return 2
    source_dir = argv[1]
    files = argv[2:] or list(product_files(source_dir))
    problems = []
    for rel in files:
        rel = os.path.relpath(os.path.join(source_dir, rel), source_dir)
        if rel in TABLES:
            continue
        with open(os.path.join(source_dir, rel), encoding="utf-8", errors="replace") as f:
            found = sorted(findings(rel, f.read()))
        problems.extend(message for _, message in found)
    for message in problems:
        print(message)
    if problems:
        print("%d comparison(s) with Scheme/Policy values outside the description tables: ask a "
              "SchemeDescription or PolicyDescription instead (docs/ARCHITECTURE.md, How to add ...)" % len(problems))
        return 1
    print("no comparison with a Scheme/Policy value outside the description tables (%d files)" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
