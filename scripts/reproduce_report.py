"""scripts/reproduce's outputs from its runs: claims.md (the paper's
evaluation claims, theirs and ours) and the figures (PNG, in the style of
the paper's).  Reads only the rows of results.csv (dicts from the runs'
JSON); runs nothing.

A claim is one entry of CLAIMS: where the paper says it, what it says, its
number, and how ours is computed from the runs (a function of the index).
Add a claim by adding an entry.
"""
import importlib.machinery
import os
import statistics

# scripts/sweep's size_label, imported as scripts/reproduce imports it
sweep = importlib.machinery.SourceFileLoader(
    "sweep", os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep")).load_module()
size_label = sweep.size_label

# Within this many percentage points (or QPs, for a QP count) a number of
# ours agrees with the paper's; a simulator on real frames and Astra-Sim
# differ in too many details for a closer match to mean much.
AGREE_POINTS = 5.0


class Index:
    """The runs by (fabric, kind, algo, size label, lb); size label "" for a
    workload."""

    def __init__(self, rows):
        self.rows = {}
        for r in rows:
            size = "" if r.get("workload") else size_label(int(r["size_bytes"]))
            self.rows[(r["fabric"], r["kind"], r["algo"], size, r["lb"])] = r
        self.asked_failed = []  # failed runs a claim needed

    def get(self, fabric, kind, algo, size, lb):
        r = self.rows.get((fabric, kind, algo, size, lb))
        if r and (r.get("error") or not r.get("cct_ns")):
            if r not in self.asked_failed:
                self.asked_failed.append(r)
            return None
        return r


class Result:
    """Ours for one claim: the value, the runs it came from, and the
    points it needed but did not find."""

    def __init__(self):
        self.values, self.used, self.missing = [], {}, 0

    def use(self, lb, row):
        self.used.setdefault(lb, []).append(row)


def reduction(ix, fabrics, kind, algos, sizes, bases, agg):
    """Ethereal's CCT reduction against the baselines, 1 - ours/theirs in
    %, over the product of the lists, folded by agg (mean, max)."""
    res = Result()
    for f in fabrics:
        for algo in algos:
            for size in sizes:
                for base in bases:
                    e, b = ix.get(f, kind, algo, size, "ethereal"), ix.get(f, kind, algo, size, base)
                    if e is None or b is None:
                        res.missing += 1
                        continue
                    res.values.append(100.0 * (1 - int(e["cct_ns"]) / int(b["cct_ns"])))
                    res.use("ethereal", e)
                    res.use(base, b)
    res.value = agg(res.values) if res.values else None
    return res


def longer(ix, fabric, kind, algo, size, lb, ref="ethereal"):
    """How much longer lb takes than ref (Ethereal): CCT(lb)/CCT(ref) - 1, in %."""
    res = Result()
    a, b = ix.get(fabric, kind, algo, size, ref), ix.get(fabric, kind, algo, size, lb)
    if a is None or b is None:
        res.missing, res.value = 1, None
        return res
    res.value = 100.0 * (int(b["cct_ns"]) / int(a["cct_ns"]) - 1)
    res.use(ref, a)
    res.use(lb, b)
    return res


def max_qps(ix, fabrics, kinds, algos, lb):
    """The most QPs a host of lb held at once over these runs."""
    res = Result()
    for (f, kind, algo, _, l), r in ix.rows.items():
        if f in fabrics and kind in kinds and algo in algos and l == lb and not r.get("error"):
            res.values.append(int(r["max_qps_per_host"]))
            res.use(lb, r)
    res.missing = 0 if res.values else 1
    res.value = max(res.values) if res.values else None
    return res


def spread(ix, fabrics, kind, algos, sizes, lbs):
    """The largest spread of CCT over the policies at one point,
    max/min - 1 in %: how much the policy matters there."""
    res = Result()
    for f in fabrics:
        for algo in algos:
            for size in sizes:
                pts = [(lb, ix.get(f, kind, algo, size, lb)) for lb in lbs]
                pts = [(lb, r) for lb, r in pts if r]
                if len(pts) < 2:
                    res.missing += 1
                    continue
                c = [int(r["cct_ns"]) for _, r in pts]
                res.values.append(100.0 * (max(c) / min(c) - 1))
                for lb, r in pts:
                    res.use(lb, r)
    res.value = max(res.values) if res.values else None
    return res


LS, FT, BOTH = ["leaf-spine"], ["fat-tree"], ["leaf-spine", "fat-tree"]
ALGOS = ["a2a", "rd", "ring", "dbt"]
SIZES = ["4M", "8M", "16M", "32M", "64M", "128M", "256M"]
FAIL_SIZES = ["4M", "8M", "16M", "32M", "64M"]
FAIL_LARGE = ["128M"]  # past one BDP; the matrix fails a link at one such size
mean, top = statistics.mean, max

# (where, the claim, the paper's number, unit, how it compares, ours)
# compare: "=" within AGREE_POINTS; "<=" ours at most the paper's; ">" more
CLAIMS = [
    ("Q1", "Ethereal reduces CCT by up to X% vs packet spraying (large messages: "
     "128-256 MB, any fabric and algorithm)", 37.99, "%", "=",
     lambda ix: reduction(ix, BOTH, "cct", ALGOS, ["128M", "256M"], ["spray"], top)),
    ("Q1", "GPT-2: Ethereal reduces communication time per iteration by X% on average "
     "vs packet spraying (a2a and rd, both fabrics)", 11.55, "%", "=",
     lambda ix: reduction(ix, BOTH, "gpt2", ["a2a", "rd"], [""], ["spray"], mean)),
    ("Q2", "Failure: Ethereal improves CCT by X% on average vs packet spraying "
     "(4-64 MB, a2a and rd, both fabrics)", 68.91, "%", "=",
     lambda ix: reduction(ix, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES, ["spray"], mean)),
    ("Q2", "Failure: ... and by X% vs REPS", 58.4, "%", "=",
     lambda ix: reduction(ix, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES, ["reps"], mean)),
    ("Q3", "Ethereal uses at most X QPs per host with recursive doubling (both fabrics)",
     32, "QPs", "<=", lambda ix: max_qps(ix, BOTH, ["cct", "failure", "gpt2"], ["rd"],
                                         "ethereal")),
    ("5.3 fig 1", "Leaf-spine: Ethereal beats ECMP at 16 MB by X% (a2a; the paper does "
     "not name the algorithm)", 7.56, "%", "=",
     lambda ix: reduction(ix, LS, "cct", ["a2a"], ["16M"], ["ecmp"], mean)),
    ("5.3 fig 1a", "Leaf-spine a2a 128 MB: X% vs REPS", 8.6, "%", "=",
     lambda ix: reduction(ix, LS, "cct", ["a2a"], ["128M"], ["reps"], mean)),
    ("5.3 fig 1a", "Leaf-spine a2a 256 MB: X% vs REPS", 26.03, "%", "=",
     lambda ix: reduction(ix, LS, "cct", ["a2a"], ["256M"], ["reps"], mean)),
    ("5.3 fig 1b", "Leaf-spine rd 128 MB: X% vs REPS", 37.98, "%", "=",
     lambda ix: reduction(ix, LS, "cct", ["rd"], ["128M"], ["reps"], mean)),
    ("5.3 fig 1b", "Leaf-spine rd 256 MB: X% vs REPS", 40.65, "%", "=",
     lambda ix: reduction(ix, LS, "cct", ["rd"], ["256M"], ["reps"], mean)),
    ("5.3 fig 1a", "Leaf-spine a2a: similar to packet spraying (mean over sizes, ~0%)",
     0.0, "%", "=", lambda ix: reduction(ix, LS, "cct", ["a2a"], SIZES, ["spray"], mean)),
    ("5.3 fig 1b", "Leaf-spine rd: X% vs packet spraying (size not given; mean over sizes)",
     30.8, "%", "=", lambda ix: reduction(ix, LS, "cct", ["rd"], SIZES, ["spray"], mean)),
    ("5.3 fig 1a", "Leaf-spine a2a: MP-RDMA-8 lags Ethereal, most at large sizes "
     "(256 MB; the paper gives no number: > 0)", 0.0, "%", ">",
     lambda ix: reduction(ix, LS, "cct", ["a2a"], ["256M"], ["mprdma:8"], mean)),
    ("5.3 fig 1c-d", "Leaf-spine ring and dbt: similar under any policy (largest CCT "
     "spread over policies at one size, ~0%)", 0.0, "%", "=",
     lambda ix: spread(ix, LS, "cct", ["ring", "dbt"], SIZES,
                       ["ethereal", "spray", "reps", "ecmp", "mprdma:4", "mprdma:8"])),
    ("5.3 fig 2a", "Fat-tree a2a 128 MB: X% vs packet spraying", 23.68, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["a2a"], ["128M"], ["spray"], mean)),
    ("5.3 fig 2a", "Fat-tree a2a 128 MB: X% vs REPS", 23.59, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["a2a"], ["128M"], ["reps"], mean)),
    ("5.3 fig 2a", "Fat-tree a2a 128 MB: X% vs ECMP", 34.81, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["a2a"], ["128M"], ["ecmp"], mean)),
    ("5.3 fig 2a", "Fat-tree a2a 128 MB: MP-RDMA-8 gets close to Ethereal (~0%)", 0.0, "%",
     "=", lambda ix: reduction(ix, FT, "cct", ["a2a"], ["128M"], ["mprdma:8"], mean)),
    ("5.3 fig 2b", "Fat-tree rd 256 MB: X% vs packet spraying", 37.99, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["rd"], ["256M"], ["spray"], mean)),
    ("5.3 fig 2b", "Fat-tree rd 256 MB: X% vs REPS", 38.76, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["rd"], ["256M"], ["reps"], mean)),
    ("5.3 fig 2b", "Fat-tree rd 256 MB: X% vs ECMP", 40.41, "%", "=",
     lambda ix: reduction(ix, FT, "cct", ["rd"], ["256M"], ["ecmp"], mean)),
    ("5.3 fig 2b", "Fat-tree rd 256 MB: MP-RDMA-8 no better than MP-RDMA-4 (its CCT "
     "over MP-RDMA-4's, ~0%)", 0.0, "%", "=",
     lambda ix: longer(ix, "fat-tree", "cct", "rd", "256M", "mprdma:8", ref="mprdma:4")),
    ("5.3 fig 3a", "GPT-2 leaf-spine a2a: on par with packet spraying (~0%)", 0.0, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["a2a"], [""], ["spray"], mean)),
    ("5.3 fig 3a", "GPT-2 leaf-spine a2a: X% vs REPS", 15.59, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["a2a"], [""], ["reps"], mean)),
    ("5.3 fig 3a", "GPT-2 leaf-spine a2a: X% vs ECMP", 27.51, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["a2a"], [""], ["ecmp"], mean)),
    ("5.3 fig 3a", "GPT-2 leaf-spine a2a: MP-RDMA-2 takes X% longer than Ethereal", 23.5,
     "%", "=", lambda ix: longer(ix, "leaf-spine", "gpt2", "a2a", "", "mprdma:2")),
    ("5.3 fig 3a", "GPT-2 leaf-spine a2a: MP-RDMA-8 takes X% longer than Ethereal", 13.73,
     "%", "=", lambda ix: longer(ix, "leaf-spine", "gpt2", "a2a", "", "mprdma:8")),
    ("5.3 fig 3b", "GPT-2 leaf-spine rd: X% vs packet spraying", 16.64, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["rd"], [""], ["spray"], mean)),
    ("5.3 fig 3b", "GPT-2 leaf-spine rd: X% vs REPS", 28.73, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["rd"], [""], ["reps"], mean)),
    ("5.3 fig 3b", "GPT-2 leaf-spine rd: X% vs ECMP", 35.76, "%", "=",
     lambda ix: reduction(ix, LS, "gpt2", ["rd"], [""], ["ecmp"], mean)),
    ("5.3 fig 4a", "GPT-2 fat-tree a2a: X% vs packet spraying", 12.74, "%", "=",
     lambda ix: reduction(ix, FT, "gpt2", ["a2a"], [""], ["spray"], mean)),
    ("5.3 fig 4b", "GPT-2 fat-tree rd: X% vs packet spraying", 16.29, "%", "=",
     lambda ix: reduction(ix, FT, "gpt2", ["rd"], [""], ["spray"], mean)),
    ("5.3 fig 4b", "GPT-2 fat-tree rd: X% on average vs the other baselines", 30.0, "%", "=",
     lambda ix: reduction(ix, FT, "gpt2", ["rd"], [""],
                          ["spray", "reps", "ecmp", "mprdma:2", "mprdma:4", "mprdma:8"], mean)),
    ("5.3 QPs", "Ethereal: at most X QPs per host in every run but a2a", 64, "QPs", "<=",
     lambda ix: max_qps(ix, BOTH, ["cct", "failure", "gpt2"], ["rd", "ring", "dbt"],
                        "ethereal")),
    ("5.3 QPs", "a2a: MP-RDMA-8 holds more than X QPs per host", 4000, "QPs", ">",
     lambda ix: max_qps(ix, BOTH, ["cct", "failure", "gpt2"], ["a2a"], "mprdma:8")),
    ("5.3 QPs", "a2a: Ethereal's QPs per host (the paper: an order of magnitude fewer "
     "than MP-RDMA-8's > 4000, so at most ~400)", 400, "QPs", "<=",
     lambda ix: max_qps(ix, BOTH, ["cct", "failure", "gpt2"], ["a2a"], "ethereal")),
    ("5.3 fig 5", "Failure, 4-64 MB: X% on average vs packet spraying (the Results "
     "text; Q2 says 68.91%)", 66.3, "%", "=",
     lambda ix: reduction(ix, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES, ["spray"], mean)),
    ("5.3 fig 5", "Failure, 4-64 MB: X% on average vs REPS (Q2 says 58.4%)", 56.0, "%", "=",
     lambda ix: reduction(ix, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES, ["reps"], mean)),
    ("5.3 fig 5", "Failure, > 64 MB: REPS still behind Ethereal, most on the fat-tree "
     "(no number; the matrix runs Ethereal and REPS failed at 128 MB)", 0.0, "%", ">",
     lambda ix: reduction(ix, BOTH, "failure", ["a2a", "rd"], FAIL_LARGE, ["reps"], mean)),
]

