# SPDX-License-Identifier: GPL-2.0
"""scripts/attribute-latency: what delayed every sample of the latency tail.

For each variant, builds (or reuses) its kernel as scripts/validate does,
or takes one already built (--kernel-dir), boots it in instruction-counted
virtual time (-icount shift=2,sleep=off, -smp 1 or 2) and runs
guest/latency-attribute: the kernel's timerlat tracer through rtla
(tools/tracing/rtla of the tree, packed into the initramfs) under the load,

  rtla timerlat hist -k -P f:99 -s STACK_US -t -e osnoise --trace-buffer-size KB --warm-up 3

so that every sample whose thread latency is STACK_US or more comes with
the stack the timer interrupt found (osnoise/print_stack) and the osnoise
events of its window: the interrupts, softirqs and threads that ran between
the timer's interrupt and the measuring thread.  The guest holds the trace
instance open, unread, during the run and reads it after rtla exited.

The tail is every sample of rtla's window at or above timerlat's own p99.9
(rtla's histogram); the window is the run of the trace's samples whose
histogram is rtla's, and the load must cover it.  STACK_US is --threshold,
or the p99.9 of the variant's valid cyclictest runs in a saved
scripts/validate results directory (--from); it must not be above
timerlat's p99.9, and the tool reports how many samples reach it.

Each sample is split as rtla's own auto-analysis (timerlat_aa.c) splits a
thread latency: the delay before the timer's interrupt handler started, the
timer interrupt's own duration, the time the interrupted thread kept the CPU
(its thread_noise: the rest of a preemption-off section), the other
interrupts, softirqs, NMIs and threads, and the rest (the wake-up and
context switch).  The part that exceeds its typical value (the median of
reference samples) most names the cause, if it exceeds it by 3 us and by
half of what the sample has over a typical one:

  interrupts off          the interrupt came late: the stack's first frame
                          below the interrupt entry is where it landed, just
                          after interrupts came back on
  exit from idle          the same, or the idle task kept the CPU
  preemption off          the interrupt came on time, the interrupted thread
                          kept the CPU: the stack's first frame below the
                          entry is inside its section
  interrupt/softirq work  interrupt handlers, softirqs or NMIs (named, with
                          the interrupted site), or the timer's interrupt
                          itself (timerlat's stack save is most of it)
  blocking thread         another thread ran first (named)
  dispatch                none of these: the wake-up and switch themselves
  near typical            no part stands out
  measurement             the timer interrupted rtla or the tracer's buffer
                          code: listed, in no share

The stack is symbolized on the host against the kernel's vmlinux
(function+offset from the trace; file:line by addr2line when the vmlinux
has debug information).  The lock a section holds is not in a stack: the
table gives the site and its callers, for scripts/lock-advisor --static.

Samples are grouped per section (the site and its first callers) and per
class, and every function of the interrupted stacks is counted
inclusively: samples caused, worst thread latency, share of the tail.  A
run that lost trace events or samples, whose window the trace does not
hold, whose load did not cover the window, or whose tail has a sample
without its stack, is not a result.  JSON, logs and attribution.png go to
build/results/attrib-<time>/.

  scripts/attribute-latency --from build/report/<time>    project and stock-tuned, 60 s
  scripts/attribute-latency --variants project --seconds 20 --threshold 60 --cpus 1
  scripts/attribute-latency --base defconfig --from DIR    the kernels of validate --base defconfig
  scripts/attribute-latency --variants stock-tuned --kernel-dir DIR --threshold 60
  scripts/attribute-latency --input build/results/attrib-<time>/project-stress-set-smp1.log \\
      --vmlinux build/out/project/vmlinux                  analyse a recorded boot again
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import tempfile

from pvrt import boot, build, console, experiment, initramfs, lock, logs, report, tools
from pvrt.errors import PvrtError, entry
from pvrt.results import save

log = logs.logger("attribute-latency")

# The loads guest/latency-attribute runs (those of cyclictest-load).
LOADS = ("stress-set", "hackbench", "stress", "compile-find", "none")

CLASSES = ("preemption off", "interrupts off", "exit from idle", "interrupt/softirq work",
           "blocking thread", "dispatch", "near typical", "measurement")
# Samples of this class are the tools' own cost (rtla reading its instance,
# the tracer's buffer code): listed, left out of every share.
MEASUREMENT = "measurement"
# The class of a sample no part of which stands out: the largest excess
# over the typical split is under MIN_EXCESS_NS, or under half of what the
# sample has over a typical one.
NEAR_TYPICAL = "near typical"
MIN_EXCESS_NS = 3000

# A line of the trace: "comm-pid [cpu] flags timestamp: message".
_LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>\S+)\s+"
                   r"(?P<ts>\d+\.\d+):\s+(?P<msg>.*?)\s*$")
_SAMPLE = re.compile(r"^#(?P<seq>\d+)\s+context\s+(?P<ctx>irq|thread)\s+timer_latency\s+"
                     r"(?P<ns>\d+) ns$")
_NOISE = re.compile(r"^(?P<kind>irq|softirq|thread)_noise:\s+(?P<name>.*?):(?P<num>-?\d+)"
                    r" start (?P<start>\d+\.\d+) duration (?P<dur>\d+) ns$")
_NMI = re.compile(r"^nmi_noise: start (?P<start>\d+\.\d+) duration (?P<dur>\d+) ns$")
_FRAME = re.compile(r"^\s*=> (?P<frame>\S+)")
_LOST = re.compile(r"\[LOST (\d+) EVENTS\]")
_TOTALS = re.compile(r"^# samples (\d+) irq (\d+) at-or-above (\d+) us: (\d+) lost-lines (\d+)"
                     r" printed-from (\d+) us other-lines (\d+)")
_LAT = re.compile(r"^# lat (\d+) (\d+):((?: \d+)+)$")
_FUNC = re.compile(r"^(?P<func>[^+\s]+)(?:\+0x(?P<off>[0-9a-f]+)/0x(?P<size>[0-9a-f]+))?")

# The timer interrupt's own path at the top of every saved stack, down to
# the entry: timerlat_irq() < __hrtimer_run_queues() < hrtimer_interrupt() <
# __sysvec_apic_timer_interrupt() < sysvec_apic_timer_interrupt() <
# asm_sysvec_apic_timer_interrupt().  The frames below the first asm_ entry
# are the interrupted code.
_TRACER_PATH = ("timerlat_irq", "__hrtimer_run_queues", "hrtimer_interrupt",
                "__sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
                "stack_trace_save", "timerlat_save_stack")
# The tools' own code: a sample that interrupted it, or whose interrupted
# task is one of them, measured the measurement (rtla reading its instance:
# tracing_buffers_splice_read() < ring_buffer_read_page() copies a page with
# interrupts off).
_TOOL_TASKS = ("rtla",)
_TOOL_FRAMES = ("ring_buffer_", "tracing_", "tracefs_", "trace_pipe")


def _ns(ts):
    """A trace time stamp "s.fraction" as integer nanoseconds."""
    sec, _, frac = ts.partition(".")
    return int(sec) * 10**9 + int((frac + "000000000")[:9])


def func_of(frame):
    """The function of a "func+0xoff/0xsize" frame."""
    m = _FUNC.match(frame)
    return m.group("func") if m else frame


def parse_trace(lines):
    """The samples of a guest/latency-attribute "attrib-trace" section.

    Returns {"samples": [...], "lat": {cpu: [(seq, us), ...]}, "lost": N,
    "totals": {...}, "foreign": N}: the samples the guest printed in full
    (each with its CPU, sequence number, IRQ and thread latency (ns), the
    task the timer interrupted, the osnoise events of its CPU before the
    timer's interrupt ("before") and between the interrupt and the thread
    ("after"), and the stack, None when the trace has none for it), and
    every thread sample's latency in us, per CPU in the trace's order (a
    restarted timerlat thread starts its sequence again).  Lines that are
    no trace line (a kernel message written into the section on the
    console) are counted in "foreign" and skipped.  PvrtError if the
    section is not such a trace."""
    samples, lost, totals, foreign = [], 0, None, 0
    lat = {}
    pending = {}                 # cpu -> {"before": [], "irq": ..., "after": []}
    stack_of = None              # the sample whose stack lines follow
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        m = _TOTALS.match(line)
        if m:
            totals = dict(zip(("samples", "irq_samples", "threshold_us", "over", "lost_lines",
                               "printed_from_us", "other_lines"),
                              (int(g) for g in m.groups())))
            continue
        m = _LAT.match(line)
        if m:
            cpu, first = int(m.group(1)), int(m.group(2))
            lat.setdefault(cpu, []).extend(
                (first + i, int(v)) for i, v in enumerate(m.group(3).split()))
            continue
        m = _LOST.search(line)
        if m:
            lost += int(m.group(1))
            continue
        m = _FRAME.match(line)
        if m:
            if stack_of is not None:
                stack_of["stack"].append(m.group("frame"))
            continue
        m = _LINE.match(line)
        if not m:
            foreign += 1
            stack_of = None
            continue
        stack_of = None
        cpu, msg = int(m.group("cpu")), m.group("msg")
        cur = pending.setdefault(cpu, {"before": [], "irq": None, "after": []})
        if msg == "<stack trace>":
            last = next((s for s in reversed(samples) if s["cpu"] == cpu), None)
            if last is not None and last["stack"] is None:
                last["stack"] = []
                stack_of = last
            continue
        s = _SAMPLE.match(msg)
        if s:
            seq = int(s.group("seq"))
            if s.group("ctx") == "irq":
                cur["irq"] = {"seq": seq, "ns": int(s.group("ns")),
                              "ts": _ns(m.group("ts")), "comm": m.group("comm").strip(),
                              "pid": int(m.group("pid"))}
                continue
            irq = cur["irq"] if cur["irq"] and cur["irq"]["seq"] == seq else None
            samples.append({"cpu": cpu, "seq": seq,
                            "thread_ns": int(s.group("ns")), "ts": _ns(m.group("ts")),
                            "irq_ns": irq["ns"] if irq else None,
                            "irq_ts": irq["ts"] if irq else None,
                            "interrupted": f"{irq['comm']}:{irq['pid']}" if irq else None,
                            "interrupted_comm": irq["comm"] if irq else None,
                            "interrupted_pid": irq["pid"] if irq else None,
                            "before": cur["before"], "after": cur["after"], "stack": None})
            pending[cpu] = {"before": [], "irq": None, "after": []}
            continue
        ev = None
        e = _NOISE.match(msg)
        if e:
            ev = {"kind": e.group("kind"), "name": e.group("name").strip(),
                  "num": int(e.group("num")), "start": _ns(e.group("start")),
                  "dur": int(e.group("dur"))}
        else:
            e = _NMI.match(msg)
            if e:
                ev = {"kind": "nmi", "name": "nmi", "num": 0, "start": _ns(e.group("start")),
                      "dur": int(e.group("dur"))}
        if ev is None:
            continue            # another event of the instance: not part of a window
        (cur["after"] if cur["irq"] else cur["before"]).append(ev)
    if totals is None:
        raise PvrtError("attrib-trace: no '# samples' line (the section is cut short,"
                        " or is not guest/latency-attribute's)")
    return {"samples": samples, "lat": lat, "lost": lost, "totals": totals,
            "foreign": foreign}


def segments(lat):
    """A CPU's [(seq, us)] cut where the sequence does not go on by one:
    [[(seq, us), ...], ...] (a gap is a lost sample, a step back a timerlat
    thread restarted)."""
    out = []
    for seq, us in lat:
        if out and out[-1][-1][0] + 1 == seq:
            out[-1].append((seq, us))
        else:
            out.append([(seq, us)])
    return out


def find_windows(lat, hist):
    """Every run of consecutive samples of LAT ([(seq, us)], one CPU) whose
    histogram is rtla's HIST ({us: count}): [(first seq, last seq)]."""
    n = sum(hist.values())
    out = []
    if not n:
        return out
    for seg in segments(lat):
        if len(seg) < n:
            continue
        cur = {}
        for _, us in seg[:n]:
            cur[us] = cur.get(us, 0) + 1
        for k in range(len(seg) - n + 1):
            if k:
                out_us, in_us = seg[k - 1][1], seg[k + n - 1][1]
                if out_us != in_us:
                    cur[out_us] -= 1
                    if not cur[out_us]:
                        del cur[out_us]
                    cur[in_us] = cur.get(in_us, 0) + 1
            if cur == hist:
                out.append((seg[k][0], seg[k + n - 1][0]))
    return out


