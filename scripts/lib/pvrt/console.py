# SPDX-License-Identifier: GPL-2.0
"""Parse a guest's serial console: markers, splats, KUnit and cyclictest results.

Every stage that boots a kernel reads its console through this module, so a
new kind of splat or result is taught here once.

Markers printed by the guest's /init and the guest scripts (guest/):

  PVRT-BOOTED <uname -r>           userspace started
  PVRT-BEGIN <name>                a section of output starts
  PVRT-END <name> rc=<n>           ... and ends with the command's exit status
  PVRT-EXIT rc=<n>                 the command finished; the guest powers off
"""

import re
import sys

# Messages that mean the kernel detected a bug of its own.  Each is a regex on a
# console line with the printk time stamp removed.
SPLAT_PATTERNS = [
    r"WARNING: .* at ",                              # WARN_ON() and friends
    r"WARNING: CPU: \d+ PID: \d+",
    r"BUG: ",                                        # BUG(), sleeping in atomic, KASAN, ...
    r"kernel BUG at ",
    r"Oops: ",
    r"Kernel panic - not syncing",
    r"^WARNING: ",                  # lockdep's reports (bad unlock balance, ...)
    r"WARNING: possible circular locking dependency",  # lockdep
    r"WARNING: possible recursive locking",
    r"WARNING: inconsistent lock state",
    r"WARNING: suspicious RCU usage",
    r"INFO: possible irq lock inversion",
    r"INFO: task .* blocked for more than",           # hung task
    r"UBSAN: ",
    r"ODEBUG: ",                                     # debug objects (their WARN follows)
    r"==================================================================",  # KASAN banner
    # RCU stalls, as rcutorture's console-badness.sh reads them.
    r"detected stalls on CPUs/tasks",
    r"detected expedited stalls",
    r"self-detected stall on CPU",
    r"rcu_\S* kthread starved for",
    r"Stall ended before state dump start",
    r"watchdog: BUG: soft lockup",
    r"hard LOCKUP",                                  # NMI watchdog
    r"\bBadness\b",                                  # powerpc's WARN_ON()
    # locktorture's and rcutorture's statistics flag an error with "!!!"
    # (a failed lock, a writer stall), as console-badness.sh reads them.
    r"!!!",
    r"Call Trace:",
    # Not a bug, but the RT throttling of SCHED_FIFO tasks falsifies every
    # real-time measurement of the boot: no figure of it counts.
    r"sched: RT throttling activated",
]
_SPLAT = re.compile("|".join(f"(?:{p})" for p in SPLAT_PATTERNS))

# A test that provokes a warning on purpose brackets it with these lines:
# one report between them is expected, a second one is not, and a bracket
# without one is an error.  A bracket ends at its end line, or at the next
# KTAP result line (its case ended without printing it).
EXPECT_BEGIN = re.compile(r"expect a warning: (.*)$")
EXPECT_END = re.compile(r"end of expected warning$")
_KTAP_RESULT = re.compile(r"^\s*(not )?ok \d+ ")
# WARN_ON()'s report, one report whatever it holds.
_CUT_BEGIN = re.compile(r"^-+\[ cut here \]-+$")
_CUT_END = re.compile(r"^---\[ end trace [0-9a-f]+ \]---$")
# Splat lines that are part of a report rather than its headline.
_REPORT_BODY = re.compile(r"^(Call Trace:|=+)$")
_STAMP = re.compile(r"^\s*\[\s*\d+\.\d+\]\s?")


def strip_stamp(line):
    return _STAMP.sub("", line.rstrip("\r\n"))


# A kernel message the serial console printed into the middle of a guest
# line (printk writes to the UART while a user-space line waits for its
# newline): "PVRT-BEGIN cyclictest[   69.043283] cyclictest (81) used ...".
_ANY_STAMP = re.compile(r"\[\s*\d+\.\d{6}\] ")


def _cuts(line):
    """Where kernel messages start inside LINE: every time stamp with text
    before it."""
    return [m.start() for m in _ANY_STAMP.finditer(line) if line[:m.start()].strip()]


