# SPDX-License-Identifier: GPL-2.0
"""scripts/validate: the main job.  Is the project kernel more real-time, by how much?

Applies the series to the base tree, builds the stock CONFIG_PREEMPT kernel
(booted as is and with threadirqs) and PREEMPT_RT from the series' base and
the project kernel from the series tree, boots each under QEMU in
instruction-counted virtual time
(-smp 1 -icount shift=2,sleep=off) and runs cyclictest -m -p 99 -i 200 under
the load, runs interleaved across kernels.  Prints a progress line per build
and boot, the headline table (the issue's goals as ratios of the same run)
and writes a Markdown report with plots to build/report/<time>/.

Short form (the default, about 15 min warm): one 20 s run per kernel under
the stress set.  --full: three 60 s runs per kernel under the stress set,
one 30 s run under hackbench, the stress-ng mix and the compile + find
stand-in, rtla timerlat per kernel, the worst preemption/interrupts-off
sections of stock and project (preemptirqsoff tracer), and the seed
experiments: the chained priority inversion (pi_football mode=chain, pv_mutex
against rt_mutex and a plain mutex), the interrupt response benchmark
(bench-ikt) and the pv_mutex microbenchmark.

Boots in icount mode measure guest time, so --jobs boots run side by side
without changing the figures.  Each measurement is saved as it completes;
--resume DIR measures only what DIR lacks, --report DIR redraws a report.

Then it runs scripts/devices-check (--no-devices skips it): the project's
IKT on an x86_64_defconfig kernel with real devices.

  make validate                                   the short form
  make validate FULL=1                            the full report
  make validate KERNEL_CONFIG=/boot/config-6.12.9 every kernel from your config
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import sys
import threading
import time

from pvrt import (baseline, bench_ikt, bench_pv_mutex, boot, build, console, devices, experiment,
                  initramfs, lock, logs, report, tools, torture, tracelat)
from pvrt.kunit import kunit_counts
from pvrt.results import save
from pvrt.errors import PvrtError, entry

_print_lock = threading.Lock()
log = logs.logger("validate")


class ValidateError(PvrtError):
    pass


# The load of the headline figures (the README and the cover letter say so).
DEFAULT_LOAD = "stress-set"

def fmt_secs(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """A line per stage: which step of how many, its expected time (the same
    step's duration in the last run, kept in $PVRT_CACHE/validate-timings.json,
    else an estimate) and the run's elapsed time."""

    def __init__(self, total):
        self.total, self.done, self.started, self.t0 = total, 0, 0, time.time()
        self.path = os.path.join(os.environ.get("PVRT_CACHE", "/tmp"),
                                 "validate-timings.json")
        try:
            with open(self.path, encoding="utf-8") as f:
                self.timings = json.load(f)
        except (OSError, ValueError):
            self.timings = {}

    def expected(self, key, guess):
        return self.timings.get(key, guess)

    def start(self, key, label, guess):
        exp = self.expected(key, guess)
        with _print_lock:
            self.started += 1
            n = self.started
        log(f"[{n}/{self.total}] {label}: started, expected ~{fmt_secs(exp)}"
            f" (elapsed {fmt_secs(time.time() - self.t0)})")
        return time.time()

    def end(self, key, label, t_start):
        took = time.time() - t_start
        with _print_lock:
            self.done += 1
            self.timings[key] = round(took)
            try:
                os.makedirs(os.path.dirname(self.path), exist_ok=True)
                save(self.timings, self.path)
            except OSError:
                pass
        log(f"[{self.done} of {self.total} done] {label}: {fmt_secs(took)}"
            f" (elapsed {fmt_secs(time.time() - self.t0)})")


# --- what the boots measure --------------------------------------------------------

def icount_guess(secs):
    """Wall time of a boot running SECS of guest time in icount mode."""
    return 6 * secs + 60


def rig_name(cpus, isolated):
    """The measurement set-up, as the table and the logs name it: smp1,
    smp2, smp2-isolated."""
    return f"smp{cpus}" + ("-isolated" if isolated else "")


def isolation_cmdline(cpus):
    """Kernel parameters that keep the last of CPUS CPUs for the measuring
    thread, as real-time users deploy it: out of the scheduler's load
    balancing and of managed interrupts' affinity, every other interrupt
    (and so every IKT/threadirqs thread, which follows its interrupt's
    affinity) on the others."""
    last = cpus - 1
    others = "0" if last == 1 else f"0-{last - 1}"
    return [f"isolcpus=domain,managed_irq,{last}", f"irqaffinity={others}"]


def measure(top, bdir, tree, variant, secs, load, run_no, results_dir, out=None, cpus=1,
            isolated=False):
    """One cyclictest run: a row of kind "latency"."""
    var = build.Variant(variant, top)
    out = out or build.out_dir(top, variant, bdir)
    rig = rig_name(cpus, isolated)
    log_path = os.path.join(results_dir, f"{variant}-{load}-{run_no}"
                            + ("" if rig == "smp1" else f"-{rig}") + ".log")
    cmd = f"cyclictest-load {secs} {load}" + (f" {cpus}" if cpus > 1 else "") \
        + (" isolated" if isolated else "")
    append = list(var.cmdline) + (isolation_cmdline(cpus) if isolated else [])
    res = boot.boot(build.kernel_image(out), cmd, log_path,
                    modroot=os.path.join(out, "modroot"), icount=True, icount_cpus=cpus,
                    append=" ".join(append), timeout=cpus * secs * 20 + 600)
    row = {"kind": "latency", "variant": variant, "load": load, "run": run_no,
           "seconds": secs, "log": log_path, "problems": res.problems(),
           "provenance": provenance(res, out), "cpus": cpus, "isolated": isolated, "rig": rig}
    judge_cyclictest(row, res, isolated)
    row["kunit"] = kunit_counts(tree, log_path)
    return row


