# SPDX-License-Identifier: GPL-2.0
"""The validation report: pooled figures, the headline table, plots, Markdown.

Works on the rows scripts/validate saves in build/report/<time>/results.json,
so a report can be drawn again from a finished or interrupted run:

  scripts/validate --report build/report/20261123-080000

Every figure is a measurement of that run; a goal is met or missed by the
ratio of two figures of the same run.  With fewer than three runs per
kernel the table says that the maxima are not a claim (one 60 s run's
maximum varies by +-30 %).  Only valid runs give figures: a run with
problems (a splat, a time-out, no PVRT-EXIT ...) is listed as invalid, and
a goal with fewer valid runs than were made is not enough to judge.
"""

import bisect
import collections
import json
import math
import os
import re
import statistics

from pvrt import bench_ikt, console

# The goals of the validation issue, as (label, limit).
GOAL_STOCK = 0.5        # max latency under the stress set: project / stock PREEMPT
GOAL_RT = 1.5           # project / PREEMPT_RT
GOAL_RT_TAIL = 1.5      # p99.99 under the load: project / PREEMPT_RT
# Chained inversion, pv_mutex: high's excess wait over the critical section
# in units of the bound's scheduling term, (wait - T_cs) / (2 T_sched) <= 1,
# i.e. wait <= T_cs + 2 T_sched with no slack (eq. (1) of Heursch et al.).
# The scheduling term is microseconds against a hold of 20 ms: a slack in
# percent of the bound would hide a missing boost for milliseconds, this
# goal does not.  A lock hand-off (unlock, PI fix-up, the waiter running)
# costs more than the bare wake-up T_sched measures, so a run that reports
# T_handoff, its calibration rounds' measured kick-off and two hand-offs
# (others' time excluded), is judged in units of that term instead:
# (wait - T_cs) / T_handoff <= 1, the scenario's own bound.
GOAL_CHAIN = 1.0
GOAL_TUNED = 0.5        # project / stock-tuned: what the series' own code earns
GOAL_IKT = 1.0          # IKT thread / threadirqs, interrupt response
# The kernels the project's latency is compared with: (variant, goal or
# None, name in the headline).  stock-pcp0 has no goal: it shows how much
# of the gain over stock the project's CONFIG_PCP_BATCH_SCALE_MAX=0 alone gives.
LATENCY_REFS = (("stock-tuned", GOAL_TUNED,
                 "stock-tuned (stock PREEMPT with the project's configuration, none of its"
                 " code)"),
                ("stock", GOAL_STOCK, "stock PREEMPT"),
                ("rt", GOAL_RT, "PREEMPT_RT"),
                ("stock-pcp0", None,
                 "stock PREEMPT with CONFIG_PCP_BATCH_SCALE_MAX=0 (stock-pcp0)"))


def runs_of(rows, load=None, rig=None):
    """The cyclictest rows (kind "latency"), valid or not; with RIG, of
    that set-up only (smp1, smp2, smp2-isolated: rig_of())."""
    return [r for r in rows if r.get("kind", "latency") == "latency"
            and (load is None or r.get("load") == load)
            and (rig is None or rig_of(r) == rig)]


def rig_of(row):
    """The set-up a cyclictest run measured on: vCPUs and isolation (runs
    from before --cpus are smp1)."""
    return row.get("rig") or "smp1"


def rigs(rows, load=None):
    """The set-ups of ROWS' cyclictest runs, smp1 first, then by vCPUs."""
    found = {rig_of(r) for r in runs_of(rows, load)}
    return sorted(found, key=lambda g: (int(re.match(r"smp(\d+)", g).group(1)), g))


def _rig_label(rig):
    return "" if rig == "smp1" else f" ({rig})"


def valid(row):
    """Whether a cyclictest run counts: its boot had no problem (splat,
    time-out, no PVRT-EXIT, ...), it has samples, and its load did its work
    (judge_load()).  A run whose every sample overflowed the histogram is a
    measurement: cyclictest's "# Max Latencies" gives its maximum, and its
    percentiles are that maximum."""
    return (not row.get("problems") and (row.get("samples") or 0) > 0
            and not row.get("load_problem"))


# A run's load must do at least this fraction of the work the same load did
# on the other kernels of the run (the median of their runs), per kind of
# work: a kernel that lets the load do less is measured under less load.
LOAD_WORK_FRACTION = 0.5


def judge_load(rows):
    """Set each cyclictest run's "load_problem" (or drop it): its load
    reported no work, or less than LOAD_WORK_FRACTION of the median of the
    same load's runs on the other kernels, for some kind of work.  Runs
    without a record of their load's work (load none, older results) are
    not judged.  Returns ROWS."""
    runs = [r for r in runs_of(rows) if r.get("load_work") is not None
            and r.get("load") != "none"]
    for r in runs_of(rows):
        r.pop("load_problem", None)
    for r in runs:
        work = r["load_work"]
        if not work or not any(work.values()):
            r["load_problem"] = f"the load ({r['load']}) reported no work"
            continue
        others = [o["load_work"] for o in runs if o["load"] == r["load"]
                  and rig_of(o) == rig_of(r)
                  and o["variant"] != r["variant"] and not o.get("problems")]
        short = []
        for kind in sorted(set().union(*others) if others else ()):
            med = statistics.median(o.get(kind, 0) for o in others)
            if med and work.get(kind, 0) < LOAD_WORK_FRACTION * med:
                short.append(f"{kind} {work.get(kind, 0)}, the other kernels' median {med:g}")
        if short:
            r["load_problem"] = (f"the load did less than {LOAD_WORK_FRACTION:.0%} of its work"
                                 " on the other kernels: " + "; ".join(short))
    return rows


