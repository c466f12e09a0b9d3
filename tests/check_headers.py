#!/usr/bin/python3
"""libethereal's installed headers stand on their own (docs/architecture.md,
"What is installed"):

- every header of lib/ and switch/ is installed (install/meson.build) or
  private (*_priv.h), so the decision is kept as headers come and go;
- no installed header includes one that is not installed (a private one,
  a program's, a test's);
- each compiles alone as a user would build against the installed tree:
  -I INCLUDEDIR/ethereal and DPDK's flags, warnings as errors.

What is installed where comes from meson's own record of the build
(meson introspect --installed), not from a copy of the list.

check_headers.py SOURCE_ROOT BUILD_ROOT WORKDIR
"""
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
OURS = ("base/", "wire/", "transport/", "link/", "topo/", "lb/", "coll/", "host/", "sim/", "et_")


def installed_headers(build):
    """{path under include/ethereal/: source file} of what meson installs."""
    out = subprocess.run(["meson", "introspect", "--installed", build], capture_output=True,
                         text=True, check=True).stdout
    marker = "/include/ethereal/"
    return {dest.split(marker, 1)[1]: src for src, dest in json.loads(out).items()
            if marker in dest}


def main():
    src, build, work = (os.path.abspath(a) for a in sys.argv[1:4])
    headers = installed_headers(build)
    bad = []
    if not headers:
        bad.append("no header is installed under include/ethereal/")

    installed_src = {os.path.realpath(s) for s in headers.values()}
    for top in ("lib", "switch"):
        for d, _, files in os.walk(os.path.join(src, top)):
            for f in sorted(files):
                p = os.path.realpath(os.path.join(d, f))
                if f.endswith(".h") and not f.endswith("_priv.h") and p not in installed_src:
                    bad.append(f"{os.path.relpath(p, src)}: neither installed "
                               "(install/meson.build) nor private (*_priv.h)")

    for rel, s in sorted(headers.items()):
        with open(s) as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            inc = m.group(2)
            line = text.count("\n", 0, m.start()) + 1
            if (m.group(1) == '"' or inc.startswith(OURS)) and inc not in headers:
                bad.append(f"{os.path.relpath(s, src)}:{line}: includes {inc}, "
                           "which is not installed")

    # each alone, against a copy of the installed tree only
    inc_dir = os.path.join(work, "include", "ethereal")
    shutil.rmtree(work, ignore_errors=True)
    for rel, s in headers.items():
        os.makedirs(os.path.dirname(os.path.join(inc_dir, rel)), exist_ok=True)
        shutil.copy(s, os.path.join(inc_dir, rel))
    dpdk = shlex.split(subprocess.run(["pkg-config", "--cflags", "libdpdk"], capture_output=True,
                                      text=True, check=True).stdout)
    cc = shlex.split(os.environ.get("CC", "cc"))

    def compile_alone(rel):
        r = subprocess.run(cc + ["-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", inc_dir]
                           + dpdk + ["-x", "c", "-"], input=f'#include "{rel}"\n',
                           capture_output=True, text=True)
        return rel, r.returncode, r.stderr

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for rel, rc, err in pool.map(compile_alone, sorted(headers)):
            if rc != 0:
                bad.append(f"include/ethereal/{rel}: does not compile alone:\n{err[-1500:]}")

    for b in bad:
        print("FAIL", b)
    print(f"headers: {len(headers)} installed, {len(bad)} problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