def judge_cyclictest(row, res, isolated=False):
    """ROW's figures from boot result RES's cyclictest section, or the
    problem that leaves it without: no figures without cyclictest's own
    section, finished and with status 0."""
    ct = res.sections().get("cyclictest")
    if ct is None:
        row["problems"].append("no cyclictest section (no PVRT-BEGIN cyclictest)")
    elif ct[0] is None:
        row["problems"].append("cyclictest section not finished (no PVRT-END cyclictest)")
    elif ct[0] != 0:
        row["problems"].append(f"cyclictest exited with rc={ct[0]}")
    else:
        try:
            row.update(cyclictest_figures(ct[1], res.text, isolated))
        except ValueError as e:
            # A console write into the section (a kernel message): this
            # run's problem, not the end of the other boots.
            row["problems"].append(f"cyclictest output unreadable: {e}")
        else:
            row["problems"] += sample_problems(row)


def provenance(res, out=None):
    """The record of what a boot measured on: the guest's `uname -v` and
    /proc/cmdline, the QEMU and guest userspace versions, the host; with
    the build directory OUT, the tree its kernel came from ("kernel_tree":
    "base <commit>" for a stock baseline built from the series' base,
    "series <commit>" otherwise)."""
    rec = dict(console.provenance(res.text), **boot.host_provenance())
    tree = build.source_text(out) if out else None
    if tree:
        rec["kernel_tree"] = tree
    return rec


def sample_problems(row):
    """A cyclictest run without samples measured nothing: why, as problems.
    One whose every sample overflowed the histogram did measure its maximum
    (the report notes it)."""
    return [] if row["samples"] else ["no samples"]


def cyclictest_figures(section, text, isolated=False):
    """A latency row's figures from guest/cyclictest-load's section and the
    console TEXT (the stress-set phases); ValueError if the section is
    unreadable.  ISOLATED: the figures are the last thread's, the one on
    the isolated CPU."""
    lat = console.cyclictest(section)
    fig = dict(lat.row(), hist=lat.hist, load_work=console.load_work(section))
    threads = console.cyclictest_threads(section)
    if len(threads) > 1:
        # One measuring thread per CPU: each CPU's own figures.
        fig["threads"] = [dict(t.row(), thread=i) for i, t in enumerate(threads)]
        if isolated:
            fig.update(threads[-1].row(), hist=threads[-1].hist)
    start, fig["series"] = console.cyclictest_series(section)
    if start is not None:
        # Stress-set phases, in seconds since cyclictest started.
        fig["phases"] = [(name, round(t - start, 2)) for name, t in console.phases(text)
                         if t >= start]
    return fig


_RTLA_CPU = re.compile(r"^\s*(\d+)\s+#(\d+)\s*\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|"
                       r"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)")


def parse_rtla(top_lines, aa_lines):
    """Figures of guest/rtla-timerlat: the last summary line of rtla timerlat
    top (CPU, count | IRQ cur min avg max | thread cur min avg max, us) and
    the auto-analysis text of the --aa-only run."""
    row = {}
    for line in top_lines:
        m = _RTLA_CPU.match(line)
        if m:
            g = [int(x) for x in m.groups()]
            row.update(samples=g[1], irq_min=g[3], irq_avg=g[4], irq_max=g[5],
                       thread_min=g[7], thread_avg=g[8], thread_max=g[9])
    aa = [ln.rstrip() for ln in aa_lines if ln.strip()]
    row["aa"] = aa
    # The analysis in a line: the latency components it lists, the thread
    # that blocked the timer, and where that thread was when the timer's
    # interrupt finally came (the frames below the interrupt entry).
    parts, frames, blocking = [], [], None
    for i, ln in enumerate(aa):
        m = re.match(r"^\s*(IRQ handler delay|IRQ latency|Thread latency|Blocking thread"
                     r" latency|Timerlat IRQ duration|Thread dispatch latency):\s+([\d.]+ us)",
                     ln)
        if m and not any(p.startswith(m.group(1)) for p in parts):
            parts.append(f"{m.group(1)} {m.group(2)}")
        if ln.strip() == "Blocking thread:" and i + 1 < len(aa):
            blocking = aa[i + 1].strip().rsplit(":", 1)[0]
        m = re.match(r"^\s*-> (\S+)", ln)
        if m:
            frames.append(m.group(1))
    entry = max((i for i, f in enumerate(frames) if f.startswith(("asm_", "sysvec_"))),
                default=-1)
    where = frames[entry + 1:entry + 4]
    if blocking:
        parts.append(f"blocking thread {blocking}")
    if where:
        parts.append("interrupted in " + " < ".join(where))
    row["aa_summary"] = "; ".join(parts) or None
    return row