# The claims against REPS once more, against REPS as the authors' ns-3
# artifact has it (reps:flow, docs/reps.md: a connection rides one cached
# entropy until an ECN mark or a timeout), which their numbers come from:
# (claim number above, fabrics, kind, algorithms, sizes)
ARTIFACT_REPS = [(4, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES),
                 (7, LS, "cct", ["a2a"], ["128M"]), (8, LS, "cct", ["a2a"], ["256M"]),
                 (9, LS, "cct", ["rd"], ["128M"]), (10, LS, "cct", ["rd"], ["256M"]),
                 (16, FT, "cct", ["a2a"], ["128M"]), (20, FT, "cct", ["rd"], ["256M"]),
                 (38, BOTH, "failure", ["a2a", "rd"], FAIL_SIZES),
                 (39, BOTH, "failure", ["a2a", "rd"], FAIL_LARGE)]
for _n, _f, _k, _a, _s in ARTIFACT_REPS:
    _where, _text, _paper, _unit, _cmp, _ = CLAIMS[_n - 1]
    CLAIMS.append((_where, f"{_text}: against the authors' REPS (reps:flow; claim {_n})",
                   _paper, _unit, _cmp,
                   lambda ix, f=_f, k=_k, a=_a, s=_s: reduction(ix, f, k, a, s, ["reps:flow"],
                                                                  mean)))


