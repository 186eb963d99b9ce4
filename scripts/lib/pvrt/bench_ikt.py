# SPDX-License-Identifier: GPL-2.0
"""scripts/bench-ikt: interrupt response time, hard vs IKT thread vs threadirqs.

Builds the project kernel (with CONFIG_IKT_BENCH=m) and, for each load, boots
it under QEMU in instruction-counted virtual time (-smp 1 -icount
shift=2,sleep=off): as is (IKT on) and with "ikt=off threadirqs" (mainline
forced threading, FIFO 50 for every thread).  In each boot the ikt_bench
module raises simulated interrupts and times raise -> first instruction of
the handler, for an IRQF_NO_THREAD handler (hard) and a plain one
(threaded).  Loads:

  hackbench  hackbench in a loop: every thread at the default priority; both
             mechanisms run the interrupt's thread at FIFO 50
  rt-hog     hackbench plus a SCHED_FIFO 60 task busy half the time in 5 ms
             bursts.  The IKT boot gives the interrupt FIFO 90 with
             ikt.prio=ikt-bench:90 and the timer softirq threads FIFO 70 with
             ikt.timers_prio=70.  The mechanisms are compared at the same
             priority: a threadirqs boot whose interrupt thread is set to
             FIFO 90 and ksoftirqd to FIFO 70 with chrt before the
             measurement (ikt_bench gate=1), as an administrator would; a
             third boot leaves threadirqs as booted (what is configurable
             without scripts)

Each boot also times timer_list callbacks: the lateness from the jiffy a
timer expired at to the jiffy its callback ran in (one-tick resolution,
1 ms at HZ=1000), run by ktimers under IKT and by ksoftirqd with threadirqs.
The timer wheel rounds level-0 expiry up by one tick, so 1 ms is on time.

Prints one table (us), writes bench.json and irt.png (distributions, like
figures 9-10 of Heursch et al. 2004) under build/results/ikt-<time>/.
"""

import argparse
import collections
import os
import re
import sys

from pvrt import boot, build, console, experiment, lock, logs, tools
from pvrt.results import save
from pvrt.errors import entry

RESULT = re.compile(r"ikt_bench: result (\S+) threaded=(\d+) prio=(\d+) prio_max=(\d+)"
                    r" samples=(\d+) min=(\d+) avg=(\d+) p50=(\d+) p99=(\d+) max=(\d+)")
HIST = re.compile(r"ikt_bench: hist (\S+) (\d+) (\d+)")
FIELDS = ("min", "avg", "p50", "p99", "max")


class Boot(collections.namedtuple("Boot", "kernel append label args timer")):
    """One boot of a load: KERNEL names its log, APPEND its boot parameters,
    LABEL the row of its threaded handler, ARGS what guest/ikt-bench gets
    besides the load (chrt=P: set the interrupt's thread to FIFO P before
    measuring), TIMER the row of its timer_list callbacks."""

    @property
    def shown(self):
        """The boot as the table shows it: parameters and what chrt did."""
        what = {"chrt": "irq thread", "softirq_chrt": "ksoftirqd"}
        done = [f"chrt -f {v} {what[k]}" for k, v in
                (a.split("=", 1) for a in self.args.split()) if k in what]
        return " + ".join([self.append] + done) if done else self.append


IKT_TIMERS = "timer: ktimers"
KERNELS = {
    "hackbench": [Boot("ikt", "", "IKT thread", "", IKT_TIMERS),
                  Boot("threadirqs", "ikt=off threadirqs", "threadirqs", "",
                       "timer: ksoftirqd")],
    "rt-hog": [Boot("ikt", "ikt.prio=ikt-bench:90 ikt.timers_prio=70", "IKT thread", "",
                    IKT_TIMERS),
               Boot("threadirqs-chrt", "ikt=off threadirqs", "threadirqs + chrt",
                    "chrt=90 softirq_chrt=70", "timer: ksoftirqd + chrt"),
               Boot("threadirqs", "ikt=off threadirqs", "threadirqs", "",
                    "timer: ksoftirqd")],
}