def measure_rtla(top, variant, out, secs, load, results_dir):
    var = build.Variant(variant, top)
    log_path = os.path.join(results_dir, f"{variant}-rtla.log")
    res = boot.boot(build.kernel_image(out), f"rtla-timerlat {secs} {load}", log_path,
                    modroot=os.path.join(out, "modroot"), icount=True,
                    append=" ".join(var.cmdline), timeout=secs * 40 + 600)
    secs_ = res.sections()
    row = {"kind": "rtla", "variant": variant, "load": load, "seconds": secs, "log": log_path,
           "problems": res.problems(), "provenance": provenance(res, out)}
    row.update(parse_rtla(secs_.get("rtla-top", (1, []))[1], secs_.get("rtla-aa", (1, []))[1]))
    if row.get("samples") is None and not row["problems"]:
        row["problems"] = ["no rtla timerlat summary line"]
    return row


# torture/configs/lock's chain-bound scenarios: pi_football mode=chain with
# pv_mutex, rt_mutex and a plain mutex (which must fail the bound).
CHAIN_SCENARIOS = ["PVLOCK09", "PVLOCK10", "PVLOCK11"]


def measure_chain(top, out, secs, results_dir):
    """The chain scenarios, SECS each, in one icount boot of kernel OUT
    (rows "chain"); a scenario that does not end as CFLIST expects is a problem."""
    scens = torture.select(torture.load(top), CHAIN_SCENARIOS)
    durations = {sc.name: secs for sc in scens}
    res = boot.boot(build.kernel_image(out), torture.guest_cmd(scens, durations),
                    os.path.join(results_dir, "chain.log"), modroot=os.path.join(out, "modroot"),
                    icount=True,
                    timeout=torture.BOOT_SECONDS + torture.ICOUNT_SLOWDOWN * secs * len(scens),
                    append=" ".join(build.Variant("project", top).cmdline
                                    + ["kunit.enable=0", torture.DEVKMSG]))
    rows = torture.verdicts(scens, res, durations, "project/icount")
    for row, sc in zip(rows, scens):
        lock = next(p.split("=", 1)[1] for p in sc.params if p.startswith("lock="))
        row.update(kind="chain", variant="project", lock=lock, provenance=provenance(res, out),
                   problems=[] if row["ok"] else [chain_problem(sc.name, row)])
    return rows


def chain_problem(name, row):
    """Why a chain scenario's row of torture.verdicts is not ok, in a line:
    a verdict other than CFLIST's, its problem (no progress, no output),
    the splats of its section."""
    why = []
    if row["verdict"] != row["expect"]:
        why.append(f"verdict {row['verdict'] or 'none'}, expected {row['expect']}")
    if row["problem"]:
        why.append(row["problem"])
    if row["splats"]:
        n = len(row["splats"])
        why.append(f"{n} splat{'s' if n != 1 else ''}: " + " | ".join(row["splats"][:3]))
    return f"{name}: " + "; ".join(why)


def measure_ikt(out, results_dir, samples=1000, loads=("hackbench", "rt-hog")):
    """scripts/bench-ikt's boots: per load, IKT and threadirqs (rows "ikt").
    A handler a boot did not report (it timed out or crashed before its
    "ikt_bench: result") is a row without samples that carries the boot's
    problems: the goal it belongs to is not judged, and says so.  A handler
    whose samples did not all run where its name says (a threaded handler
    in hard interrupt context, or at a priority that changed) carries that
    as a problem too: bench-ikt refuses such a run, and so does the report."""
    rows = []
    for load in loads:
        for b in bench_ikt.KERNELS[load]:
            log_path = os.path.join(results_dir, f"ikt-bench-{load}-{b.kernel}.log")
            got, problems = bench_ikt.boot_one(out, load, b, samples, log_path)
            rows += [dict(r, kind="ikt", problems=problems + bench_ikt.context_problems(r))
                     for r in got]
            have = {r["handler"] for r in got}
            rows += [dict(kind="ikt", load=load, handler=handler, boot=b.shown, log=log_path,
                          threaded=None, prio=None, samples=0, hist={},
                          problems=problems or [f"no 'ikt_bench: result {mode}' line"],
                          **dict.fromkeys(bench_ikt.FIELDS))
                     for mode, handler in bench_ikt.handlers(b)
                     if handler not in have]
    # The percentiles by the tools' one convention, from the histograms.
    return bench_ikt.pool(rows)


def measure_bench(out, results_dir):
    log_path = os.path.join(results_dir, "pv-mutex-bench.log")
    unc, chain, problems = bench_pv_mutex.boot_bench(out, log_path)
    return {"kind": "bench", "log": log_path, "uncontended": unc, "chain": chain,
            "table": bench_pv_mutex.tables(unc, chain), "problems": problems}


# --- the plan -----------------------------------------------------------------------

class Job:
    def __init__(self, key, label, guess, fn):
        self.key, self.label, self.guess, self.fn = key, label, guess, fn


