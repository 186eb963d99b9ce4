# SPDX-License-Identifier: GPL-2.0
"""scripts/throughput: what sleeping locks cost the work, kernel against kernel.

Boots each variant's kernel in instruction-counted virtual time (-smp 1
-icount shift=2,sleep=off: guest seconds follow executed instructions, so
the figures do not depend on host load) and runs guest/throughput: hackbench
(4 groups, 1000 messages of 512 bytes over UNIX sockets), a 128 MB write with
fsync and a read of a tmpfs file, and 10000 opens of /dev/null, RUNS times
each.  Prints, per kernel, the median and range of each figure and its ratio
to the first kernel (stock by default).  JSON and logs go to
build/results/throughput-<time>/.

  scripts/throughput                                   stock, rt, project
  scripts/throughput --variants stock,project,project-noconv --runs 5
  scripts/throughput --no-build                        boot the kernels built last
"""

import argparse
import os
import statistics

from pvrt import boot, build, experiment, lock, logs, tools, validate
from pvrt.errors import PvrtError, entry

log = logs.logger("throughput")

MB = 128                # the size guest/throughput writes and reads
# figure: (label, unit, higher is better)
FIGURES = (("hackbench", "hackbench s", False), ("write", "tmpfs write MB/s", True),
           ("read", "tmpfs read MB/s", True), ("opens", "10000 opens of /dev/null s", False))


def parse(lines):
    """{figure: [value per run]} from section "throughput"."""
    out = {k: [] for k, _u, _h in FIGURES}
    for line in lines:
        f = line.split(None, 2)
        if not f or f[0] not in out:
            continue
        if len(f) < 3:
            raise PvrtError(f"{f[0]} printed no time: {line!r}")
        rest = f[2].strip()
        if f[0] == "hackbench":
            try:
                out["hackbench"].append(float(rest))
            except ValueError:
                raise PvrtError(f"hackbench printed no time: {line!r}") from None
        else:
            try:
                t0, t1 = (float(x) for x in rest.split())
            except ValueError:
                raise PvrtError(f"not two uptimes: {line!r}") from None
            if f[0] == "opens":
                out["opens"].append(round(t1 - t0, 2))
            elif t1 > t0:
                out[f[0]].append(round(MB / (t1 - t0), 1))
            else:
                raise PvrtError(f"{f[0]} took no measurable time (10 ms ticks): {line!r}")
    return out


def summary(figs):
    """{figure: (median, min, max)} of the runs that gave one."""
    return {k: (statistics.median(v), min(v), max(v)) for k, v in figs.items() if v}


def table(rows):
    """Median [min..max] per kernel and figure, and the ratio to the first kernel."""
    base = rows[0]["summary"] if rows else {}
    head = f"{'kernel':16} " + " ".join(f"{u:>30}" for _k, u, _h in FIGURES)
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = []
        for k, _u, _h in FIGURES:
            s = r["summary"].get(k)
            if not s:
                cells.append(f"{'-':>30}")
                continue
            ratio = f" x{s[0] / base[k][0]:.2f}" if k in base and base[k][0] else ""
            cells.append(f"{f'{s[0]:.2f} [{s[1]:.2f}..{s[2]:.2f}]{ratio}':>30}")
        lines.append(f"{r['variant']:16} " + " ".join(cells))
    lines.append(f"median [min..max] of each kernel's runs; xN: ratio to {rows[0]['variant']}"
                 " (hackbench and opens: time, lower is better; MB/s: higher is better)"
                 if rows else "")
    return "\n".join(lines)


def boot_one(top, name, runs, results_dir):
    var = build.Variant(name, top)
    out = build.out_dir(top, name)
    log_path = os.path.join(results_dir, f"{name}.log")
    log(f"{name}: booting (-smp 1 -icount), {runs} runs")
    res = boot.boot(build.kernel_image(out), f"throughput {runs}", log_path,
                    modroot=os.path.join(out, "modroot"), icount=True,
                    append=" ".join(var.cmdline), timeout=runs * 600 + 600)
    sec = res.sections().get("throughput")
    figs = parse(sec[1]) if sec else {}
    problems = res.problems() + ([] if sec else ["no throughput section"])
    return {"variant": name, "runs": runs, "log": log_path, "figures": figs,
            "summary": summary(figs), "problems": problems}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/throughput", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="stock,rt,project",
                    help="comma-separated variants, the first the reference"
                         " (default stock,rt,project)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each figure (default 3)")
    ap.add_argument("--jobs", type=int, default=2, help="boots side by side (default 2)")
    ap.add_argument("--no-build", action="store_true",
                    help="boot the kernels in build/out as they are (no apply, no build,"
                         " no build lock)")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.jobs < 1:
        ap.error("--runs and --jobs must be at least 1")
    tools.require()
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    names = [v for v in args.variants.split(",") if v]
    for n in names:
        build.Variant(n, top)           # refuses an unknown variant before any work
    if args.no_build:
        for n in names:
            out = build.out_dir(top, n, bdir)
            if not os.path.exists(build.kernel_image(out)):
                raise PvrtError(f"{n}: no kernel in {out}; run without --no-build")
        return _run(args, top, bdir, names)
    with lock.held(os.path.join(bdir, "run"), "build directory"):
        return _run(args, top, bdir, names)


def _run(args, top, bdir, names):
    if not args.no_build:
        experiment.apply_and_build(top, bdir, names, log)
    results_dir = experiment.new_results_dir(bdir, "throughput-")

    def measure(n):
        try:
            return [boot_one(top, n, args.runs, results_dir)]
        except PvrtError as e:          # a figure the guest did not print
            return [{"variant": n, "runs": args.runs, "figures": {}, "summary": {},
                     "problems": [str(e)]}]

    jobs = [validate.Job(f"throughput/{n}/{args.runs}", f"{n}: throughput, {args.runs} runs",
                         args.runs * 60 + 60, lambda n=n: measure(n)) for n in names]
    rows = validate.run_jobs(jobs, validate.Progress(len(jobs)), args.jobs,
                             os.path.join(results_dir, "throughput.json"), [])
    by = {r["variant"]: r for r in rows}
    ordered = [by[n] for n in names]
    print(table(ordered))
    bad = [f"{r['variant']}: {'; '.join(r['problems'])}" for r in ordered if r["problems"]]
    for b in bad:
        print("problems: " + b)
    print(f"results: {results_dir}")
    return 1 if bad else 0


if __name__ == "__main__":
    entry(main)