def has_bound(r):
    """A collective's run has a lower bound; a trace's (GPT-2) has none."""
    return int(r.get("lower_bound_ns") or 0) > 0


def facts(res, unit):
    """What the runs behind a claim measured, for the reason column: per
    policy, how far above the lower bound its CCT is and what went wrong
    (timeouts, drops); for a QP count, which run held the most."""
    out = []
    for lb, rows in res.used.items():
        if unit == "QPs":
            r = max(rows, key=lambda r: int(r["max_qps_per_host"]))
            out.append(f"{lb}: most in {r['fabric']} {r['name']} ({r['hosts']} hosts), "
                       f"of {len(rows)} runs")
            continue
        t = sum(int(r.get("timeouts") or 0) for r in rows)
        d = sum(int(r.get("drops") or 0) for r in rows)
        if all(has_bound(r) for r in rows):
            ratio = statistics.mean(int(r["cct_ns"]) / int(r["lower_bound_ns"]) for r in rows)
            s = f"{lb} {ratio:.2f}x bound"
        else:  # a trace has no bound: its time communicating
            ms = statistics.mean(int(r["cct_ns"]) for r in rows) / 1e6
            s = f"{lb} {ms:.3f} ms communicating"
        if t or d:
            s += f" ({t} timeouts, {d} drops)"
        out.append(s)
    return "; ".join(out)


