# SPDX-License-Identifier: GPL-2.0
"""scripts/bench-ikt: interrupt response time, hard vs IKT thread vs threadirqs.

Builds the project kernel (with CONFIG_IKT_BENCH=m) and, for each load, boots
it twice under QEMU in instruction-counted virtual time (-smp 1 -icount
shift=2,sleep=off): once as is (IKT on) and once with "ikt=off threadirqs"
(mainline forced threading, FIFO 50 for every thread).  In each boot the
ikt_bench module raises simulated interrupts and times raise -> first
instruction of the handler, for an IRQF_NO_THREAD handler (hard) and a plain
one (threaded).  Loads:

  hackbench  hackbench in a loop: every thread at the default priority
  rt-hog     hackbench plus a SCHED_FIFO 60 task busy half the time in 5 ms
             bursts; the IKT boot gives the benchmark's interrupt FIFO 90
             with ikt.prio=ikt-bench:90 and the timer softirq threads FIFO 70
             with ikt.timers_prio=70, what threadirqs cannot express

Each boot also times timer_list callbacks: the lateness from the jiffy a
timer expired at to the jiffy its callback ran in (one-tick resolution,
1 ms at HZ=1000), run by ktimers under IKT and by ksoftirqd with threadirqs.
The timer wheel rounds level-0 expiry up by one tick, so 1 ms is on time.

Prints one table (us), writes bench.json and irt.png (distributions, like
figures 9-10 of Heursch et al. 2004) under build/results/ikt-<time>/.
"""

import argparse
import os
import re
import sys

from pvrt import boot, build, console, experiment, lock, logs, tools
from pvrt.results import save
from pvrt.errors import entry

RESULT = re.compile(r"ikt_bench: result (\S+) threaded=(\d) prio=(\d+) samples=(\d+) min=(\d+)"
                    r" avg=(\d+) p50=(\d+) p99=(\d+) max=(\d+)")
HIST = re.compile(r"ikt_bench: hist (\S+) (\d+) (\d+)")
FIELDS = ("min", "avg", "p50", "p99", "max")

# (kernel label, boot parameters, row label of the threaded handler)
KERNELS = {
    "hackbench": [("ikt", "", "IKT thread"),
                  ("threadirqs", "ikt=off threadirqs", "threadirqs")],
    "rt-hog": [("ikt", "ikt.prio=ikt-bench:90 ikt.timers_prio=70", "IKT thread"),
               ("threadirqs", "ikt=off threadirqs", "threadirqs")],
}


def parse(text):
    """{mode: {threaded, prio, samples, min.. max (ns), hist {us: n}}}, done."""
    out = {}
    for m in RESULT.finditer(text):
        out[m.group(1)] = {"threaded": m.group(2) == "1", "prio": int(m.group(3)),
                           "samples": int(m.group(4)), "hist": {}}
        out[m.group(1)].update({k: int(m.group(5 + i)) for i, k in enumerate(FIELDS)})
    for m in HIST.finditer(text):
        if m.group(1) in out:
            out[m.group(1)]["hist"][int(m.group(2))] = int(m.group(3))
    return out, "ikt_bench: done" in text