def choose_window(lat, hist, p999):
    """rtla's window among the runs of LAT ([(seq, us)], one CPU, in trace
    order) with its histogram HIST, a window never spanning a restart:
    {"epoch", "first", "last" (the first run), "matches": how many runs
    fit, "ambiguous": whether they hold other tail samples (at or above
    P999), "span": (first, last) of the runs of the first's epoch}; None
    when no run fits."""
    epoch_of = [ep for ep, _x in _epochs(lat, key=lambda x: x[0])]
    found = []
    for ep in sorted(set(epoch_of)):
        part = [x for x, e in zip(lat, epoch_of) if e == ep]
        found += [(ep, first, last) for first, last in find_windows(part, hist)]
    if not found:
        return None
    tails = {frozenset((e, seq) for (seq, us), e in zip(lat, epoch_of)
                       if e == ep and first <= seq <= last and p999 is not None
                       and us >= p999) for ep, first, last in found}
    ep, first, last = found[0]
    same = [(f, la) for e, f, la in found if e == ep]
    return {"epoch": ep, "first": first, "last": last, "matches": len(found),
            "ambiguous": len(tails) > 1,
            "span": (min(f for f, _ in same), max(la for _, la in same))}


def find_window(lat, hist):
    """The first run of consecutive samples of LAT ([(seq, us)], one CPU)
    whose histogram is rtla's HIST ({us: count}, that CPU's thread column):
    rtla counted the samples of its own instance, started just after and
    stopped before the trace's, so its window is a run of the trace's
    samples.

    Returns (first seq, last seq, matches): matches is how many runs fit
    (equal latencies at the edges may fit more than one: choose_window()
    says whether they differ).  None if no run of the trace has rtla's
    histogram: the trace or rtla lost samples, or a thread restarted
    inside the window."""
    found = find_windows(lat, hist)
    return (found[0][0], found[0][1], len(found)) if found else None


def interrupted_frames(stack):
    """The frames of STACK below the timer interrupt's entry: the code the
    interrupt found running (none when it interrupted user space)."""
    if not stack:
        return []
    for i, f in enumerate(stack):
        if func_of(f).startswith("asm_"):
            return stack[i + 1:]
    # No entry frame: leave out the tracer's and the hrtimer path's own.
    return [f for f in stack if func_of(f) not in _TRACER_PATH]


def components(s, irq_offset=0):
    """Sample S's thread latency split as rtla's auto-analysis splits it
    (ns), with the names of what ran: {part: ns}, {part: [(name, ns)]}.

    IRQ_OFFSET (ns) calibrates the timer's expiry: the IRQ sample's time
    stamp is the event's commit time truncated to the microsecond, so the
    expiry it gives (time stamp - IRQ latency) is off by a few hundred ns to
    a few us; irq_calibration() takes the typical offset from the reference
    samples."""
    thread = s["thread_ns"]
    after = list(s["after"])
    timer = next((e for e in after if e["kind"] == "irq"), None)
    if timer is not None:
        after.remove(timer)
    parts = {"irq_delay": 0, "timer_irq": 0, "blocking": 0, "irq_work": 0, "threads": 0}
    who = {"irq_work": [], "threads": [], "blocking": []}
    start = None
    if s["irq_ns"] is not None:
        expected = s["irq_ts"] - s["irq_ns"] + irq_offset
        start = timer["start"] if timer else s["irq_ts"]
        delay = min(max(0, start - expected), s["irq_ns"])
        # An interrupt (or NMI) that ran across the expected time delayed the
        # timer's interrupt by the overlap: interrupt work, not interrupts off.
        for e in s["before"]:
            if e["kind"] in ("irq", "nmi"):
                ov = min(e["start"] + e["dur"], start) - max(e["start"], expected)
                if ov > 0:
                    ov = min(ov, delay)
                    delay -= ov
                    parts["irq_work"] += ov
                    who["irq_work"].append((_event_name(e), ov))
        parts["irq_delay"] = delay
    if timer is not None:
        parts["timer_irq"] = timer["dur"]
    # A softirq the timer interrupted (it started before the timer's
    # interrupt): osnoise gives the interrupted thread that softirq's start
    # as its own (timerlat_irq(), "the thread needs to receive the softirq
    # delta_start"), so its thread_noise counts the softirq's part before
    # the interrupt too: take it off.
    early = 0
    if start is not None:
        for e in after:
            if e["kind"] == "softirq" and e["start"] < start:
                early = max(early, start - e["start"])
    blocked = False
    for e in after:
        if e["kind"] == "thread":
            if not blocked and s["interrupted_pid"] is not None and \
                    e["num"] == s["interrupted_pid"]:
                blocked = True
                dur = max(0, e["dur"] - early)
                parts["blocking"] += dur
                who["blocking"].append((f"{e['name']}:{e['num']}", dur))
            else:
                parts["threads"] += e["dur"]
                who["threads"].append((f"{e['name']}:{e['num']}", e["dur"]))
        else:
            parts["irq_work"] += e["dur"]
            who["irq_work"].append((_event_name(e), e["dur"]))
    named = sum(parts.values())
    parts["dispatch"] = max(0, thread - named)
    # The parts osnoise names may add up to more than the latency (its
    # accounting of nested noise): say by how much, never hide it.
    over = max(0, named - thread)
    return parts, who, over