def point_table(ix):
    """Ethereal's CCT reduction against each baseline at every point run:
    the numbers behind the paper's figures, whether or not the text
    quotes them."""
    points = sorted({k[:4] for k in ix.rows},
                    key=lambda k: (k[1], k[0], list(ALGO_LABEL).index(k[2]),
                                   int(k[3][:-1]) if k[3][:-1].isdigit() else 0))
    bases = [lb for lb in LB_ORDER[1:] if any(k[4] == lb for k in ix.rows)]
    if not points or not bases:
        return []
    out = ["## Ethereal against each baseline, every point",
           "",
           "1 - CCT(Ethereal) / CCT(baseline): positive, Ethereal is faster.  "
           "Ethereal's CCT in ms, and over the lower bound.",
           "",
           "| kind | fabric | algo | size | Ethereal (ms, x bound) | "
           + " | ".join(LB_LABEL.get(b, b) for b in bases) + " |",
           "|---|---|---|---|---|" + "---|" * len(bases)]
    for f, kind, algo, size in points:
        e = ix.get(f, kind, algo, size, "ethereal")
        cells = []
        for b in bases:
            r = ix.get(f, kind, algo, size, b)
            cells.append(f"{100 * (1 - int(e['cct_ns']) / int(r['cct_ns'])):+.1f}%"
                         if e and r else "-")
        eth = "-"
        if e:
            eth = f"{int(e['cct_ns']) / 1e6:.3f}, " + (
                f"{int(e['cct_ns']) / int(e['lower_bound_ns']):.2f}x" if has_bound(e)
                else "no bound")
        out.append(f"| {kind} | {f} | {algo} | {size or 'GPT-2'} | {eth} | "
                   + " | ".join(cells) + " |")
    return out + [""]