def _messages(text):
    """TEXT, which starts with a kernel time stamp, cut into its messages."""
    bounds = [0] + _cuts(text) + [len(text)]
    return [strip_stamp(text[a:b]) for a, b in zip(bounds, bounds[1:])]


def lines(text):
    """The console's lines, time stamps stripped.  A kernel message glued to
    a guest line becomes a line of its own, and the guest line is joined
    again with its rest, the first line after the message (and any kernel
    lines right after it) that has no time stamp: "# Max Latencies:
    0[   12.3] msg" then "0310" is "msg" then "# Max Latencies: 00310".
    Kernel messages glued to a kernel line are cut apart and join nothing."""
    out, pending = [], None
    for ln in text.splitlines():
        ln = ln.rstrip("\r\n")
        if pending is not None:
            if _STAMP.match(ln):
                out.extend(_messages(ln.lstrip()))
                continue
            ln, pending = pending + ln, None
        cuts = _cuts(ln)
        if not cuts:
            out.append(strip_stamp(ln))
            continue
        head, rest = ln[:cuts[0]], ln[cuts[0]:]
        if _STAMP.match(head):
            out.append(strip_stamp(head))
        else:
            pending = head
        out.extend(_messages(rest))
    if pending is not None:
        out.append(strip_stamp(pending))
    return out


_KTAP = re.compile(r"^(K?TAP version \d+|1\.\.\d+|(not )?ok \d+.*|#.*)$")


def ktap_only(text):
    """The KUnit (KTAP) part of a console log, for kunit.py parse.

    KUnit's nested output is indented; its top-level lines are KTAP syntax.
    Any other unindented line is a kernel message printed in between (a
    driver binding asynchronously, the clocksource switching) and is dropped:
    kunit.py misparses a test when one lands between its "KTAP version" and
    "# Subtest" lines.  Timestamps are stripped.
    """
    out = []
    for line in lines(text):
        if line[:1] in (" ", "\t") or _KTAP.match(line):
            out.append(line)
    return "\n".join(out) + "\n"


def _brackets(text):
    """Walk the console's splat lines against the tests' brackets.

    Returns (expected, missing): the line numbers of the splat lines that
    belong to the one report a bracket expects, and [(line number, what)]
    of the brackets that got none or never ended.  A report's headline is
    any splat line but a "Call Trace:" or a banner; each headline starts a
    report, except within a WARN_ON() report (cut here ... end trace) and
    for a word-for-word repeat of the expected report's headline (locktorture
    prints its statistics line twice: the stats thread, then its cleanup).  A
    trace before any headline is no report's: it is not expected."""
    expected, missing = set(), []
    begin, reports, in_cut, cut_counted = None, 0, False, False
    headlines = set()
    for i, line in enumerate(lines(text), 1):
        m = EXPECT_BEGIN.search(line)
        ended = EXPECT_END.search(line) or _KTAP_RESULT.match(line)
        if begin and (m or ended):
            if not EXPECT_END.search(line):
                missing.append((begin[0], f"{begin[1]} (no 'end of expected warning'"
                                f" before line {i})"))
            elif reports == 0:
                missing.append(begin)
            begin = None
        if m:
            begin, reports, headlines = (i, m.group(1)), 0, set()
            continue
        if _CUT_BEGIN.match(line):
            in_cut, cut_counted = True, False
            continue
        if _CUT_END.match(line):
            in_cut = False
            continue
        if not _SPLAT.search(line) or begin is None:
            continue
        if not _REPORT_BODY.match(line):
            if reports == 1 and line in headlines:
                expected.add(i)
                continue
            if not (in_cut and cut_counted):
                reports += 1
                cut_counted = in_cut
            if reports == 1:
                expected.add(i)
                headlines.add(line)
        # a banner may open the report; a trace belongs to one
        elif reports == 1 or (reports == 0 and not line.startswith("Call Trace:")):
            expected.add(i)
    if begin:
        missing.append((begin[0], f"{begin[1]} (no 'end of expected warning')"))
    return expected, missing