def latency_rows(rows, load=None, rig=None):
    """The valid cyclictest runs, the only ones any figure comes from."""
    return [r for r in runs_of(rows, load, rig) if valid(r)]


def invalid_runs(rows):
    """[(row, [why])] of the cyclictest runs left out of every figure."""
    return [(r, (r.get("problems") or []) + ([r["load_problem"]] if r.get("load_problem")
                                              else []) or ["no samples"])
            for r in runs_of(rows) if not valid(r)]


NOT_ENOUGH = "not enough valid runs"


def _not_enough(made, counted):
    """The verdict of a goal whose kernels have fewer valid runs than MADE
    ({kernel: runs made}; COUNTED: {kernel: valid runs}), or None."""
    short = [f"{k} {counted.get(k, 0)} of {n}" for k, n in made.items()
             if counted.get(k, 0) < n]
    return f"{NOT_ENOUGH}: " + ", ".join(short) if short else None


def pool(rows):
    """{variant: pooled figures} over the runs of each variant.

    The histograms are summed (1 us buckets) and the percentiles taken from
    the sum with console.Latency's convention (smallest L with at least P %
    of the samples <= L); MAXES keeps every run's maximum for the spread.
    """
    out = {}
    for r in rows:
        p = out.setdefault(r["variant"], {"hist": {}, "overflows": 0, "maxes": [], "mins": [],
                                          "avg_sum": 0.0, "samples": 0})
        for k, v in r["hist"].items():
            p["hist"][int(k)] = p["hist"].get(int(k), 0) + v
        p["overflows"] += r["samples"] - sum(r["hist"].values())
        p["maxes"].append(r["max"])
        p["mins"].append(r["min"])
        p["avg_sum"] += r["avg"] * r["samples"]
        p["samples"] += r["samples"]
    pooled = {}
    # The order of the main job's table, whatever order the runs ended in.
    order = ["stock", "threadirqs", "rt", "project"]
    for v, p in sorted(out.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order
                                                    else len(order), kv[0])):
        lat = console.Latency(p["hist"], p["overflows"], min(p["mins"]),
                              p["avg_sum"] / p["samples"] if p["samples"] else 0,
                              max(p["maxes"]))
        pooled[v] = dict(lat.row(), hist=p["hist"], maxes=p["maxes"], runs=len(p["maxes"]),
                         median_max=statistics.median(p["maxes"]))
    return pooled


def _ratio(a, b):
    return a / b if a is not None and b else None


# An -smp N icount rig's own delay.  QEMU runs the N vCPUs round-robin in one
# host thread, and a vCPU's pending timer interrupt waits while the others
# run their slice: the rig adds a latency no kernel can remove (README,
# "--cpus").  PREEMPT_RT measured in the same run is the reference that
# shows it: a rig on which PREEMPT_RT's median maximum is more than
# RIG_FLOOR_FACTOR times its -smp 1 figure has a floor of its own, that
# median maximum, taken only when every PREEMPT_RT run made on both set-ups
# is valid.  On such a rig a kernel's figure is an upper bound of its own
# latency, and the rig's delay varies from run to run (PREEMPT_RT's -smp 2
# maxima of 20261125-022931: 471, 2978 and 1870 us).  A kernel's figure
# counts as its own where its median maximum is at least RIG_MARGIN times
# the floor both on the rig and on -smp 1, where no rig delay is in it.  A
# ratio project / REF that meets its goal is kept only when REF's figure is
# its own (the project's, which may include the rig's delay, then errs
# against the project); one that misses only when the project's is its own.
# Every other verdict on the rig is "not judged", and so is every goal of a
# rig whose floor is unmeasured.
RIG_FLOOR_FACTOR = 2
RIG_MARGIN = 2
NOT_JUDGED = "not judged"


def rig_floor(rows, load, rig):
    """The floor of set-up RIG under LOAD: None when it has none (smp1, or
    PREEMPT_RT's median maximum there within RIG_FLOOR_FACTOR of smp1's),
    else {"floor": us, "smp1": us} from the PREEMPT_RT runs, or {"floor":
    None, "why": ...} when PREEMPT_RT has no runs, or an invalid one, on RIG
    or on smp1."""
    if rig == "smp1":
        return None
    figures, short = {}, []
    for where in (rig, "smp1"):
        made = sum(1 for r in runs_of(rows, load, where) if r["variant"] == "rt")
        counted = [r for r in latency_rows(rows, load, where) if r["variant"] == "rt"]
        if not made:
            short.append(f"no PREEMPT_RT runs on {where}")
        elif len(counted) < made:
            short.append(f"PREEMPT_RT {len(counted)} of {made} runs valid on {where}")
        else:
            figures[where] = pool(counted)["rt"]["median_max"]
    if short:
        return {"floor": None, "why": "; ".join(short)}
    if figures[rig] <= RIG_FLOOR_FACTOR * figures["smp1"]:
        return None
    return {"floor": figures[rig], "smp1": figures["smp1"]}


def _own(kernel, floor, pooled, pooled1):
    """Whether KERNEL's figure on a rig with FLOOR is its own latency: its
    median maximum at least RIG_MARGIN x the floor on the rig and on smp1."""
    bound = RIG_MARGIN * floor["floor"]
    return all(p.get(kernel) and p[kernel]["median_max"] >= bound for p in (pooled, pooled1))


