# SPDX-License-Identifier: GPL-2.0
"""scripts/bench-pv-mutex: pv_mutex against rt_mutex and mutex, in one boot.

Builds the project kernel (with CONFIG_PV_MUTEX_BENCH=m), boots it once under
QEMU in instruction-counted virtual time (-smp 1 -icount shift=2,sleep=off,
so the figures do not depend on the host's load), loads pv_mutex_bench and
prints two tables: ns per uncontended lock+unlock, and ns per priority change
propagated through chains of 1..64 blocked owners, with the pv/rt ratios and
the cost per chain level (slope of a least-squares line through the depths).
"""

import argparse
import json
import os
import re
import sys

from pvrt import boot, build, experiment, lock, logs, tools
from pvrt.errors import entry

LINE = re.compile(r"pv_mutex_bench: (uncontended (\S+) (\d+)|chain (\S+) (\d+) (\d+)|done)")


def parse(text):
    """({lock: ns}, {lock: {depth: ns}}, done) from a console log."""
    unc, chain, done = {}, {}, False
    for m in LINE.finditer(text):
        if m.group(2):
            unc[m.group(2)] = int(m.group(3))
        elif m.group(4):
            chain.setdefault(m.group(4), {})[int(m.group(5))] = int(m.group(6))
        else:
            done = True
    return unc, chain, done


def slope(points):
    """Least-squares slope of [(x, y)]."""
    n = len(points)
    if n < 2:
        return None
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else None


def tables(unc, chain):
    out = ["uncontended lock+unlock, ns per pair (best of 5 runs)", ""]
    out.append(f"  {'lock':10} {'ns':>8} {'vs rt_mutex':>12}")
    rt = unc.get("rt_mutex")
    for name in ("pv_mutex", "rt_mutex", "mutex"):
        if name in unc:
            ratio = f"{unc[name] / rt:.2f}" if rt else "-"
            out.append(f"  {name:10} {unc[name]:8d} {ratio:>12}")
    out += ["", "priority change through a chain of blocked owners, ns per change"
                " (pv+rt: locks alternate between pv_mutex and rt_mutex)", ""]
    out.append(f"  {'depth':>5} {'pv_mutex':>9} {'rt_mutex':>9} {'pv+rt':>9} {'pv/rt':>6}"
               f" {'pv+rt/rt':>8}")
    pv, rtc, mix = (chain.get(k, {}) for k in ("pv_mutex", "rt_mutex", "pv+rt"))

    def cell(v):
        return v if v is not None else "-"

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "-"

    for d in sorted(set(pv) | set(rtc) | set(mix)):
        p, r, x = pv.get(d), rtc.get(d), mix.get(d)
        out.append(f"  {d:5d} {cell(p):>9} {cell(r):>9} {cell(x):>9} {ratio(p, r):>6}"
                   f" {ratio(x, r):>8}")
    slopes = {k: slope(sorted(v.items())) for k, v in
              (("pv_mutex", pv), ("rt_mutex", rtc), ("pv+rt", mix))}
    if slopes["pv_mutex"] and slopes["rt_mutex"]:
        line = (f"  per chain level (least-squares slope): pv_mutex {slopes['pv_mutex']:.0f} ns,"
                f" rt_mutex {slopes['rt_mutex']:.0f} ns")
        if slopes["pv+rt"]:
            line += f", pv+rt {slopes['pv+rt']:.0f} ns"
        line += f"; pv/rt {slopes['pv_mutex'] / slopes['rt_mutex']:.2f}"
        out += ["", line]
    return "\n".join(out)


def boot_bench(out, log_path, loops=100000, walks=1000, max_depth=64):
    """One icount boot of kernel OUT loading pv_mutex_bench:
    (uncontended, chain, problems)."""
    cmd = ("insmod $(find /lib/modules -name 'pv_mutex_bench.ko*' | head -n 1)"
           f" loops={loops} walks={walks} max_depth={max_depth}")
    res = boot.boot(build.kernel_image(out), cmd, log_path,
                    modroot=os.path.join(out, "modroot"), icount=True, timeout=3600,
                    append="kunit.enable=0")
    unc, chain, done = parse(res.text)
    return unc, chain, res.problems() + ([] if done else ["no 'pv_mutex_bench: done'"])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/bench-pv-mutex", description=__doc__,
                                 epilog="example:\n  scripts/bench-pv-mutex --walks 2000",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loops", type=int, default=100000)
    ap.add_argument("--walks", type=int, default=1000)
    ap.add_argument("--max-depth", type=int, default=64)
    args = ap.parse_args(argv)
    tools.require()
    if args.loops < 1 or args.walks < 1 or not 1 <= args.max_depth <= 256:
        ap.error("--loops and --walks must be >= 1, --max-depth 1..256")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    _tree, outs = experiment.apply_and_build(top, bdir, ["project"],
                                        log=logs.logger("bench-pv-mutex"))
    out = outs["project"]
    results = experiment.new_results_dir(bdir, "bench-")
    log_path = os.path.join(results, "console.log")
    unc, chain, problems = boot_bench(out, log_path, args.loops, args.walks, args.max_depth)
    with open(os.path.join(results, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"uncontended": unc, "chain": chain}, f, indent=1)
    print("pv_mutex_bench, QEMU -smp 1 -icount shift=2,sleep=off"
          f" (loops={args.loops}, walks={args.walks})\n")
    print(tables(unc, chain))
    print(f"\nconsole: {log_path}")
    for p in problems:
        print(f"  {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
