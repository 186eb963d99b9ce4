# SPDX-License-Identifier: GPL-2.0
"""scripts/lock-advisor: which spinlock_t classes pay as pv_mutexes (seed eq. 5)?

Builds the project kernel's lock-statistics twin (the variant plus
variants/fragments/lockstat.config: CONFIG_LOCK_STAT, PROVE_LOCKING,
PROVE_RAW_LOCK_NESTING, DEBUG_ATOMIC_SLEEP) in build/out/<variant>-lockstat
(a "tree base" variant, built from the series' base, is refused),
boots it under QEMU (-smp 2, plain TCG: spinlocks can only be contended
with two CPUs) and runs guest/lock-advisor: the validation workload
(cyclictest under the stress set by default) with /proc/lock_stat
collecting, then T_sched from pi_football's wake-up pings, in the same boot.

For every spinlock_t class (wait type "config" in /proc/lockdep, no read
acquisitions) it prints acquisitions, contentions, p = contentions /
acquisitions and p+, its one-sided 95 % Clopper-Pearson upper bound, the
average and maximum hold time, the threshold of the seed's equation (5),
T_cs > 4 T_sched p+ / (1 - p+), with T_sched the mean wake-up to run of the
same boot, how much of the worst preemption/interrupts-off sections of a
trace (scripts/trace-latency, or a validate --full report) it is known to
cause, and the verdict with its reasons.

Safety is the static pass's (pvrt.lockscan): every acquisition site of the
class in the sources, through wrappers, and the context each is taken in
(process context, a plain RCU reader, atomic, or unknown).  One atomic site
makes the class "unsafe", one unknown site "unknown"; neither is ever
recommended.  Lockdep's usage state only adds reasons against a class:

  hardirq   taken in hard interrupt context (usage '-' or '?')
  softirq   taken in softirq context
  irqs-off  only ever taken with interrupts disabled (spin_lock_irq*)
  bh-off    only ever taken with bottom halves disabled (spin_lock_bh)
  nested    taken while a raw_spinlock_t, spinlock_t or rwlock_t is held
            (a distance-1 dependency in /proc/lockdep)
  per-CPU   the class name says per-CPU data: "review"

A run on one CPU (the guest's "cpus" section) recommends nothing: p
cannot be measured there; when the run does not say how many CPUs it had,
one that saw no contention at all is taken for such a run.  On two CPUs or
more a class never contended is judged with p+ (about 3/N for N
acquisitions), never with p = 0.
Lockdep's wait-type annotations (DEFINE_WAIT_OVERRIDE_MAP) are no locks and
are left out; lock_stat's truncated class names are matched to lockdep's.
A section is attributed to a class when one of the class's contention
points in /proc/lock_stat is the section's caller or in its stack; classes
never contended have no points, so the attribution is a lower bound.

  scripts/lock-advisor                               30 s of stress-set, project
  scripts/lock-advisor --secs 60 --load hackbench --top 40
  scripts/lock-advisor --input build/results/advisor-<time>/project.log
                                                     analyse a recorded boot again
  scripts/lock-advisor --static '&info->lock'        every site of one class
"""

import argparse
import glob
import json
import math
import os
import re
import time

from pvrt import base, boot, build, console, experiment, lock, lockscan, logs, tools
from pvrt.errors import PvrtError, entry
from pvrt.results import save

LOCKSTAT_FRAGMENT = "variants/fragments/lockstat.config"
BENCH_FRAGMENT = build.BENCH_FRAGMENT

log = logs.logger("lock-advisor")