def plan(args, top, bdir, tree, outs, results_dir):
    """The boots of the run, in the order they start: the main load's runs
    first, interleaved across kernels, so that an interrupted run has
    comparable figures for every kernel."""
    jobs = []
    kc = os.path.abspath(args.kernel_config) if args.kernel_config else None
    for run_no in range(1, args.runs + 1):
        for cpus, isolated in args.rigs:
            rig = rig_name(cpus, isolated)
            for v in args.variants:
                # The -smp 1 rig keeps the keys of the runs before --cpus.
                jobs.append(Job(f"latency/{v}/{args.load}/{run_no}"
                                + ("" if rig == "smp1" else f"/{rig}"),
                                f"{v}: cyclictest {args.seconds} s under {args.load}, run"
                                f" {run_no}" + ("" if rig == "smp1" else f", {rig}"),
                                cpus * icount_guess(args.seconds),
                                lambda v=v, n=run_no, c=cpus, i=isolated: [
                                    measure(top, bdir, tree, v, args.seconds, args.load, n,
                                            results_dir, outs[v], cpus=c, isolated=i)]))
    for load in args.extra_loads:
        for v in args.variants:
            jobs.append(Job(f"latency/{v}/{load}/1",
                            f"{v}: cyclictest {args.extra_seconds} s under {load}",
                            icount_guess(args.extra_seconds),
                            lambda v=v, ld=load: [measure(top, bdir, tree, v, args.extra_seconds,
                                                          ld, 1, results_dir, outs[v])]))
    if args.rtla:
        for v in args.variants:
            jobs.append(Job(f"rtla/{v}", f"{v}: rtla timerlat under {args.load}",
                            2 * icount_guess(args.rtla_seconds),
                            lambda v=v: [measure_rtla(top, v, outs[v], args.rtla_seconds,
                                                      args.load, results_dir)]))
    for v in args.trace:
        jobs.append(Job(f"trace/{v}", f"{v}-trace: preemptirqsoff tracer under {args.load}",
                        2 * icount_guess(args.seconds),
                        lambda v=v: [tracelat.boot_traced(
                            top, v, args.seconds, args.load, results_dir, kc,
                            args.base_target)]))
    if args.seeds:
        proj = outs["project-seeds"]
        jobs.append(Job("seed/chain", "project: chained inversion, pv_mutex, rt_mutex, mutex",
                        3 * 12 * 30 + 120, lambda: measure_chain(top, proj, 30, results_dir)))
        jobs.append(Job("seed/ikt", "project: interrupt response, IKT and threadirqs boots"
                        " under hackbench and rt-hog", 600, lambda: measure_ikt(proj, results_dir)))
        jobs.append(Job("seed/bench", "project: pv_mutex microbenchmark", 400,
                        lambda: [measure_bench(proj, results_dir)]))
    return jobs


def run_jobs(jobs, progress, nworkers, results_json, done_rows):
    """Run JOBS, NWORKERS at a time; every result is saved as it arrives."""
    rows = list(done_rows)
    lock = threading.Lock()
    stopping = threading.Event()

    def one(job):
        if stopping.is_set():
            return
        # Timings are kept by label: it names the kernel, load and seconds.
        t = progress.start(job.label, job.label, job.guess)
        got = job.fn()
        if stopping.is_set():
            return                      # killed under it: not a measurement
        for r in got:
            r["key"] = job.key
        with lock:
            rows.extend(got)
            save(rows, results_json)
        progress.end(job.label, job.label, t)
        for r in got:
            for p in r.get("problems") or []:
                log(f"  {job.label}: {p}")

    with concurrent.futures.ThreadPoolExecutor(max_workers=nworkers) as pool:
        futures = [pool.submit(one, j) for j in jobs]
        try:
            for f in concurrent.futures.as_completed(futures):
                f.result()
        except BaseException:
            # Ctrl-C reaches this thread only: stop the queue and kill the
            # QEMUs the workers wait for, so that nothing runs on.
            stopping.set()
            for f in futures:
                f.cancel()
            boot.kill_all()
            raise
    return rows


def load_rows(path):
    """Rows of a results.json, with histogram keys back to integers."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    for r in rows:
        if isinstance(r.get("hist"), dict):
            r["hist"] = {int(k): v for k, v in r["hist"].items()}
    # bench-ikt rows: their percentiles again from their histograms, by the
    # convention of this version of the tools.
    ikt = [r for r in rows if r.get("kind") == "ikt"]
    if ikt:
        rows = [r for r in rows if r.get("kind") != "ikt"] + bench_ikt.pool(ikt)
    return rows


def print_summary(rows, meta, paths):
    load = meta["load"]
    print(f"\ncyclictest -m -p 99 -i 200 under {load}, {meta['seconds']} s x {meta['runs']}"
          " run(s) per kernel; QEMU TCG -icount shift=2,sleep=off (-smp N for smpN);"
          " latencies in us\n")
    print(report.text_table(report.LAT_HEAD, report.latency_table(rows)))
    floors = report.rig_lines(rows, load)
    if floors:
        print("\n" + "\n".join(floors))
    head = report.headline(rows, load)
    if head:
        print("\nHeadline (ratios of this run):\n")
        print(report.text_table(report.HEADLINE_HEAD, head))
    causes = report.remaining_causes(rows, load)
    if causes:
        print("\nThe project kernel's worst preemption/interrupts-off sections (tracer):")
        for c in causes:
            print(f"  {c}")
    invalid = report.invalid_runs(rows)
    if invalid:
        print("\nInvalid runs, left out of every figure:\n")
        print(report.text_table(report.INVALID_HEAD, report.invalid_table(invalid)))
    for r in rows:
        if r.get("kind", "latency") == "latency":
            continue                    # an invalid run: listed above
        for p in r.get("problems") or []:
            print(f"  problem: {r.get('kind')} {r.get('variant', '')}"
                  f" {r.get('load') or r.get('lock') or ''} run {r.get('run', '-')}: {p}")
    print(f"\nreport: {paths.get('report')}")
    if paths.get("summary"):
        print(f"summary for dashboards: {paths['summary']}")
    plots = [os.path.basename(p) for k, p in paths.items() if k not in ("report", "summary")]
    if plots:
        print(f"plots: {', '.join(plots)}")


# What a run's figures depend on: a resumed run measures with the same, or
# its old and new runs would be pooled as one.
RESUME_KEYS = ("load", "seconds", "kernel_config", "base_config", "base", "tip")


def stale_trace_rows(rows, top, kernel_config, base_target):
    """The tracer rows of ROWS whose twin is not the one this run builds
    (from KERNEL_CONFIG or BASE_TARGET): rows saved before the twin followed
    the measured kernels' base name none; a resumed run traces them again."""
    return [r for r in rows if r.get("kind") == "trace" and r.get("kernel") !=
            tracelat.traced(top, r["variant"], kernel_config, base_target).out_name]