def _floor_verdict(rig, floor, pooled, pooled1, ref, name, verdict):
    """The verdict of a goal project / REF on set-up RIG with FLOOR
    (rig_floor()): VERDICT when the rig has no floor, or when the figure
    that decides it is a kernel's own (_own()), else why it is not judged."""
    if floor is None or verdict.startswith(NOT_ENOUGH) or verdict == "-":
        return verdict
    if floor["floor"] is None:
        return f"{NOT_JUDGED}: the {rig} rig's own floor is unmeasured ({floor['why']})"
    why = (f"the {rig} rig's round-robin floor (PREEMPT_RT's median maximum"
           f" {floor['floor']:.0f} us there, {floor['smp1']:.0f} us on smp1)")
    if verdict.startswith("met"):
        if ref == "rt":
            return f"{NOT_JUDGED}: {name} measures {why}"
        if not _own(ref, floor, pooled, pooled1):
            return (f"{NOT_JUDGED}: {ref}'s median maximum is below {RIG_MARGIN} x {why}, there"
                    " or on smp1")
    elif not _own("project", floor, pooled, pooled1):
        return (f"{NOT_JUDGED}: the project's median maximum is below {RIG_MARGIN} x {why},"
                " there or on smp1")
    return verdict


def headline(rows, load="stress-set"):
    """[(what, measured, goal, verdict)] for the goals of the issue."""
    out = []
    pooled1 = pool(latency_rows(rows, load, "smp1"))
    for rig in rigs(rows, load):
        pooled = pool(latency_rows(rows, load, rig))
        made = collections.Counter(r["variant"] for r in runs_of(rows, load, rig))
        floor = rig_floor(rows, load, rig)
        for ref, limit, name in LATENCY_REFS:
            if made["project"] and made[ref]:
                row = _latency_goal(load, pooled, made, ref, limit, name, rig)
                out.append(row[:3] + (_floor_verdict(rig, floor, pooled, pooled1, ref, name,
                                                     row[3]),))
        if made["project"] and made["rt"]:
            row = _tail_goal(load, pooled, made, rig)
            out.append(row[:3] + (_floor_verdict(rig, floor, pooled, pooled1, "rt",
                                                 "PREEMPT_RT", row[3]),))
    for r in rows:
        if r.get("kind") == "chain" and r.get("lock") == "pv_mutex" and (
                r.get("bound_us") or r.get("problems")):
            out.append(_chain_goal(r))
    for iload in dict.fromkeys(r.get("load") for r in rows if r.get("kind") == "ikt"):
        out += _ikt_goals(rows, iload)
    return out


def _ikt_goals(rows, load):
    """The headline rows IKT thread / reference under LOAD, one per pair of
    bench_ikt.PAIRS.  A handler of the pair missing (its boot died before
    reporting it) or invalid (its boot had problems, or its samples did not
    all run in a thread) leaves the goal unjudged: "not enough valid runs".
    A same-priority pair whose threads ran at different priorities compares
    settings, not mechanisms: "not comparable"."""
    ikt = {r["handler"]: r for r in rows if r.get("kind") == "ikt" and r.get("load") == load}
    out = []
    for pair in bench_ikt.PAIRS.get(load, ()):
        a_name, b_name, same = pair
        if a_name != "IKT thread":
            continue
        handlers = (a_name, b_name)
        short = _not_enough(dict.fromkeys(handlers, 1),
                            {h: 1 for h in handlers if h in ikt and not ikt[h].get("problems")
                             and ikt[h].get("samples", 1)})
        prios = [bench_ikt.prio(ikt[h]) if h in ikt else "-" for h in handlers]
        if same and not short and (len(set(prios)) != 1 or "-" in prios):
            short = f"not comparable: FIFO {prios[0]} / {prios[1]}"
        how = ("same priority, FIFO " + prios[0] if same
               else f"as configured at boot, FIFO {prios[0]} / {prios[1]}")
        for field in ("p99", "max"):
            a, b = (ikt.get(h, {}).get(field) for h in handlers)
            ratio = _ratio(a, b)
            if ratio is None and not short:
                continue
            measured = "-" if ratio is None else (f"{_fmt_ratio(ratio)} ({a / 1000:.1f} /"
                                                  f" {b / 1000:.1f} us, {how})")
            out.append((f"interrupt response {field} under {load}: {a_name} / {b_name}",
                        measured, f"<= {GOAL_IKT}",
                        short or _verdict(ratio, GOAL_IKT, 1, need_runs=1)))
    return out


def _latency_goal(load, pooled, made, ref, limit, name, rig="smp1"):
    """The headline row project / REF: the ratio of the median maxima of
    their valid runs, judged against LIMIT (None: no goal) only when every
    run made is valid."""
    proj, other = pooled.get("project"), pooled.get(ref)
    ratio, measured = None, "-"
    if proj and other:
        ratio = _ratio(proj["median_max"], other["median_max"])
        measured = (f"{_fmt_ratio(ratio)} (project {_span(proj['maxes'])} / {ref}"
                    f" {_span(other['maxes'])} us, medians {proj['median_max']:.0f} /"
                    f" {other['median_max']:.0f})")
    short = _not_enough({k: made[k] for k in ("project", ref)},
                        {k: p["runs"] for k, p in pooled.items()})
    what = f"max latency under {load}{_rig_label(rig)}: project / {name}"
    if limit is None:
        return (what, measured, "none: what the project gains beyond that option", short or "-")
    verdict = short or _verdict(ratio, limit, min(proj["runs"], other["runs"]))
    return (what, measured, f"<= {limit}", verdict)


