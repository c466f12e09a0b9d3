#!/usr/bin/python3
"""README's examples, run as written: a broken example fails CI.

Every ```sh block of README.md runs with bash -e, unless the line before it
is a marker comment:

  <!-- readme-test: skip (why) -->   not run: needs root, a NIC, a VM, or hours
  <!-- readme-test: check -->        each program line gets --check appended:
                                     ethereal-fabric and scripts/sweep check
                                     their arguments and conf and run nothing

A block runs in a fresh folder where conf/, scripts/ and build/ lead to the
source tree and to the build being tested, whatever its folder is called, so
README's relative paths work and its outputs (out.json, results/) land there;
/tmp/ in a block becomes that folder too.  The scripts find the build being
tested as a user would point them at any build: ETHEREAL_BUILD names it.
Jobs a block puts in the background must end with status 0.

check_readme.py SOURCE_ROOT BUILD_ROOT WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys
import time

MARK = re.compile(r"<!--\s*readme-test:\s*(skip|check)\b[^>]*-->")
PROGRAMS = ("build/app/ethereal-fabric", "scripts/sweep")


def blocks(text):
    """(line number, marker or None, body) of every ```sh block."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start, body = i + 1, []
            prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            m = MARK.search(prev)
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((start, m.group(1) if m else None, "\n".join(body)))
        i += 1
    return out


def with_check(body):
    """--check after each command of PROGRAMS (a command may go on over
    lines ending in a backslash; a comment after it stays a comment)."""
    out, joined = [], body.replace("\\\n", " ")
    for line in joined.splitlines():
        code, hash_, comment = line.partition("   #")
        if any(p in code for p in PROGRAMS):
            code = code.rstrip() + " --check"
        out.append(code + (("   #" + comment) if hash_ else ""))
    return "\n".join(out)


def main():
    src, build, work = (os.path.abspath(x) for x in sys.argv[1:4])
    with open(os.path.join(src, "README.md")) as f:
        found = blocks(f.read())
    fails = ran = 0
    for n, (line, mark, body) in enumerate(found):
        if mark == "skip":
            print(f"skip README.md:{line}")
            continue
        d = os.path.join(work, f"block{n}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name in ("conf", "scripts"):
            os.symlink(os.path.join(src, name), os.path.join(d, name))
        os.symlink(build, os.path.join(d, "build"))
        script = with_check(body) if mark == "check" else body
        script = script.replace("/tmp/", d + "/")
        script = ("set -e\n" + script +
                  "\nfor j in $(jobs -p); do wait $j || { echo \"a background job failed\"; exit 1; }; done\n")
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-c", script], cwd=d, capture_output=True, text=True,
                           timeout=240, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                                                 ETHEREAL_BUILD=build))
        ran += 1
        ok = r.returncode == 0 and "Sanitizer" not in r.stderr
        print(("ok  " if ok else "FAIL") +
              f" README.md:{line} ({mark or 'run'}, {time.monotonic() - t0:.1f} s)", flush=True)
        if not ok:
            fails += 1
            print(f"exit {r.returncode}\n--- script\n{script}\n--- stdout\n{r.stdout[-3000:]}"
                  f"\n--- stderr\n{r.stderr[-3000:]}")
    if ran == 0:
        print("FAIL no runnable block found")
        fails += 1
    print(f"{ran - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
