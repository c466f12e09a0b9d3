#!/usr/bin/python3
"""A man page from what a program's --help prints, so the two never disagree.

manpage.py NAME SUMMARY OUT PROGRAM [SEE_ALSO ...]

Runs PROGRAM --help and writes OUT, section 1, by the layout every
Ethereal-DPDK program's usage follows (argparse's too):

  usage: PROG ...           SYNOPSIS, with the lines under it indented 4 or
      ...                   more (PROG becomes NAME: a path, or a script's
                            name in the source tree, is not what is installed)
  -x, --opt ARG   text      an option: the term, then two spaces or more,
                   more     then its text; deeper lines go on with the text
  Heading:                  a subsection (argparse's "options:")
  any other line            text; lines indented 2 or more are kept as they
                            are (examples, tables)

help2man needs "Usage:" and one usage line; ours are lower case and wrapped.
"""
import re
import subprocess
import sys

ITEM = re.compile(r"^( {1,8})(-\S.*?|[A-Z][A-Z_]+)(?: {2,}(\S.*))?$")


def indent(line):
    return len(line) - len(line.lstrip())


def roff(text):
    """Text as roff: backslashes and minus signs escaped, no line starting
    with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def convert(name, summary, help_text, see_also):
    lines = help_text.rstrip().splitlines()
    out = [f'.TH "{name.upper()}" 1 "" "Ethereal-DPDK" "User Commands"', ".SH NAME",
           roff(f"{name} - {summary}")]
    i = 0
    if lines and lines[0].lower().startswith("usage:"):
        synopsis = [re.sub(r"^usage:\s*\S+", name, lines[0], flags=re.I)]
        i = 1
        while i < len(lines) and lines[i].startswith("    "):
            synopsis.append("    " + lines[i].strip())
            i += 1
        out += [".SH SYNOPSIS", ".nf"] + [roff(s) for s in synopsis] + [".fi"]
    out.append(".SH DESCRIPTION")
    state = None  # the kind of the line before
    while i < len(lines):
        line, m = lines[i], ITEM.match(lines[i])
        kind = ("break" if not line.strip() else
                "item" if m and (m.group(2).startswith("-") or m.group(3) or
                                 i + 1 < len(lines) and indent(lines[i + 1]) > len(m.group(1)) + 2)
                else "verbatim" if line.startswith("  ")
                else "heading" if re.fullmatch(r"[A-Za-z][\w ]*:", line) else "text")
        if state == "verbatim" and kind != "verbatim":
            out.append(".fi")
        if kind == "break":
            out.append(".PP")
        elif kind == "item":
            text = [m.group(3)] if m.group(3) else []
            while i + 1 < len(lines) and lines[i + 1].strip() and \
                    indent(lines[i + 1]) > len(m.group(1)) + 2:
                i += 1
                text.append(lines[i].strip())
            out += [".TP", ".B " + roff(m.group(2).strip()), roff(" ".join(text))]
        elif kind == "verbatim":
            out += [] if state == "verbatim" else [".PP", ".nf"]
            out.append(roff(line))
        elif kind == "heading":
            out.append(".SS " + roff(line[:-1]))
        else:
            out += [".PP"] if state in ("item", "verbatim") else []
            out.append(roff(line))
        state = kind
        i += 1
    out += [".fi"] if state == "verbatim" else []
    others = [s for s in see_also if s != name]
    if others:
        out += [".SH SEE ALSO", ",\n".join(f".BR {roff(s)} (1)" for s in others)]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.strip())
    name, summary, out, program = sys.argv[1:5]
    r = subprocess.run([program, "--help"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        sys.exit(f"manpage.py: {program} --help: exit {r.returncode}: {r.stderr.strip()}")
    with open(out, "w") as f:
        f.write(convert(name, summary, r.stdout, sys.argv[5:]))


if __name__ == "__main__":
    main()
