# SPDX-License-Identifier: GPL-2.0
"""scripts/throughput: what sleeping locks cost the work, kernel against kernel.

Boots each variant's kernel in instruction-counted virtual time (-smp 1
-icount shift=2,sleep=off: guest seconds follow executed instructions, so
the figures do not depend on host load) and runs guest/throughput RUNS
times: hackbench (4 groups, 1000 messages of 512 bytes over UNIX sockets),
a 128 MB write with fsync and a read of a tmpfs file, 10000 opens of
/dev/null, 400 fork()s of a process with 4 MiB of written memory (each
child exits at once and is waited for) and 4 x (mmap 32 MiB, write every
4 KiB page, munmap) (guest/fork-fault.c).  Prints, per kernel, the median
and range of each figure and its ratio to the first kernel, then the price
table of issue 21: per figure the price of project vs stock-tuned next to
that of rt vs stock, and whether the project's is at most half of rt's.
JSON and logs go to build/results/throughput-<time>/.

  scripts/throughput                        stock, stock-tuned, rt, project
  scripts/throughput --base defconfig --runs 5
  scripts/throughput --variants stock,project,project-noconv
  scripts/throughput --no-build             boot the kernels built last
"""

import argparse
import json
import math
import os
import re
import statistics

from pvrt import boot, build, experiment, lock, logs, tools, validate
from pvrt.errors import PvrtError, entry

log = logs.logger("throughput")

MB = 128                # the size guest/throughput writes and reads
# figure: (label, higher is better, what the guest prints after "<figure> <i>":
# "time" its own seconds, "uptimes" /proc/uptime before and after)
FIGURES = (("hackbench", "hackbench s", False, "time"),
           ("write", "tmpfs write MB/s", True, "uptimes"),
           ("read", "tmpfs read MB/s", True, "uptimes"),
           ("opens", "10000 opens of /dev/null s", False, "uptimes"),
           ("fork", "400 fork+exit s", False, "time"),
           ("faults", "4x32 MiB page faults s", False, "time"))
# The price table's pairs: (A, B) for "price of A vs B".
PRICE_PAIRS = (("project", "stock-tuned"), ("rt", "stock"))


def parse(lines, runs=None):
    """{figure: [value per run]} from section "throughput"; with RUNS, every
    figure must be there once for each run 0..RUNS-1, in order."""
    out = {k: [] for k, *_ in FIGURES}
    kinds = {k: kind for k, _l, _h, kind in FIGURES}
    for line in lines:
        f = line.split()
        # "<figure> <run> ...": anything else is the kernel's ("hackbench
        # (475) used greatest stack depth"); a figure line lost to it is missing.
        if len(f) < 2 or f[0] not in out or not re.fullmatch(r"\d+", f[1]):
            continue
        name = f[0]
        if int(f[1]) != len(out[name]):
            raise PvrtError(f"{name}: run {f[1]} where run {len(out[name])} was due: {line!r}")
        rest = f[2:]
        if kinds[name] == "time":
            try:
                (secs,) = (float(x) for x in rest)
            except ValueError:
                raise PvrtError(f"{name} printed no time: {line!r}") from None
            if not (secs > 0 and math.isfinite(secs)):
                raise PvrtError(f"{name} printed a time that is not positive: {line!r}")
            out[name].append(secs)
            continue
        try:
            t0, t1 = (float(x) for x in rest)
        except ValueError:
            raise PvrtError(f"not two uptimes: {line!r}") from None
        if not (t1 > t0 and math.isfinite(t1)):
            raise PvrtError(f"{name} took no measurable time (10 ms ticks): {line!r}")
        out[name].append(round(t1 - t0, 2) if name == "opens" else round(MB / (t1 - t0), 1))
    if runs is not None:
        short = [f"{k} ({len(v)} of {runs})" for k, v in out.items() if len(v) < runs]
        extra = [f"{k} ({len(v)} of {runs})" for k, v in out.items() if len(v) > runs]
        if short or extra:
            raise PvrtError("; ".join((["figures missing: " + ", ".join(short)] if short else [])
                                      + (["runs beyond those asked for: " + ", ".join(extra)]
                                         if extra else [])))
    return out


def summary(figs):
    """{figure: (median, min, max)} of the runs that gave one."""
    return {k: (statistics.median(v), min(v), max(v)) for k, v in figs.items() if v}