def splats(text, allow=()):
    """Lines that report a kernel bug, [(line number, text)].

    A line of the one report a test's bracket expects is not reported
    (more than one report in a bracket is), and neither are the bracket's
    own lines (their text may name what they expect: "(!!!)").  A line matching one of the
    ALLOW regexes is not reported, and neither is the "Call Trace:" of the
    report it starts (within the next 40 lines).
    """
    allow_re = [re.compile(a) for a in allow]
    expected, _missing = _brackets(text)
    found, allowed_until = [], 0
    for i, line in enumerate(lines(text), 1):
        if (not _SPLAT.search(line) or i in expected
                or EXPECT_BEGIN.search(line) or EXPECT_END.search(line)):
            continue
        if any(a.search(line) for a in allow_re):
            allowed_until = i + 40
        elif not (line.startswith("Call Trace:") and i <= allowed_until):
            found.append((i, line))
    return found


def missing_expected(text):
    """Expected warnings that did not come, or whose bracket never ended:
    [(line number, what was expected)]."""
    return _brackets(text)[1]


def sections(text):
    """{name: (rc or None, [lines])} between PVRT-BEGIN/PVRT-END markers."""
    out, cur, buf = {}, None, []
    for line in lines(text):
        m = re.match(r"^PVRT-BEGIN (\S+)$", line)
        if m:
            cur, buf = m.group(1), []
            continue
        m = re.match(r"^PVRT-END (\S+) rc=(-?\d+)$", line)
        if m and m.group(1) == cur:
            out[cur] = (int(m.group(2)), buf)
            cur = None
            continue
        if cur is not None:
            buf.append(line)
    if cur is not None:
        out[cur] = (None, buf)
    return out


def exit_status(text):
    """The guest command's exit status from PVRT-EXIT, or None if it never got there."""
    m = None
    for m in re.finditer(r"^PVRT-EXIT rc=(-?\d+)\s*$", "\n".join(lines(text)), re.M):
        pass
    return int(m.group(1)) if m else None


def provenance(text):
    """What booted, as guest/init printed it: {"uname_v": `uname -v` (its
    PREEMPT / PREEMPT_RT flags and build number), "cmdline": /proc/cmdline};
    a key the console lacks is missing."""
    out = {}
    for line in lines(text):
        if line.startswith("PVRT-KERNEL ") and "uname_v" not in out:
            out["uname_v"] = line[len("PVRT-KERNEL "):].strip()
        elif line.startswith("PVRT-CMDLINE ") and "cmdline" not in out:
            out["cmdline"] = line[len("PVRT-CMDLINE "):].strip()
    return out


def booted(text):
    return any(line.startswith("PVRT-BOOTED ") for line in lines(text))


def percentile(hist, samples, pct, above=None):
    """The one percentile convention of the tools: nearest rank on 1 us buckets.

    Returns the smallest bucket L (its lower edge, in us) with at least PCT %
    of the SAMPLES at or below L.  Samples missing from HIST (a histogram's
    overflows) lie above every bucket: a percentile among them is ABOVE (the
    maximum).  None without samples.
    """
    if not samples:
        return None
    need, seen = samples * pct / 100.0, 0
    for lat in sorted(hist):
        seen += hist[lat]
        if seen >= need:
            return lat
    return above


class Latency:
    """A cyclictest latency distribution, in microseconds."""

    FIELDS = ("samples", "min", "avg", "max", "p99", "p999", "p9999", "p99999")

    def __init__(self, hist, overflows, cmin, cavg, cmax):
        self.hist = hist                  # {latency us: count}, one thread summed
        self.overflows = overflows
        self.samples = sum(hist.values()) + overflows
        self.min, self.max = cmin, cmax
        if overflows or not hist:
            self.avg = float(cavg)
        else:
            self.avg = sum(k * v for k, v in hist.items()) / sum(hist.values())
        self.p99 = self.percentile(99.0)
        self.p999 = self.percentile(99.9)
        # The "five nines" of Williams (2002): needs 10^5 samples to mean more
        # than the maximum; 60 s at -i 200 gives 3 * 10^5.
        self.p9999 = self.percentile(99.99)
        self.p99999 = self.percentile(99.999)

    def percentile(self, pct):
        """pct-th percentile by percentile(); overflows count as the maximum."""
        return percentile(self.hist, self.samples, pct, above=self.max)

    def row(self):
        return {f: getattr(self, f) for f in self.FIELDS}