def judge(paper, compare, ours, unit):
    if compare == "<=":
        return ours <= paper
    if compare == ">":
        return ours > paper
    return abs(ours - paper) <= AGREE_POINTS


def fmt(v, unit):
    return f"{v:.0f}" if unit == "QPs" else f"{v:.2f}%"


def write_claims(rows, path, quick):
    ix = Index(rows)
    lines = [
        "# The paper's evaluation claims, theirs and ours",
        "",
        "Written by `scripts/reproduce`" + (" --quick (16 MB, leaf-spine only: most claims "
                                            "need runs it does not make)" if quick else "")
        + f" from {len(rows)} runs.  *agrees*: within {AGREE_POINTS:g} points of the paper's "
        "number (or on the right side of a bound).  Reductions are 1 - CCT(Ethereal) / "
        "CCT(baseline); \"x bound\" is a policy's CCT over the run's lower bound "
        "(mean over the runs behind the claim).",
        "",
        "| # | where | claim | paper | ours | runs | verdict / what the runs measured |",
        "|---|---|---|---|---|---|---|",
    ]
    agree = differ = missing = 0
    for n, (where, text, paper, unit, compare, calc) in enumerate(CLAIMS, 1):
        ix.asked_failed = []
        res = calc(ix)
        pv = ("> " if compare == ">" else "<= " if compare == "<=" else "") + fmt(paper, unit)
        failed = ""
        if ix.asked_failed:
            r = ix.asked_failed[0]
            failed = (f" ({len(ix.asked_failed)} runs failed, e.g. {r['fabric']} {r['name']}: "
                      f"{str(r.get('error')).replace('|', '/')})")
        if res.value is None:
            ours, verdict = "-", ("not run" if not failed else "failed") + failed
            missing += 1
        else:
            ours = fmt(res.value, unit)
            ok = judge(paper, compare, res.value, unit)
            agree += ok
            differ += not ok
            verdict = ("agrees" if ok else "**differs**") + ": " + facts(res, unit)
            if res.missing:
                verdict += f" ({res.missing} points missing)"
            verdict += failed
        nruns = sum(len(v) for v in res.used.values())
        lines.append(f"| {n} | {where} | {text} | {pv} | {ours} | {nruns} | {verdict} |")
    lines += ["", f"{agree} agree, {differ} differ, {missing} not run "
              f"(of {len(CLAIMS)} claims).", "",
              "Why the GPT-2 claims come out near 0%: the trace's model-parallel "
              "collectives stay in a rack; docs/reproduce.md, \"GPT-2: why the policies "
              "come out nearly equal\", measures where each policy's time goes.", "",
              "Why the baselines trail Ethereal by less than in the paper: our DCTCP is a "
              "window, the paper's simulator's a paced rate that recovers slowly from "
              "marks; with `[transport] dctcp = rate` the gaps come out at the paper's "
              "size (docs/reproduce.md, \"DCTCP's window against the paper's paced "
              "rate\"). Spraying on rd also needs the paper's marking threshold in "
              "packets: its 800 KB is 89 of its 9000-byte packets, 364 KB of ours, and "
              "there spraying trails by 33-35% at rd 256 MB as in the paper, but by "
              "21.5% on the leaf-spine's a2a at 128 MB where the paper has it level "
              "(docs/reproduce.md, "
              "\"Spraying on rd: the marking threshold counts packets\").", "",
              "rd is recursive halving and doubling in the paper's order (Astra-Sim's "
              "halvingDoubling: the nearest partner first, with half the vector), so 15/16 "
              "of its bytes stay in a rack; docs/reproduce.md, \"rd in the paper's order\", "
              "measures it against the farthest-first order (`--algo rd-far`).", ""]
    lines += cost_lines(rows)
    lines += point_table(ix)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def cost_lines(rows):
    """What the runs behind this file cost: hours of runs and core-hours (a
    run's time times its lanes), per fabric, so a reader can size a machine."""
    spent = {}
    for r in rows:
        secs = float(r.get("run_s") or 0)
        lanes = int(r.get("lanes") or 1)
        h, ch, n = spent.get(r["fabric"], (0.0, 0.0, 0))
        spent[r["fabric"]] = (h + secs / 3600, ch + secs * lanes / 3600, n + 1)
    if not spent:
        return []
    parts = [f"{fab}: {n} runs, {h:.1f} h of runs, {ch:.1f} core-hours"
             for fab, (h, ch, n) in spent.items()]
    return ["What the runs cost (each run's own time; core-hours count its lanes): "
            + "; ".join(parts) + ".", ""]


