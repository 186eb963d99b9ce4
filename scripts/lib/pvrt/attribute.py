# SPDX-License-Identifier: GPL-2.0
"""scripts/attribute-latency: what delayed every sample of the latency tail.

For each variant, builds (or reuses) its kernel as scripts/validate does,
boots it in instruction-counted virtual time (-icount shift=2,sleep=off,
-smp 1 or 2) and runs guest/latency-attribute: the kernel's timerlat tracer
through rtla (tools/tracing/rtla of the tree, packed into the initramfs)
under the load,

  rtla timerlat hist -k -P f:99 -s THRESHOLD -t -e osnoise --trace-buffer-size KB

so that every sample whose thread latency is THRESHOLD us or more comes with
the stack the timer interrupt found (osnoise/print_stack) and the osnoise
events of its window: the interrupts, softirqs and threads that ran between
the timer's interrupt and the measuring thread.  THRESHOLD is --threshold,
or the p99.9 of the variant's cyclictest runs in a saved scripts/validate
results directory (--from).

Each sample is split as rtla's own auto-analysis (timerlat_aa.c) splits a
thread latency: the delay before the timer's interrupt handler started, the
timer interrupt's own duration, the time the interrupted thread kept the CPU
(its thread_noise: the rest of a preemption-off section), the other
interrupts, softirqs, NMIs and threads, and the rest (the wake-up and
context switch).  The largest part names the cause:

  interrupts off          the interrupt came late: the stack's first frame
                          below the interrupt entry is where it landed, just
                          after interrupts came back on
  exit from idle          the same, in the idle task
  preemption off          the interrupt came on time, the interrupted thread
                          kept the CPU: the stack's first frame below the
                          entry is inside its section
  interrupt/softirq work  interrupt handlers, softirqs or NMIs (named)
  blocking thread         another thread ran first (named)
  dispatch                none of these: the wake-up and switch themselves

The stack is symbolized on the host against the kernel's vmlinux
(function+offset from the trace; file:line by addr2line when the vmlinux
has debug information).  The lock a section holds is not in a stack: the
table gives the site and its callers, for scripts/lock-advisor --static.

Samples are grouped per section (the site and its first callers) and per
class: samples caused, worst thread latency, share of the tail.  A run that
lost trace events, or whose trace holds fewer tail samples than rtla's
histogram counted, is not a result.  JSON, logs and attribution.png go to
build/results/attrib-<time>/.

  scripts/attribute-latency --from build/report/<time>    project and stock-tuned, 60 s
  scripts/attribute-latency --variants project --seconds 20 --threshold 60 --cpus 1
  scripts/attribute-latency --input build/results/attrib-<time>/project-stress-set-smp1.log \\
      --vmlinux build/out/project/vmlinux                  analyse a recorded boot again
"""

import argparse
import json
import os
import re
import subprocess

from pvrt import boot, build, console, experiment, initramfs, lock, logs, report, tools
from pvrt.errors import PvrtError, entry
from pvrt.results import save

log = logs.logger("attribute-latency")

# The loads guest/latency-attribute runs (those of cyclictest-load).
LOADS = ("stress-set", "hackbench", "stress", "compile-find", "none")

CLASSES = ("preemption off", "interrupts off", "exit from idle", "interrupt/softirq work",
           "blocking thread", "dispatch")

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
_TOTALS = re.compile(r"^# samples (\d+) irq (\d+) at-or-above (\d+) us: (\d+) lost-lines (\d+)")
_FUNC = re.compile(r"^(?P<func>[^+\s]+)(?:\+0x(?P<off>[0-9a-f]+)/0x(?P<size>[0-9a-f]+))?")