# The comparisons, per load: (IKT's row, the reference row, same priority?).
# A same-priority pair compares the mechanisms and needs both threads to
# have run at one priority; the other says what IKT's boot parameters give
# over threadirqs as booted.
PAIRS = {
    "hackbench": [("IKT thread", "threadirqs", True),
                  (IKT_TIMERS, "timer: ksoftirqd", False)],
    "rt-hog": [("IKT thread", "threadirqs + chrt", True),
               ("IKT thread", "threadirqs", False),
               (IKT_TIMERS, "timer: ksoftirqd + chrt", True),
               (IKT_TIMERS, "timer: ksoftirqd", False)],
}


def parse(text):
    """{mode: {threaded, threaded_n, prio, prio_max, samples, min.. max (ns),
    hist {us: n}}}, done.  threaded is True when every sample's handler ran
    in a thread, False when none did, None when some did."""
    out = {}
    for m in RESULT.finditer(text):
        n, samples = int(m.group(2)), int(m.group(5))
        out[m.group(1)] = {"threaded": {samples: True, 0: False}.get(n), "threaded_n": n,
                           "prio": int(m.group(3)), "prio_max": int(m.group(4)),
                           "samples": samples, "hist": {}}
        out[m.group(1)].update({k: int(m.group(6 + i)) for i, k in enumerate(FIELDS)})
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
            out[key] = dict(r, runs=0, samples=0, hist={}, avg=0, maxes=[], threaded_n=0)
            if "problems" in r:
                out[key]["problems"] = []
            out[key]["min"], out[key]["max"] = r["min"], r["max"]
        p = out[key]
        p["runs"] += 1
        p["avg"] = (p["avg"] * p["samples"] + r["avg"] * r["samples"]) / (p["samples"]
                                                                       + r["samples"])
        p["samples"] += r["samples"]
        p["min"], p["max"] = min(p["min"], r["min"]), max(p["max"], r["max"])
        p["maxes"].append(r["max"])
        p["problems"] = list(dict.fromkeys(p.get("problems", []) + r.get("problems", [])))
        if p["threaded"] != r["threaded"]:
            p["threaded"] = None
        p["threaded_n"] = p.get("threaded_n", 0) + r.get("threaded_n", 0)
        p["prio"] = min(p["prio"], r["prio"])
        p["prio_max"] = max(p.get("prio_max", p["prio"]), r.get("prio_max", r["prio"]))
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


def context(r):
    """Where a row's handler ran: thread, hard, or mixed (some samples each)."""
    return {True: "thread", False: "hard"}.get(r.get("threaded"), "mixed")


def prio(r):
    """The rt_priority a threaded (or mixed) row ran at: p, or lo-hi if it
    changed between samples."""
    if r.get("threaded") is False or r.get("prio") is None:
        return "-"
    hi = r.get("prio_max", r["prio"])
    return f"{r['prio']}" if hi == r["prio"] else f"{r['prio']}-{hi}"


# Rows whose context is the mechanism's contract.  Not the ksoftirqd rows:
# with threadirqs a task's local_bh_enable() runs pending softirqs, the
# TIMER one included, so mainline's timer callbacks run in ksoftirqd or in
# whichever task enables bottom halves first (their ctx column says how
# often); under IKT the tick's TIMER softirq is raised for ktimers alone.
CONTRACT = ("hard", "IKT thread", "threadirqs", "threadirqs + chrt", IKT_TIMERS)


def context_problems(r):
    """Why a row with samples does not measure what its name says: a hard
    handler that ran in a thread, a threaded one for some samples in hard
    interrupt context, IKT's timer callbacks outside a softirq thread, or a
    priority that changed during the run.  Counted over every sample the
    module took."""
    if not r.get("samples") or r["handler"] not in CONTRACT:
        return []
    want = r["handler"] != "hard"
    out = []
    if r.get("threaded") is not want:
        n = r.get("threaded_n", r["samples"] if r.get("threaded") else 0)
        out.append(f"{r['load']}/{r['handler']}: {n} of {r['samples']} samples ran in a"
                   f" thread, expected {'all' if want else 'none'}")
    if want and r.get("prio_max", r["prio"]) != r["prio"]:
        out.append(f"{r['load']}/{r['handler']}: its priority changed during the run"
                   f" (FIFO {prio(r)})")
    return out