def pool(rows):
    """Rows of several runs of one (load, handler, boot) merged into one.

    min and max are exact; avg is weighted by samples; p50 and p99 come from
    the merged 1 us histogram by console.percentile (the tools' one
    convention: nearest rank, the bucket's lower edge), in ns, for one run
    as for several.
    """
    out, empty = {}, []
    for r in rows:
        if not r.get("samples"):
            # A handler its boot never reported (validate.measure_ikt's
            # placeholder): nothing to pool, its problems to keep.
            empty.append(dict(r, runs=0))
            continue
        key = (r["load"], r["handler"], r["boot"])
        if key not in out:
            out[key] = dict(r, runs=0, samples=0, hist={}, avg=0, maxes=[])
            out[key]["min"], out[key]["max"] = r["min"], r["max"]
        p = out[key]
        p["runs"] += 1
        p["avg"] = (p["avg"] * p["samples"] + r["avg"] * r["samples"]) / (p["samples"]
                                                                       + r["samples"])
        p["samples"] += r["samples"]
        p["min"], p["max"] = min(p["min"], r["min"]), max(p["max"], r["max"])
        p["maxes"].append(r["max"])
        p["threaded"] = p["threaded"] and r["threaded"]
        for us, n in r["hist"].items():
            p["hist"][int(us)] = p["hist"].get(int(us), 0) + n
    for p in out.values():
        if p["hist"]:
            for name, pct in (("p50", 50), ("p99", 99)):
                # The bucket's lower edge, kept within the exact extremes:
                # a 4.9 us minimum lies in the 4 us bucket.
                q = console.percentile(p["hist"], p["samples"], pct,
                                       above=p["max"] // 1000) * 1000
                p[name] = min(max(q, p["min"]), p["max"])
    return list(out.values()) + empty


def table(rows):
    head = (f"{'load':10} {'handler':16} {'boot':40} {'ctx':6} {'prio':>4} {'runs':>4}"
            f" {'samples':>7}" + "".join(f" {k:>7}" for k in FIELDS))
    out = [head, "-" * len(head)]
    for r in rows:
        out.append(f"{r['load']:10} {r['handler']:16} {r['boot'] or '(default)':40}"
                   f" {'thread' if r['threaded'] else 'hard':6}"
                   f" {r['prio'] if r['threaded'] else '-':>4} {r.get('runs', 1):4d}"
                   f" {r['samples']:7d}" + "".join(f" {r[k] / 1000:7.1f}" for k in FIELDS))
    return "\n".join(out)


def ratios(rows):
    out = []
    for load in dict.fromkeys(r["load"] for r in rows):
        for a, b, what in (("IKT thread", "threadirqs", "IKT/threadirqs"),
                           ("timer: ktimers", "timer: ksoftirqd", "timer ktimers/ksoftirqd")):
            x = next((r for r in rows if r["load"] == load and r["handler"] == a), None)
            y = next((r for r in rows if r["load"] == load and r["handler"] == b), None)
            if x and y:
                out.append(f"  {load:10} {what}: " + ", ".join(
                    f"{k} {x[k] / y[k]:.2f}" if y[k] else f"{k} {x[k] / 1000:.0f}/0 us"
                    for k in FIELDS))
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    loads = list(dict.fromkeys(r["load"] for r in rows))
    kinds = [("interrupt response time (us)", lambda r: not r["handler"].startswith("timer")),
             ("timer_list lateness (us, 1 ms resolution)",
              lambda r: r["handler"].startswith("timer"))]
    kinds = [k for k in kinds if any(k[1](r) for r in rows)]
    fig, axes = plt.subplots(len(kinds), len(loads), figsize=(6 * len(loads), 4 * len(kinds)),
                             squeeze=False)
    for row_axes, (xlabel, pick) in zip(axes, kinds):
        for ax, load in zip(row_axes, loads):
            for r in rows:
                if r["load"] != load or not r["hist"] or not pick(r):
                    continue
                # Survival function: the fraction of samples slower than x.
                xs, ys, left = [], [], r["samples"]
                for us in sorted(r["hist"]):
                    left -= r["hist"][us]
                    xs.append(us + 1)
                    ys.append(max(left, 0.5) / r["samples"])
                ax.step([min(xs) - 1] + xs, [1.0] + ys, where="post",
                        label=f"{r['handler']} ({r['boot'] or 'default'})")
            ax.set_xscale("symlog", linthresh=1)
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("fraction of samples slower")
            ax.set_title(f"load: {load}")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def boot_one(out, load, kernel, append, label, samples, log_path):
    """One icount boot of kernel OUT running ikt_bench under LOAD with the
    boot parameters APPEND: (rows, problems)."""
    res = boot.boot(build.kernel_image(out), f"ikt-bench {load} samples={samples}",
                    log_path, modroot=os.path.join(out, "modroot"), icount=True,
                    timeout=3600, append=("kunit.enable=0 " + append).strip())
    found, done = parse(res.text)
    problems = res.problems() + ([] if done else [f"no 'ikt_bench: done' (see {log_path})"])
    rows = [dict(found[mode], load=load, handler=handler, boot=append, log=log_path)
            for mode, handler in handlers(kernel, label) if mode in found]
    return rows, problems


def handlers(kernel, label):
    """[(ikt_bench mode, row handler)] of a boot of KERNELS' KERNEL, LABEL
    naming its threaded handler."""
    timer = "timer: ktimers" if kernel == "ikt" else "timer: ksoftirqd"
    return [("hard", "hard"), ("thread", label), ("timer", timer)]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/bench-ikt", description=__doc__,
                                 epilog="example:\n  scripts/bench-ikt --samples 2000"
                                        " --loads hackbench",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--loads", default="hackbench,rt-hog",
                    help="comma-separated: " + ",".join(KERNELS))
    ap.add_argument("--runs", type=int, default=1, help="boots per kernel and load")
    args = ap.parse_args(argv)
    tools.require()
    if not 1 <= args.runs <= 20:
        ap.error("--runs must be 1..20")
    loads = [x for x in args.loads.split(",") if x]
    if not 1 <= args.samples <= 100000:
        ap.error("--samples must be 1..100000")
    bad = [x for x in loads if x not in KERNELS]
    if bad or not loads:
        ap.error(f"unknown load(s): {', '.join(bad) or '(none)'}")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    _tree, outs = experiment.apply_and_build(top, bdir, ["project"],
                                        log=logs.logger("bench-ikt"))
    out = outs["project"]
    results = experiment.new_results_dir(bdir, "ikt-")
    rows, problems = [], []
    for load, run in ((x, n) for n in range(1, args.runs + 1) for x in loads):
        for kernel, append, label in KERNELS[load]:
            log_path = os.path.join(results, f"{load}-{kernel}-{run}.log")
            logs.logger("bench-ikt")(f"{load}, {kernel} boot ({append or 'default'}), run {run}")
            got, bad = boot_one(out, load, kernel, append, label, args.samples, log_path)
            rows += [dict(r, run=run) for r in got]
            problems += [f"{load}/{kernel}: {p}" for p in bad]
            # Kept as measured: an interrupted run loses no earlier boot.
            save(rows, os.path.join(results, "bench.json"))
    runs = rows
    rows = sorted(pool(rows), key=lambda r: (loads.index(r["load"]), r["boot"] != "",
                                             r["boot"], r["handler"] != "hard"))
    print("Interrupt response time (raise -> first handler instruction) and timer_list"
          " lateness (timer rows, 1 ms resolution), us;"
          f" QEMU -smp 1 -icount shift=2,sleep=off; {args.samples} interrupts per handler"
          f" and boot, {args.runs} boot(s) per row\n")
    print(table(rows))
    if args.runs > 1:
        print("\nmax per run (us):")
        for r in rows:
            print(f"  {r['load']:10} {r['handler']:11} {r['boot'] or '(default)':26} "
                  + " ".join(f"{m / 1000:.1f}" for m in r["maxes"]))
    print("\n" + ratios(rows))
    png = os.path.join(results, "irt.png")
    if plot(rows, png):
        print(f"\nplot: {png}")
    print(f"results: {results}")
    for p in problems:
        print(f"  problem: {p}")
    # Every threaded row must really have been threaded, hard rows hard;
    # timer callbacks run in a softirq thread with forced threading.
    wrong = [r for r in runs if r["threaded"] != (r["handler"] != "hard")]
    for r in wrong:
        print(f"  problem: {r['load']}/{r['handler']} ran {'threaded' if r['threaded'] else 'hard'}")
    sys.exit(1 if problems or wrong or not rows else 0)


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
