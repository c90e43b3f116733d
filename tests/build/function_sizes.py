"""Fails where a product function is longer than the limit (150 lines).

A function is the body of a brace that follows a parameter list - `f(...) {`,
`f(...) const {`, a constructor's initialiser list `: a_(x) {`, `-> T {` -
outside any other function; lambdas and local classes count towards the
function they are in. Comments and string literals (raw ones too) are blanked
first, so their braces do not count. The count is the body's lines, from the
opening brace's line to the closing one's.

Usage: function_sizes.py SOURCE_DIR [--limit N] [FILE...]
Without FILEs it scans the product folders. Exit 0: none over; 1: one line
each, file:line: lines and the function's head; 2: bad arguments.
"""

import os
import re
import sys

from enum_comparisons import PRODUCT_DIRS, SUFFIXES, strip_comments_and_strings

RAW = re.compile(r'R"([^(\s]{0,16})\(')
HEAD_ENDS_A_FUNCTION = re.compile(r"\)\s*(?:const|override|noexcept|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$")
CONTROL = re.compile(r"\b(?:if|for|while|switch|catch)\s*\(")


def blank_raw_strings(text):
    out, i = [], 0
    for m in RAW.finditer(text):
        if m.start() < i:
            continue
        end = text.find(")" + m.group(1) + '"', m.end())
        if end < 0:
            break
        end += len(m.group(1)) + 2
        out.append(text[i:m.start()])
        out.append(re.sub(r"[^\n]", " ", text[m.start():end]))
        i = end
    out.append(text[i:])
    return "".join(out)


def functions(text):
    """(first line, lines, head) of each outermost function body in `text`."""
    code = strip_comments_and_strings(blank_raw_strings(text))
    stack, last = [], 0
    for i, c in enumerate(code):
        if c == "{":
            head = code[last:i]
            last_line = head.rstrip().split("\n")[-1]
            is_function = bool(HEAD_ENDS_A_FUNCTION.search(head)) and not CONTROL.search(last_line)
            inside = any(f for f, _, _ in stack)
            stack.append((is_function and not inside, i, head))
            last = i + 1
        elif c == "}":
            if stack:
                is_function, start, head = stack.pop()
                if is_function:
                    first = code.count("\n", 0, start) + 1
                    yield first, code.count("\n", start, i) + 1, " ".join(head.split())[-100:]
            last = i + 1
        elif c == ";":
            last = i + 1


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    root, rest = argv[1], argv[2:]
    limit = 150
    if rest[:1] == ["--limit"]:
        if len(rest) < 2 or not rest[1].isdigit():
            print("function_sizes.py: --limit takes a number of lines", file=sys.stderr)
            return 2
        limit, rest = int(rest[1]), rest[2:]
    files = [os.path.join(root, f) for f in rest]
    if not files:
        for d in PRODUCT_DIRS:
            for dirpath, _, names in os.walk(os.path.join(root, d)):
                files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(SUFFIXES)]
    over = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for first, lines, head in functions(text):
            if lines > limit:
                over.append("%s:%d: %d lines (limit %d): %s" % (os.path.relpath(path, root), first, lines, limit, head))
    for line in over:
        print(line)
    if over:
        print("%d function(s) over %d lines: split them into named steps" % (len(over), limit))
        return 1
    print("no function over %d lines (%d files)" % (limit, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
