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
             with ikt.prio=ikt-bench:90, what threadirqs cannot express

Prints one table (us), writes bench.json and irt.png (distributions, like
figures 9-10 of Heursch et al. 2004) under build/results/ikt-<time>/.
"""

import argparse
import json
import os
import re
import sys
import time

from pvrt import apply as apply_mod
from pvrt import boot, build

RESULT = re.compile(r"ikt_bench: result (\S+) threaded=(\d) prio=(\d+) samples=(\d+) min=(\d+)"
                    r" avg=(\d+) p50=(\d+) p99=(\d+) max=(\d+)")
HIST = re.compile(r"ikt_bench: hist (\S+) (\d+) (\d+)")
FIELDS = ("min", "avg", "p50", "p99", "max")

# (kernel label, boot parameters, row label of the threaded handler)
KERNELS = {
    "hackbench": [("ikt", "", "IKT thread"),
                  ("threadirqs", "ikt=off threadirqs", "threadirqs")],
    "rt-hog": [("ikt", "ikt.prio=ikt-bench:90", "IKT thread"),
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


def table(rows):
    head = (f"{'load':10} {'handler':11} {'boot':26} {'ctx':6} {'prio':>4} {'samples':>7}"
            + "".join(f" {k:>7}" for k in FIELDS))
    out = [head, "-" * len(head)]
    for r in rows:
        out.append(f"{r['load']:10} {r['handler']:11} {r['boot'] or '(default)':26}"
                   f" {'thread' if r['threaded'] else 'hard':6}"
                   f" {r['prio'] if r['threaded'] else '-':>4} {r['samples']:7d}"
                   + "".join(f" {r[k] / 1000:7.1f}" for k in FIELDS))
    return "\n".join(out)


def ratios(rows):
    out = []
    for load in dict.fromkeys(r["load"] for r in rows):
        ikt = next((r for r in rows if r["load"] == load and r["handler"] == "IKT thread"), None)
        ti = next((r for r in rows if r["load"] == load and r["handler"] == "threadirqs"), None)
        if ikt and ti:
            out.append(f"  {load:10} IKT/threadirqs: " + ", ".join(
                f"{k} {ikt[k] / ti[k]:.2f}" for k in FIELDS if ti[k]))
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    loads = list(dict.fromkeys(r["load"] for r in rows))
    fig, axes = plt.subplots(1, len(loads), figsize=(6 * len(loads), 4), squeeze=False)
    for ax, load in zip(axes[0], loads):
        for r in rows:
            if r["load"] != load or not r["hist"]:
                continue
            xs = sorted(r["hist"])
            ax.step(xs, [r["hist"][x] for x in xs], where="post",
                    label=f"{r['handler']} ({r['boot'] or 'default'})")
        ax.set_yscale("log")
        ax.set_xlabel("interrupt response time (us)")
        ax.set_ylabel("samples per 1 us")
        ax.set_title(f"load: {load}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/bench-ikt", description=__doc__,
                                 epilog="example:\n  scripts/bench-ikt --samples 2000"
                                        " --loads hackbench",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--loads", default="hackbench,rt-hog",
                    help="comma-separated: " + ",".join(KERNELS))
    args = ap.parse_args(argv)
    loads = [x for x in args.loads.split(",") if x]
    if not 1 <= args.samples <= 100000:
        ap.error("--samples must be 1..100000")
    bad = [x for x in loads if x not in KERNELS]
    if bad or not loads:
        ap.error(f"unknown load(s): {', '.join(bad) or '(none)'}")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    apply_mod.main([])
    tree = os.path.join(bdir, "linux")
    out = build.build(top, tree, "project", log=lambda m: print(m, file=sys.stderr))
    results = os.path.join(bdir, "results", "ikt-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(results)
    rows, problems = [], []
    for load in loads:
        for kernel, append, label in KERNELS[load]:
            log_path = os.path.join(results, f"{load}-{kernel}.log")
            print(f"bench-ikt: {load}, {kernel} boot ({append or 'default'})",
                  file=sys.stderr, flush=True)
            res = boot.boot(build.kernel_image(out), f"ikt-bench {load} samples={args.samples}",
                            log_path, modroot=os.path.join(out, "modroot"), icount=True,
                            timeout=3600, append=("kunit.enable=0 " + append).strip())
            found, done = parse(res.text)
            if not done:
                problems.append(f"{load}/{kernel}: no 'ikt_bench: done' (see {log_path})")
            problems += [f"{load}/{kernel}: {p}" for p in res.problems()]
            for mode, handler in (("hard", "hard"), ("thread", label)):
                if mode in found:
                    rows.append(dict(found[mode], load=load, handler=handler, boot=append,
                                     log=log_path))
    with open(os.path.join(results, "bench.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    print("Interrupt response time (raise -> first handler instruction), us;"
          f" QEMU -smp 1 -icount shift=2,sleep=off; {args.samples} interrupts per handler\n")
    print(table(rows))
    print("\n" + ratios(rows))
    png = os.path.join(results, "irt.png")
    if plot(rows, png):
        print(f"\nplot: {png}")
    print(f"results: {results}")
    for p in problems:
        print(f"  problem: {p}")
    # Every threaded row must really have been threaded, hard rows hard.
    wrong = [r for r in rows if r["threaded"] != (r["handler"] != "hard")]
    for r in wrong:
        print(f"  problem: {r['load']}/{r['handler']} ran {'threaded' if r['threaded'] else 'hard'}")
    sys.exit(1 if problems or wrong or not rows else 0)


if __name__ == "__main__":
    main()