def read_meta(results_dir):
    path = os.path.join(results_dir, "meta.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ValidateError(f"--resume {results_dir}: cannot read {path} ({e}): without it"
                            " nothing says how its runs were measured; start a new run")


def resume_mismatch(old, new):
    """[what differs] between the run being resumed (meta OLD) and this one
    (NEW: some of RESUME_KEYS), for the keys both have."""
    return [f"{k} {old[k]!r} there, {new[k]!r} now" for k in RESUME_KEYS
            if k in old and k in new and old[k] != new[k]]


def tree_kinds(top, variants):
    """{variant: "base" or "series"}: the tree each of VARIANTS' kernels is
    built from (its build's "tree" directive)."""
    return {v: build.Variant(build.Variant(v, top).build_name, top).tree for v in variants}


def old_tree_kind(old, variant):
    """The tree VARIANT's kernel was built from in the run of meta OLD
    (None: not measured there).  A run saved before any variant was built
    from the base records no kernel_trees: its kernels are the series'."""
    if variant not in old.get("variants", []):
        return None
    text = (old.get("kernel_trees") or {}).get(variant)
    return text.split()[0] if text else "series"


def resume_tree_mismatch(old, kinds):
    """[what differs] between the trees the kernels of the run being resumed
    (meta OLD) and of this one (KINDS, tree_kinds()) were built from."""
    where = {"series": "from the series tree", "base": "from the base"}
    return [f"{v} built {where.get(was, was)} there, {where[now]} now"
            for v, now in kinds.items()
            for was in [old_tree_kind(old, v)] if was is not None and was != now]


def merged_kernel_trees(old, new):
    """meta's kernel_trees of a resumed run: each variant's entry of the run
    being resumed (OLD) stands; a variant it lacks takes this run's (NEW)."""
    merged = dict(old or {})
    for v, text in new.items():
        if merged.get(v) is None:
            merged[v] = text
    return merged


def resume_refusal(results_dir, differ):
    return (f"--resume {results_dir}: its runs were measured otherwise ("
            + "; ".join(differ) + "); pooling them with new runs would mix two"
            " experiments: resume with the same options and tree, or start a new run")


def cpu_list(text):
    """argparse type: "1,2" -> [1, 2] (each 1..8)."""
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals or any(not 1 <= v <= 8 for v in vals):
        raise argparse.ArgumentTypeError(f"{text!r}: want vCPU counts 1..8, e.g. 1,2")
    return list(dict.fromkeys(vals))


