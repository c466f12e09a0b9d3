#!/usr/bin/python3
"""The layer rule: who may include whom, as docs/architecture.md states it.

Reads the ```layers block of docs/architecture.md (the doc is the rule),
scans every .c and .h under lib/, switch/, app/, bench/, prov/ and verbs/ for
#include "..." and #include <...>, and fails naming file:line and the
broken rule for:

  - an include of a layer the including file's layer may not include
    (each file belongs to the layer of the longest folder that holds it);
  - a lib/ header not spelled by its layer path ("transport/et_qp.h");
  - a *_priv.h header included from outside its own folder and tests/;
  - in a pure (sans-I/O) layer: a forbidden system header, or a call of a
    forbidden I/O, clock or unseeded-randomness function;
  - an include that resolves to no file, a file in no layer, a rule that
    names an unknown layer, and a `debt` line that no longer matches
    anything (the debt is paid: remove its line).

Folders named in the block that do not exist yet (lib/sim, app/common) are
fine.  Known violations listed as `debt` lines are reported, not failed.

check_layers.py [SOURCE_ROOT]
"""
import fnmatch
import os
import re
import sys

DOC = "docs/architecture.md"
SCANNED = ("lib", "switch", "app", "bench", "prov", "verbs")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Rules:
    def __init__(self):
        self.layers = {}       # name -> (folders, set of layers it may include)
        self.order = []
        self.roots = []        # include search roots after the file's own folder
        self.qualified = []    # folders whose headers are spelled from that folder
        self.own_folder = set()  # layers whose files include one another in one folder
        self.private = []      # glob patterns of private headers
        self.pure = set()
        self.exempt = set()    # files of pure layers allowed to do I/O
        self.headers = set()
        self.calls = set()
        self.debts = []        # (line in doc, file, target, text)


def fail_doc(msg):
    print(f"{DOC}: {msg}")
    sys.exit(1)


def parse_rules(root):
    path = os.path.join(root, DOC)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        fail_doc(f"cannot read: {e}")
    start = next((i for i, l in enumerate(lines) if l.strip() == "```layers"), None)
    if start is None:
        fail_doc("no ```layers block")
    r = Rules()
    for no in range(start + 1, len(lines)):
        line = lines[no].split("#", 1)[0].strip()
        if lines[no].strip() == "```":
            break
        if not line:
            continue
        words = line.split()
        key, args = words[0], words[1:]
        where = f"line {no + 1}"
        if key == "layer":
            if ":" not in args:
                fail_doc(f"{where}: expected 'layer NAME FOLDER... : LAYER...'")
            colon = args.index(":")
            if colon < 2:
                fail_doc(f"{where}: a layer needs a name and at least one folder")
            name = args[0]
            r.layers[name] = (args[1:colon], set(args[colon + 1:]))
            r.order.append(name)
        elif key == "roots":
            r.roots += args
        elif key == "qualified":
            r.qualified += args
        elif key == "own-folder":
            r.own_folder |= set(args)
        elif key == "private":
            r.private += args
        elif key == "pure":
            r.pure |= set(args)
        elif key == "io-allowed":
            r.exempt |= set(args)
        elif key == "forbid-header":
            r.headers |= set(args)
        elif key == "forbid-call":
            r.calls |= set(args)
        elif key == "debt":
            if len(args) < 2:
                fail_doc(f"{where}: expected 'debt FILE INCLUDED-FILE [why]'")
            r.debts.append((no + 1, args[0], args[1], " ".join(args[2:])))
        else:
            fail_doc(f"{where}: unknown keyword '{key}'")
    else:
        fail_doc("the ```layers block is not closed")
    if not r.layers:
        fail_doc("the ```layers block defines no layer")
    for name, (_, may) in r.layers.items():
        for m in may:
            if m != "*" and m not in r.layers:
                fail_doc(f"layer {name} may include '{m}', which is no layer")
    for name in r.pure | r.own_folder:
        if name not in r.layers:
            fail_doc(f"'{name}' is no layer")
    return r