def _cyclictest_lines(section_lines):
    """The histogram and summary lines of a cyclictest -q -h section:
    ({thread: {us: count}}, {"Min"/"Avg"/"Max"/"Overflows"/"Total": [per
    thread]}, [bucket lines broken by a console write])."""
    cols, meta, broken = {}, {}, []
    for line in section_lines:
        line = line.strip()
        m = re.match(r"^(\d{6}) ((?:\d+\s*)+)$", line)
        if m:
            for i, c in enumerate(m.group(2).split()):
                if int(c):
                    cols.setdefault(i, {})[int(m.group(1))] = int(c)
            continue
        m = re.match(r"^# (Min|Avg|Max) Latencies: ((?:\d+\s*)+)$", line) or \
            re.match(r"^# (Histogram Overflows|Total): ((?:\d+\s*)+)$", line)
        if m:
            key = "Overflows" if m.group(1) == "Histogram Overflows" else m.group(1)
            meta[key] = [int(v) for v in m.group(2).split()]
        elif re.match(r"^\d{6}\b", line):
            broken.append(line)
    return cols, meta, broken


def _has_summary(meta):
    return all(k in meta for k in ("Min", "Avg", "Max", "Overflows"))


def cyclictest(section_lines):
    """Parse cyclictest -q -h output (histogram file or stdout) into a Latency.

    Takes the lines of one section.  Zero buckets may be left out.  With several
    threads (-t), their columns are summed and min/max are taken over threads.
    """
    cols, meta, broken = _cyclictest_lines(section_lines)
    if not _has_summary(meta):
        raise ValueError("no cyclictest histogram summary (# Min/Avg/Max Latencies) found")
    hist = {}
    for col in cols.values():
        for us, n in col.items():
            hist[us] = hist.get(us, 0) + n
    # cyclictest's "# Total:" is the sum of each thread's buckets: a bucket
    # line lost or broken by a console write shows as a difference.
    if "Total" in meta and sum(hist.values()) != sum(meta["Total"]):
        raise ValueError(f"the histogram's buckets sum to {sum(hist.values())}, cyclictest's"
                         f" # Total: says {sum(meta['Total'])}"
                         + (f" (broken line: {broken[0]!r})" if broken else ""))
    return Latency(hist, sum(meta["Overflows"]), min(meta["Min"]),
                   sum(meta["Avg"]) / len(meta["Avg"]), max(meta["Max"]))


def cyclictest_threads(section_lines):
    """Per measuring thread (cyclictest -t N: one per CPU), [Latency], from
    the columns of the same histogram lines cyclictest() sums; [] for a
    section it cannot read."""
    cols, meta, _broken = _cyclictest_lines(section_lines)
    if not _has_summary(meta):
        return []
    return [Latency(cols.get(i, {}), meta["Overflows"][i], meta["Min"][i], meta["Avg"][i],
                    meta["Max"][i]) for i in range(len(meta["Max"]))]


def load_work(section_lines):
    """What the load did, from guest/cyclictest-load's "# load work:" line:
    {kind: units} (hackbench runs, stress-set phases, compiled files, find
    passes, stress-ng bogo operations), {} for a line without work, None
    without the line (load none, or an older guest)."""
    for line in section_lines:
        m = re.match(r"^# load work:((?:\s+[\w-]+=\d+)*)\s*$", line.strip())
        if m:
            return {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}
    return None


def cyclictest_series(section_lines):
    """Latency over time from cyclictest -v -o N (guest/cyclictest-load).

    Returns (start uptime in s or None, [(seconds since start, max us of the
    window, thread)]), the threads' lines in console order: with several
    threads (-t N -a) they interleave, so a thread's series is its entries.
    cyclictest prints a line "<thread>: <cycle>: <us>" per window of
    exactly N cycles of a thread: the worst latency of the window and the
    cycle it happened in.  The x value is the window's end, (k + 1) * N
    cycles for a thread's k-th line, from the "# cyclictest start uptime U
    interval I reduce N" line; without "reduce" (older guests) it is the
    cycle of the maximum.
    """
    start, interval, reduce_, out, seen = None, None, None, [], {}
    for line in section_lines:
        m = re.match(r"^# cyclictest start uptime ([\d.]+) interval (\d+)(?: reduce (\d+))?$",
                     line.strip())
        if m:
            start, interval = float(m.group(1)), int(m.group(2))
            reduce_ = int(m.group(3)) if m.group(3) else None
            continue
        m = re.match(r"^\s*(\d+):\s+(\d+):\s+(\d+)$", line)
        if m and interval:
            thread = int(m.group(1))
            k = seen.get(thread, 0)
            seen[thread] = k + 1
            cycle = (k + 1) * reduce_ if reduce_ else int(m.group(2))
            out.append((cycle * interval / 1e6, int(m.group(3)), thread))
    return start, out