def table(rows):
    head = (f"{'load':10} {'handler':24} {'boot':58} {'ctx':6} {'prio':>5} {'runs':>4}"
            f" {'samples':>7}" + "".join(f" {k:>7}" for k in FIELDS))
    out = [head, "-" * len(head)]
    for r in rows:
        out.append(f"{r['load']:10} {r['handler']:24} {r['boot'] or '(default)':58}"
                   f" {context(r):6} {prio(r):>5} {r.get('runs', 1):4d}"
                   f" {r['samples']:7d}" + "".join(f" {r[k] / 1000:7.1f}" for k in FIELDS))
    return "\n".join(out)


def ratios(rows):
    out = []
    for load in dict.fromkeys(r["load"] for r in rows):
        for a, b, same in PAIRS.get(load, ()):
            x = next((r for r in rows if r["load"] == load and r["handler"] == a), None)
            y = next((r for r in rows if r["load"] == load and r["handler"] == b), None)
            if x and y and x.get("samples") and y.get("samples"):
                how = "same priority" if same else "as configured at boot"
                out.append(f"  {load:10} {a} / {b} ({how}, FIFO {prio(x)} / {prio(y)}): "
                           + ", ".join(f"{k} {x[k] / y[k]:.2f}" if y[k]
                                       else f"{k} {x[k] / 1000:.0f}/0 us" for k in FIELDS))
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


def boot_one(out, load, b, samples, log_path):
    """One icount boot B (a Boot of KERNELS[LOAD]) of kernel OUT running
    ikt_bench under LOAD: (rows, problems)."""
    res = boot.boot(build.kernel_image(out),
                    " ".join(x for x in ("ikt-bench", load, b.args, f"samples={samples}") if x),
                    log_path, modroot=os.path.join(out, "modroot"), icount=True,
                    timeout=3600, append=("kunit.enable=0 " + b.append).strip())
    found, done = parse(res.text)
    problems = res.problems() + ([] if done else [f"no 'ikt_bench: done' (see {log_path})"])
    rows = [dict(found[mode], load=load, handler=handler, boot=b.shown, log=log_path)
            for mode, handler in handlers(b) if mode in found]
    return rows, problems


def handlers(b):
    """[(ikt_bench mode, row handler)] of the Boot B."""
    return [("hard", "hard"), ("thread", b.label), ("timer", b.timer)]


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
        for b in KERNELS[load]:
            log_path = os.path.join(results, f"{load}-{b.kernel}-{run}.log")
            logs.logger("bench-ikt")(f"{load}, {b.kernel} boot ({b.shown or 'default'}),"
                                     f" run {run}")
            got, bad = boot_one(out, load, b, args.samples, log_path)
            rows += [dict(r, run=run) for r in got]
            problems += [f"{load}/{b.kernel}: {p}" for p in bad]
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
            print(f"  {r['load']:10} {r['handler']:24} {r['boot'] or '(default)':58} "
                  + " ".join(f"{m / 1000:.1f}" for m in r["maxes"]))
    print("\n" + ratios(rows))
    png = os.path.join(results, "irt.png")
    if plot(rows, png):
        print(f"\nplot: {png}")
    print(f"results: {results}")
    for p in problems:
        print(f"  problem: {p}")
    # Every sample of a threaded row must have run in a thread at one
    # priority, every sample of a hard row in hard interrupt context; timer
    # callbacks run in a softirq thread with forced threading.
    wrong = [f"run {r['run']}: {p}" for r in runs for p in context_problems(r)]
    for p in wrong:
        print(f"  problem: {p}")
    sys.exit(1 if problems or wrong or not rows else 0)


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