def _tail_goal(load, pooled, made, rig="smp1"):
    """The headline row p99.99 project / PREEMPT_RT, from the pooled
    histograms of their valid runs (judged only when every run made is
    valid)."""
    proj, rt = pooled.get("project"), pooled.get("rt")
    ratio, measured = None, "-"
    if proj and rt:
        ratio = _ratio(proj["p9999"], rt["p9999"])
        measured = (f"{_fmt_ratio(ratio)} (project {proj['p9999']} / rt {rt['p9999']} us,"
                    f" pooled over {proj['runs']} / {rt['runs']} runs)"
                    if ratio is not None else "-")
    short = _not_enough({k: made[k] for k in ("project", "rt")},
                        {k: p["runs"] for k, p in pooled.items()})
    what = f"p99.99 latency under {load}{_rig_label(rig)}: project / PREEMPT_RT"
    verdict = short or _verdict(ratio, GOAL_RT_TAIL, min(proj["runs"], rt["runs"]))
    return (what, measured, f"<= {GOAL_RT_TAIL}", verdict)


CHAIN_WHAT = "chained inversion, pv_mutex: (high's wait - T_cs) / T_handoff"


def chain_term(r):
    """The scheduling term of a chain row: (us, name), T_handoff when the run
    measured it, else 2 T_sched; None without either."""
    if r.get("handoff_us"):
        return r["handoff_us"], "T_handoff"
    if r.get("t_sched_us"):
        return 2 * r["t_sched_us"], "2 T_sched"
    return None


def chain_excess(r):
    """(wait - T_cs) / T_handoff (or / (2 T_sched) for a run without it) of a
    chain row, or None without the figures."""
    if r.get("wait_max_us") is None or r.get("t_cs_us") is None or not chain_term(r):
        return None
    return (r["wait_max_us"] - r["t_cs_us"]) / chain_term(r)[0]


def _chain_goal(r):
    """The headline row of the pv_mutex chain scenario R (a row of
    validate.measure_chain).  A row with problems is not a measurement of
    the goal (a splat in its section, no progress, no verdict), whatever its
    figure; only the scenario's own FAILURE over the bound is one: missed."""
    excess, measured = chain_excess(r), "-"
    if excess is not None:
        measured = (f"{excess:.2f} (wait {r['wait_max_us']} us, T_cs {r['t_cs_us']} us,"
                    f" T_sched {r['t_sched_us']} us"
                    + (f", T_handoff {r['handoff_us']} us" if r.get("handoff_us") else "")
                    + ")")
    missed = excess is not None and excess > GOAL_CHAIN
    if r.get("problems") and not (missed and r.get("verdict") == "FAILURE"
                                  and not r.get("splats") and not r.get("problem")):
        verdict = (f"{NOT_ENOUGH}: pv_mutex chain 0 of 1 ("
                   + "; ".join(r["problems"]) + ")")
    elif missed:
        verdict = f"missed: {excess:.1f} x {chain_term(r)[1]} over T_cs"
    else:
        verdict = "met"
    return (CHAIN_WHAT, measured, f"<= {GOAL_CHAIN:g}", verdict)


def _span(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "-"
    return f"{min(vals)}" if len(vals) == 1 else f"{min(vals)}..{max(vals)}"


def _missed(ratio, limit):
    over = ratio / limit
    return f"missed by {over - 1:.0%}" if over < 2 else f"missed: {over:.1f} x the limit"


def _fmt_ratio(r):
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def _verdict(ratio, limit, runs, need_runs=3):
    if ratio is None:
        return "-"
    v = "met" if ratio <= limit else _missed(ratio, limit)
    if runs < need_runs:
        v += f" ({runs} run{'s' if runs != 1 else ''}: not a claim)"
    return v


def remaining_causes(rows, load, top=3):
    """When a latency goal is missed: the project kernel's worst sections
    with preemption or interrupts off, from its tracer run, as lines."""
    if not any(h[3].startswith("missed") and h[0].startswith("max latency")
               for h in headline(rows, load)):
        return []
    trace = next((r for r in rows if r.get("kind") == "trace" and r["variant"] == "project"),
                 None)
    if not trace:
        return []
    return [f"{g['max_us']} us: {g['caller']} ({g['lock_op'] or 'no lock op'};"
            f" {g['started']} -> {g['ended']}; task {g['task']})"
            for g in console.worst_sections(trace.get("sections") or [], top)]


def text_table(head, rows):
    cells = [list(map(str, head))] + [[("-" if c is None else str(c)) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(cells[0], widths)).rstrip(),
           "  ".join("-" * w for w in widths)]
    for r in cells[1:]:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def md_table(head, rows):
    out = ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join("-" if c is None else str(c).replace("|", "\\|")
                                     for c in r) + " |")
    return "\n".join(out)


HEADLINE_HEAD = ("goal", "measured (same run)", "goal", "verdict")
LAT_HEAD = ("kernel", "load", "runs", "samples", "min", "avg", "p99", "p99.9", "p99.99",
            "p99.999", "max", "max per run")


def latency_table(rows):
    """One row per (load, variant): pooled figures and every run's maximum."""
    out = []
    loads = list(dict.fromkeys(r["load"] for r in latency_rows(rows)))
    for load in loads:
        for rig in rigs(latency_rows(rows), load):
            runs = latency_rows(rows, load, rig)
            for v, p in pool(runs).items():
                out.append((v + _rig_label(rig), load, p["runs"], p["samples"], p["min"],
                            f"{p['avg']:.1f}", p["p99"], p["p999"], p["p9999"], p["p99999"],
                            p["max"], " ".join(_run_max(r) for r in runs if r["variant"] == v)))
    return out


def _run_max(r):
    """A run's maximum in the table, with a note when no sample of the run
    lies within the histogram's range, and each CPU's maximum when the run
    measured several."""
    if r.get("threads"):
        return (_run_max(dict(r, threads=None)) + " (per CPU "
                + "/".join(str(t["max"]) for t in r["threads"]) + ")")
    if r.get("hist"):
        return str(r["max"])
    return f"{r['max']} (all {r['samples']} samples overflowed the histogram)"