# The timer interrupt's own path at the top of every saved stack, down to
# the entry: timerlat_irq() < __hrtimer_run_queues() < hrtimer_interrupt() <
# __sysvec_apic_timer_interrupt() < sysvec_apic_timer_interrupt() <
# asm_sysvec_apic_timer_interrupt().  The frames below the first asm_ entry
# are the interrupted code.
_TRACER_PATH = ("timerlat_irq", "__hrtimer_run_queues", "hrtimer_interrupt",
                "__sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
                "stack_trace_save", "timerlat_save_stack")


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

    Returns {"samples": [...], "reference": [...], "lost": N, "totals":
    {...}}: the samples at or above the guest's threshold and the reference
    ones below it, each with its CPU, sequence number, IRQ and thread
    latency (ns), the task the timer interrupted, the osnoise events of its
    CPU before the timer's interrupt ("before") and between the interrupt
    and the thread ("after"), and the stack (None for a reference sample).
    PvrtError if the section is not such a trace."""
    samples, lost, totals = [], 0, None
    last_seq, ended = {}, {}
    pending = {}                 # cpu -> {"before": [], "irq": ..., "after": []}
    stack_of = None              # the sample whose stack lines follow
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        m = _TOTALS.match(line)
        if m:
            totals = dict(zip(("samples", "irq_samples", "threshold_us", "over", "lost_lines"),
                              (int(g) for g in m.groups())))
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
            raise PvrtError(f"attrib-trace line {n}: not a trace line: {line[:80]!r}")
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
            if s.group("ctx") == "irq":
                cur["irq"] = {"seq": int(s.group("seq")), "ns": int(s.group("ns")),
                              "ts": _ns(m.group("ts")), "comm": m.group("comm").strip(),
                              "pid": int(m.group("pid"))}
                continue
            irq = cur["irq"] if cur["irq"] and cur["irq"]["seq"] == int(s.group("seq")) else None
            seq = int(s.group("seq"))
            # A sequence number that goes back is a restarted timerlat thread:
            # rtla restoring the osnoise options at its exit (print_stack back
            # to 0) while the guest still reads the instance.  The run is over.
            if cpu in ended or seq < last_seq.get(cpu, 0):
                ended[cpu] = ended.get(cpu, 0) + 1
                pending[cpu] = {"before": [], "irq": None, "after": []}
                continue
            last_seq[cpu] = seq
            samples.append({"cpu": cpu, "seq": seq,
                            "thread_ns": int(s.group("ns")), "ts": _ns(m.group("ts")),
                            "irq_ns": irq["ns"] if irq else None,
                            "irq_ts": irq["ts"] if irq else None,
                            "interrupted": f"{irq['comm']}:{irq['pid']}" if irq else None,
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
    # The windows below the threshold are the reference of a typical sample.
    tail = [s for s in samples if s["thread_ns"] >= totals["threshold_us"] * 1000]
    ref = [s for s in samples if s["thread_ns"] < totals["threshold_us"] * 1000]
    return {"samples": tail, "reference": ref, "lost": lost, "totals": totals,
            "after_run": sum(ended.values())}


def interrupted_frames(stack):
    """The frames of STACK below the timer interrupt's entry: the code the
    interrupt found running."""
    if not stack:
        return []
    for i, f in enumerate(stack):
        if func_of(f).startswith("asm_"):
            return stack[i + 1:]
    # No entry frame: leave out the tracer's and the hrtimer path's own.
    return [f for f in stack if func_of(f) not in _TRACER_PATH]


def components(s):
    """Sample S's thread latency split as rtla's auto-analysis splits it
    (ns), with the names of what ran: {part: ns}, {part: [(name, ns)]}."""
    thread = s["thread_ns"]
    after = list(s["after"])
    timer = next((e for e in after if e["kind"] == "irq"), None)
    if timer is not None:
        after.remove(timer)
    parts = {"irq_delay": 0, "timer_irq": 0, "blocking": 0, "irq_work": 0, "threads": 0}
    who = {"irq_work": [], "threads": [], "blocking": []}
    if s["irq_ns"] is not None:
        expected = s["irq_ts"] - s["irq_ns"]
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
    blocked = False
    for e in after:
        if e["kind"] == "thread":
            if not blocked and s["interrupted_pid"] is not None and \
                    e["num"] == s["interrupted_pid"]:
                blocked = True
                parts["blocking"] += e["dur"]
                who["blocking"].append((f"{e['name']}:{e['num']}", e["dur"]))
            else:
                parts["threads"] += e["dur"]
                who["threads"].append((f"{e['name']}:{e['num']}", e["dur"]))
        else:
            parts["irq_work"] += e["dur"]
            who["irq_work"].append((_event_name(e), e["dur"]))
    parts["dispatch"] = max(0, thread - sum(parts.values()))
    return parts, who


def _event_name(e):
    if e["kind"] == "softirq":
        return f"softirq {e['name']}"
    if e["kind"] == "nmi":
        return "nmi"
    return f"irq {e['name']}:{e['num']}"


def _biggest(named):
    """The name that took the most time in [(name, ns)]."""
    tot = {}
    for name, ns in named:
        tot[name] = tot.get(name, 0) + ns
    return max(tot.items(), key=lambda kv: kv[1])[0] if tot else None


PARTS = ("irq_delay", "timer_irq", "blocking", "irq_work", "threads", "dispatch")
# The class each part of a thread latency names when it is the one that
# made the sample late.
PART_CLASS = {"irq_delay": "interrupts off", "timer_irq": "interrupt/softirq work",
              "blocking": "preemption off", "irq_work": "interrupt/softirq work",
              "threads": "blocking thread", "dispatch": "dispatch"}


def baseline(reference):
    """{part: median ns} over the REFERENCE samples (typical ones): what
    every sample pays, the timer interrupt's own cost (with the tracer's
    stack save) first among it.  Zeros without reference samples."""
    if not reference:
        return {p: 0 for p in PARTS}
    cols = {p: sorted(components(s)[0][p] for s in reference) for p in PARTS}
    return {p: v[len(v) // 2] for p, v in cols.items()}


def classify(s, base=None, depth=2):
    """Sample S's cause: (class, section key, details).  The part of
    components() that exceeds its typical value (BASE, baseline()) the most
    made the sample late and names the class; the key is what the table
    groups by."""
    parts, who = components(s)
    base = base or {p: 0 for p in PARTS}
    frames = interrupted_frames(s["stack"])
    site = [func_of(f) for f in frames[:depth + 1]]
    section = " < ".join(site) if site else "(no stack)"
    excess = {p: parts[p] - base[p] for p in PARTS}
    part = max(PARTS, key=lambda p: (excess[p], -PARTS.index(p)))
    cls = PART_CLASS[part]
    if cls == "interrupts off" and s["interrupted_pid"] == 0:
        cls = "exit from idle"
    if cls == "interrupt/softirq work":
        if part == "irq_work":
            key = _biggest(who["irq_work"])
        else:
            key = "the timer interrupt itself (expired hrtimers)"
    elif cls == "blocking thread":
        key = _biggest(who["threads"]).rsplit(":", 1)[0]
    else:
        key = section
    return cls, key, {"parts": parts, "who": who, "frames": frames, "excess": excess}


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
        self.mismatch = []

    def address(self, frame, ret=True):
        """The address of FRAME (a return address: minus one, inside the
        call) or None; a size that differs from the vmlinux's is recorded
        in self.mismatch (the trace is not of this vmlinux)."""
        m = _FUNC.match(frame)
        if not m or not m.group("off"):
            return None
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
        if not self.debug_info:
            return {}
        addrs = {}
        for f, ret in frames:
            a = self.address(f, ret=ret)
            if a is not None:
                addrs.setdefault((f, ret), a)
        if not addrs:
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


def parse_hist(lines, threshold_us):
    """rtla timerlat hist: thread samples counted at or above THRESHOLD_US
    (the "over:" bucket included), the thread maximum and sample count."""
    over, count, tmax, cols, hist, beyond = 0, 0, None, None, {}, 0
    for line in lines:
        p = line.split()
        if not p:
            continue
        if p[0] == "Index":
            cols = [i for i, c in enumerate(p) if c.startswith("Thr-")]
        elif cols and p[0].isdigit() and len(p) > max(cols):
            n = sum(int(p[i]) for i in cols)
            if n:
                hist[int(p[0])] = hist.get(int(p[0]), 0) + n
            if int(p[0]) >= threshold_us:
                over += n
        elif cols and p[0] in ("over:", "count:", "max:") and len(p) > max(cols):
            vals = [int(p[i]) for i in cols if p[i].lstrip("-").isdigit()]
            if p[0] == "over:":
                over += sum(vals)
                beyond = sum(vals)
            elif p[0] == "count:":
                count = sum(vals)
            else:
                tmax = max(vals) if vals else None
    # timerlat's own p99.9 by the tools' one convention (console.percentile).
    p999 = console.percentile(hist, sum(hist.values()) + beyond, 99.9, above=tmax)
    return {"hist_over": over, "hist_samples": count, "hist_thread_max": tmax,
            "hist_thread_p999": p999, "hist_read": cols is not None}


def analyse(text, threshold_us, symbols=None, depth=2):
    """A boot's console TEXT (guest/latency-attribute) to its result: the
    attributed samples and the run's problems (a run with problems is not a
    result)."""
    secs = console.sections(text)
    problems = []
    for name in ("attrib-hist", "attrib-stats", "attrib-trace"):
        if name not in secs:
            raise PvrtError(f"no {name} section in the console log"
                            " (not a guest/latency-attribute boot, or it did not finish)")
        if secs[name][0] is None:
            raise PvrtError(f"section {name} not finished (no PVRT-END {name})")
    if secs["attrib-hist"][0] != 0:
        problems.append(f"rtla timerlat hist exited with rc={secs['attrib-hist'][0]}: "
                        + " ".join(ln.strip() for ln in secs["attrib-hist"][1][-3:]))
    trace = parse_trace(secs["attrib-trace"][1])
    stats = parse_stats(secs["attrib-stats"][1])
    hist = parse_hist(secs["attrib-hist"][1], threshold_us)
    lost = trace["lost"]
    if trace["totals"]["lost_lines"] and not lost:
        lost = trace["totals"]["lost_lines"]
    for cpu, st in sorted(stats.items()):
        for key in ("overrun", "dropped events", "commit overrun"):
            if st.get(key):
                problems.append(f"cpu{cpu}: {st[key]} {key} in the trace buffer")
    if lost:
        problems.append(f"the trace lost {lost} events")
    if not stats:
        problems.append("no ring buffer statistics (attrib-stats empty)")
    if trace["totals"]["threshold_us"] != threshold_us:
        problems.append(f"the guest traced at {trace['totals']['threshold_us']} us,"
                        f" not {threshold_us} us")
    if not hist["hist_read"]:
        problems.append("rtla's histogram not read")
    elif len(trace["samples"]) < hist["hist_over"]:
        problems.append(f"rtla counted {hist['hist_over']} thread samples at or above"
                        f" {threshold_us} us, the trace holds {len(trace['samples'])}")
    base = baseline(trace["reference"])
    rows, shown = [], 12
    classified = [classify(s, base, depth) for s in trace["samples"]]
    wanted = {(f, i > 0) for _c, _k, det in classified for i, f in enumerate(det["frames"][:shown])}
    lines = symbols.lines(sorted(wanted)) if symbols else {}
    for s, (cls, key, det) in zip(trace["samples"], classified):
        rows.append({"cpu": s["cpu"], "seq": s["seq"],
                     "thread_us": round(s["thread_ns"] / 1000, 1),
                     "irq_us": None if s["irq_ns"] is None else round(s["irq_ns"] / 1000, 1),
                     "class": cls, "key": key, "interrupted": s["interrupted"],
                     "parts_us": {k: round(v / 1000, 1) for k, v in det["parts"].items()},
                     "excess_us": {k: round(v / 1000, 1) for k, v in det["excess"].items()},
                     "who": {k: [(n, round(ns / 1000, 1)) for n, ns in v]
                             for k, v in det["who"].items() if v},
                     "frames": [frame_row(f, lines.get((f, i > 0)))
                                for i, f in enumerate(det["frames"][:shown])],
                     "has_stack": s["stack"] is not None})
    no_stack = sum(1 for r in rows if not r["has_stack"])
    if no_stack:
        problems.append(f"{no_stack} samples without a stack")
    if symbols is not None and symbols.mismatch:
        problems.append("the vmlinux is not the traced kernel's: "
                        + "; ".join(sorted(set(symbols.mismatch))[:3]))
    return {"threshold_us": threshold_us, "samples": rows, "problems": problems,
            "reference_samples": len(trace["reference"]),
            "after_run": trace["after_run"],
            "baseline_us": {k: round(v / 1000, 1) for k, v in base.items()},
            "timerlat_samples": trace["totals"]["samples"], "stats": stats, **hist,
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
    latency (sum), an example sample's site and file:line."""
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
    total = len(rows) or 1
    lat = sum(r["thread_us"] for r in rows) or 1.0
    out = []
    for g in groups.values():
        g["share"] = round(g["samples"] / total, 4)
        g["latency_share"] = round(g["sum_us"] / lat, 4)
        g["sum_us"] = round(g["sum_us"], 1)
        out.append(g)
    return sorted(out, key=lambda g: (-g["samples"], -g["worst_us"], g["class"], g["key"]))