def phases(text):
    """Phases of guest/stress-set: [(name, start uptime s)] in console order."""
    return [(m.group(1), float(m.group(2))) for m in
            re.finditer(r"^PVRT-PHASE (\S+) ([\d.]+)\s*$", "\n".join(lines(text)), re.M)]


# Frames of the tracer itself at the top of a latency tracer's stack trace.
_TRACER_FRAME = re.compile(r"^(trace_|tracer_|stop_critical_timing|start_critical_timing|"
                           r"check_critical_timing|__trace_stack|preempt_count_|"
                           r"lockdep_hardirqs_on|time_hardirqs_|\w*hardirqs_on)")
_LOCK_FUNC = re.compile(r"(spin|read|write)_(un)?lock")


def latency_trace(section_lines):
    """The worst sections a latency tracer kept (guest/latency-trace).

    Returns [{second, latency_us, task, started, ended, stack, lock_op, caller}]:
    STACK is the stack trace at the section's end without the tracer's own
    frames; LOCK_OP is the locking function that ended (or began) the section
    when one did; CALLER the first frame that is neither tracer nor locking,
    the code that held the lock or disabled preemption.
    """
    out, cur, in_stack = [], None, False
    for line in section_lines:
        m = re.match(r"^=== max (\d+) (\d+)$", line.strip())
        if m:
            cur = {"second": int(m.group(1)), "latency_us": int(m.group(2)), "task": None,
                   "started": None, "ended": None, "stack": []}
            out.append(cur)
            in_stack = False
            continue
        if cur is None:
            continue
        m = re.match(r"^#\s+\| task: (\S+)", line)
        if m:
            cur["task"] = re.sub(r"-\d+$", "", m.group(1))
            continue
        m = re.match(r"^#\s+=> started at:\s+(\S+)", line)
        if m:
            cur["started"] = m.group(1)
            continue
        m = re.match(r"^#\s+=> ended at:\s+(\S+)", line)
        if m:
            cur["ended"] = m.group(1)
            continue
        if "<stack trace>" in line:
            in_stack = True
            continue
        m = re.match(r"^\s*=> (\S+)", line)
        if in_stack and m:
            func = m.group(1)
            if cur["stack"] or not _TRACER_FRAME.match(func):
                cur["stack"].append(func)
    for sec in out:
        ends = [f for f in (sec["ended"], sec["started"]) if f and _LOCK_FUNC.search(f)]
        sec["lock_op"] = ends[0] if ends else None
        sec["caller"] = next((f for f in sec["stack"] if not _TRACER_FRAME.match(f)
                              and not _LOCK_FUNC.search(f)), sec["ended"])
    return [s for s in out if s["latency_us"] > 0]


def worst_sections(sections, top=10):
    """Sections grouped by (started, ended, caller), worst first:
    [{started, ended, caller, lock_op, count, max_us, mean_us, task, stack}]."""
    groups = {}
    for s in sections:
        key = (s["started"], s["ended"], s["caller"])
        g = groups.setdefault(key, {"started": s["started"], "ended": s["ended"],
                                    "caller": s["caller"], "lock_op": s["lock_op"],
                                    "count": 0, "total": 0, "max_us": 0, "task": s["task"],
                                    "stack": s["stack"]})
        g["count"] += 1
        g["total"] += s["latency_us"]
        if s["latency_us"] > g["max_us"]:
            g["max_us"], g["task"], g["stack"] = s["latency_us"], s["task"], s["stack"]
    rows = sorted(groups.values(), key=lambda g: -g["max_us"])[:top]
    for g in rows:
        g["mean_us"] = round(g.pop("total") / g["count"], 1)
    return rows