# ------------------------------------------------------------------ figures
LB_ORDER = ["ethereal", "spray", "reps", "reps:flow", "ecmp", "mprdma:2", "mprdma:4",
            "mprdma:8"]
LB_STYLE = {"ethereal": ("C3", "o"), "spray": ("C0", "s"), "reps": ("C2", "^"),
            "reps:flow": ("C8", "P"),
            "ecmp": ("C7", "v"), "mprdma:2": ("C1", "<"), "mprdma:4": ("C4", ">"),
            "mprdma:8": ("C5", "D")}
LB_LABEL = {"ethereal": "Ethereal", "spray": "Packet spraying", "reps": "REPS",
            "reps:flow": "REPS (authors' artifact)",
            "ecmp": "ECMP", "mprdma:2": "MP-RDMA-2", "mprdma:4": "MP-RDMA-4",
            "mprdma:8": "MP-RDMA-8"}
ALGO_LABEL = {"a2a": "All-to-All", "rd": "Recursive Doubling", "ring": "Ring",
              "dbt": "Double Binary Tree"}


def fabric_order(fabric):
    """The paper's order: leaf-spine, then fat-tree."""
    return (fabric != "leaf-spine", fabric)


def lbs_of(rows):
    have = {r["lb"] for r in rows}
    return [lb for lb in LB_ORDER if lb in have] + sorted(have - set(LB_ORDER))