# "  &zone->lock:  0  0  0.00 ... " or "&mm->mmap_lock-W: ..." : 12 numbers.
_STAT = re.compile(r"^\s*(.+?)(-[RW])?:\s+((?:[\d.]+\s+){11}[\d.]+)\s*$")
# "  &zone->lock   12   [<0000000012345678>] free_pcppages_bulk+0x4c/0x2d0"
_POINT = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[<[0-9a-f]+>\]\s+([\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+")
_FIELDS = ("con_bounces", "contentions", "wait_min", "wait_max", "wait_total", "wait_avg",
           "acq_bounces", "acquisitions", "hold_min", "hold_max", "hold_total", "hold_avg")
# "00000000b5e0e0f8 FD:   12 BD:    3 +.+. WT:config: &zone->lock"
_CLASS = re.compile(r"^[0-9a-f]+(?: OPS:\s*\d+)? FD:\s*(\d+) BD:\s*(\d+) (\S{4}) "
                    r"WT:(\w+)(?:,(percpu|override))?: (.+)$")
_EDGE = re.compile(r"^ -> \[[0-9a-f]+\] (.+)$")
_PERCPU = re.compile(r"pcp|percpu|per_cpu|cpu_|_cpu|->cpu|\brq\b")
_TSCHED = re.compile(r"T_sched max (\d+) us \(\d+ wake-ups per CPU, mean (\d+) ns\)")

# the confidence of the upper bound of p that equation (5) is judged with
P_CONFIDENCE = 0.95
# /proc/lock_stat prints at most this many characters of a class name
LOCK_STAT_NAME_MAX = 38      # lock_stats_show()'s namelen

KIND = {"spin": "raw_spinlock_t", "config": "spinlock_t", "sleep": "sleeping lock",
        "spinsleep": "converted spinlock", "free": "wait-free", "inv": "unchecked"}


def parse_lock_stat(lines):
    """/proc/lock_stat: {class: {fields..., read: bool, points: {function: count}}}.

    A class taken for reading has a "-W" and a "-R" line; they are summed
    (maxima kept) and the class is marked read.  Times are microseconds.
    """
    out, cur = {}, None
    for line in lines:
        m = _STAT.match(line)
        if m:
            name, rw = m.group(1).strip(), m.group(2)
            vals = [float(x) for x in m.group(3).split()]
            row = dict(zip(_FIELDS, vals))
            old = out.get(name)
            if old:
                for k in ("con_bounces", "contentions", "wait_total", "acq_bounces",
                          "acquisitions", "hold_total"):
                    old[k] += row[k]
                for k in ("wait_max", "hold_max"):
                    old[k] = max(old[k], row[k])
                for k, tot, n in (("wait_avg", "wait_total", "contentions"),
                                  ("hold_avg", "hold_total", "acquisitions")):
                    old[k] = old[tot] / old[n] if old[n] else 0.0
                old["read"] = old["read"] or rw == "-R"
            else:
                row.update(read=rw == "-R", points={})
                out[name] = row
            cur = name
            continue
        m = _POINT.match(line)
        if m and cur is not None and m.group(1).strip() == cur:
            fn = m.group(3)
            pts = out[cur]["points"]
            pts[fn] = pts.get(fn, 0) + int(m.group(2))
    for row in out.values():
        for k in ("acquisitions", "contentions", "con_bounces", "acq_bounces"):
            row[k] = int(row[k])
    return out


def parse_lockdep(lines):
    """/proc/lockdep: {class: {fd, bd, usage, wait, percpu, after: [classes]}}."""
    out, cur = {}, None
    for line in lines:
        m = _CLASS.match(line.rstrip())
        if m:
            cur = m.group(6).strip()
            out[cur] = {"fd": int(m.group(1)), "bd": int(m.group(2)), "usage": m.group(3),
                        "wait": m.group(4), "percpu": m.group(5) == "percpu",
                        "override": m.group(5) == "override", "after": []}
            continue
        m = _EDGE.match(line.rstrip())
        if m and cur is not None:
            out[cur]["after"].append(m.group(1).strip())
    return out


def parse_t_sched(lines):
    """(mean ns, max us) from pi_football's T_sched line, or None."""
    for line in lines:
        m = _TSCHED.search(line)
        if m:
            return int(m.group(2)), int(m.group(1))
    return None


def kind(dep, stat=None):
    """What a class is: raw_spinlock_t, spinlock_t, rwlock_t, local_lock_t, ..."""
    if dep.get("percpu"):
        return "local_lock_t"
    if dep.get("override"):
        return "annotation"
    if dep["wait"] == "config" and stat is not None and stat.get("read"):
        return "rwlock_t"
    return KIND.get(dep["wait"], dep["wait"])


def safety_notes(name, deps, stats):
    """The reasons NAME cannot become a sleeping lock, as lockdep sees them."""
    dep = deps[name]
    notes = []
    hard, soft = dep["usage"][0], dep["usage"][2]
    if hard in "-?":
        notes.append("hardirq: taken in hard interrupt context")
    elif hard == ".":
        notes.append("irqs-off: only taken with interrupts disabled")
    if soft in "-?":
        notes.append("softirq: taken in softirq context")
    elif soft == "." and hard not in "-?.":
        notes.append("bh-off: only taken with bottom halves disabled")
    if _PERCPU.search(name):
        notes.append("per-CPU: the name says per-CPU data, which is usually taken with"
                     " preemption disabled or by trylock from interrupts (lockdep sees"
                     " neither): review")
    for parent, pdep in deps.items():
        if name in pdep["after"] and parent != name:
            pk = kind(pdep, stats.get(parent))
            if pk in ("raw_spinlock_t", "spinlock_t", "rwlock_t", "local_lock_t"):
                notes.append(f"nested: taken inside {pk} {parent}")
    return notes


def attribute(points, sections):
    """The worst sections (console.worst_sections rows) that one of POINTS
    (functions that took the lock) caused: [(rank, max_us)]."""
    hit = []
    for i, s in enumerate(sections, 1):
        frames = [s.get("caller")] + list(s.get("stack") or [])
        if any(f in points for f in frames if f):
            hit.append((i, s["max_us"]))
    return hit


def threshold_us(t_sched_us, p):
    """Equation (5): T_cs must exceed 4 T_sched p / (1 - p)."""
    if p >= 1:
        return float("inf")
    return 4 * t_sched_us * p / (1 - p)


def _binom_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    logt = n * lq                      # log P(X = 0)
    total = math.exp(logt)
    for i in range(k):
        logt += math.log(n - i) - math.log(i + 1) + lp - lq
        total += math.exp(logt)
    return min(total, 1.0)


def p_upper(contentions, acquisitions, conf=P_CONFIDENCE):
    """One-sided Clopper-Pearson upper bound of p at CONF: the largest p
    under which K or fewer contentions in N acquisitions still have
    probability 1 - CONF (for 0 of N: 1 - (1 - CONF)^(1/N), about 3/N)."""
    k, n = int(contentions), int(acquisitions)
    if n <= 0:
        return 1.0
    if k >= n:
        return 1.0
    alpha = 1.0 - conf
    if k == 0:
        return 1.0 - alpha ** (1.0 / n)
    try:
        from scipy.stats import beta     # python3-scipy, installed by scripts/setup
    except ImportError:
        beta = None
    if beta is not None:
        # the Clopper-Pearson bound is the CONF quantile of Beta(k + 1, n - k)
        return float(beta.ppf(conf, k + 1, n - k))
    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def lock_stat_name(name):
    """How /proc/lock_stat prints the lockdep class NAME ("base#version/sub"):
    the base cut to 37 characters, 2 fewer for a version, 2 for a subclass
    (lock_stats_show() in kernel/locking/lockdep_proc.c)."""
    m = re.match(r"^(.*?)(#\d+)?(/\d+)?$", name)
    base, ver, sub = m.group(1), m.group(2) or "", m.group(3) or ""
    keep = LOCK_STAT_NAME_MAX - 1 - (2 if ver else 0) - (2 if sub else 0)
    return base[:keep] + ver[:2] + sub[:2]


def resolve_name(name, deps):
    """The /proc/lockdep class of a /proc/lock_stat NAME, which lock_stat may
    have truncated; None when it is missing or more than one class fits."""
    if name in deps:
        return name
    cands = [d for d in deps if len(d) > len(name) and lock_stat_name(d) == name]
    return cands[0] if len(cands) == 1 else None


def static_verdict(res):
    """(verdict, note, deciding sites) of a static-pass result."""
    if res is None:
        return "unknown", "static pass not run for this class", []
    sites = res.get("sites", [])
    v = res.get("verdict", "unknown")
    # the configuration the IS_ENABLED() tests were read with
    cfg = f" ({res['config']})" if res.get("config") else ""
    if v == "atomic":
        dec = [r for r in sites if r["context"] == "atomic"]
        return "unsafe", f"static: {len(dec)} of {len(sites)} sites in atomic context", dec
    if v == "unknown":
        dec = [r for r in sites if r["context"] == "unknown"]
        why = res.get("reason") or (f"{len(dec)} of {len(sites)} sites not classified"
                                    if sites else "no acquisition site found in the sources")
        return "unknown", f"static: {why}", dec
    if v == "rcu":
        dec = [r for r in sites if r["context"] == "rcu"]
        return "ok", (f"static: all {len(sites)} sites in process context or plain RCU"
                      f" readers (needs the rtlock-style wait){cfg}"), dec
    if v == "process":
        return "ok", f"static: all {len(sites)} sites in process context{cfg}", []
    return "unknown", f"static: unrecognised verdict {v!r}", sites


def analyse(stats, deps, t_sched_ns, sections, top=25, static=None, cpus=None):
    """Rank the spinlock_t classes: [{class, ..., verdict, notes}], best first,
    and a count of the classes of each other kind that were taken.

    STATIC maps a class to its static-pass result (lockscan.analyse_class());
    a class without one is never recommended.  The dynamic notes only add
    reasons against a conversion.  Equation (5) is judged with the upper
    bound of p, and only from a run with two CPUs or more (CPUS; None: the
    run did not say, then some contention must have been seen at all)."""
    static = static or {}
    t_sched_us = t_sched_ns / 1000.0
    total = sum(s["max_us"] for s in sections) or 0
    any_contention = any(st["contentions"] for st in stats.values())
    smp = cpus >= 2 if cpus is not None else any_contention
    rows, others = [], {}
    for lname, st in stats.items():
        if not st["acquisitions"]:
            continue
        name = resolve_name(lname, deps)
        if name is None:
            if len(lname) >= LOCK_STAT_NAME_MAX - 5:
                # cut by lock_stat and not matched to one lockdep class
                others["unmatched name"] = others.get("unmatched name", 0) + 1
            continue
        k = kind(deps[name], st)
        if k != "spinlock_t":
            others[k] = others.get(k, 0) + 1
            continue
        p = st["contentions"] / st["acquisitions"]
        p_hi = p_upper(st["contentions"], st["acquisitions"])
        thr = threshold_us(t_sched_us, p)
        thr_hi = threshold_us(t_sched_us, p_hi)
        notes = safety_notes(name, deps, stats)
        sv, snote, deciding = static_verdict(static.get(name))
        cover = attribute(st["points"], sections)
        if sv == "unsafe" or any(not n.startswith("per-CPU") for n in notes):
            verdict = "unsafe"
        elif sv == "unknown":
            verdict = "unknown"
        elif notes:
            verdict = "review"
        elif not smp:
            verdict = "no SMP data"
        elif st["hold_avg"] > thr_hi:
            verdict = "convert"
        elif st["hold_avg"] > thr:
            verdict = "uncertain (eq. 5)"
        else:
            verdict = "no gain (eq. 5)"
        rows.append({"class": name, "acquisitions": st["acquisitions"],
                     "contentions": st["contentions"], "p": p, "p_upper": p_hi,
                     "hold_avg_us": st["hold_avg"], "hold_max_us": st["hold_max"],
                     "threshold_us": thr, "threshold_upper_us": thr_hi, "covers": cover,
                     "covers_pct": 100.0 * sum(us for _i, us in cover) / total if total else 0.0,
                     "usage": deps[name]["usage"], "verdict": verdict,
                     "notes": notes + [snote], "static": sv, "deciding": deciding,
                     "points": st["points"]})
    order = {"convert": 0, "uncertain (eq. 5)": 1, "no gain (eq. 5)": 2, "no SMP data": 3,
             "review": 4, "unknown": 5, "unsafe": 6}
    rows.sort(key=lambda r: (order[r["verdict"]], -r["covers_pct"], -r["hold_max_us"]))
    return rows[:top] if top else rows, others


def table(rows, t_sched, sections, others):
    mean_ns, max_us = t_sched
    lines = [f"T_sched (pi_football wake-up to run, same boot): mean {mean_ns / 1000:.1f} us,"
             f" max {max_us} us; eq. (5): convert when T_cs (mean hold) > 4 T_sched p / (1 - p)"
             f" with p at its {P_CONFIDENCE:.0%} upper bound (p+)",
             f"worst sections considered: {len(sections)}",
             "",
             f"{'#':>3}  {'class':34} {'acq':>8} {'cont':>6} {'p':>7} {'p+':>7} {'avg us':>8}"
             f" {'max us':>8} {'eq5 us':>8} {'covers':>7}  {'verdict':17} notes"]
    for i, r in enumerate(rows, 1):
        cov = f"{r['covers_pct']:.0f}%" if r["covers"] else "-"
        lines.append(f"{i:>3}  {r['class'][:34]:34} {r['acquisitions']:>8} {r['contentions']:>6}"
                     f" {r['p']:>7.4f} {r['p_upper']:>7.4f} {r['hold_avg_us']:>8.2f}"
                     f" {r['hold_max_us']:>8.2f} {r['threshold_upper_us']:>8.3f} {cov:>7}"
                     f"  {r['verdict']:17} {'; '.join(r['notes']) or '-'}")
        for d in r.get("deciding", [])[:3]:
            lines.append(f"{'':5}{d['path']}:{d['line']} {d['function']}(): {d['context']}:"
                         f" {d['reason']}" + (f" via {' <- '.join(d['chain'][1:])}"
                                               if len(d["chain"]) > 1 else ""))
    lines.append("")
    lines.append("other classes taken: " + (", ".join(f"{n} {k}" for k, n in sorted(others.items()))
                                            or "none"))
    lines.append("a class is recommended only when the static pass (scripts/lock-advisor"
                 " --static CLASS) found every acquisition site in process context or a"
                 " plain RCU reader and lockdep saw nothing against it; the dynamic"
                 " evidence never clears a static finding.")
    return "\n".join(lines)


def variant_config(bdir, name):
    """{CONFIG_PREEMPT_RT: "y" / False} of variant NAME's built kernel (its
    lock-statistics twin's, else its own .config under BDIR/out), or None
    when neither is built: the static pass then reads both values."""
    for out in (f"{name}-lockstat", name):
        path = os.path.join(bdir, "out", out, ".config")
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                vals = build.parse_fragment(f.read())
            v = vals.get("CONFIG_PREEMPT_RT", "n")
            return {"CONFIG_PREEMPT_RT": v if v in ("y", "m") else False}
    return None


def static_results(tree, classes, log_fn=None, budget=None, config=None):
    """{class: lockscan result} for CLASSES, cached per tree commit; classes
    left when BUDGET seconds are spent get none (and so stay unknown).
    CONFIG: the kernel's configuration (variant_config()), None: unknown."""
    t0 = time.monotonic()
    out = {}
    cache = os.path.join(base.cache_dir(), "advisor")
    done = {}
    for c in classes:
        if budget is not None and time.monotonic() - t0 > budget:
            break
        tgt = lockscan.target_for(c)
        key = tgt.name if tgt else c
        if key not in done:
            try:
                done[key] = lockscan.analyse_class(tree, c, cache_dir=cache, log=log_fn,
                                                 config=config)
            except Exception as e:   # pylint: disable=broad-except
                # one class the pass cannot read is unknown, not the end of the run
                done[key] = {"class": c, "target": tgt.note if tgt else None,
                             "verdict": "unknown", "sites": [],
                             "reason": f"the static pass failed: {type(e).__name__}: {e}",
                             "files": 0, "seconds": 0.0}
        out[c] = dict(done[key], **{"class": c})
    return out


def default_tree(bdir):
    """The workspace build/linux, else the base tree's git repository."""
    work = os.path.join(bdir, "linux")
    if os.path.isdir(work):
        return lockscan.Tree(work)
    return lockscan.Tree(base.base_repo(), base.BASE_REF)


# --- the boot ---------------------------------------------------------------------

def lockstat_twin(top, name):
    """The lock-statistics twin of variant NAME (a Variant named <name>-lockstat).

    The benchmark modules refuse lockdep, and the KUnit suites' intended
    deadlocks would switch it off; pi_football (T_sched) is in the
    lock-statistics fragment."""
    return build.twin(top, name, "lockstat", add=[LOCKSTAT_FRAGMENT],
                      drop=(BENCH_FRAGMENT, "series-kunitconfigs"))


def boot_advisor(top, tree, name, secs, load, results_dir, smp=2):
    """Build and boot NAME's twin under LOAD for SECS; returns the console text."""
    var = lockstat_twin(top, name)
    out = os.path.join(os.environ["PVRT_BUILD"], "out", var.out_name)
    build.build_variant(top, tree, var, out, log=log)
    log_path = os.path.join(results_dir, f"{name}.log")
    log(f"{name}: booting {var.name} (-smp {smp}), {secs} s of {load} with lock_stat")
    res = boot.boot(build.kernel_image(out), f"lock-advisor {secs} {load}", log_path,
                    modroot=os.path.join(out, "modroot"), smp=smp,
                    append=" ".join(var.cmdline), timeout=secs * 40 + 900)
    return res, log_path


def load_sections(path, variant, top):
    """The worst sections of VARIANT in a trace-latency or validate results file."""
    if os.path.isdir(path):
        for fname in ("trace.json", "results.json"):
            if os.path.isfile(os.path.join(path, fname)):
                path = os.path.join(path, fname)
                break
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    secs = [s for r in rows if r.get("kind") == "trace" and r.get("variant") == variant
            for s in r.get("sections", [])]
    if not secs:
        raise PvrtError(f"{path} has no trace of {variant}")
    return console.worst_sections(secs, top)


def newest_trace(bdir, variant):
    """The newest trace-latency or validate --full result with a trace of VARIANT."""
    cands = sorted(glob.glob(os.path.join(bdir, "results", "trace-*", "trace.json")) +
                   glob.glob(os.path.join(bdir, "report", "*", "results.json")),
                   key=os.path.getmtime, reverse=True)
    for c in cands:
        try:
            with open(c, encoding="utf-8") as f:
                rows = json.load(f)
        except (OSError, ValueError):
            continue
        if any(r.get("kind") == "trace" and r.get("variant") == variant
               for r in rows if isinstance(r, dict)):
            return c
    return None


def parse_cpus(lines):
    """The guest's online CPU count from the "cpus" section, or None."""
    for line in lines:
        m = re.match(r"^\s*cpus\s+(\d+)\s*$", line)
        if m:
            return int(m.group(1))
    return None


def candidates(stats, deps):
    """The spinlock_t classes of a run that lockdep does not already rule out."""
    out = []
    for lname, st in stats.items():
        name = resolve_name(lname, deps)
        if not st["acquisitions"] or name is None or kind(deps[name], st) != "spinlock_t":
            continue
        if not any(not n.startswith("per-CPU") for n in safety_notes(name, deps, stats)):
            out.append(name)
    return out


def analyse_text(text, sections, top, tree=None, static=None, log_fn=None, budget=None,
                 config=None):
    """Analyse a recorded boot; TREE: the sources for the static pass (or
    STATIC, results already computed)."""
    secs = console.sections(text)
    missing = [s for s in ("lock_stat", "lockdep", "t_sched") if s not in secs]
    if missing:
        raise PvrtError("the boot printed no " + ", ".join(missing) + " section")
    stats = parse_lock_stat(secs["lock_stat"][1])
    deps = parse_lockdep(secs["lockdep"][1])
    t_sched = parse_t_sched(secs["t_sched"][1])
    if not stats or not deps:
        raise PvrtError("empty /proc/lock_stat or /proc/lockdep in the boot's output")
    if t_sched is None:
        raise PvrtError("no T_sched line from pi_football in the boot's output")
    cpus = parse_cpus(secs["cpus"][1]) if "cpus" in secs else None
    if static is None and tree is not None:
        static = static_results(tree, candidates(stats, deps), log_fn, budget, config)
    rows, others = analyse(stats, deps, t_sched[0], sections, top, static=static, cpus=cpus)
    warnings = []
    if cpus is not None and cpus < 2:
        warnings.append(f"the run had {cpus} CPU: no contention can be measured, p is"
                        " unknown and equation (5) recommends nothing")
    if any("lock debugging disabled" in line for line in secs["lock_stat"][1]):
        warnings.append("lockdep switched itself off during the boot (a lockdep report):"
                        " usage states and dependencies are incomplete")
    return rows, others, t_sched, warnings


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/lock-advisor", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="project", help="the kernel (default project)")
    ap.add_argument("--secs", type=int, default=30, help="seconds of load (default 30)")
    ap.add_argument("--load", default="stress-set",
                    choices=("hackbench", "stress", "stress-set", "compile-find", "none"))
    ap.add_argument("--trace", metavar="PATH",
                    help="trace-latency or validate results (file or directory) with the"
                         " worst sections; default: the newest one that traced --variant")
    ap.add_argument("--sections", type=int, default=20,
                    help="worst section groups to attribute (default 20)")
    ap.add_argument("--top", type=int, default=25, help="table rows (default 25; 0: all)")
    ap.add_argument("--input", metavar="LOG",
                    help="analyse this recorded console log instead of booting")
    ap.add_argument("--tree", metavar="DIR[@REV]",
                    help="the sources of the static pass: a kernel tree, or a git"
                         " repository and revision (default: build/linux, else the base)")
    ap.add_argument("--static", metavar="CLASS", action="append",
                    help="only the static pass: every acquisition site of CLASS (a lockdep"
                         " class name, e.g. '&info->lock', cdev_lock) and its context;"
                         " repeatable")
    ap.add_argument("--changelog", action="store_true",
                    help="with --static: the table wrapped for a commit message")
    ap.add_argument("--static-budget", type=int, default=900, metavar="SECONDS",
                    help="seconds of static pass over a run's classes; classes left"
                         " over stay unknown (default 900)")
    args = ap.parse_args(argv)
    if args.secs < 1 or args.top < 0 or args.sections < 1 or args.static_budget < 0:
        ap.error("--secs and --sections must be at least 1, --top and --static-budget"
                 " at least 0")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    if args.tree:
        # split on the last '@': a directory may contain one
        path, at, rev = args.tree.rpartition("@")
        if not at:
            path, rev = args.tree, ""
        tree = lockscan.Tree(path, rev or None)
    else:
        tree = None
    if args.static:
        # the variant's build is the kernel of build/linux, not of a tree
        # --tree names: that one is read with both PREEMPT_RT values
        res = static_results(tree or default_tree(bdir), args.static, log,
                             config=None if tree else variant_config(bdir, args.variant))
        for c in args.static:
            print(lockscan.site_table(res[c], width=72 if args.changelog else None))
            print()
        save(list(res.values()), os.path.join(experiment.new_results_dir(bdir, "static-"),
                                              "static.json"))
        return 0
    var = build.Variant(args.variant, top)    # refuses an unknown variant before any work
    if build.Variant(var.build_name, top).from_base:
        # Its twin would need pi_football (the lock-statistics fragment) and
        # the static pass would read the series' sources for a stock kernel.
        raise PvrtError(f"variant {args.variant} is built from the series' base (tree base):"
                        " stock code has no pi_football (T_sched) and the static pass reads"
                        " the series tree; the advisor measures the series' kernels (project,"
                        " ...)")
    trace = args.trace or newest_trace(bdir, args.variant)
    sections = load_sections(trace, args.variant, args.sections) if trace else []
    problems = []
    if args.input:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            text = f.read()
        results_dir, log_path = os.path.dirname(os.path.abspath(args.input)), args.input
    else:
        tools.require()
        # the tree the kernel is built from (a path), not the static pass's
        # sources (a lockscan.Tree): the static pass reads the same
        # directory unless --tree names another
        build_tree, _ = experiment.apply_and_build(top, bdir, [], log)
        results_dir = experiment.new_results_dir(bdir, "advisor-")
        res, log_path = boot_advisor(top, build_tree, args.variant, args.secs, args.load,
                                     results_dir)
        if tree is None:
            tree = lockscan.Tree(build_tree)
        text = res.text
        problems = res.problems()
    rows, others, t_sched, warnings = analyse_text(text, sections, args.top,
                                                   tree=tree or default_tree(bdir),
                                                   log_fn=log, budget=args.static_budget,
                                                   config=variant_config(bdir, args.variant))
    problems += warnings
    print(f"lock advisor: {args.variant}, {args.load}; boot log {log_path}")
    print(f"worst sections from: {trace or 'none (run scripts/trace-latency first)'}")
    print(table(rows, t_sched, sections, others))
    for i, s in enumerate(sections, 1):
        print(f"  section {i:>2}: {s['max_us']:>6} us  {s['caller'] or '-'}"
              f" ({s['lock_op'] or '-'})")
    save({"variant": args.variant, "load": args.load, "trace": trace, "t_sched_ns": t_sched[0],
          "t_sched_max_us": t_sched[1], "rows": rows, "others": others,
          "sections": sections, "problems": problems},
         os.path.join(results_dir, "advisor.json"))
    if problems:
        print("problems: " + "; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