def layer_of(r, rel):
    """The layer of the longest folder (or file) that holds rel."""
    best, best_len = None, -1
    for name, (folders, _) in r.layers.items():
        for f in folders:
            if (rel == f or rel.startswith(f + "/")) and len(f) > best_len:
                best, best_len = name, len(f)
    return best


def strip_comments(text):
    """Blank out comments, string and char literals, keeping line breaks."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def resolve(root, r, rel, target):
    """The file an #include "target" in rel names, relative to root."""
    for base in [os.path.dirname(rel)] + r.roots:
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def sources(root):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, fn), root)


def check(root):
    r = parse_rules(root)
    calls = re.compile(r"(?<![\w.>])(" + "|".join(map(re.escape, sorted(r.calls))) +
                       r")\s*\(") if r.calls else None
    errors, debts_hit = [], set()

    def broken(rel, no, target, msg):
        for d in r.debts:
            if d[1] == rel and d[2] == target:
                debts_hit.add(d)
                print(f"debt {rel}:{no}: {msg} (listed in {DOC} line {d[0]})")
                return
        errors.append(f"{rel}:{no}: {msg}")

    for rel in sources(root):
        layer = layer_of(r, rel)
        if layer is None:
            errors.append(f"{rel}: in no layer of the ```layers block in {DOC}")
            continue
        may = r.layers[layer][1]
        pure = layer in r.pure and rel not in r.exempt
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        code = strip_comments(text)
        raw_lines, code_lines = text.split("\n"), code.split("\n")
        for no, line in enumerate(raw_lines, 1):
            if not code_lines[no - 1].lstrip().startswith("#"):
                continue
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            if kind == "<":
                if pure and target in r.headers:
                    broken(rel, no, target,
                           f"<{target}> in {layer}, a pure (sans-I/O) layer: "
                           f"no ports, clocks, files or threads here")
                continue
            dest = resolve(root, r, rel, target)
            if dest is None:
                errors.append(f'{rel}:{no}: "{target}" resolves to no file '
                              f"(searched {os.path.dirname(rel)}/, "
                              + ", ".join(x + "/" for x in r.roots) + ")")
                continue
            to = layer_of(r, dest)
            if to is None:
                errors.append(f'{rel}:{no}: "{target}" is {dest}, in no layer')
                continue
            for q in r.qualified:
                if dest.startswith(q + "/") and target != os.path.relpath(dest, q):
                    broken(rel, no, dest,
                           f'"{target}": spell it "{os.path.relpath(dest, q)}" '
                           f"(headers under {q}/ are included by their layer path)")
            if to != layer and "*" not in may and to not in may:
                allowed = " ".join(sorted(may)) or "nothing"
                broken(rel, no, dest,
                       f'"{target}" ({dest}): {layer} may not include {to} '
                       f"({layer} may include: {allowed})")
            elif (to == layer and layer in r.own_folder and
                  os.path.dirname(dest) != os.path.dirname(rel)):
                broken(rel, no, dest,
                       f'"{target}" ({dest}): a {layer} includes {layer} files '
                       f"of its own folder only; shared code goes to a layer")
            if (any(fnmatch.fnmatch(os.path.basename(dest), p) for p in r.private) and
                    os.path.dirname(dest) != os.path.dirname(rel) and
                    layer_of(r, rel) != "tests"):
                broken(rel, no, dest,
                       f'"{target}": a private header, only for '
                       f"{os.path.dirname(dest)}/ and tests/")
        if pure and calls:
            for no, line in enumerate(code_lines, 1):
                for m in calls.finditer(line):
                    broken(rel, no, m.group(1) + "()",
                           f"{m.group(1)}() in {layer}, a pure (sans-I/O) layer: "
                           f"take now_ns / a seeded et_rand, leave I/O to link")

    for d in r.debts:
        if d not in debts_hit:
            errors.append(f"{DOC}:{d[0]}: debt '{d[1]} {d[2]}' no longer occurs: "
                          f"remove its line")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layer violation(s); the rule is the ```layers block "
              f"in {DOC}")
        return 1
    print(f"layers: ok ({len(list(sources(root)))} files, {len(debts_hit)} known debt(s))")
    return 0


if __name__ == "__main__":
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else
                   os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
