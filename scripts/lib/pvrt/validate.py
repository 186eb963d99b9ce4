# SPDX-License-Identifier: GPL-2.0
"""scripts/validate: the main job.  Compare kernels' latency under load in one run.

Applies the series to the base tree, builds each variant (default: the stock
CONFIG_PREEMPT kernel, booted as is and with threadirqs, PREEMPT_RT and the
project kernel, all from the same tree), boots
each under QEMU in instruction-counted virtual time (-smp 1 -icount
shift=2,sleep=off), runs the in-kernel tests built into it and cyclictest
-m -p 99 -i 200 under hackbench, and prints one table.  Results (JSON, the
histograms) and a plot go to build/results/.

Then it runs scripts/devices-check (--no-devices skips it): the project's
IKT on an x86_64_defconfig kernel with real devices.  That build takes
longer than every other kernel of the project together, which is why it
runs here and not in make check.
"""

import argparse
import os
import sys

from pvrt import boot, build, console, devices, tools
from pvrt.results import save
from pvrt.check import kunit_counts


def log(msg):
    print(f"validate: {msg}", file=sys.stderr, flush=True)


def measure(top, bdir, tree, variant, secs, load, run_no, results_dir):
    var = build.Variant(variant, top)
    out = os.path.join(bdir, "out", var.build_name)
    log_path = os.path.join(results_dir, f"{variant}-{run_no}.log")
    log(f"{variant} run {run_no}: booting (-smp 1 -icount shift=2,sleep=off),"
        f" cyclictest {secs}s under {load}")
    res = boot.boot(build.kernel_image(out), f"cyclictest-load {secs} {load}", log_path,
                    modroot=os.path.join(out, "modroot"), icount=True,
                    append=" ".join(var.cmdline), timeout=secs * 20 + 600)
    row = {"variant": variant, "run": run_no, "log": log_path, "problems": res.problems()}
    ct = res.sections().get("cyclictest")
    if ct and ct[0] == 0:
        lat = console.cyclictest(ct[1])
        row.update(lat.row())
        row["hist"] = lat.hist
        start, series = console.cyclictest_series(ct[1])
        row["series"] = series
        if start is not None:
            # Stress-set phases, in seconds since cyclictest started.
            row["phases"] = [(name, round(t - start, 2)) for name, t in console.phases(res.text)
                             if t >= start]
    kc = kunit_counts(tree, log_path)
    row["kunit"] = kc
    return row


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def table(rows):
    head = ["kernel", "run", "samples", "min", "avg", "max", "p99", "p99.9", "p99.99",
            "p99.999", "kunit"]
    lines = []
    for r in rows:
        kc = r.get("kunit")
        lines.append([r["variant"], str(r["run"]), fmt(r.get("samples")), fmt(r.get("min")),
                      fmt(r.get("avg")), fmt(r.get("max")), fmt(r.get("p99")),
                      fmt(r.get("p999")), fmt(r.get("p9999")), fmt(r.get("p99999")),
                      "-" if kc is None else f"{kc[0]} passed, {kc[1]} failed"])
    widths = [max(len(h), *(len(ln[i]) for ln in lines)) for i, h in enumerate(head)]
    out = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    out.append("  ".join("-" * w for w in widths))
    for ln in lines:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w)
                             for i, (c, w) in enumerate(zip(ln, widths))))
    return "\n".join(out)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not installed: no plot (scripts/setup installs python3-matplotlib)")
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in rows:
        if not r.get("hist"):
            continue
        xs = sorted(r["hist"])
        ax.step(xs, [r["hist"][x] for x in xs], where="mid",
                label=f"{r['variant']} #{r['run']} (max {r['max']} us)")
    ax.set_yscale("log")
    ax.set_xlabel("wake-up latency (us)")
    ax.set_ylabel("samples")
    ax.set_title("cyclictest -m -p 99 -i 200 under hackbench, QEMU -icount shift=2")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


PHASE_COLOURS = {"memory": "tab:blue", "file-io": "tab:green", "proc": "tab:orange",
                 "fork": "tab:red", "console": "tab:purple"}


