# SPDX-License-Identifier: GPL-2.0
"""scripts/trace-latency: the worst preemption-off and interrupts-off sections.

For each variant (default: stock and project) builds a traced twin, the
variant plus variants/fragments/trace.config (the preemptirqsoff tracer), in
build/out/<variant>-trace (-trace-base for a "tree base" variant), boots it
in instruction-counted virtual time (-smp 1 -icount shift=2,sleep=off) and runs guest/latency-trace: cyclictest
at SCHED_FIFO 99 under the load while the tracer keeps the longest section
with preemption or interrupts off of every second, with its stack trace.

Prints, per variant, the worst sections grouped by where they start, end and
who called the locking function: the input of the lock-conversion advisor.
The tracer hooks every preemption and interrupt toggle, so these kernels are
not the ones whose latency scripts/validate measures, and the cyclictest run
they do is not a latency figure.  JSON and logs go to build/results/trace-<time>/.

  scripts/trace-latency                               stock and project, 60 s of hackbench
  scripts/trace-latency --variants project --secs 120 --load stress --top 20
"""

import argparse
import os

from pvrt import boot, build, console, experiment, lock, logs, tools
from pvrt.results import save
from pvrt.errors import entry

TRACE_FRAGMENT = "variants/fragments/trace.config"


log = logs.logger("trace-latency")


def traced(top, name, base_config=None, base_target=None):
    """The traced twin of variant NAME (a Variant named <name>-trace), from
    the same base as the kernel it stands for (BASE_CONFIG, BASE_TARGET as
    for build.Variant): sections traced on another base's kernel say
    nothing of the one measured."""
    return build.twin(top, name, "trace", add=[TRACE_FRAGMENT],
                      base_config=base_config, base_target=base_target)


# The loads guest/latency-trace runs (the README lists the same).
LOADS = ("hackbench", "stress", "stress-set", "none")


def boot_traced(top, name, secs, load, results_dir, base_config=None, base_target=None):
    """Boot the built traced twin of NAME (from BASE_CONFIG or BASE_TARGET,
    see traced()) under LOAD for SECS: the worst section of every second (a
    row of kind "trace", naming the build it booted)."""
    var = traced(top, name, base_config, base_target)
    out = os.path.join(os.environ["PVRT_BUILD"], "out", var.out_name)
    log_path = os.path.join(results_dir, f"{name}-trace.log")
    log(f"{name}: booting {var.name} (-smp 1 -icount), {secs} s of {load} under the tracer")
    res = boot.boot(build.kernel_image(out), f"latency-trace {secs} {load}", log_path,
                    modroot=os.path.join(out, "modroot"), icount=True,
                    append=" ".join(var.cmdline), timeout=secs * 30 + 600)
    sec = res.sections().get("latency-trace")
    return {"kind": "trace", "variant": name, "load": load, "seconds": secs, "log": log_path,
            "kernel": var.out_name, "problems": res.problems(),
            "sections": console.latency_trace(sec[1]) if sec else []}


def trace_variant(top, tree, name, secs, load, results_dir):
    var = traced(top, name)
    build.build_variant(top, tree, var,
                        os.path.join(os.environ["PVRT_BUILD"], "out", var.out_name), log=log)
    return boot_traced(top, name, secs, load, results_dir)


def table(name, rows):
    lines = [f"{name}: worst preemption/interrupts-off sections (max of each second, grouped)",
             f"  {'#':>2} {'max us':>7} {'mean us':>8} {'n':>4}  {'caller':32} {'lock op':30}"
             f" started -> ended"]
    for i, g in enumerate(rows, 1):
        lines.append(f"  {i:>2} {g['max_us']:>7} {g['mean_us']:>8} {g['count']:>4}"
                     f"  {(g['caller'] or '-')[:32]:32} {(g['lock_op'] or '-')[:30]:30}"
                     f" {g['started']} -> {g['ended']}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/trace-latency", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="stock,project",
                    help="comma-separated variants (default stock,project)")
    ap.add_argument("--secs", type=int, default=60, help="seconds of load (default 60)")
    ap.add_argument("--load", default="hackbench", choices=LOADS)
    ap.add_argument("--top", type=int, default=10, help="rows per variant (default 10)")
    args = ap.parse_args(argv)
    tools.require()
    if args.secs < 1 or args.top < 1:
        ap.error("--secs and --top must be at least 1")
    top = os.environ["PVRT_TOP"]
    names = args.variants.split(",")
    for n in names:
        build.Variant(n, top)           # refuses an unknown variant before any build
    tree, _ = experiment.apply_and_build(top, os.environ["PVRT_BUILD"], [], log)
    results_dir = experiment.new_results_dir(os.environ["PVRT_BUILD"], "trace-")
    runs = []
    for n in names:
        runs.append(trace_variant(top, tree, n, args.secs, args.load, results_dir))
        save(runs, os.path.join(results_dir, "trace.json"))
    ok = True
    for r in runs:
        rows = console.worst_sections(r["sections"], args.top)
        r["worst"] = rows
        print(table(r["variant"], rows))
        if r["problems"] or not r["sections"]:
            ok = False
            print(f"  problems: {'; '.join(r['problems']) or 'no latency-trace section'}")
    save(runs, os.path.join(results_dir, "trace.json"))
    print(f"results: {results_dir}")
    return 0 if ok else 1


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