INVALID_HEAD = ("kernel", "load", "run", "log", "why")


def invalid_table(invalid):
    """Rows of INVALID_HEAD for invalid_runs()."""
    return [(r["variant"], r.get("load"), r.get("run"), os.path.basename(r.get("log") or "-"),
             "; ".join(why)) for r, why in invalid]


def rtla_table(rows):
    return [(r["variant"], r.get("load"), r.get("samples"), r.get("irq_avg"), r.get("irq_max"),
             r.get("thread_avg"), r.get("thread_max"), r.get("aa_summary") or "-")
            for r in rows if r.get("kind") == "rtla"]


RTLA_HEAD = ("kernel", "load", "samples", "IRQ avg", "IRQ max", "thread avg", "thread max",
             "auto-analysis of a sample above half the thread max")


def trace_table(row, top=10):
    return [(i, g["max_us"], g["mean_us"], g["count"], g["caller"] or "-", g["lock_op"] or "-",
             f"{g['started']} -> {g['ended']}", " < ".join(g["stack"][:6]))
            for i, g in enumerate(console.worst_sections(row.get("sections") or [], top), 1)]


TRACE_HEAD = ("#", "max us", "mean us", "n", "caller", "lock op", "started -> ended",
              "stack (innermost first)")


# --- plots ------------------------------------------------------------------------

def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def _save(plt, fig, path, rect=(0, 0, 1, 1)):
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


COLOURS = {"stock": "tab:blue", "threadirqs": "tab:orange", "rt": "tab:green",
           "project": "tab:red", "project-noconv": "tab:purple",
           "project-before": "tab:brown",
           "stock-pcp0": "tab:cyan"}
_SPARE = ("tab:olive", "tab:gray", "black", "gold", "navy", "lime")


def pool_labelled(rows, load):
    """pool() per set-up: {"stock": ..., "stock (smp2)": ...}."""
    out = {}
    for rig in rigs(rows, load):
        for v, p in pool(latency_rows(rows, load, rig)).items():
            out[v + _rig_label(rig)] = p
    return out


def colour(name):
    """A kernel's colour in every plot: fixed for the known variants, one of
    the spare ones (by name, stable across plots) for any other; a set-up's
    label ("stock (smp2)") takes its kernel's colour."""
    name = name.split(" (")[0]
    if name in COLOURS:
        return COLOURS[name]
    return _SPARE[sum(map(ord, name)) % len(_SPARE)]


