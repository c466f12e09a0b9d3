#!/usr/bin/python3
"""No circle of calls between the files of a program's folder.

A folder's files each have one job when each calls only files below it:
for every .c in FOLDER, the functions it defines without `static`, then
which other files call them; a circle (a.c calls b.c, which calls back
into a.c, directly or through others) fails, naming it.  Calls are found
by name in the text with comments and strings blanked (check_layers'
reading), which is enough for C files that share one header.

check_calls.py SOURCE_ROOT FOLDER...
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import strip_comments  # noqa: E402

DEFINED = re.compile(r"^(?!static\b)[a-z][^\n;(]*\n([a-z_][a-z_0-9]*)\(", re.M)


def graph(folder):
    texts = {}
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".c"):
            with open(os.path.join(folder, fn), encoding="utf-8") as f:
                texts[fn] = strip_comments(f.read())
    owner = {m.group(1): fn for fn, t in texts.items() for m in DEFINED.finditer(t)}
    calls = {fn: {} for fn in texts}
    for fn, t in texts.items():
        for name, where in owner.items():
            if where != fn and re.search(r"\b%s\s*\(" % re.escape(name), t):
                calls[fn].setdefault(where, []).append(name)
    return calls


def circle(calls):
    """One circle as a list of files, or None."""
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(calls[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(calls):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def main(root, folders):
    bad = 0
    for rel in folders:
        calls = graph(os.path.join(root, rel))
        c = circle(calls)
        if c:
            steps = [f"{a} calls {b} ({', '.join(sorted(calls[a][b])[:3])})"
                     for a, b in zip(c, c[1:])]
            print(f"{rel}: a circle of calls: " + "; ".join(steps))
            bad += 1
        else:
            print(f"{rel}: {len(calls)} files, no circle of calls")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print("usage: check_calls.py SOURCE_ROOT FOLDER...")
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