def table(variant, res, top):
    """The text table of one variant's result."""
    rows = res["samples"]
    head = (f"{variant}: {len(rows)} thread samples >= {res['threshold_us']} us of"
            f" {res['timerlat_samples']} timerlat samples")
    if res.get("hist_thread_p999") is not None:
        head += (f" (timerlat thread latency: p99.9 {res['hist_thread_p999']} us,"
                 f" max {res['hist_thread_max']} us)")
    if not rows:
        return head + ": no sample above the threshold, nothing to attribute"
    base = res.get("baseline_us")
    if base and res.get("reference_samples"):
        head += (f"\n  a typical sample (median of {res['reference_samples']} below the"
                 f" threshold), us: " + ", ".join(f"{k} {v}" for k, v in base.items())
                 + "\n  each tail sample's class: the part that exceeds its typical value most")
    lines = [head, f"  {'#':>2} {'share':>6} {'n':>4} {'worst us':>8}  {'class':22} section"]
    for i, g in enumerate(aggregate(rows)[:top], 1):
        lines.append(f"  {i:>2} {g['share'] * 100:5.1f}% {g['samples']:>4} {g['worst_us']:>8}"
                     f"  {g['class']:22} {g['key']}")
        ex = g["example"]
        where = ex["frames"][0] if ex and ex["frames"] else None
        if where and g["class"] in ("preemption off", "interrupts off", "exit from idle",
                                    "dispatch"):
            inl = f" (in {where['inlined'][0]})" if where.get("inlined") else ""
            lines.append(f"  {'':>2} {'':>6} {'':>4} {'':>8}  {'':22} at {where['frame']}"
                         f" {where['line'] or '(no file:line without debug info)'}{inl};"
                         f" interrupted {ex['interrupted']}")
    lines.append(f"  per class:")
    for g in aggregate(rows, by="class"):
        lines.append(f"     {g['share'] * 100:5.1f}% {g['samples']:>4} {g['worst_us']:>8}"
                     f"  {g['class']}")
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
                                 "tab:purple", "tab:green")))
    fig, axes = plt.subplots(len(variants), 1, figsize=(12, 1.2 + 0.42 * top * len(variants)),
                             squeeze=False)
    for ax, v in zip(axes[:, 0], variants):
        groups = aggregate(results[v]["samples"])[:top][::-1]
        labels = [(g["key"] if len(g["key"]) <= 56 else g["key"][:53] + "...") for g in groups]
        ax.barh(range(len(groups)), [g["share"] * 100 for g in groups],
                color=[colours[g["class"]] for g in groups])
        ax.set_yticks(range(len(groups)), labels, fontsize=7)
        ax.set_xlabel("share of the tail (% of samples)")
        ax.set_title(f"{v}: {len(results[v]['samples'])} samples >="
                     f" {results[v]['threshold_us']} us", fontsize=9)
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
    rig = f"smp{cpus}"
    mine = [r for r in rows if isinstance(r, dict) and r.get("kind") == "latency"
            and r.get("variant") == variant and r.get("load") == load
            and r.get("rig", "smp1") == rig and not r.get("problems") and r.get("samples")]
    if not mine:
        raise PvrtError(f"{path}: no valid cyclictest run of {variant} under {load} on"
                        f" {rig}")
    for r in mine:
        r["hist"] = {int(k): v for k, v in r["hist"].items()}
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