def table(rows):
    """Median [min..max] per kernel and figure, and the ratio to the first kernel."""
    base = rows[0]["summary"] if rows else {}
    head = f"{'kernel':16} " + " ".join(f"{u:>30}" for _k, u, *_ in FIGURES)
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = []
        for k, *_ in FIGURES:
            s = r["summary"].get(k)
            if not s:
                cells.append(f"{'-':>30}")
                continue
            ratio = f" x{s[0] / base[k][0]:.2f}" if k in base and base[k][0] else ""
            cells.append(f"{f'{s[0]:.2f} [{s[1]:.2f}..{s[2]:.2f}]{ratio}':>30}")
        lines.append(f"{r['variant']:16} " + " ".join(cells))
    lines.append(f"median [min..max] of each kernel's runs; xN: ratio to {rows[0]['variant']}"
                 " (seconds: lower is better; MB/s: higher is better)"
                 if rows else "")
    return "\n".join(lines)


def price(a, b, higher_better):
    """How much worse A is than B, each (median, min, max) of a figure: the
    extra time A takes for the same work, as a fraction of B's (a MB/s
    figure is a fixed amount of work over a time: B/A - 1), positive when
    A costs more.  (median price, least, most) over the runs' extremes."""
    if higher_better:
        return (b[0] / a[0] - 1, b[1] / a[2] - 1, b[2] / a[1] - 1)
    return (a[0] / b[0] - 1, a[1] / b[2] - 1, a[2] / b[1] - 1)


def goal_limit(rt_price):
    """The most the project may cost on a figure: half of what PREEMPT_RT
    costs, and nothing where PREEMPT_RT costs nothing or is faster than
    stock (half a gain would ask the project to be faster than the kernel
    it is built like)."""
    return max(rt_price / 2, 0.0)


def prices(rows):
    """Issue 21's throughput goal per figure: [{figure, label, pairs: {"A vs
    B": price or None}, goal: "met" / "missed" / why not judged}], and the
    kernels of PRICE_PAIRS that ROWS lack."""
    by = {r["variant"]: r.get("summary") or {} for r in rows}
    missing = [v for pair in PRICE_PAIRS for v in pair if v not in by]
    out = []
    for k, label, higher, _kind in FIGURES:
        pairs, why = {}, []
        for a, b in PRICE_PAIRS:
            name = f"{a} vs {b}"
            lack = [v for v in (a, b) if v in by and k not in by[v]]
            if any(v not in by for v in (a, b)) or lack:
                pairs[name] = None
                why += [f"no {k} figure of {v}" for v in lack]
            else:
                pairs[name] = price(by[a][k], by[b][k], higher)
        proj, rt = (pairs[f"{a} vs {b}"] for a, b in PRICE_PAIRS)
        if missing:
            goal = "not judged: no " + ", ".join(missing)
        elif proj is None or rt is None:
            goal = "not judged: " + "; ".join(why)
        else:
            goal = "met" if proj[0] <= goal_limit(rt[0]) else "missed"
        out.append({"figure": k, "label": label, "pairs": pairs, "goal": goal})
    return out, missing


def price_table(rows):
    """The price of project vs stock-tuned next to rt vs stock per figure,
    and the goal check: project's price <= half rt's."""
    got, missing = prices(rows)
    names = [f"{a} vs {b}" for a, b in PRICE_PAIRS]
    head = f"{'figure':28} " + " ".join(f"{n:>26}" for n in names) + "  goal: <= half rt's"
    lines = ["Throughput price (issue 21): " + " next to ".join(names)
             + ", project's at most half rt's on each figure", head, "-" * len(head)]
    for p in got:
        cells = []
        for n in names:
            v = p["pairs"][n]
            cells.append(f"{'-':>26}" if v is None else
                         f"{f'{v[0]:+.1%} [{v[1]:+.1%}..{v[2]:+.1%}]':>26}")
        goal = p["goal"]
        if goal in ("met", "missed"):
            proj, rt = (p["pairs"][n][0] for n in names)
            goal += f" ({proj:+.1%} {'<=' if goal == 'met' else '>'} {goal_limit(rt):+.1%})"
        lines.append(f"{p['label']:28} " + " ".join(cells) + "  " + goal)
    lines.append("price: the extra time A takes for the same work over B's (MB/s: B/A - 1),"
                 " of the medians; [least..most] from the runs' extremes")
    if missing:
        lines.append("missing from --variants: " + ", ".join(missing)
                     + " (the table needs " + ", ".join(dict.fromkeys(
                         v for pair in PRICE_PAIRS for v in pair)) + ")")
    return "\n".join(lines)


