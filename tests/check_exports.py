#!/usr/bin/python3
"""libethereal.so's exports are its public headers' declarations, and the
packaging knows them (install/meson.build says why):

- `nm -D` of the library, its defined symbols, against what the public
  headers declare (install/exports.py's reading): a symbol exported and
  declared nowhere public, or a declaration with no symbol behind it,
  fails;
- the same symbols against debian/libethereal0.symbols, so a change of
  the ABI is a change of that file in the same commit.

check_exports.py SOURCE_ROOT LIBRARY HEADER...
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "install"))
import exports  # noqa: E402

VERSION = "ETHEREAL_0"


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            names.add(parts[2].split("@", 1)[0])
    names.discard(VERSION)
    return names


def symbols_file(path):
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^ (\S+)@(\S+) ", line)
            if m and m.group(2) == VERSION and m.group(1) != VERSION:
                names.add(m.group(1))
    return names


def report(what, names):
    if names:
        print(f"{what} ({len(names)}): " + " ".join(sorted(names)))
    return bool(names)


def main(src, lib, headers):
    have = exported(lib)
    declared = set(exports.declared(headers))
    listed = symbols_file(os.path.join(src, "debian", "libethereal0.symbols"))
    bad = report("exported, declared in no public header (give it a public declaration, "
                 "or make it static or private)", have - declared)
    bad |= report("declared in a public header, not in the library (a stale declaration)",
                  declared - have)
    bad |= report("exported, missing from debian/libethereal0.symbols (add it)",
                  have - listed)
    bad |= report("in debian/libethereal0.symbols, no longer exported (an ABI break: "
                  "remove it and say so, or keep the function)", listed - have)
    if bad:
        return 1
    print(f"exports: {len(have)} symbols, each declared in a public header and listed in "
          "debian/libethereal0.symbols")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print("usage: check_exports.py SOURCE_ROOT LIBRARY HEADER...")
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