def plot_histograms(rows, path, load):
    """Pooled histogram per variant, log y."""
    plt = _plt()
    pooled = pool_labelled(rows, load)
    if not plt or not pooled:
        return None
    # 1 us buckets are sparse in the tail: sum them into 20 log-spaced bins
    # per decade, so that a lone slow sample is a bar, not a line to it.
    top = max(p["max"] for p in pooled.values())
    edges = [10 ** (i / 20) for i in range(0, int(20 * math.log10(max(top, 10))) + 2)]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for v, p in pooled.items():
        counts = [0] * (len(edges) - 1)
        for us, n in p["hist"].items():
            i = min(max(bisect.bisect_right(edges, max(us, 1)) - 1, 0), len(counts) - 1)
            counts[i] += n
        ax.stairs([c if c else 0.5 for c in counts], edges, color=colour(v),
                  label=f"{v}: {p['runs']} run(s), {p['samples']} samples, max {p['max']} us")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("wake-up latency (us), 20 bins per decade")
    ax.set_ylabel("samples per bin")
    ax.set_title(f"cyclictest -m -p 99 -i 200 under {load}, QEMU -icount shift=2 (runs pooled)",
                 fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(plt, fig, path)


def plot_survival(rows, path, load):
    """Fraction of samples above x, log-log, per variant."""
    plt = _plt()
    pooled = pool_labelled(rows, load)
    if not plt or not pooled:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for v, p in pooled.items():
        left, xs, ys = p["samples"], [], []
        for us in sorted(p["hist"]):
            left -= p["hist"][us]
            if left <= 0:
                break
            xs.append(max(us, 1))
            ys.append(left / p["samples"])
        ax.step(xs, ys, where="post", color=colour(v),
                label=f"{v} (max {p['max']} us, p99.999 {p['p99999']} us)")
        ax.plot([p["max"]], [1 / p["samples"]], marker="x", color=colour(v))
    for frac, name in ((1e-2, "p99"), (1e-4, "p99.99"), (1e-5, "p99.999")):
        ax.axhline(frac, color="gray", linewidth=0.6, linestyle=":")
        ax.text(1.0, frac, f" {name}", fontsize=7, color="gray", va="center",
                transform=ax.get_yaxis_transform())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wake-up latency x (us)")
    ax.set_ylabel("fraction of samples > x")
    ax.set_title(f"survival function under {load} (x: a run's maximum at 1/samples)",
                 fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return _save(plt, fig, path)


PHASE_COLOURS = {"memory": "tab:blue", "file-io": "tab:green", "proc": "tab:orange",
                 "fork": "tab:red", "console": "tab:purple"}


def series_by_thread(series):
    """{thread: [(seconds, max us)] in time order} from a run's series:
    entries [t, us, thread], or [t, us] (thread 0) from older results."""
    out = {}
    for e in series:
        out.setdefault(e[2] if len(e) > 2 else 0, []).append((e[0], e[1]))
    return {k: sorted(v) for k, v in sorted(out.items())}


def plot_over_time(rows, path, load):
    """Worst latency of each cyclictest report window (-o 5000: 5000 cycles,
    1 s at -i 200, drawn at the window's end), one panel per variant (its
    first run), with the stress-set phases shaded."""
    plt = _plt()
    if not plt:
        return None
    from matplotlib.patches import Patch
    firsts = {}
    for r in rows:
        if (r.get("series") and valid(r) and r.get("load", load) == load
                and r["variant"] + _rig_label(rig_of(r)) not in firsts):
            firsts[r["variant"] + _rig_label(rig_of(r))] = r
    if not firsts:
        return None
    # One y scale for every panel: the kernels compare at a glance.
    fig, axes = plt.subplots(len(firsts), 1, figsize=(9, 2.2 * len(firsts) + 0.8),
                             sharex=True, sharey=True, squeeze=False)
    for ax, (variant, r) in zip(axes[:, 0], firsts.items()):
        # One line per measuring thread (CPU): joined, their windows would
        # draw lines going back in time.
        per = series_by_thread(r["series"])
        xs = sorted(t for pts in per.values() for t, _ in pts)
        for i, (thread, pts) in enumerate(per.items()):
            ax.plot([t for t, _ in pts], [v for _, v in pts], drawstyle="steps-pre",
                    color="black" if len(per) == 1 else f"C{i}", linewidth=1,
                    label=f"CPU {thread}" if len(per) > 1 else None)
        if len(per) > 1:
            ax.legend(fontsize=7, loc="upper right")
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
    return _save(plt, fig, path, rect=(0, 0, 1, top))


def plot_chain(rows, path):
    """Fig. 8 of Heursch et al.: high's wait in the chained inversion against
    the bound T_cs + T_handoff (T_cs + 2 T_sched in older runs), per lock type."""
    plt = _plt()
    chain = [r for r in rows if r.get("kind") == "chain" and r.get("bound_us")]
    if not plt or not chain:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [r["lock"] for r in chain]
    ax.bar(names, [r["wait_max_us"] for r in chain], color=[
        "tab:red" if r["lock"] == "pv_mutex" else "tab:gray" for r in chain],
        label="high's wait with the offense spinning (max, others' time excluded)")
    for i, r in enumerate(chain):
        ax.hlines(r["bound_us"], i - 0.4, i + 0.4, colors="black")
        ax.hlines(r["bound_us"] * GOAL_CHAIN, i - 0.4, i + 0.4, colors="black",
                  linestyles="dotted")
        ax.text(i, r["wait_max_us"], f"{r['wait_max_us'] / r['bound_us']:.2f} x bound",
                ha="center", va="bottom", fontsize=8)
    ax.plot([], [], color="black", label=" / ".join(dict.fromkeys(
        f"bound T_cs + {(chain_term(r) or (0, 'T_handoff'))[1]}" for r in chain)))
    ax.plot([], [], color="black", linestyle="dotted", label=f"goal {GOAL_CHAIN} x bound")
    ax.set_yscale("log")
    ax.set_ylabel("us")
    ax.set_title("chained priority inversion (pi_football mode=chain), QEMU -icount",
                 fontsize=10)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def plot_soak(rows, path, load):
    """OSADL-style long-run plot (scripts/validate --soak): per kernel, the
    worst latency of every report window (points) and the running maximum
    (line) over the hours of the run, log y, one axis for all kernels."""
    plt = _plt()
    runs = [r for r in latency_rows(rows, load) if r.get("series")]
    if not plt or not runs:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for r in runs:
        # Every thread's windows in time order: the running maximum is the
        # kernel's, over all CPUs.
        pts = sorted((e[0], e[1]) for e in r["series"])
        xs = [t / 3600 for t, _ in pts]
        ys = [v for _, v in pts]
        running, worst = [], 0
        for v in ys:
            worst = max(worst, v)
            running.append(worst)
        c = colour(r["variant"])
        ax.plot(xs, ys, linestyle="none", marker=".", markersize=2, color=c, alpha=0.4)
        ax.plot(xs, running, drawstyle="steps-post", color=c,
                label=f"{r['variant']} (max {r['max']} us)")
    ax.set_yscale("log")
    ax.set_xlabel("hours since cyclictest started")
    ax.set_ylabel("latency (us)")
    ax.set_title(f"soak under {load}: each window's maximum (dots) and the running maximum",
                 fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return _save(plt, fig, path)


# --- Markdown ---------------------------------------------------------------------

def rig_lines(rows, load):
    """One line per -smp N set-up of the main load: its own floor (rig_floor())
    and what it means for the goals judged on it."""
    out = []
    for rig in rigs(rows, load):
        if rig == "smp1":
            continue
        f = rig_floor(rows, load, rig)
        if f is None:
            out.append(f"- {rig}: no floor of its own (PREEMPT_RT's median maximum within"
                       f" {RIG_FLOOR_FACTOR} x its smp1 figure): its goals are judged")
        elif f["floor"] is None:
            out.append(f"- {rig}: its floor is unmeasured ({f['why']}): its goals are not"
                       " judged")
        else:
            out.append(f"- {rig}: a floor of its own, PREEMPT_RT's median maximum"
                       f" {f['floor']:.0f} us against {f['smp1']:.0f} us on smp1 (QEMU's"
                       " round-robin of the vCPUs): a goal there is met only against a kernel,"
                       " and missed only by a project, whose median maximum is at least"
                       f" {RIG_MARGIN} x that floor there and on smp1; the others are not judged")
    return out


def provenance_lines(rows):
    """What booted and what it ran on, from the runs' records: one line per
    distinct kernel `uname -v` and command line, one for QEMU, the guest's
    userspace and the host (several values: the runs differ, and say so)."""
    recs = [r["provenance"] for r in rows if r.get("provenance")]
    if not recs:
        return ["- provenance: not recorded (results of an older version of the tools)"]
    out = []
    kernels = {}
    for r in rows:
        p = r.get("provenance")
        if p and r.get("variant"):
            kernels.setdefault(r["variant"], set()).add(
                (p.get("uname_v", "?"), p.get("cmdline", "?"), p.get("kernel_tree")))
    for v, seen in kernels.items():
        for uname_v, cmdline, tree in sorted(seen, key=lambda s: tuple(map(str, s))):
            out.append(f"- booted {v}: `{uname_v}`, command line `{cmdline}`"
                       + (f", built from the {tree.replace(' ', ' tree at ', 1)}"
                          if tree else ""))
    for key, label in (("qemu", "QEMU"), ("rt-tests", "rt-tests"), ("stress-ng", "stress-ng"),
                       ("busybox-static", "busybox"), ("host", "host"),
                       ("host_kernel", "host kernel"), ("host_cpu", "host CPU")):
        vals = sorted({str(p.get(key, "?")) for p in recs})
        out.append(f"- {label}: {' | '.join(vals)}"
                   + (" (differs between runs)" if len(vals) > 1 else ""))
    return out


def summary(rows, meta):
    """summary.json: every goal with its ratio, verdict and whether it was
    judged, every run with its validity, for CI dashboards."""
    load = meta.get("load", "stress-set")
    goals = []
    for what, measured, goal, verdict in headline(rows, load):
        goals.append({"what": what, "measured": measured, "goal": goal, "verdict": verdict,
                      "judged": not (verdict.startswith((NOT_ENOUGH, NOT_JUDGED))
                                     or verdict == "-"),
                      "met": verdict.startswith("met")})
    runs = []
    for r in rows:
        kind = r.get("kind", "latency")
        ok = valid(r) if kind == "latency" else not r.get("problems")
        runs.append({"kind": kind, "variant": r.get("variant"), "load": r.get("load"),
                     "run": r.get("run"), "valid": ok, "problems": r.get("problems") or [],
                     "samples": r.get("samples"), "max": r.get("max"),
                     "provenance": r.get("provenance")})
    return {"meta": meta, "goals": goals, "runs": runs,
            "all_goals_met": bool(goals) and all(g["met"] for g in goals),
            "invalid_runs": sum(1 for r in runs if not r["valid"])}


def markdown(rows, meta, plots):
    """The report, as Markdown text."""
    load = meta.get("load", "stress-set")
    md = [f"# PV-RT validation report, {meta.get('started', '')}", ""]
    md += [f"- command: `{meta.get('command', '')}`",
           f"- base: {meta.get('base', '-')}; series tip: {meta.get('tip', '-')}",
           f"- kernels: {', '.join(meta.get('variants', []))}"
           + (f"; built from KERNEL_CONFIG {meta['kernel_config']}"
              if meta.get("kernel_config") else
              (" (x86_64_defconfig + the variant's fragments)"
               if meta.get("base_config") == "defconfig"
               else " (allnoconfig + the variant's fragments)")),
           "- clock: QEMU TCG `-icount shift=2,sleep=off` (`-smp N` for the smpN set-ups, its"
           " vCPUs round-robin in one host thread): instruction-counted latency."
           " Guest time follows executed instructions (4 ns each): memory, cache, atomics,"
           " speculation mitigations and device time cost nothing, and each iteration of a"
           " `rep` string instruction counts as one instruction. The kernels of this run are"
           " comparable with each other, not with hardware",
           f"- main load: {load}, {meta.get('seconds')} s per run, {meta.get('runs')} runs per"
           " kernel, interleaved", ""]
    md += rig_lines(rows, load) + provenance_lines(rows) + [""]
    md += ["## Headline", "", md_table(HEADLINE_HEAD, headline(rows, load)), ""]
    traces = {r["variant"]: r for r in rows if r.get("kind") == "trace"}
    causes = remaining_causes(rows, load)
    if causes:
        md += ["What the tracer names as the project kernel's worst remaining sections"
               " (preemption or interrupts off), the cause of the missed latency goals:", ""]
        md += [f"- {c}" for c in causes] + [""]
    md += ["## cyclictest -m -p 99 -i 200 (us)", "",
           "Percentiles from the pooled 1 us histograms: the smallest L with at least P % of"
           " the samples at or below L.", "", md_table(LAT_HEAD, latency_table(rows)), ""]
    invalid = invalid_runs(rows)
    if invalid:
        md += ["### Invalid runs", "", "Left out of every figure and goal above.", "",
               md_table(INVALID_HEAD, invalid_table(invalid)), ""]
    for key, title in (("histogram", "Histograms"), ("survival", "Survival function"),
                       ("over_time", "Latency over time, stress-set phases shaded"),
                       ("soak", "Soak: window maxima and running maximum")):
        if plots.get(key):
            md += [f"### {title}", "", f"![{key}]({os.path.basename(plots[key])})", ""]
    if rtla_table(rows):
        md += ["## rtla timerlat (us): IRQ latency against thread latency", "",
               md_table(RTLA_HEAD, rtla_table(rows)), ""]
        for r in rows:
            if r.get("kind") == "rtla" and r.get("aa"):
                md += [f"<details><summary>{r['variant']}: rtla auto-analysis</summary>", "",
                       "```", *r["aa"], "```", "", "</details>", ""]
    for variant, r in traces.items():
        md += [f"## Worst preemption-off / interrupts-off sections: {variant}", "",
               f"preemptirqsoff tracer on `{variant}-trace` (the variant plus"
               " variants/fragments/trace.config) under "
               f"{r.get('load')} for {r.get('seconds')} s, the worst section of each second,"
               " grouped by where it started and ended and by the caller of the lock"
               " operation.", "", md_table(TRACE_HEAD, trace_table(r)), ""]
    seeds = [r for r in rows if r.get("kind") in ("chain", "ikt", "bench")]
    if seeds:
        md += ["## Seed experiments", ""]
    chain = [r for r in rows if r.get("kind") == "chain"]
    if chain:
        md += ["### Chained priority inversion (Heursch et al. fig. 6 and 8, eq. (1))", "",
               "`pi_football mode=chain` on the project kernel: holder (FIFO 10) owns A, mid"
               " (FIFO 20) owns B and sleeps on A, high (FIFO 40) sleeps on B, an offense"
               " (FIFO 30) spins on every CPU. The bound is T_cs + T_handoff measured in the"
               " same boot: the critical sections and the kick-off's wake-up plus two lock"
               " hand-offs of the calibration rounds (without offense), plus the spread of"
               " their chain times. High's wait is the chain's CPU time (holder, mid,"
               " offense): others' time (tasks that outrank the chain, such as SCHED_OTHER"
               " tasks 6.12's fair server runs, and the referee's kick-off) is measured and"
               " excluded. T_sched, a bare wake-up, is the paper's term, shown for"
               " comparison.", "",
               md_table(("lock", "rounds", "T_cs max us", "T_sched max us", "T_handoff us",
                         "others' time max us", "bound us",
                         "high's wait max us", "(wait - T_cs) / T_handoff", "verdict"),
                        [(r["lock"], r.get("rounds"), r.get("t_cs_us"), r.get("t_sched_us"),
                          r.get("handoff_us"), r.get("others_game_us"),
                          r.get("bound_us"), r.get("wait_max_us"),
                          "-" if chain_excess(r) is None else f"{chain_excess(r):.2f}",
                          r.get("verdict"))
                         for r in chain]), ""]
        if plots.get("chain"):
            md += [f"![chain]({os.path.basename(plots['chain'])})", ""]
    ikt = [r for r in rows if r.get("kind") == "ikt"]
    if ikt:
        md += ["### Interrupt response (figs. 9-11): `scripts/bench-ikt`", "",
               "Raise of a simulated interrupt to the first instruction of its handler (us);"
               " timer rows: lateness of timer_list callbacks (1 ms resolution). rt-hog adds a"
               " SCHED_FIFO 60 task busy half the time; the IKT boot gives the interrupt FIFO 90"
               " and ktimers FIFO 70 at boot, the `threadirqs + chrt` boot sets the same"
               " priorities with chrt before measuring (the mechanisms compared), the plain"
               " threadirqs boot keeps FIFO 50 (what is configurable without scripts). ctx and"
               " prio are counted over every sample.", "",
               md_table(("load", "handler", "boot", "ctx", "prio", "samples", "min", "avg",
                         "p50", "p99", "max"),
                        [(r["load"], r["handler"], r["boot"] or "(default)",
                          bench_ikt.context(r) if r.get("samples") else "-",
                          bench_ikt.prio(r) if r.get("samples") else "-", r["samples"],
                          *("-" if r.get(k) is None else f"{r[k] / 1000:.1f}"
                            for k in ("min", "avg", "p50", "p99", "max")))
                         for r in ikt]), ""]
        if plots.get("irt"):
            md += [f"![irt]({os.path.basename(plots['irt'])})", ""]
    bench = [r for r in rows if r.get("kind") == "bench"]
    if bench:
        md += ["### pv_mutex microbenchmark (`scripts/bench-pv-mutex`)", "", "```",
               bench[0]["table"], "```", ""]
    md += ["## Runs", "", "KUnit: the suites built into the kernel, run at boot"
           " (kunit.enable=0 in the benchmark boots).", "",
           md_table(("kind", "kernel", "load", "run", "log", "KUnit at boot", "problems"),
                    [(r.get("kind", "latency"), r.get("variant"), r.get("load") or r.get("lock"),
                      r.get("run"), os.path.basename(r.get("log") or "-"),
                      f"{r['kunit'][0]} passed, {r['kunit'][1]} failed" if r.get("kunit")
                      else "-", "; ".join(r.get("problems") or []) or "none")
                     for r in rows]), ""]
    return "\n".join(md)


def write(rows, meta, outdir):
    """Plots and report.md in OUTDIR; returns {name: path}."""
    judge_load(rows)
    load = meta.get("load", "stress-set")
    plots = {"histogram": plot_histograms(rows, os.path.join(outdir, "histogram.png"), load),
             "survival": plot_survival(rows, os.path.join(outdir, "survival.png"), load),
             "over_time": plot_over_time(rows, os.path.join(outdir, "latency-over-time.png"),
                                         load),
             "chain": plot_chain(rows, os.path.join(outdir, "chain.png"))}
    if meta.get("soak"):
        plots["soak"] = plot_soak(rows, os.path.join(outdir, "soak.png"), load)
    ikt = [r for r in rows if r.get("kind") == "ikt"]
    if ikt:
        path = os.path.join(outdir, "irt.png")
        plots["irt"] = path if bench_ikt.plot(ikt, path) else None
    path = os.path.join(outdir, "report.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(markdown(rows, meta, plots) + "\n")
    plots["report"] = path
    path = os.path.join(outdir, "summary.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary(rows, meta), f, indent=1, sort_keys=True)
        f.write("\n")
    plots["summary"] = path
    return {k: v for k, v in plots.items() if v}