def style(lb):
    return LB_STYLE.get(lb, (None, "x"))


def cct_panels(plt, rows, title, path):
    """CCT against message size, a panel per algorithm, a line per policy
    (the paper's figures 1-2 and 5)."""
    import matplotlib.ticker
    algos = [a for a in ALGO_LABEL if any(r["algo"] == a for r in rows)]
    cols = 2 if len(algos) > 1 else 1
    nrows = (len(algos) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 3.6 * nrows), squeeze=False)
    for ax in axes.flat[len(algos):]:
        ax.set_visible(False)
    for ax, algo in zip(axes.flat, algos):
        sub = [r for r in rows if r["algo"] == algo]
        sizes = sorted({int(r["size_bytes"]) for r in sub})
        if len(sizes) == 1:  # one size (--quick): a bar per policy
            lbs = lbs_of(sub)
            by = {r["lb"]: r for r in sub}
            ax.bar(range(len(lbs)), [int(by[lb]["cct_ns"]) / 1e6 for lb in lbs],
                   color=[style(lb)[0] for lb in lbs])
            ax.axhline(int(sub[0]["lower_bound_ns"]) / 1e6, color="k", ls=":",
                       label="lower bound")
            ax.set_xticks(range(len(lbs)))
            ax.set_xticklabels([LB_LABEL.get(lb, lb) for lb in lbs], rotation=30, ha="right",
                               fontsize=8)
            ax.set_ylabel("CCT (ms)")
            ax.set_title(f"{ALGO_LABEL[algo]}, {size_label(sizes[0])}")
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
            continue
        for lb in lbs_of(sub):
            pts = sorted((int(r["size_bytes"]), int(r["cct_ns"]) / 1e6)
                         for r in sub if r["lb"] == lb)
            c, m = style(lb)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c,
                    label=LB_LABEL.get(lb, lb))
        bound = sorted({(int(r["size_bytes"]), int(r["lower_bound_ns"]) / 1e6) for r in sub})
        ax.plot([b[0] for b in bound], [b[1] for b in bound], "k:", label="lower bound")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(s) for s in sizes])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("message size")
        ax.set_ylabel("CCT (ms)")
        ax.set_title(ALGO_LABEL[algo])
        ax.grid(True, which="both", alpha=0.3)
    if not axes.flat[0].get_legend():
        axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def qps_cdf(plt, rows, title, path):
    """QPs per host as a CDF over the hosts (the paper's QP panels), a
    panel per algorithm, pooled over the sizes.  The fabric counts the
    hosts in power-of-two buckets (<=1, <=2, ... <=64, more), so the CDF
    steps at the buckets' tops and the last step is the largest count."""
    import matplotlib.ticker
    algos = [a for a in ALGO_LABEL if any(r["algo"] == a for r in rows)]
    fig, axes = plt.subplots(1, len(algos), figsize=(3.3 * len(algos), 3.2), squeeze=False)
    for ax, algo in zip(axes[0], algos):
        sub = [r for r in rows if r["algo"] == algo]
        for lb in lbs_of(sub):
            mine = [r for r in sub if r["lb"] == lb]
            hist = [0] * 8
            for r in mine:
                h = r["qps_per_host_hist"]
                h = [int(x) for x in (h.split() if isinstance(h, str) else h)]
                hist = [a + b for a, b in zip(hist, h)]
            top = max(int(r["max_qps_per_host"]) for r in mine)
            xs = [min(1 << b, top) for b in range(7)] + [top]
            total, acc, px, py = sum(hist) or 1, 0, [], []
            for x, n in zip(xs, hist):
                if n:
                    acc += n
                    px.append(x)
                    py.append(acc / total)
            c, m = style(lb)
            ax.step([0.9] + px, [0] + py, where="post", color=c, label=LB_LABEL.get(lb, lb))
            ax.plot(px, py, m, color=c, ms=4)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("QPs per host (most at once)")
        ax.set_title(ALGO_LABEL[algo], fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("CDF of hosts")
    axes[0][0].legend(fontsize=6)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def gpt2_bars(plt, rows, path):
    """GPT-2 iteration: communication time per policy, and the most QPs per
    host, a panel per fabric and algorithm (the paper's figures 3-4)."""
    import matplotlib.ticker
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    keys = sorted({(r["fabric"], r["algo"]) for r in rows},
                  key=lambda k: (fabric_order(k[0]), list(ALGO_LABEL).index(k[1])))
    fig, axes = plt.subplots(2, len(keys), figsize=(3.4 * len(keys), 6), squeeze=False)
    for i, (fabric, algo) in enumerate(keys):
        sub = [r for r in rows if r["fabric"] == fabric and r["algo"] == algo]
        lbs = lbs_of(sub)
        by = {r["lb"]: r for r in sub}
        colors = [style(lb)[0] for lb in lbs]
        ax = axes[0][i]
        ax.bar(range(len(lbs)), [int(by[lb]["cct_ns"]) / 1e6 for lb in lbs], color=colors)
        ax.set_title(f"{fabric}, {ALGO_LABEL[algo]}", fontsize=9)
        ax.set_ylabel("communication time (ms)")
        ax = axes[1][i]
        ax.bar(range(len(lbs)), [int(by[lb]["max_qps_per_host"]) for lb in lbs], color=colors)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.set_ylabel("max QPs per host")
        for ax in axes[0][i], axes[1][i]:
            ax.set_xticks(range(len(lbs)))
            ax.set_xticklabels([LB_LABEL.get(lb, lb) for lb in lbs], rotation=45, ha="right",
                               fontsize=7)
            ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("GPT-2, one iteration")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def figures(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if not r.get("error") and r.get("cct_ns")]
    pngs = []
    for fabric in sorted({r["fabric"] for r in ok}, key=fabric_order):
        mine = [r for r in ok if r["fabric"] == fabric]
        hosts = mine[0]["hosts"]
        cct = [r for r in mine if r["kind"] == "cct"]
        if cct:
            pngs.append(cct_panels(plt, cct, f"{fabric}, {hosts} hosts: all-reduce CCT",
                                   os.path.join(out, f"cct-{fabric}.png")))
            pngs.append(qps_cdf(plt, cct, f"{fabric}, {hosts} hosts: QPs per host",
                                os.path.join(out, f"qps-{fabric}.png")))
        fail = [r for r in mine if r["kind"] == "failure"]
        if fail:
            pngs.append(cct_panels(plt, fail, f"{fabric}, {hosts} hosts: all-reduce CCT, "
                                   f"link {fail[0]['fail']} failed",
                                   os.path.join(out, f"failure-{fabric}.png")))
    gpt2 = [r for r in ok if r["kind"] == "gpt2"]
    if gpt2:
        pngs.append(gpt2_bars(plt, gpt2, os.path.join(out, "gpt2.png")))
    return pngs