def duration(text):
    """argparse type: 90, 600s, 30m, 2h -> seconds (at least 1)."""
    m = re.fullmatch(r"(\d+)([smh]?)", text.strip())
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: want a duration such as 600s, 30m or 1h")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def positive(text):
    """argparse type: an integer of at least 1 (0 is not "the default")."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is not a positive number")
    return n


def kernel_names(text):
    """argparse type: comma-separated variant names, at least one."""
    names = [v for v in text.split(",") if v]
    if not names:
        raise argparse.ArgumentTypeError("names no kernel")
    return names


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/validate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", type=kernel_names,
                    default="stock,stock-tuned,threadirqs,rt,project",
                    help="comma-separated files of variants/"
                         " (default: stock,stock-tuned,threadirqs,rt,project)")
    ap.add_argument("--full", action="store_true",
                    help="the full report: 3 x 60 s runs, the other loads, rtla, the tracer,"
                         " the seed experiments")
    ap.add_argument("--seconds", type=positive, help="cyclictest duration per run"
                    " (default 20, --full 60)")
    ap.add_argument("--runs", type=positive, help="runs per kernel (default 1, --full 3)")
    ap.add_argument("--soak", metavar="DURATION", type=duration,
                    help="one run per kernel of DURATION (e.g. 1h, 30m, 600s) with every"
                         " window's maximum kept and soak.png (maxima over time); hours of"
                         " wall time per kernel under icount: not for CI")
    ap.add_argument("--cpus", default="1", type=cpu_list,
                    help="comma-separated vCPU counts of the main load's runs (icount with N"
                         " vCPUs, round-robin TCG: still deterministic), one measuring thread"
                         " per CPU (default 1; --full: 1,2); the goals of a count above 1 are"
                         " judged only with valid rt runs on 1 and on that count, which"
                         " measure the round-robin's own floor")
    ap.add_argument("--isolated", action="store_true",
                    help="also, for each count above 1, the isolated-CPU set-up: the last CPU"
                         " isolated (isolcpus=, irqaffinity=) for one measuring thread")
    ap.add_argument("--load", default=DEFAULT_LOAD,
                    choices=["hackbench", "stress", "stress-set", "compile-find", "none"],
                    help=f"the main load (default {DEFAULT_LOAD})")
    ap.add_argument("--jobs", type=int, default=2,
                    help="boots side by side (default 2; icount figures do not depend on it)")
    ap.add_argument("--base", choices=["allnoconfig", "defconfig"],
                    help="what the latency variants start from: allnoconfig (the default"
                         " without --full) or x86_64_defconfig (the default with --full), so"
                         " that THP, swap, cgroups and netfilter paths are in the kernels"
                         " measured (the variant's fragments on top)")
    ap.add_argument("--kernel-config", metavar="PATH",
                    help="build every variant from this .config (plus the variant's fragments)"
                         " instead of allnoconfig")
    ap.add_argument("--resume", metavar="DIR", help="measure only what DIR's results.json lacks")
    ap.add_argument("--report", metavar="DIR", help="only redraw DIR's report and tables")
    ap.add_argument("--baseline", metavar="DIR",
                    help="compare with the saved run DIR: a regression verdict per kernel"
                         " (Mann-Whitney U over the runs' max, p99.9, p99); with --report,"
                         " compare two saved runs without measuring")
    ap.add_argument("--baseline-as", metavar="HERE=THERE[,...]", default="",
                    help="compare kernel HERE of this run with kernel THERE of the baseline"
                         " (e.g. project=project-before)")
    ap.add_argument("--no-devices", action="store_true",
                    help="skip scripts/devices-check (the x86_64_defconfig device boot)")
    ap.add_argument("--target", metavar="ssh://USER@HOST[:PORT]",
                    help="run the job on your own board over SSH instead of QEMU: boot each"
                         " kernel built with kexec, run the same guest scripts, hwlatdetect"
                         " first (README: Your own board over SSH)")
    ap.add_argument("--target-reboot", metavar="CMD",
                    help="with --target, for a board without kexec: CMD (run on the board,"
                         " with $PVRT_KERNEL, $PVRT_INITRD, $PVRT_CMDLINE) installs the kernel"
                         " as the board's default and reboots")
    ap.add_argument("--target-dir", default="/var/tmp/pvrt",
                    help="with --target: the board's directory for kernels and guest scripts"
                         " (default /var/tmp/pvrt)")
    ap.add_argument("--target-initrd", metavar="FILE",
                    help="with --target: an initramfs to boot each kernel with (copied over)")
    ap.add_argument("--target-ssh-config", metavar="FILE",
                    help="with --target: an ssh_config file (ssh -F) for the key and host key")
    ap.add_argument("--target-boot-timeout", type=positive, default=600,
                    help="with --target: seconds for the board to come back (default 600)")
    ap.add_argument("--hwlat-seconds", type=positive, default=30,
                    help="with --target: hwlatdetect's duration (default 30)")
    args = ap.parse_args(argv)
    from pvrt import target
    rc = target.hook(ap, args, argv)
    if rc is not None:
        return rc
    try:
        args.baseline_map = dict(kv.split("=", 1) for kv in args.baseline_as.split(",") if kv)
    except ValueError:
        ap.error(f"--baseline-as {args.baseline_as!r}: want HERE=THERE[,HERE=THERE...]")
    if args.baseline_map and not args.baseline:
        ap.error("--baseline-as needs --baseline DIR")
    base = read_baseline(args.baseline) if args.baseline else None
    if args.report:
        rc = redraw(args.report)
        if base:
            rc |= compare_baseline(base, args.report, args.baseline_map)
        return rc
    tools.require()
    if args.soak and (args.full or args.seconds or args.runs):
        ap.error("--soak is one run of DURATION per kernel: not with --full, --seconds"
                 " or --runs")
    args.seconds = args.soak or args.seconds or (60 if args.full else 20)
    args.runs = args.runs or (3 if args.full else 1)
    if args.full and args.cpus == [1]:
        args.cpus = [1, 2]
    args.rigs = [(n, False) for n in args.cpus] + [(n, True) for n in args.cpus
                                                   if args.isolated and n > 1]
    if not 1 <= args.jobs <= 8:
        ap.error("--jobs must be 1..8")
    if args.kernel_config and not os.path.isfile(args.kernel_config):
        ap.error(f"--kernel-config {args.kernel_config}: no such file")
    if args.kernel_config and args.base:
        ap.error("--base and --kernel-config both say what the kernels start from: give one")
    # The full report measures product-like kernels unless told otherwise.
    args.base = args.base or ("defconfig" if args.full and not args.kernel_config
                              else "allnoconfig")
    args.base_target = "x86_64_defconfig" if args.base == "defconfig" else None
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    for v in args.variants:
        build.Variant(v, top)           # fail early on a typo
    args.extra_loads = [x for x in ("hackbench", "stress", "compile-find")
                        if x != args.load] if args.full else []
    args.extra_seconds = 30
    args.rtla = args.full
    args.rtla_seconds = 30
    args.trace = [v for v in ("stock", "project") if v in args.variants] if args.full else []
    args.seeds = args.full and "project" in args.variants
    old_meta = None
    if args.resume:
        results_dir = os.path.abspath(args.resume)
        old_meta = read_meta(results_dir)
        differ = resume_mismatch(old_meta, {"load": args.load, "seconds": args.seconds,
                                            "base_config": args.base,
                                            "kernel_config": (os.path.abspath(args.kernel_config)
                                                              if args.kernel_config else None)})
        differ += resume_tree_mismatch(old_meta, tree_kinds(top, args.variants))
        if differ:
            raise ValidateError(resume_refusal(results_dir, differ))
        done = report.judge_load(load_rows(os.path.join(results_dir, "results.json")))
        # An invalid run is measured again: its row goes, so that its key
        # is missing and the new run takes its place (not counted twice).
        invalid = {id(r) for r, _why in report.invalid_runs(done)}
        if invalid:
            log(f"resuming: {len(invalid)} invalid run(s) to measure again")
            done = [r for r in done if id(r) not in invalid]
        stale = stale_trace_rows(done, top, (os.path.abspath(args.kernel_config)
                                             if args.kernel_config else None),
                                 args.base_target)
        if stale:
            log(f"resuming: {len(stale)} tracer run(s) of another kernel to trace again")
            done = [r for r in done if all(r is not x for x in stale)]
    else:
        results_dir = None
        done = []
    kc = os.path.abspath(args.kernel_config) if args.kernel_config else None
    builds = list(dict.fromkeys(build.Variant(v, top).build_name for v in args.variants))
    twins = [f"{v}-trace" for v in args.trace]
    progress_builds = (len(builds) + len(twins) + (1 if args.rtla else 0)
                       + (1 if args.seeds and kc else 0))
    progress = Progress(progress_builds)     # grows by the boots below
    tree = experiment.apply_tree(top, bdir, log=log)
    if old_meta is not None:
        differ = resume_mismatch(old_meta, experiment.tree_ids(tree))
        qemu = {r["provenance"].get("qemu") for r in done if r.get("provenance")}
        now = boot.host_provenance()["qemu"]
        differ += [f"QEMU {q!r} there, {now!r} now" for q in sorted(qemu - {now})]
        if differ:
            raise ValidateError(resume_refusal(results_dir, differ))
    outs = {}
    for name in builds:
        key = f"build/{name}" + ("-kc" if kc else "")
        t = progress.start(key, f"build {name}" + (" from KERNEL_CONFIG" if kc else ""), 600)
        outs[name] = build.build_variant(top, tree, build.Variant(name, top, base_config=kc,
                                                                  base_target=args.base_target),
                                         log=log)
        progress.end(key, f"build {name}", t)
    for v in args.variants:
        outs[v] = outs[build.Variant(v, top).build_name]
    tuned_check(outs, tree)
    for v in args.trace:
        # The twin from the base the measured kernel came from.
        var = tracelat.traced(top, v, kc, args.base_target)
        t = progress.start(f"build/{var.name}", f"build {var.name}", 600)
        build.build_variant(top, tree, var, os.path.join(bdir, "out", var.out_name), log=log)
        progress.end(f"build/{var.name}", f"build {var.name}", t)
    if args.rtla:
        t = progress.start("build/rtla", "build rtla (tools/tracing/rtla)", 30)
        experiment.build_rtla(tree, bdir)
        progress.end("build/rtla", "build rtla", t)
    if args.seeds:
        # The seed experiments need the project's benchmark modules: its
        # own configuration, also under --kernel-config.
        outs["project-seeds"] = outs["project"]
        if kc:
            t = progress.start("build/project", "build project (seed experiments)", 600)
            outs["project-seeds"] = build.build(top, tree, "project", log=log)
            progress.end("build/project", "build project (seed experiments)", t)
    # The guest's initramfs (with the rtla just built), once, before boots
    # run side by side.
    initramfs.ensure(top, bdir)
    results_dir = results_dir or experiment.new_results_dir(bdir, report_dir=True)
    meta = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": "scripts/validate " + " ".join(shlex.quote(a) for a in
                                                      (argv if argv is not None
                                                       else sys.argv[1:])),
            "variants": args.variants, "load": args.load, "seconds": args.seconds,
            "runs": args.runs, "kernel_config": kc, "base_config": args.base,
            "full": args.full, "soak": args.soak,
            "rigs": [rig_name(c, i) for c, i in args.rigs],
            # The tree each kernel came from: the stock baselines' is the base.
            "kernel_trees": {v: build.source_text(outs[v]) for v in args.variants},
            **experiment.tree_ids(tree)}
    if old_meta is not None:
        # The run keeps the record of how it started; each resumption is added.
        meta = {**meta, **old_meta,
                "resumed": old_meta.get("resumed", []) + [
                    {"started": meta["started"], "command": meta["command"]}],
                "variants": list(dict.fromkeys(old_meta.get("variants", []) + args.variants)),
                "kernel_trees": merged_kernel_trees(old_meta.get("kernel_trees"),
                                                    meta["kernel_trees"]),
                "runs": max(old_meta.get("runs", 0), args.runs)}
    save(meta, os.path.join(results_dir, "meta.json"))
    jobs = plan(args, top, bdir, tree, outs, results_dir)
    have = {r.get("key") for r in done}
    todo = [j for j in jobs if j.key not in have]
    if done:
        log(f"resuming {results_dir}: {len(jobs) - len(todo)} of {len(jobs)} measurements kept")
    progress.total += len(todo)
    log(f"{len(todo)} boots, {args.jobs} at a time; expected"
        f" ~{fmt_secs(sum(progress.expected(j.label, j.guess) for j in todo) / args.jobs)}")
    rows = run_jobs(todo, progress, args.jobs, os.path.join(results_dir, "results.json"), done)
    report.judge_load(rows)
    save(rows, os.path.join(results_dir, "results.json"))
    paths = report.write(rows, meta, results_dir)
    print_summary(rows, meta, paths)
    measured = {r["variant"] for r in report.latency_rows(rows, args.load)}
    unmeasured = [v for v in args.variants if v not in measured]
    for v in unmeasured:
        print(f"no valid run of {v} under {args.load}")
    # A goal without the valid runs it needs (a handler of the IKT pair
    # lost, ...) fails the run as a kernel without a valid run does.
    unjudged = [h for h in report.headline(rows, args.load)
                if h[3].startswith(report.NOT_ENOUGH)]
    for what, _m, _g, verdict in unjudged:
        print(f"{what}: {verdict}")
    failed = 0
    if not args.no_devices:
        print()
        failed = devices.run(top, bdir, log=log)
    bad = [r for r in rows if r.get("problems")] + report.invalid_runs(rows)
    regressed = compare_baseline(base, results_dir, args.baseline_map) if base else 0
    return 1 if bad or failed or unmeasured or unjudged or regressed else 0


def tuned_check(outs, tree):
    """A tuned stock kernel built in this run must differ from the project
    kernel only by the series' own options: otherwise project / stock-tuned
    credits the series with a configuration value."""
    for v in ("stock-tuned",):
        if v in outs and "project" in outs:
            bad = build.not_series_difference(os.path.join(outs["project"], ".config"),
                                              os.path.join(outs[v], ".config"), tree)
            if bad:
                raise ValidateError(f"{v} differs from project in options the series does"
                                    " not add (project / " + v + "): " + "; ".join(bad))


def read_baseline(results_dir):
    """(rows, meta) of a saved run, or a clear error."""
    path = os.path.join(results_dir, "results.json")
    if not os.path.isfile(path):
        raise ValidateError(f"--baseline {results_dir}: no results.json there")
    return load_rows(path), read_meta(results_dir)


def compare_baseline(base, results_dir, mapping):
    """Print and save (baseline.json) the verdicts of RESULTS_DIR's run
    against BASE; 1 when a kernel regressed, else 0."""
    base_rows, base_meta = base
    rows = load_rows(os.path.join(results_dir, "results.json"))
    meta = read_meta(results_dir)
    why = baseline.refusal(base_rows, base_meta, rows, meta)
    if why:
        raise ValidateError("--baseline: the runs are not comparable: " + "; ".join(why))
    verdicts = baseline.compare(base_rows, rows, meta.get("load", DEFAULT_LOAD), mapping)
    if not verdicts:
        raise ValidateError("--baseline: no kernel of this run has valid runs in the baseline"
                            " (--baseline-as HERE=THERE names another)")
    print(f"\nAgainst the baseline (one-sided Mann-Whitney U over the runs,"
          f" level {baseline.ALPHA} / {len(baseline.STATS)}):\n")
    print(baseline.table(verdicts))
    save(verdicts, os.path.join(results_dir, "baseline.json"))
    return 1 if any(v["verdict"].startswith("regression") for v in verdicts) else 0


def thread_series(row, results_dir=None):
    """A several-CPU run saved before its series named the thread of each
    window ([t, us] entries): the series read again from the run's console
    log, which the row names (looked for in RESULTS_DIR first: a copied
    results directory).  Returns the row (changed in place or not)."""
    series = row.get("series") or []
    if len(row.get("threads") or []) < 2 or not series or len(series[0]) > 2:
        return row
    log_path = row.get("log")
    if not isinstance(log_path, str):
        return row
    here = os.path.join(results_dir, os.path.basename(log_path)) if results_dir else None
    try:
        with open(here if here and os.path.exists(here) else log_path,
                  encoding="utf-8", errors="replace") as f:
            sec = console.sections(f.read()).get("cyclictest")
    except OSError:
        return row
    if sec:
        _, again = console.cyclictest_series(sec[1])
        if [e[:2] for e in again] == [tuple(e) for e in series]:
            row["series"] = again
    return row


def redraw(results_dir):
    rows = [thread_series(r, results_dir)
            for r in load_rows(os.path.join(results_dir, "results.json"))]
    try:
        with open(os.path.join(results_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except OSError:
        meta = {"load": "stress-set", "seconds": "?", "runs": "?"}
    paths = report.write(rows, meta, results_dir)
    print_summary(rows, meta, paths)
    return 0


if __name__ == "__main__":
    # --report only reads a results directory: it need not wait for a run.
    entry(main if "--report" in sys.argv else lock.with_build_lock(main))