# Why a handler may stay in hard interrupt context (Documentation/core-api/
# irq/ikt.rst): what mainline's forced threading keeps hard, and an ordinary
# handler on a shared line whose handlers are not threaded; "ikt_off" (the
# ikt=off rule) and anything unknown, such as the retired "oneshot_unmasked"
# and "oneshot", are not justified on a kernel booted with IKT on.
IKT_JUSTIFIED = frozenset({"timer", "nmi", "percpu", "no_thread", "not_threadable",
                           "chained", "oneshot_primary", "oneshot_no_thread_fn",
                           "shared_hard"})


IKT_MODES = ("threaded", "hard", "nested")
# "<irq> (<n> more actions)": an interrupt with more actions than one read of
# its lines holds (Documentation/ABI/testing/procfs-irq-ikt).
_IKT_MORE = re.compile(r"^\d+ \(\d+ more actions\)$")


def _ikt_unescape(name):
    """An action name as the kernel escapes it: \\ooo for a blank or backslash."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), name)


# The mark guest/ikt-check and guest/devices-check put before each line of
# /proc/irq/ikt.
IKT_MARK = "IKT| "


def ikt_report(section_lines):
    """Rows of /proc/irq/ikt: [{irq, action, mode, pid, prio, reason}].

    pid is None where the file shows "-": no thread, or a pid the reader may
    not see.  prio is None only where the file shows "-", i.e. there is no
    thread: the kernel prints the priority even when it hides the pid.  prio
    is an int (the SCHED_FIFO or SCHED_RR priority) or "other" for a thread
    that runs neither (chrt -o, a refused priority); action is unescaped
    ("PCIe\\040PME" -> "PCIe PME").  The ktimers rows (irq "-") and
    "(<n> more actions)" lines are not action rows.  Raises ValueError if no
    header line is found, or on a line that is neither a comment nor one
    of those: a row that cannot be read must not vanish from the checks.
    When the lines carry IKT_MARK (the guest scripts mark them), only
    those are the file's: the rest are kernel messages printed in between.
    """
    rows, header = [], False
    marked = [ln.split(IKT_MARK, 1)[1] for ln in section_lines if IKT_MARK in ln]
    if marked:
        # guest/ikt-check marks the file's lines: any other line of the
        # section is a kernel message the console printed in between.
        section_lines = marked
    for line in section_lines:
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            header = header or re.match(r"^#\s+irq\s+action\s+mode\s+pid\s+prio\s+reason$",
                                        line) is not None
            continue
        if _IKT_MORE.match(line):
            continue
        f = line.split()
        if (len(f) != 6 or not (f[0].isdigit() or f[0] == "-") or f[2] not in IKT_MODES
                or not (f[3].isdigit() or f[3] == "-") or not (f[4].isdigit() or f[4] in ("-", "other"))):
            raise ValueError(f"/proc/irq/ikt: cannot read the line {line!r}")
        if f[0] == "-":
            continue
        rows.append({"irq": int(f[0]), "action": _ikt_unescape(f[1]), "mode": f[2],
                     "pid": int(f[3]) if f[3].isdigit() else None,
                     "prio": int(f[4]) if f[4].isdigit() else None if f[4] == "-" else f[4],
                     "reason": None if f[5] == "-" else f[5]})
    if not header:
        raise ValueError("no /proc/irq/ikt header line found")
    return rows


def ikt_unjustified(rows):
    """The rows of a report whose handler is hard without a justified reason."""
    return [r for r in rows if r["mode"] == "hard" and r["reason"] not in IKT_JUSTIFIED]


def main(argv):
    """Command-line use: console.py LOG  -> print splats and sections."""
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        text = f.read()
    for n, line in splats(text):
        print(f"splat: line {n}: {line}")
    for name, (rc, body) in sections(text).items():
        print(f"section {name}: rc={rc}, {len(body)} lines")
    print(f"exit: {exit_status(text)}")


if __name__ == "__main__":
    main(sys.argv)