def plot_over_time(rows, path, load):
    """Worst latency of each cyclictest report window (-o 5000: about 1 s; the
    windows end where cyclictest's SCHED_OTHER reader caught up), one panel
    per variant (its first run), with the stress-set phases shaded."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        return None
    firsts = {}
    for r in rows:
        if r.get("series") and r["variant"] not in firsts:
            firsts[r["variant"]] = r
    if not firsts:
        return None
    fig, axes = plt.subplots(len(firsts), 1, figsize=(9, 2.2 * len(firsts) + 0.8),
                             sharex=True, squeeze=False)
    for ax, (variant, r) in zip(axes[:, 0], firsts.items()):
        xs = [t for t, _ in r["series"]]
        ax.plot(xs, [v for _, v in r["series"]], drawstyle="steps-pre", color="black",
                linewidth=1)
        ph = r.get("phases") or []
        for i, (name, t0) in enumerate(ph):
            t1 = ph[i + 1][1] if i + 1 < len(ph) else (xs[-1] if xs else t0)
            ax.axvspan(t0, t1, color=PHASE_COLOURS.get(name, "tab:gray"), alpha=0.15,
                       linewidth=0)
        ax.set_yscale("log")
        ax.set_ylabel("max latency (us)")
        ax.set_title(f"{variant} (run {r['run']}, max {r['max']} us)", fontsize=9)
    axes[-1, 0].set_xlabel("seconds since cyclictest started")
    fig.suptitle(f"cyclictest -m -p 99 -i 200 under {load}: worst latency of each report"
                 " window (-o 5000, about 1 s)", fontsize=10)
    top = 0.94
    if any(r.get("phases") for r in firsts.values()):
        fig.legend(handles=[Patch(color=c, alpha=0.3, label=f"phase: {n}")
                            for n, c in PHASE_COLOURS.items()],
                   loc="upper center", bbox_to_anchor=(0.5, 0.95),
                   ncol=len(PHASE_COLOURS), fontsize=8, frameon=False)
        top = 0.88
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/validate", description=__doc__,
                                 epilog="example:\n  scripts/validate --variants stock,rt,project"
                                        " --seconds 60 --runs 3",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="stock,threadirqs,rt,project",
                    help="comma-separated files of variants/"
                         " (default: stock,threadirqs,rt,project)")
    ap.add_argument("--seconds", type=int, default=60, help="cyclictest duration per run")
    ap.add_argument("--runs", type=int, default=1, help="runs per variant")
    ap.add_argument("--load", default="hackbench",
                    choices=["hackbench", "stress", "stress-set", "none"])
    ap.add_argument("--no-devices", action="store_true",
                    help="skip scripts/devices-check (the x86_64_defconfig device boot)")
    args = ap.parse_args(argv)
    tools.require()
    if args.seconds < 1 or args.runs < 1:
        ap.error("--seconds and --runs must be positive")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        build.Variant(v, top)           # fail early on a typo
    tree, _outs = build.apply_and_build(top, bdir, variants, log=log)
    results_dir = build.new_results_dir(bdir)
    rows = []
    results_json = os.path.join(results_dir, "results.json")
    for run_no in range(1, args.runs + 1):
        for v in variants:          # interleaved, so drift on the host hits all alike
            rows.append(measure(top, bdir, tree, v, args.seconds, args.load, run_no,
                                results_dir))
            # Each run is kept as soon as it is measured: an interrupted or
            # failed run loses nothing measured before it.
            save(rows, results_json)
    png = plot(rows, os.path.join(results_dir, "latency.png"))
    over_time = plot_over_time(rows, os.path.join(results_dir, "latency-over-time.png"),
                               args.load)
    if over_time:
        png = f"{png}, {over_time}" if png else over_time
    print(f"\ncyclictest -m -p 99 -i 200 -D {args.seconds}s under {args.load};"
          " QEMU TCG -smp 1 -icount shift=2,sleep=off; latencies in us\n")
    print(table(rows))
    bad = [(r["variant"], r["run"], p) for r in rows for p in r["problems"]]
    for v, n, p in bad:
        print(f"  {v} run {n}: {p}")
    print(f"\nresults: {results_dir}" + (f", plot: {png}" if png else ""))
    failed = 0
    if not args.no_devices:
        print()
        failed = devices.run(top, bdir, log=log)
    sys.exit(1 if bad or failed or any(r.get("samples") is None for r in rows) else 0)


if __name__ == "__main__":
    main()