def boot_one(top, name, out, runs, results_dir):
    var = build.Variant(name, top)
    log_path = os.path.join(results_dir, f"{name}.log")
    log(f"{name}: booting (-smp 1 -icount), {runs} runs")
    res = boot.boot(build.kernel_image(out), f"throughput {runs}", log_path,
                    modroot=os.path.join(out, "modroot"), icount=True,
                    append=" ".join(var.cmdline), timeout=runs * 600 + 600)
    sec = res.sections().get("throughput")
    problems = res.problems()
    if not sec:
        problems.append("no throughput section")
    elif sec[0] != 0:
        problems.append(f"guest/throughput ended with rc={sec[0]}")
    try:
        figs = parse(sec[1], runs) if sec else {}
    except PvrtError as e:
        figs = {}
        problems.append(str(e))
    return {"variant": name, "runs": runs, "log": log_path, "figures": figs,
            "summary": summary(figs), "problems": problems}


def out_dirs(top, bdir, names, base_target):
    """{variant: the build directory of its kernel} as scripts/validate
    --base names them (a same-build variant boots the other's)."""
    return {n: build.out_dir(top, n, bdir, base_target) for n in names}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/throughput", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="stock,stock-tuned,rt,project",
                    help="comma-separated variants, the first the reference of the ratios"
                         " (default stock,stock-tuned,rt,project: the price table's four)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each figure (default 3)")
    ap.add_argument("--base", choices=["allnoconfig", "defconfig"], default="allnoconfig",
                    help="what the variants start from, as scripts/validate --base:"
                         " allnoconfig (default) or x86_64_defconfig plus"
                         " variants/fragments/product*.config")
    ap.add_argument("--jobs", type=int, default=2, help="boots side by side (default 2)")
    ap.add_argument("--no-build", action="store_true",
                    help="boot the kernels in build/out as they are (no apply, no build,"
                         " no build lock)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.jobs < 1:
        ap.error("--runs and --jobs must be at least 1")
    args.base_target = "x86_64_defconfig" if args.base == "defconfig" else None
    tools.require()
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    names = [v for v in args.variants.split(",") if v]
    for n in names:
        build.Variant(n, top)           # refuses an unknown variant before any work
    if args.no_build:
        outs = out_dirs(top, bdir, names, args.base_target)
        for n in names:
            if not os.path.exists(build.kernel_image(outs[n])):
                raise PvrtError(f"{n}: no kernel in {outs[n]}; run without --no-build")
        return _run(args, names, outs)
    with lock.held(os.path.join(bdir, "run"), "build directory"):
        tree, outs = experiment.apply_and_build(top, bdir, names, log,
                                                base_target=args.base_target)
        validate.tuned_check(outs, tree)
        return _run(args, names, outs)


def _run(args, names, outs):
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    results_dir = experiment.new_results_dir(bdir, "throughput-")

    def measure(n):
        try:
            return [boot_one(top, n, outs[n], args.runs, results_dir)]
        except PvrtError as e:          # the boot itself could not be run
            return [{"variant": n, "runs": args.runs, "figures": {}, "summary": {},
                     "problems": [str(e)]}]

    jobs = [validate.Job(f"throughput/{n}/{args.runs}", f"{n}: throughput, {args.runs} runs",
                         args.runs * 60 + 60, lambda n=n: measure(n)) for n in names]
    rows = validate.run_jobs(jobs, validate.Progress(len(jobs)), args.jobs,
                             os.path.join(results_dir, "throughput.json"), [])
    by = {r["variant"]: r for r in rows}
    ordered = [by[n] for n in names]
    print(f"kernels from {args.base}, -smp 1 -icount, {args.runs} run(s) each\n")
    print(table(ordered))
    print()
    print(price_table(ordered))
    got, missing = prices(ordered)
    with open(os.path.join(results_dir, "price.json"), "w", encoding="utf-8") as f:
        json.dump({"base": args.base, "runs": args.runs, "missing": missing, "figures": got},
                  f, indent=1)
    bad = [f"{r['variant']}: {'; '.join(r['problems'])}" for r in ordered if r["problems"]]
    for b in bad:
        print("problems: " + b)
    print(f"results: {results_dir}")
    return 1 if bad else 0


if __name__ == "__main__":
    entry(main)