def debug_info_twin(top, bdir, tree, name):
    """Build VARIANT's twin with debug information (build/out/<name>-dbginfo);
    its output directory."""
    frag = os.path.join(bdir, "out", "attrib-debug-info.config")
    os.makedirs(os.path.dirname(frag), exist_ok=True)
    with open(frag, "w", encoding="utf-8") as f:
        f.write(DEBUG_INFO_FRAGMENT)
    var = build.twin(top, name, "dbginfo", add=[frag])
    out = os.path.join(bdir, "out", var.name)
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
    return None


def traced_threshold(text):
    """The threshold (us) a recorded guest/latency-attribute boot traced at."""
    sec = console.sections(text).get("attrib-hist")
    m = sec and next((re.search(r"threshold (\d+) us", ln) for ln in sec[1]
                      if ln.startswith("# buffer")), None)
    if not m:
        raise PvrtError("no attrib-hist section with its '# buffer ... threshold' line"
                        " (not a guest/latency-attribute boot, or it did not finish)")
    return int(m.group(1))


def result_of(variant, text, threshold, vmlinux, tree, boot_problems=()):
    symbols = Symbols(vmlinux, tree) if vmlinux else None
    res = analyse(text, threshold, symbols)
    res["problems"] = list(boot_problems) + res["problems"]
    res["variant"] = variant
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/attribute-latency", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="project,stock-tuned",
                    help="comma-separated variants (default project,stock-tuned)")
    ap.add_argument("--load", default="stress-set", choices=LOADS)
    ap.add_argument("--seconds", type=int, default=60, help="seconds of load (default 60)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--from", dest="from_dir", metavar="RESULTS_DIR",
                     help="threshold: each variant's cyclictest p99.9 in this saved"
                          " scripts/validate results directory")
    src.add_argument("--threshold", type=int, metavar="US", help="threshold in us")
    ap.add_argument("--cpus", type=int, default=1, choices=(1, 2), help="-smp 1 or 2")
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
    ap.add_argument("--input", metavar="LOG",
                    help="analyse a recorded boot's console log (at its own threshold)")
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
    if args.input:
        if not os.path.isfile(args.input):
            raise PvrtError(f"{args.input} not found")
        with open(args.input, encoding="utf-8", errors="replace") as f:
            text = f.read()
        traced = traced_threshold(text)
        if args.threshold is not None and args.threshold != traced:
            raise PvrtError(f"{args.input} was traced at {traced} us, not {args.threshold} us:"
                            " the guest kept only the stacks at or above its own threshold")
        name = os.path.basename(args.input).split("-")[0]
        results = {name: result_of(name, text, traced, args.vmlinux, None)}
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
    thresholds = {n: args.threshold or threshold_from(args.from_dir, n, args.load, args.cpus)
                  for n in names}
    tools.require()
    tree, outs = experiment.apply_and_build(top, bdir, names, log)
    experiment.build_rtla(tree, bdir)
    initramfs.ensure(top, bdir)
    results_dir = experiment.new_results_dir(bdir, "attrib-")
    symbol_outs = dict(outs)
    notes = {}
    if args.debug_info:
        for n in names:
            twin = debug_info_twin(top, bdir, tree, build.Variant(n, top).build_name)
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
                                   res.problems())
            if n in notes:
                results[n]["note"] = notes[n]
        except PvrtError as e:
            results[n] = {"variant": n, "threshold_us": thresholds[n], "samples": [],
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