def irq_calibration(reference):
    """The typical offset (ns) of the IRQ time stamps: the median, over the
    REFERENCE samples, of the timer interrupt's start minus the expiry the
    IRQ sample gives.  Negative when the interrupt appears to start before
    its timer expired (the time stamp's truncation and commit delay);
    components() adds it back.  0 without reference samples."""
    offs = sorted(next(e["start"] for e in s["after"] if e["kind"] == "irq")
                  - (s["irq_ts"] - s["irq_ns"]) for s in reference
                  if s["irq_ns"] is not None and any(e["kind"] == "irq" for e in s["after"]))
    if not offs:
        return 0
    return min(0, offs[len(offs) // 2])


def _event_name(e):
    if e["kind"] == "softirq":
        return f"softirq {e['name']}"
    if e["kind"] == "nmi":
        return "nmi"
    return f"irq {e['name']}:{e['num']}"


def _biggest(named):
    """The name that took the most time in [(name, ns)]; None for none."""
    tot = {}
    for name, ns in named:
        tot[name] = tot.get(name, 0) + ns
    return max(tot.items(), key=lambda kv: (kv[1], kv[0]))[0] if tot else None


PARTS = ("irq_delay", "timer_irq", "blocking", "irq_work", "threads", "dispatch")
# The class each part of a thread latency names when it is the one that
# made the sample late.
PART_CLASS = {"irq_delay": "interrupts off", "timer_irq": "interrupt/softirq work",
              "blocking": "preemption off", "irq_work": "interrupt/softirq work",
              "threads": "blocking thread", "dispatch": "dispatch"}
# The timer's own interrupt: in icount mode most of it is timerlat's stack
# save, longer the deeper the interrupted stack.
TIMER_IRQ_KEY = "the timer interrupt (incl. timerlat's stack save)"


def baseline(reference, irq_offset=0):
    """{part: median ns} over the REFERENCE samples (typical ones): what
    every sample pays, the timer interrupt's own cost (with the tracer's
    stack save) first among it.  Zeros without reference samples."""
    if not reference:
        return {p: 0 for p in PARTS}
    cols = {p: sorted(components(s, irq_offset)[0][p] for s in reference) for p in PARTS}
    return {p: v[len(v) // 2] for p, v in cols.items()}


def is_measurement(s, frames):
    """Whether sample S measured the tools themselves: the timer interrupted
    rtla, or the tracer's buffer code (FRAMES, the interrupted ones)."""
    comm = s.get("interrupted_comm") or ""
    if comm in _TOOL_TASKS:
        return True
    return any(func_of(f).startswith(_TOOL_FRAMES) for f in frames[:8])


# The idle loop's own functions (kernel/sched/idle.c, x86's and cpuidle's
# idle routines): the timer found the CPU idle when it interrupted one of
# them, with no softirq between.
_IDLE_LOOP = re.compile(r"^(pv_native_safe_halt|native_safe_halt|default_idle|"
                        r"default_idle_call|arch_cpu_idle|cpuidle_|do_idle|cpu_idle_poll|"
                        r"poll_idle|acpi_idle|acpi_safe_halt|intel_idle|mwait_idle|"
                        r"cpu_startup_entry|start_secondary|rest_init|ct_idle_)")
_SOFTIRQ_FRAMES = ("handle_softirqs", "__do_softirq", "do_softirq", "irq_exit_rcu",
                   "irq_exit", "__irq_exit_rcu", "run_ksoftirqd")


def in_idle_loop(frames):
    """Whether FRAMES (interrupted_frames()) are the idle loop's: its top
    frame is an idle routine and no softirq runs in them."""
    return (bool(frames) and bool(_IDLE_LOOP.match(func_of(frames[0])))
            and not any(func_of(f) in _SOFTIRQ_FRAMES for f in frames))


def classify(s, base=None, depth=2, irq_offset=0):
    """Sample S's cause: (class, section key, details).  The part of
    components() that exceeds its typical value (BASE, baseline()) the most
    made the sample late and names the class, if that excess is at least
    MIN_EXCESS_NS and half of what the sample has over a typical one;
    otherwise the sample is "near typical".  A sample that interrupted the
    tools (is_measurement()) is "measurement".  The key is what the table
    groups by: the site and DEPTH callers, or the handler or thread."""
    parts, who, over = components(s, irq_offset)
    base = base or {p: 0 for p in PARTS}
    frames = interrupted_frames(s["stack"])
    site = [func_of(f) for f in frames[:depth + 1]]
    if site:
        section = " < ".join(site)
    else:
        section = "(user space)" if s["stack"] else "(no stack)"
    excess = {p: parts[p] - base[p] for p in PARTS}
    part = max(PARTS, key=lambda p: (excess[p], -PARTS.index(p)))
    beyond = s["thread_ns"] - sum(base.values())
    details = {"parts": parts, "who": who, "frames": frames, "excess": excess,
               "over_ns": over, "part": part}
    if is_measurement(s, frames):
        return MEASUREMENT, f"{s.get('interrupted_comm') or '?'} at {section}", details
    if excess[part] < MIN_EXCESS_NS or excess[part] < beyond / 2:
        return NEAR_TYPICAL, section, details
    cls = PART_CLASS[part]
    idle_task = s["interrupted_pid"] == 0
    if idle_task and part in ("irq_delay", "blocking"):
        if in_idle_loop(frames):
            # The idle task "kept the CPU" in its idle loop: the way out
            # of idle (swapper's thread_noise), not a preemption-off section.
            cls = "exit from idle"
        else:
            # Code the idle task ran (a softirq on an interrupt's exit):
            # its own section, said to be on the idle task.
            section += (" (softirq on idle)" if any(func_of(f) in _SOFTIRQ_FRAMES
                                                    for f in frames)
                        else " (idle task)")
    if part == "irq_work":
        name = _biggest(who["irq_work"]) or "(unnamed interrupt work)"
        key = f"{name} at {section}" if site else name
    elif part == "timer_irq":
        key = TIMER_IRQ_KEY
    elif part == "threads":
        key = (_biggest(who["threads"]) or "(unnamed thread)").rsplit(":", 1)[0]
    else:
        key = section
    return cls, key, details


# --- symbols -------------------------------------------------------------------------

class Symbols:
    """Function+offset frames of one kernel, to file:line by addr2line on
    its vmlinux (scripts/faddr2line's method, in one batch)."""

    def __init__(self, vmlinux, tree=None):
        if not os.path.isfile(vmlinux):
            raise PvrtError(f"vmlinux {vmlinux} not found")
        self.vmlinux, self.tree = vmlinux, tree
        out = subprocess.run(["nm", "-n", "--defined-only", vmlinux], capture_output=True,
                             text=True, check=True).stdout
        # A frame's size is kallsyms': the distance to the next symbol's
        # address (alignment padding included), as scripts/faddr2line
        # computes it, not the ELF size.
        found = []
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "tTwW":
                found.append((int(p[0], 16), p[2]))
        addrs = sorted({a for a, _ in found})
        following = dict(zip(addrs, addrs[1:]))
        self.syms = {}
        for a, name in found:
            if a in following:
                self.syms.setdefault(name, []).append((a, following[a] - a))
        heads = subprocess.run(["readelf", "-S", "-W", vmlinux], capture_output=True,
                               text=True, check=True).stdout
        self.debug_info = ".debug_info" in heads
        self.mismatch, self.asked = [], set()

    def address(self, frame, ret=True):
        """The address of FRAME (a return address: minus one, inside the
        call) or None; a size that differs from the vmlinux's is recorded
        in self.mismatch (the trace is not of this vmlinux)."""
        m = _FUNC.match(frame)
        if not m or not m.group("off"):
            return None
        self.asked.add(frame)
        cands = self.syms.get(m.group("func"), [])
        size = int(m.group("size"), 16)
        fit = [a for a, sz in cands if sz == size]
        if cands and not fit:
            self.mismatch.append(f"{m.group('func')}: size {size:#x} in the trace,"
                                 f" {', '.join(hex(sz) for _, sz in cands)} in {self.vmlinux}")
        if len(fit) != 1:
            return None     # unknown here, or two static functions of one name and size
        return fit[0] + int(m.group("off"), 16) - (1 if ret else 0)

    def lines(self, frames):
        """{(frame, is_return): [(function, "file:line"), ...]} for FRAMES, a
        list of (frame, is_return): the interrupted instruction is not a
        return address, the frames below it are.  Innermost inlined function
        first; one addr2line for all."""
        addrs = {}
        for f, ret in frames:
            a = self.address(f, ret=ret)     # checks every frame's size, debug info or not
            if a is not None:
                addrs.setdefault((f, ret), a)
        if not addrs or not self.debug_info:
            return {}
        res = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", self.vmlinux]
                             + sorted({hex(a) for a in addrs.values()}), capture_output=True,
                             text=True, check=True).stdout.splitlines()
        # -a -f -i: per address its line, then a function and a file:line
        # line per inlined function, innermost first.
        by_addr, cur, func = {}, None, None
        for line in res:
            if re.fullmatch(r"0x[0-9a-f]+", line):
                cur, func = int(line, 16), None
                by_addr[cur] = []
            elif cur is not None and func is None:
                func = line
            elif cur is not None:
                if not line.startswith("??"):
                    by_addr[cur].append((func, self._short(line.split(" (")[0])))
                func = None
        return {k: by_addr.get(a, []) for k, a in addrs.items()}

    # The top directories of a kernel tree: where a source path starts.
    TOP_DIRS = ("arch", "block", "certs", "crypto", "drivers", "fs", "include", "init",
                "io_uring", "ipc", "kernel", "lib", "mm", "net", "rust", "samples", "scripts",
                "security", "sound", "tools", "usr", "virt")

    def _short(self, path):
        """PATH (absolute, or relative to an O= build directory) from the
        top of the kernel tree."""
        path = os.path.normpath(path)
        if self.tree:
            root = os.path.realpath(self.tree) + "/"
            if path.startswith(root):
                return path[len(root):]
        parts = path.split("/")
        for i in range(len(parts) - 1):
            if parts[i] in self.TOP_DIRS:
                return "/".join(parts[i:])
        return path


# --- the run's figures ---------------------------------------------------------------

def parse_stats(lines):
    """{cpu: {"overrun": N, "dropped events": N, ...}} of the attrib-stats section."""
    out, cpu = {}, None
    for line in lines:
        m = re.match(r"^== cpu(\d+)", line.strip())
        if m:
            cpu = int(m.group(1))
            out[cpu] = {}
            continue
        m = re.match(r"^([a-z ]+):\s+(\d+)", line.strip())
        if m and cpu is not None:
            out[cpu][m.group(1)] = int(m.group(2))
    return out


# rtla's histogram entries (guest/latency-attribute's -E): a latency of
# this many us or more is in its "over:" line.
HIST_ENTRIES = 20000


def parse_hist(lines):
    """rtla timerlat hist's thread columns: each CPU's histogram ({us:
    count}, the "over:" count under HIST_ENTRIES), the sample count, the
    maximum and the p99.9 over all CPUs."""
    count, tmax, cols, per_cpu, beyond, width = 0, None, None, {}, 0, 0
    for n_line, line in enumerate(lines, 1):
        p = line.split()
        if not p:
            continue
        if p[0] == "ALL:":
            # The summary over all CPUs: the per-CPU rows above say it all.
            break
        if p[0] == "Index":
            cols = {i: int(c[4:]) for i, c in enumerate(p) if re.fullmatch(r"Thr-\d+", c)}
            per_cpu = {cpu: {} for cpu in cols.values()}
            width = len(p)
            continue
        if not cols:
            continue
        # Every line of the table is a row of whole numbers, one a column
        # (min:, avg: and max: of a CPU without samples: "-"): anything
        # else (a message of rtla's inside it) would lose a count.
        summary = p[0] in ("min:", "avg:", "max:")
        if (not (summary or p[0] in ("over:", "count:") or p[0].isdigit())
                or len(p) != width
                or not all(v.isdigit() or (summary and v == "-") for v in p[1:])):
            raise PvrtError(f"rtla's histogram: line {n_line} of attrib-hist is no row of"
                            f" {width} numbers: {line.strip()!r}")
        if p[0].isdigit() or p[0] == "over:":
            for i, cpu in cols.items():
                n = int(p[i])
                if n:
                    b = HIST_ENTRIES if p[0] == "over:" else int(p[0])
                    per_cpu[cpu][b] = per_cpu[cpu].get(b, 0) + n
                    if p[0] == "over:":
                        beyond += n
        elif p[0] in ("count:", "max:"):
            vals = [int(p[i]) for i in cols if p[i] != "-"]
            if p[0] == "count:":
                count = sum(vals)
            else:
                tmax = max(vals) if vals else None
    pooled = {}
    for h in per_cpu.values():
        for b, n in h.items():
            if b != HIST_ENTRIES:
                pooled[b] = pooled.get(b, 0) + n
    # timerlat's own p99.9 by the tools' one convention (console.percentile).
    p999 = console.percentile(pooled, sum(pooled.values()) + beyond, 99.9, above=tmax)
    return {"hist_samples": count, "hist_thread_max": tmax, "hist_thread_p999": p999,
            "hist_read": cols is not None, "per_cpu": per_cpu}


def load_marks(text):
    """The guest's record of the load against the trace clock: {"load":
    the load it ran, "start": uptime, "stop": uptime, "state":
    "running"|"exited", "end": the stress set's "end" phase or None,
    "clock": uptime - trace time (s), "phases": [(name, uptime)]}; None
    for a boot without them."""
    out = {"load": None, "start": None, "stop": None, "state": None, "end": None,
           "clock": None, "phases": []}
    for line in console.lines(text):
        p = line.split()
        if len(p) >= 3 and p[0] == "PVRT-LOAD" and p[1] == "start":
            out["start"] = float(p[2])
            out["load"] = p[3] if len(p) >= 4 else None
        elif len(p) >= 4 and p[0] == "PVRT-LOAD" and p[1] == "stop":
            out["stop"], out["state"] = float(p[2]), p[3]
        elif len(p) == 5 and p[0] == "PVRT-CLOCK" and p[1] == "uptime" and p[3] == "trace":
            out["clock"] = float(p[2]) - float(p[4])
        elif len(p) == 3 and p[0] == "PVRT-PHASE":
            out["phases"].append((p[1], float(p[2])))
            if p[1] == "end":
                out["end"] = float(p[2])
    return out


# guest/stress-set's phases, one cycle.
STRESS_SET_PHASES = ("memory", "file-io", "proc", "fork", "console")


def check_work(work, load):
    """Problems of a load whose WORK (console.load_work() of the guest's
    "# load work:" line) says it did not work: no record, no work, or a
    kind of work at 0 (report.judge_load()'s rule for one run)."""
    if load == "none":
        return []
    if work is None:
        return [f"no record of the load's work (no '# load work:' line): whether the load"
                f" ({load}) worked is not known"]
    if not work or not any(work.values()):
        return [f"the load ({load}) reported no work"]
    idle = sorted(k for k, v in work.items() if not v)
    return [f"the load ({load}) did no {', '.join(idle)}"] if idle else []


def check_load(marks, load, window):
    """Problems of a load that did not cover WINDOW ((first, last) trace
    time, s) of rtla's samples: it started after the first one, or ended
    before the last one (a load that ended by itself ends at its "end"
    phase, or is not known to have lasted); a stress set that did not start
    each of its phases inside the window (one stuck in a phase lives, but
    is not the load).  The marks and the clock offset are /proc/uptime, in
    10 ms steps: a margin the guest's 3 s warm-up and its stop after rtla
    exited exceed by far."""
    if load == "none":
        return []
    if marks["start"] is None or marks["stop"] is None or marks["clock"] is None:
        return ["no PVRT-LOAD start/stop or PVRT-CLOCK lines: whether the load covered"
                " rtla's window is not known"]
    first, last = (t + marks["clock"] for t in window)
    out = []
    if load == "stress-set":
        seen = {name for name, t in marks["phases"] if first <= t <= last}
        missing = [p for p in STRESS_SET_PHASES if p not in seen]
        if missing:
            out.append("the stress set did not start every phase inside rtla's window"
                       f" ({first:.2f}-{last:.2f} s): no {', '.join(missing)}")
    if marks["start"] > first:
        out.append(f"the load started at {marks['start']:.2f} s, after rtla's first sample"
                   f" ({first:.2f} s)")
    end = marks["stop"] if marks["state"] == "running" else marks["end"]
    if end is None:
        out.append(f"the load ended by itself before {marks['stop']:.2f} s, when is not"
                   f" known: rtla's last sample was at {last:.2f} s")
    elif end < last:
        out.append(f"the load ended at {end:.2f} s, before rtla's last sample ({last:.2f} s)")
    return out


def _epochs(items, key):
    """ITEMS (per CPU, in trace order) each with the number of times its
    CPU's sequence went back before it: [(epoch, item)]."""
    out, last, epoch = [], None, 0
    for it in items:
        seq = key(it)
        if last is not None and seq <= last:
            epoch += 1
        last = seq
        out.append((epoch, it))
    return out


def analyse(text, reference_us=None, symbols=None, depth=2, load=None):
    """A boot's console TEXT (guest/latency-attribute) to its result: the
    attributed samples and the run's problems (a run with problems is not a
    result).  The tail is every sample of rtla's window at or above
    timerlat's own p99.9 (rtla's histogram); REFERENCE_US (default: the
    threshold the guest traced stacks at) is reported beside it."""
    secs = console.sections(text)
    problems, notes = [], []
    for name in ("attrib-hist", "attrib-stats", "attrib-trace"):
        if name not in secs:
            raise PvrtError(f"no {name} section in the console log"
                            " (not a guest/latency-attribute boot, or it did not finish)")
        if secs[name][0] is None:
            raise PvrtError(f"section {name} not finished (no PVRT-END {name})")
    # rtla's stderr: its own section (older guests: inside attrib-hist).
    said = [ln.strip() for ln in secs.get("attrib-rtla-stderr", (0, []))[1] if ln.strip()]
    if secs["attrib-hist"][0] != 0:
        problems.append(f"rtla timerlat hist exited with rc={secs['attrib-hist'][0]}: "
                        + " ".join(said[-3:] or [ln.strip() for ln in
                                                 secs["attrib-hist"][1][-3:]]))
    elif said:
        notes.append("rtla said: " + "; ".join(said[:3]))
    head = next((re.search(r"period (\d+) us, threshold (\d+) us", ln)
                 for ln in secs["attrib-hist"][1] if ln.startswith("# buffer")), None)
    if not head:
        raise PvrtError("attrib-hist: no '# buffer ... period ... threshold' line")
    period_ns, stack_us = int(head.group(1)) * 1000, int(head.group(2))
    reference_us = stack_us if reference_us is None else reference_us
    trace = parse_trace(secs["attrib-trace"][1])
    stats = parse_stats(secs["attrib-stats"][1])
    hist = parse_hist(secs["attrib-hist"][1])
    if trace["totals"]["threshold_us"] != stack_us:
        problems.append(f"the guest's filter ran at {trace['totals']['threshold_us']} us,"
                        f" rtla at {stack_us} us")
    lost = trace["lost"] or trace["totals"]["lost_lines"]
    for cpu, st in sorted(stats.items()):
        for key in ("overrun", "dropped events", "commit overrun", "entries"):
            if st.get(key):
                what = "unread entries" if key == "entries" else key
                problems.append(f"cpu{cpu}: {st[key]} {what} in the trace buffer")
    if lost:
        problems.append(f"the trace lost {lost} events")
    if not stats:
        problems.append("no ring buffer statistics (attrib-stats empty)")
    if trace["foreign"]:
        notes.append(f"{trace['foreign']} lines in the trace section were no trace line"
                     " (kernel messages on the console): skipped")
    p999 = hist["hist_thread_p999"]
    if not hist["hist_read"]:
        problems.append("rtla's histogram not read")
    # rtla's window on each CPU: the run of the trace's samples with its
    # histogram, and only the samples inside it.
    windows = {}
    for cpu, h in sorted(hist["per_cpu"].items()):
        lat = [(seq, min(us, HIST_ENTRIES)) for seq, us in trace["lat"].get(cpu, [])]
        epoch_of = [ep for ep, _x in _epochs(lat, key=lambda x: x[0])]
        found = choose_window(lat, h, p999)
        if not found:
            problems.append(f"cpu{cpu}: no run of the trace's {len(lat)} samples has rtla's"
                            f" histogram ({sum(h.values())} samples): samples were lost, or"
                            " a timerlat thread restarted inside rtla's window")
            continue
        ep, first, last = found["epoch"], found["first"], found["last"]
        if found["ambiguous"]:
            problems.append(f"cpu{cpu}: rtla's histogram fits {found['matches']} runs of the"
                            " trace that hold other samples at or above timerlat's p99.9:"
                            " which are rtla's is not known")
        elif found["matches"] > 1:
            notes.append(f"cpu{cpu}: rtla's histogram fits {found['matches']} runs of the"
                         " trace (equal latencies at their edges), all with the same tail"
                         " samples: the first is taken, the load checked over them all")
        windows[cpu] = {"epoch": ep, "first": first, "last": last,
                        "matches": found["matches"], "span": found["span"],
                        "tail": sum(1 for x, e in zip(lat, epoch_of) if e == ep
                                    and first <= x[0] <= last and p999 is not None
                                    and x[1] >= p999),
                        "over_reference": sum(1 for x, e in zip(lat, epoch_of)
                                              if e == ep and first <= x[0] <= last
                                              and x[1] >= reference_us)}
    # Each printed sample's restart epoch is that of its place in the
    # "# lat" lines (every sample, in trace order): the printed ones, a
    # subsequence, are lined up with them by sequence number and latency.
    # A sample at or above the filter's floor is always printed, so an
    # earlier equal entry is never a tail sample's.
    inside, outside, unplaced = [], 0, 0
    for cpu in sorted({s["cpu"] for s in trace["samples"]}):
        lat = trace["lat"].get(cpu, [])
        epoch_of = [ep for ep, _x in _epochs(lat, key=lambda x: x[0])]
        pos, w = 0, windows.get(cpu)
        for s in (x for x in trace["samples"] if x["cpu"] == cpu):
            at = pos
            while at < len(lat) and lat[at] != (s["seq"], s["thread_ns"] // 1000):
                at += 1
            if at == len(lat):
                unplaced += 1
                outside += 1
                continue
            ep, pos = epoch_of[at], at + 1
            if w and ep == w["epoch"] and w["first"] <= s["seq"] <= w["last"]:
                inside.append(s)
            else:
                outside += 1
    if unplaced:
        problems.append(f"{unplaced} samples printed in full are not in the '# lat' lines,"
                        " in their order")
    printed_from = trace["totals"]["printed_from_us"]
    tail = [s for s in inside if p999 is not None and s["thread_ns"] // 1000 >= p999]
    reference = [s for s in inside if s["thread_ns"] // 1000 < printed_from]
    if p999 is not None and p999 < stack_us:
        problems.append(f"timerlat's p99.9 ({p999} us) is below the stack threshold"
                        f" ({stack_us} us): the tail has no stacks; trace again with"
                        f" --threshold {p999} or lower")
    want = sum(w["tail"] for w in windows.values())
    if windows and len(tail) != want:
        problems.append(f"rtla's window holds {want} thread samples at or above timerlat's"
                        f" p99.9 ({p999} us), the trace printed {len(tail)} of them")
    # The load must cover the window: the guest's marks against the
    # samples' times (a sample's time: a printed sample of its run plus
    # whole periods, timerlat's timer being periodic).
    marks = load_marks(text)
    span = None
    for cpu, w in windows.items():
        mine = [s for s in inside if s["cpu"] == cpu]
        if not mine:
            continue
        ref = mine[0]
        first = ref["ts"] + (w["span"][0] - ref["seq"]) * period_ns
        ref = mine[-1]
        last = ref["ts"] + (w["span"][1] - ref["seq"]) * period_ns
        span = (min(first, span[0]), max(last, span[1])) if span else (first, last)
    # The load the guest ran is the one its PVRT-LOAD line names.
    if marks["load"] and load and marks["load"] != load:
        problems.append(f"the load was to be {load}, the log says {marks['load']} ran")
    load, work = marks["load"] or load, None
    if load is None:
        problems.append("which load ran is not known (no 'PVRT-LOAD start' line naming it)")
    else:
        if span:
            problems += check_load(marks, load, (span[0] / 1e9, span[1] / 1e9))
        if "attrib-load" in secs:
            work = console.load_work(secs["attrib-load"][1])
        elif load == "stress-set":
            # A guest before the attrib-load section: the stress set's
            # phases done are its PVRT-PHASE lines each followed by another.
            work = {}
            for name, _t in marks["phases"][:-1]:
                work["stress-set-" + name] = work.get("stress-set-" + name, 0) + 1
        problems += check_work(work, load)
    irq_offset = irq_calibration(reference)
    base = baseline(reference, irq_offset)
    rows, shown = [], 12
    classified = [classify(s, base, depth, irq_offset) for s in tail]
    wanted = {(f, i > 0) for _c, _k, det in classified for i, f in enumerate(det["frames"][:shown])}
    lines = symbols.lines(sorted(wanted)) if symbols else {}
    for s, (cls, key, det) in zip(tail, classified):
        rows.append({"cpu": s["cpu"], "seq": s["seq"],
                     "thread_us": round(s["thread_ns"] / 1000, 1),
                     "irq_us": None if s["irq_ns"] is None else round(s["irq_ns"] / 1000, 1),
                     "class": cls, "key": key, "interrupted": s["interrupted"],
                     "parts_us": {k: round(v / 1000, 1) for k, v in det["parts"].items()},
                     "excess_us": {k: round(v / 1000, 1) for k, v in det["excess"].items()},
                     "parts_over_latency_us": round(det["over_ns"] / 1000, 1),
                     "who": {k: [(n, round(ns / 1000, 1)) for n, ns in v]
                             for k, v in det["who"].items() if v},
                     "frames": [frame_row(f, lines.get((f, i > 0)))
                                for i, f in enumerate(det["frames"][:shown])],
                     "depth": len(det["frames"]),
                     "has_stack": s["stack"] is not None})
    no_stack = sum(1 for r in rows if not r["has_stack"])
    if no_stack:
        problems.append(f"{no_stack} tail samples without a stack")
    over = sum(1 for r in rows if r["parts_over_latency_us"] > 1)
    if over:
        notes.append(f"{over} tail samples whose named parts add up to more than their"
                     " latency (by over 1 us): osnoise's accounting of nested noise")
    if symbols is not None and symbols.mismatch:
        bad = sorted(set(symbols.mismatch))
        if len(bad) * 2 > max(1, len(symbols.asked)):
            problems.append("the vmlinux is not the traced kernel's: " + "; ".join(bad[:3]))
        else:
            notes.append(f"{len(bad)} frames' sizes differ from the vmlinux's: no file:line"
                         " for them: " + "; ".join(bad[:3]))
    return {"threshold_us": p999, "stack_threshold_us": stack_us,
            "reference_us": reference_us,
            "reference_over": sum(w["over_reference"] for w in windows.values()),
            "samples": rows, "problems": problems, "notes": notes,
            "reference_samples": len(reference), "outside_window": outside,
            "printed_from_us": printed_from,
            "windows": windows, "load_marks": marks, "load_work": work,
            "window_s": [round(t / 1e9, 3) for t in span] if span else None,
            "irq_offset_ns": irq_offset,
            "baseline_us": {k: round(v / 1000, 1) for k, v in base.items()},
            "timerlat_samples": sum(sum(h.values()) for h in hist["per_cpu"].values()),
            "trace_samples": trace["totals"]["samples"], "stats": stats,
            "hist_samples": hist["hist_samples"], "hist_thread_max": hist["hist_thread_max"],
            "hist_thread_p999": p999, "hist_read": hist["hist_read"],
            "debug_info": bool(symbols and symbols.debug_info)}


def frame_row(frame, chain):
    """A frame of a result: the frame, its function's file:line and, when
    the address is in inlined code, the inlined functions (innermost first)."""
    if not chain:
        return {"frame": frame, "line": None, "inlined": []}
    return {"frame": frame, "line": chain[-1][1],
            "inlined": [f"{fn} {loc}" for fn, loc in chain[:-1]]}


def aggregate(rows, by="section"):
    """Rows grouped per section (class and key) or per class: samples
    caused, worst thread latency, share of the tail (samples) and of its
    latency (sum), an example sample's site and file:line.  Measurement
    samples (the tools' own cost) are grouped but have no share, and the
    shares are of the other samples."""
    groups = {}
    for r in rows:
        k = (r["class"], r["key"]) if by == "section" else (r["class"], "")
        g = groups.setdefault(k, {"class": r["class"], "key": k[1], "samples": 0,
                                  "worst_us": 0.0, "sum_us": 0.0, "example": None})
        g["samples"] += 1
        g["sum_us"] += r["thread_us"]
        if r["thread_us"] >= g["worst_us"]:
            g["worst_us"] = r["thread_us"]
            g["example"] = {"seq": r["seq"], "cpu": r["cpu"], "interrupted": r["interrupted"],
                            "frames": r["frames"][:4]}
    counted = [r for r in rows if r["class"] != MEASUREMENT]
    total = len(counted) or 1
    lat = sum(r["thread_us"] for r in counted) or 1.0
    out = []
    for g in groups.values():
        mine = g["class"] != MEASUREMENT
        g["share"] = round(g["samples"] / total, 4) if mine else None
        g["latency_share"] = round(g["sum_us"] / lat, 4) if mine else None
        g["sum_us"] = round(g["sum_us"], 1)
        out.append(g)
    return sorted(out, key=lambda g: (g["class"] == MEASUREMENT, -g["samples"],
                                      -g["worst_us"], g["class"], g["key"]))


# Entry and thread-start frames: on most stacks, no section of their own.
GENERIC_FRAMES = ("do_syscall_64", "entry_SYSCALL_64_after_hwframe", "ret_from_fork",
                  "ret_from_fork_asm", "kthread", "worker_thread", "process_one_work",
                  "x64_sys_call", "asm_exc_page_fault", "exc_page_fault")


def inclusive(rows, frames=8):
    """Every function on the interrupted stacks (first FRAMES frames, the
    GENERIC_FRAMES left out) of the tail's counted samples, counted once
    per sample wherever it is: [{"function", "samples", "share",
    "worst_us"}], most first.  One section seen at several points (its
    site, a helper it calls) adds up here under its own function."""
    counted = [r for r in rows if r["class"] != MEASUREMENT]
    out = {}
    for r in counted:
        for fn in dict.fromkeys(func_of(f["frame"]) for f in r["frames"][:frames]
                                if func_of(f["frame"]) not in GENERIC_FRAMES):
            g = out.setdefault(fn, {"function": fn, "samples": 0, "worst_us": 0.0})
            g["samples"] += 1
            g["worst_us"] = max(g["worst_us"], r["thread_us"])
    total = len(counted) or 1
    for g in out.values():
        g["share"] = round(g["samples"] / total, 4)
    return sorted(out.values(), key=lambda g: (-g["samples"], -g["worst_us"], g["function"]))


def _share(g):
    return "     -" if g["share"] is None else f"{g['share'] * 100:5.1f}%"


def table(variant, res, top):
    """The text table of one variant's result."""
    rows = res["samples"]
    mine = [r for r in rows if r["class"] != MEASUREMENT]
    head = (f"{variant}: {len(rows)} thread samples >= {res['threshold_us']} us (timerlat's"
            f" p99.9) of {res['timerlat_samples']} in rtla's window (timerlat thread"
            f" latency max {res['hist_thread_max']} us)")
    head += (f"\n  reference {res['reference_us']} us: {res['reference_over']} samples at or"
             f" above it; stacks from {res['stack_threshold_us']} us")
    if res.get("window_s"):
        head += f"; window {res['window_s'][0]}-{res['window_s'][1]} s (trace clock)"
    if not rows:
        return head + "\n  no sample in the tail, nothing to attribute"
    base = res.get("baseline_us")
    if base and res.get("reference_samples"):
        head += (f"\n  a typical sample (median of {res['reference_samples']} below"
                 f" {res['printed_from_us']} us (the higher of the histogram's p99 and the"
                 " stack threshold)), us: " + ", ".join(f"{k} {v}" for k, v in base.items())
                 + "\n  each tail sample's class: the part that exceeds its typical value"
                 f" most, if by {MIN_EXCESS_NS // 1000} us and half of the sample's excess")
    lines = [head, f"  {'#':>2} {'share':>6} {'n':>4} {'worst us':>8}  {'class':22} section"]
    for i, g in enumerate(aggregate(rows)[:top], 1):
        lines.append(f"  {i:>2} {_share(g)} {g['samples']:>4} {g['worst_us']:>8}"
                     f"  {g['class']:22} {g['key']}")
        ex = g["example"]
        where = ex["frames"][0] if ex and ex["frames"] else None
        if where and g["class"] in ("preemption off", "interrupts off", "exit from idle",
                                    "dispatch"):
            inl = f" (in {where['inlined'][0]})" if where.get("inlined") else ""
            lines.append(f"  {'':>2} {'':>6} {'':>4} {'':>8}  {'':22} at {where['frame']}"
                         f" {where['line'] or '(no file:line without debug info)'}{inl};"
                         f" interrupted {ex['interrupted']}")
    lines.append("  per class:")
    for g in aggregate(rows, by="class"):
        lines.append(f"     {_share(g)} {g['samples']:>4} {g['worst_us']:>8}  {g['class']}")
    inc = inclusive(rows)[:top]
    if inc:
        lines.append(f"  inclusive: functions on the interrupted stacks of the"
                     f" {len(mine)} counted samples")
        for g in inc:
            lines.append(f"     {g['share'] * 100:5.1f}% {g['samples']:>4} {g['worst_us']:>8}"
                         f"  {g['function']}")
    for n in res.get("notes", []):
        lines.append(f"  note: {n}")
    return "\n".join(lines)


def plot(results, path, top=10):
    """attribution.png: per variant, the share of the tail of its top
    sections, coloured by class."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    variants = [v for v in results if results[v]["samples"]]
    if not variants:
        return None
    colours = dict(zip(CLASSES, ("tab:red", "tab:orange", "tab:gray", "tab:blue",
                                 "tab:purple", "tab:green", "tab:olive", "tab:brown")))
    fig, axes = plt.subplots(len(variants), 1, figsize=(12, 1.2 + 0.42 * top * len(variants)),
                             squeeze=False)
    for ax, v in zip(axes[:, 0], variants):
        groups = [g for g in aggregate(results[v]["samples"])
                  if g["share"] is not None][:top][::-1]
        labels = [(g["key"] if len(g["key"]) <= 56 else g["key"][:53] + "...") for g in groups]
        ax.barh(range(len(groups)), [g["share"] * 100 for g in groups],
                color=[colours[g["class"]] for g in groups])
        ax.set_yticks(range(len(groups)), labels, fontsize=7)
        ax.set_xlabel("share of the tail (% of samples)")
        counted = sum(1 for r in results[v]["samples"] if r["class"] != MEASUREMENT)
        ax.set_title(f"{v}: {counted} samples >= {results[v]['threshold_us']} us"
                     " (timerlat's p99.9; measurement samples left out)", fontsize=9)
        for i, g in enumerate(groups):
            ax.text(g["share"] * 100, i, f" {g['samples']} (worst {g['worst_us']} us)",
                    va="center", fontsize=7)
        ax.set_xlim(0, 115)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[c]) for c in CLASSES]
    fig.legend(handles, CLASSES, loc="lower center", ncol=3, fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --- thresholds and boots --------------------------------------------------------------

def from_base(results_dir, base):
    """Refuse thresholds from a scripts/validate run whose kernels started
    from another base than BASE (its meta.json's base_config; a run that
    records none, or that built from --kernel-config, is taken as it is)."""
    try:
        with open(os.path.join(results_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return
    have = meta.get("base_config") if isinstance(meta, dict) else None
    if have and not meta.get("kernel_config") and have != base:
        raise PvrtError(f"--from {results_dir}: its kernels were built from {have}, these"
                        f" from {base} (--base {have} measures the same kernels)")


def threshold_from(results_dir, variant, load, cpus):
    """The p99.9 (us) of VARIANT's valid cyclictest runs under LOAD on CPUS
    CPUs in a saved scripts/validate results directory."""
    path = os.path.join(results_dir, "results.json")
    if not os.path.isfile(path):
        raise PvrtError(f"{results_dir}: no results.json (not a scripts/validate results"
                        " directory)")
    try:
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)
    except ValueError as e:
        raise PvrtError(f"{path}: not JSON ({e})") from None
    if not isinstance(rows, list):
        raise PvrtError(f"{path}: not a list of runs")
    rig = f"smp{cpus}"
    rows = [r for r in rows if isinstance(r, dict)]
    # The runs scripts/validate counts: no problem, samples, and a load
    # that did its work (report.judge_load()).
    mine = [r for r in report.latency_rows(report.judge_load(rows), load, rig)
            if r.get("variant") == variant]
    if not mine:
        raise PvrtError(f"{path}: no valid cyclictest run of {variant} under {load} on"
                        f" {rig}")
    for r in mine:
        if not isinstance(r.get("hist"), dict):
            raise PvrtError(f"{path}: a run of {variant} has no histogram (\"hist\")")
        try:
            r["hist"] = {int(k): v for k, v in r["hist"].items()}
        except (TypeError, ValueError):
            raise PvrtError(f"{path}: a run of {variant} has a histogram that is not"
                            " {us: count}") from None
    p999 = report.pool(mine)[variant]["p999"]
    if not p999:
        raise PvrtError(f"{path}: {variant}'s p99.9 is {p999} us: no threshold")
    return p999


def measure(top, variant, out, secs, load, threshold, cpus, results_dir, buffer_kb=None,
            period=1000):
    """Boot VARIANT's kernel (OUT) with guest/latency-attribute; the console log."""
    var = build.Variant(variant, top)
    log_path = os.path.join(results_dir, f"{variant}-{load}-smp{cpus}.log")
    cmd = f"latency-attribute {secs} {load} {threshold} '{buffer_kb or ''}' {period}"
    log(f"{variant}: booting (-smp {cpus} -icount), {secs} s of {load}, stacks at >="
        f" {threshold} us")
    res = boot.boot(build.kernel_image(out), cmd, log_path,
                    modroot=os.path.join(out, "modroot"), icount=True, icount_cpus=cpus,
                    append=" ".join(var.cmdline), timeout=cpus * secs * 30 + 900)
    return res


# The debug-information twin's fragment: gcc -g changes no generated code,
# so the twin's text is the measured kernel's, which same_text() checks.
DEBUG_INFO_FRAGMENT = ("# scripts/attribute-latency: file:line for the measured kernel's stacks\n"
                       "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n")


def debug_info_twin(top, bdir, tree, name, base_target=None):
    """Build VARIANT's twin with debug information (build/out/<name>-dbginfo,
    -<BASE_TARGET> after it when built from one); its output directory."""
    frag = os.path.join(bdir, "out", "attrib-debug-info.config")
    os.makedirs(os.path.dirname(frag), exist_ok=True)
    with open(frag, "w", encoding="utf-8") as f:
        f.write(DEBUG_INFO_FRAGMENT)
    var = build.twin(top, name, "dbginfo", add=[frag], base_target=base_target)
    out = os.path.join(bdir, "out", var.name + (f"-{base_target}" if base_target else ""))
    return build.build_variant(top, tree, var, out, log=log)


def text_symbols(system_map):
    """The code symbols of a System.map: [(address, name)]."""
    with open(system_map, encoding="utf-8") as f:
        return [(p[0], p[2]) for p in (ln.split() for ln in f)
                if len(p) == 3 and p[1] in "tTwW"]


def same_text(out_a, out_b):
    """None if the kernels of build directories OUT_A and OUT_B have every
    code symbol at the same address, else the first difference."""
    a = text_symbols(os.path.join(out_a, "System.map"))
    b = text_symbols(os.path.join(out_b, "System.map"))
    for x, y in zip(a, b):
        if x != y:
            return f"{x[1]} at {x[0]} in {out_a}, {y[1]} at {y[0]} in {out_b}"
    if len(a) != len(b):
        return f"{len(a)} code symbols in {out_a}, {len(b)} in {out_b}"
    da, db = (text_digest(os.path.join(o, "vmlinux")) for o in (out_a, out_b))
    if da != db:
        return f"the .text sections differ (sha256 {da[:12]} in {out_a}, {db[:12]} in {out_b})"
    return None


def text_digest(vmlinux):
    """The sha256 of VMLINUX's .text section's bytes."""
    with tempfile.TemporaryDirectory(prefix="pvrt-text-") as tmp:
        out = os.path.join(tmp, "text.bin")
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", vmlinux, out],
                       check=True, capture_output=True)
        h = hashlib.sha256()
        with open(out, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()


def traced_threshold(text):
    """The threshold (us) a recorded guest/latency-attribute boot traced at."""
    sec = console.sections(text).get("attrib-hist")
    m = sec and next((re.search(r"threshold (\d+) us", ln) for ln in sec[1]
                      if ln.startswith("# buffer")), None)
    if not m:
        raise PvrtError("no attrib-hist section with its '# buffer ... threshold' line"
                        " (not a guest/latency-attribute boot, or it did not finish)")
    return int(m.group(1))


def result_of(variant, text, reference, vmlinux, tree, boot_problems=(), load=None):
    symbols = Symbols(vmlinux, tree) if vmlinux else None
    res = analyse(text, reference, symbols, load=load)
    res["problems"] = list(boot_problems) + res["problems"]
    res["variant"] = variant
    return res


_LOG_NAME = re.compile(r"^(?P<variant>.+)-(?P<load>" + "|".join(map(re.escape, LOADS))
                       + r")-smp(?P<cpus>\d+)\.log$")


def log_name(path):
    """(variant, load) of a log scripts/attribute-latency wrote
    (VARIANT-LOAD-smpN.log), else (the file's stem, None)."""
    m = _LOG_NAME.match(os.path.basename(path))
    if m:
        return m.group("variant"), m.group("load")
    return os.path.splitext(os.path.basename(path))[0], None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/attribute-latency", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="project,stock-tuned",
                    help="comma-separated variants (default project,stock-tuned)")
    ap.add_argument("--load", default="stress-set", choices=LOADS)
    ap.add_argument("--seconds", type=int, default=60, help="seconds of load (default 60)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--from", dest="from_dir", metavar="RESULTS_DIR",
                     help="stack threshold and reference: each variant's cyclictest p99.9"
                          " in this saved scripts/validate results directory")
    src.add_argument("--threshold", type=int, metavar="US",
                     help="stack threshold and reference in us (with --input: the"
                          " reference only)")
    ap.add_argument("--cpus", type=int, default=1, choices=(1, 2), help="-smp 1 or 2")
    ap.add_argument("--base", choices=["allnoconfig", "defconfig"], default="allnoconfig",
                    help="what the variants start from, as scripts/validate --base:"
                         " allnoconfig (default) or x86_64_defconfig (with --from: the"
                         " base its run measured)")
    ap.add_argument("--top", type=int, default=10, help="rows per variant (default 10)")
    ap.add_argument("--depth", type=int, default=2,
                    help="caller frames that name a section with its site (default 2)")
    ap.add_argument("--buffer-kb", type=int,
                    help="trace buffer per CPU (default: the whole run fits, see"
                         " guest/latency-attribute)")
    ap.add_argument("--period", type=int, default=1000, help="timerlat period in us")
    ap.add_argument("--debug-info", action="store_true",
                    help="file:line from a twin built with debug information (checked to"
                         " have the measured kernel's code layout)")
    ap.add_argument("--kernel-dir", metavar="DIR",
                    help="boot the kernel already built in DIR (a scripts/build output"
                         " directory: arch/x86/boot/bzImage, vmlinux, modroot) as the one"
                         " variant of --variants; nothing is built")
    ap.add_argument("--input", metavar="LOG",
                    help="analyse a recorded boot's console log again")
    ap.add_argument("--vmlinux", help="with --input: the traced kernel's vmlinux")
    args = ap.parse_args(argv)
    if args.seconds < 1 or args.top < 1 or args.depth < 0 or args.period < 100:
        ap.error("--seconds and --top must be at least 1, --depth 0 or more,"
                 " --period 100 us or more")
    if args.threshold is not None and args.threshold < 1:
        ap.error("--threshold must be at least 1 us")
    if args.buffer_kb is not None and args.buffer_kb < 64:
        ap.error("--buffer-kb must be at least 64")
    if args.from_dir is None and args.threshold is None and not args.input:
        ap.error("give --from RESULTS_DIR or --threshold US")
    names = [n for n in args.variants.split(",") if n]
    if args.kernel_dir:
        if len(names) != 1:
            ap.error("--kernel-dir boots one kernel: give one variant (--variants NAME)")
        if args.debug_info:
            ap.error("--debug-info builds a twin of a variant's build: not with --kernel-dir")
        if args.base != "allnoconfig":
            ap.error("--kernel-dir boots the kernel in DIR as it is: not with --base")
        if not os.path.isfile(build.kernel_image(args.kernel_dir)):
            raise PvrtError(f"--kernel-dir {args.kernel_dir}: no arch/x86/boot/bzImage there")
    if args.input:
        if not os.path.isfile(args.input):
            raise PvrtError(f"{args.input} not found")
        with open(args.input, encoding="utf-8", errors="replace") as f:
            text = f.read()
        traced = traced_threshold(text)
        name, load = log_name(args.input)
        # The checks of a boot scripts/attribute-latency ran itself: the
        # guest started, finished with 0, and the kernel reported no bug.
        checks = boot.BootResult(args.input, text, False, 0).problems()
        results = {name: result_of(name, text, args.threshold or traced, args.vmlinux, None,
                                   checks, load=load)}
        # Next to the log, apart from the run's own attribution.json.
        stem = os.path.splitext(os.path.abspath(args.input))[0] + ".attribution"
        return report_results(results, stem + ".json", stem + ".png", args.top)
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    with lock.held(os.path.join(bdir, "run"), "build directory"):
        results, results_dir = run(args, top, bdir, names)
    return report_results(results, os.path.join(results_dir, "attribution.json"),
                          os.path.join(results_dir, "attribution.png"), args.top)


def run(args, top, bdir, names):
    """Build, boot and analyse each of NAMES: ({variant: result}, results dir)."""
    for n in names:
        build.Variant(n, top)           # refuses an unknown variant before any build
    base_target = "x86_64_defconfig" if args.base == "defconfig" else None
    if args.from_dir:
        from_base(args.from_dir, args.base)
    thresholds = {n: args.threshold or threshold_from(args.from_dir, n, args.load, args.cpus)
                  for n in names}
    tools.require()
    if args.kernel_dir:
        tree = os.path.join(bdir, "linux")
        if not os.path.isdir(os.path.join(tree, "tools", "tracing", "rtla")):
            raise PvrtError(f"--kernel-dir: no kernel tree at {tree} to build rtla from"
                            " (scripts/apply makes it)")
        outs = {names[0]: os.path.abspath(args.kernel_dir)}
    else:
        tree, outs = experiment.apply_and_build(top, bdir, names, log,
                                                base_target=base_target)
    experiment.build_rtla(tree, bdir)
    initramfs.ensure(top, bdir)
    results_dir = experiment.new_results_dir(bdir, "attrib-")
    symbol_outs = dict(outs)
    notes = {}
    if args.debug_info:
        for n in names:
            twin = debug_info_twin(top, bdir, tree, build.Variant(n, top).build_name,
                                   base_target)
            diff = same_text(outs[n], twin)
            if diff:
                notes[n] = f"the debug-info twin's code differs ({diff}): no file:line"
            else:
                symbol_outs[n] = twin
    results = {}
    for n in names:
        res = measure(top, n, outs[n], args.seconds, args.load, thresholds[n], args.cpus,
                      results_dir, args.buffer_kb, args.period)
        try:
            results[n] = result_of(n, res.text, thresholds[n],
                                   os.path.join(symbol_outs[n], "vmlinux"), tree,
                                   res.problems(), load=args.load)
            if n in notes:
                results[n]["note"] = notes[n]
        except PvrtError as e:
            results[n] = {"variant": n, "reference_us": thresholds[n], "samples": [],
                          "problems": res.problems() + [str(e)]}
        results[n].update(log=res.log_path, load=args.load, seconds=args.seconds,
                          cpus=args.cpus)
        save(results, os.path.join(results_dir, "attribution.json"))
    return results, results_dir


def report_results(results, json_path, png_path, top):
    """Print each variant's table, write JSON_PATH and the plot PNG_PATH; 0
    when every variant is a result."""
    ok = True
    for n, res in results.items():
        if res["problems"]:
            ok = False
            print(f"{n}: not a result: {'; '.join(res['problems'])}")
            continue
        print(table(n, res, top))
        if res["samples"] and not res.get("debug_info"):
            print(f"  ({n}'s vmlinux has no debug information: frames are function+offset;"
                  " scripts/faddr2line on a CONFIG_DEBUG_INFO build gives file:line)")
    for n, res in results.items():
        res["sections"] = aggregate(res["samples"]) if not res["problems"] else []
        res["classes"] = aggregate(res["samples"], by="class") if not res["problems"] else []
    save(results, json_path)
    png = plot({n: r for n, r in results.items() if not r["problems"]}, png_path, top)
    print(f"results: {json_path}" + (f", plot {png}" if png else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    entry(main)
