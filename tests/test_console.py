# SPDX-License-Identifier: GPL-2.0
"""pvrt.console: the console parser every boot stage uses."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts", "lib"))
from pvrt import console  # noqa: E402

CYCLICTEST = """\
[   12.000001] random kernel line
PVRT-BEGIN cyclictest
# /dev/cpu_dma_latency set to 0us
# Histogram
000003 000010
000004 000980
000009 000009
000250 000001
# Total: 000001000
# Min Latencies: 00003
# Avg Latencies: 00004
# Max Latencies: 00250
# Histogram Overflows: 00000
# Histogram Overflow at cycle number:
# Thread 0:
PVRT-END cyclictest rc=0
PVRT-EXIT rc=0
"""


def test_cyclictest_distribution():
    secs = console.sections(CYCLICTEST)
    rc, body = secs["cyclictest"]
    assert rc == 0
    lat = console.cyclictest(body)
    assert lat.samples == 1000
    assert (lat.min, lat.max) == (3, 250)
    assert lat.avg == pytest.approx((3 * 10 + 4 * 980 + 9 * 9 + 250) / 1000)
    assert lat.p99 == 4            # 990 samples <= 4 us
    assert lat.p999 == 9           # 999 samples <= 9 us
    assert lat.p9999 == lat.p99999 == 250   # 1000 samples: the five nines are the max
    assert lat.percentile(100) == 250
    assert set(lat.row()) == {"samples", "min", "avg", "max", "p99", "p999", "p9999",
                              "p99999"}


def test_cyclictest_overflows_count_as_samples_above_every_bucket():
    body = ["000005 000090", "# Min Latencies: 00005", "# Avg Latencies: 00700",
            "# Max Latencies: 25000", "# Histogram Overflows: 00010"]
    lat = console.cyclictest(body)
    assert lat.samples == 100
    assert lat.p99 == 25000 and lat.p999 == 25000
    assert lat.avg == 700.0        # cyclictest's own average when the histogram is cut


def test_cyclictest_several_threads_are_summed():
    body = ["000005 000001 000002", "000007 000000 000003", "# Min Latencies: 00005 00005",
            "# Avg Latencies: 00005 00006", "# Max Latencies: 00005 00007",
            "# Histogram Overflows: 00000 00000"]
    lat = console.cyclictest(body)
    assert lat.samples == 6 and lat.max == 7 and lat.hist == {5: 3, 7: 3}


def test_cyclictest_without_summary_is_an_error():
    with pytest.raises(ValueError):
        console.cyclictest(["000005 000001"])


@pytest.mark.parametrize("line", [
    "[    1.234567] WARNING: CPU: 1 PID: 42 at kernel/locking/rtmutex.c:1234 foo+0x1/0x2",
    "[    1.2] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:5",
    "[    3.0] BUG: KASAN: slab-use-after-free in foo+0x10/0x20",
    "[    3.0] UBSAN: shift-out-of-bounds in kernel/foo.c:12:3",
    "WARNING: possible circular locking dependency detected",
    "[    9.9] Kernel panic - not syncing: Fatal exception",
    "[    9.9] Oops: general protection fault, probably for non-canonical address",
    "[  100.0] INFO: task kworker/0:1:12 blocked for more than 120 seconds.",
    "[   22.2] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "[   22.2] rcu: INFO: rcu_preempt self-detected stall on CPU",
    "[   22.2] rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: {",
    "[   22.3] rcu: rcu_preempt kthread starved for 2502 jiffies! g1234 f0x0",
    "[   22.4] rcu: Stall ended before state dump start",
])
def test_splats_are_found(line):
    assert console.splats("ok\n" + line + "\nok\n") == [(2, console.strip_stamp(line))]


def test_clean_console_has_no_splats_and_allow_list_works():
    text = "[    0.1] Linux version 6.12.117\n[    0.2] Freeing unused kernel memory\n"
    assert console.splats(text) == []
    warn = ("[ 1.0] WARNING: CPU: 0 PID: 1 at lib/test.c:1 intended+0x0/0x1\n"
            "[ 1.0] Modules linked in:\n[ 1.0] Call Trace:\n")
    assert console.splats(warn, allow=[r"lib/test\.c"]) == []
    # An allowed report does not hide the next one.
    later = warn + "x\n" * 50 + "[ 9.0] Call Trace:\n"
    assert console.splats(later, allow=[r"lib/test\.c"]) == [(54, "Call Trace:")]


def test_markers_and_unfinished_sections():
    text = "PVRT-BOOTED 6.12.117 cpus=2\nPVRT-BEGIN a\nx\nPVRT-END a rc=3\nPVRT-BEGIN b\ny\n"
    assert console.booted(text)
    assert console.sections(text) == {"a": (3, ["x"]), "b": (None, ["y"])}
    assert console.exit_status(text) is None
    assert console.exit_status(text + "PVRT-EXIT rc=0\r\n") == 0
    assert not console.booted("PVRT-BEGIN a\n")


def test_expected_warnings_are_bracketed():
    text = ("    # misuse: expect a warning: unlock by non-owner\n"
            "[ 2.0] WARNING: CPU: 0 PID: 7 at kernel/locking/pv_mutex.c:9 pv_mutex_unlock+0x1\n"
            "[ 2.0] Call Trace:\n"
            "    # misuse: end of expected warning\n"
            "[ 3.0] WARNING: CPU: 0 PID: 7 at kernel/foo.c:1 foo+0x1\n")
    assert console.splats(text) == [(5, "WARNING: CPU: 0 PID: 7 at kernel/foo.c:1 foo+0x1")]
    assert console.missing_expected(text) == []
    quiet = "x: expect a warning: negative timeout\nok\nx: end of expected warning\n"
    assert console.missing_expected(quiet) == [(1, "negative timeout")]


IKT_REPORT = """\
# IKT on; threads default to SCHED_FIFO 50
#  irq action               mode         pid prio reason
     0 timer                hard           -    - timer
     4 ttyS0                threaded     173   50 -
    24 virtio0-req          threaded     180   80 -
    24 virtio0-req          threaded     181   80 secondary
     9 acpi                 hard           -    - ikt_off
    30 gpio-edge            hard           -    - oneshot_primary
    31 old-oneshot          hard           -    - oneshot_unmasked
    32 rtc0                 hard           -    - shared_hard
    25 hidden               threaded       -   50 -
    26 PCIe\\040PME            hard           -    - ikt_off
    26 aerdrv               threaded     190   50 -
    26 (2 more actions)
     - ktimers/0            threaded      15    1 timer_softirq
# not listed: architecture vectors that are not interrupt descriptors
# (local APIC timer, IPIs, irq_work, ...): always hard
""".splitlines()


def test_ikt_report_rows_and_unjustified():
    rows = console.ikt_report(IKT_REPORT)
    # The ktimers row has no interrupt number: not an action row.
    assert [r["irq"] for r in rows] == [0, 4, 24, 24, 9, 30, 31, 32, 25, 26, 26]
    assert rows[8]["pid"] is None and rows[8]["prio"] == 50
    assert rows[0] == {"irq": 0, "action": "timer", "mode": "hard", "pid": None,
                       "prio": None, "reason": "timer"}
    assert rows[1]["pid"] == 173 and rows[1]["prio"] == 50 and rows[1]["reason"] is None
    assert rows[3]["reason"] == "secondary"
    assert [r["action"] for r in console.ikt_unjustified(rows)] == ["acpi", "old-oneshot",
                                                                    "PCIe PME"]


def test_ikt_report_blank_in_action_name():
    # drivers/pci/pcie/pme.c requests "PCIe PME": one field, escaped.
    rows = console.ikt_report(IKT_REPORT)
    pme = [r for r in rows if r["irq"] == 26 and r["mode"] == "hard"]
    assert pme == [{"irq": 26, "action": "PCIe PME", "mode": "hard", "pid": None,
                    "prio": None, "reason": "ikt_off"}]
    # A hard row without a justified reason reaches the check.
    assert pme[0] in console.ikt_unjustified(rows)


@pytest.mark.parametrize("line", [
    "    26 PCIe PME             hard           -    - oneshot_primary",
    "    26 PCIe                 hard",
    "[   12.345678] random kernel message",
])
def test_ikt_report_refuses_unreadable_lines(line):
    # The unescaped form of an older kernel, a cut line, a stray message:
    # an error, not a row that silently disappears.
    with pytest.raises(ValueError, match="cannot read"):
        console.ikt_report(IKT_REPORT[:2] + [line])


def test_ikt_report_other_policy():
    # A thread after chrt -o, or one the scheduler refused its priority:
    # the prio column reads "other", not a number and not "-".
    rows = console.ikt_report(IKT_REPORT[:2] + [
        "    27 chrt-o               threaded     200 other -"])
    assert rows == [{"irq": 27, "action": "chrt-o", "mode": "threaded", "pid": 200,
                     "prio": "other", "reason": None}]
    with pytest.raises(ValueError, match="cannot read"):
        console.ikt_report(IKT_REPORT[:2] + [
            "    27 chrt-o               threaded     200 normal -"])


def test_ikt_report_needs_header():
    with pytest.raises(ValueError):
        console.ikt_report(["     0 timer hard - - timer"])


def test_ktap_only_drops_kernel_messages_between_results():
    log = "\n".join([
        "[    0.1] Booting",
        "[    0.7] KTAP version 1",
        "[    0.7] 1..1",
        "[    0.7]     KTAP version 1",
        "[    0.7] input: AT Raw Set 2 keyboard as /devices/platform/i8042/serio0/input/input2",
        "[    0.7]     # Subtest: s",
        "[    0.7]     1..1",
        "[    0.8]     ok 1 t",
        "[    0.8] ok 1 s",
        "[    0.9] reboot: Restarting system",
    ])
    assert console.ktap_only(log).splitlines() == [
        "KTAP version 1", "1..1", "    KTAP version 1", "    # Subtest: s", "    1..1",
        "    ok 1 t", "ok 1 s"]


def test_latency_over_time_and_stress_phases():
    body = ["# cyclictest start uptime 3.50 interval 200",
            "       0:    5000:      31", "       0:   10000:    2507",
            "000010 000123", "# Min Latencies: 00010"]
    start, series = console.cyclictest_series(body)
    assert start == 3.5 and series == [(1.0, 31, 0), (2.0, 2507, 0)]
    text = "[ 1.0] x\nPVRT-PHASE memory 3.79\nPVRT-PHASE fork 5.41\n[ 2.0] PVRT-PHASE no\n"
    assert console.phases(text) == [("memory", 3.79), ("fork", 5.41)]


def test_histogram_buckets_must_add_up_to_cyclictests_total():
    """A bucket line lost or broken by a console write (a kernel message in
    the middle of "000009 000009") no longer disappears silently: the
    buckets no longer sum to cyclictest's own # Total."""
    body = console.sections(CYCLICTEST)["cyclictest"][1]
    assert console.cyclictest(body).samples == 1000
    broken = [ln.replace("000009 000009", "000009 0[   13.1] eth0: link up") for ln in body]
    with pytest.raises(ValueError, match=r"buckets sum to 991, cyclictest's # Total: says"
                                         r" 1000 \(broken line: '000009 0\["):
        console.cyclictest(broken)
    lost = [ln for ln in body if not ln.startswith("000004")]
    with pytest.raises(ValueError, match="buckets sum to 20, cyclictest's # Total: says 1000"):
        console.cyclictest(lost)


def test_load_work_line():
    assert console.load_work(["# load work: hackbench=12 find=3"]) == {"hackbench": 12,
                                                                       "find": 3}
    assert console.load_work(["# load work:"]) == {}
    assert console.load_work(["000001 000002"]) is None


def _run_cyclictest_load(busybox, tmp_path, bindir, load):
    """guest/cyclictest-load for 1 s of LOAD under busybox sh, with the stub
    programs of BINDIR first in PATH; its completed process."""
    import subprocess
    for f in bindir.iterdir():
        f.chmod(0o755)
    script = os.path.join(os.path.dirname(__file__), "..", "guest", "cyclictest-load")
    r = subprocess.run([busybox, "sh", script, "1", load], capture_output=True,
                       text=True, timeout=90, cwd=tmp_path,
                       env={"PATH": f"{bindir}:{os.environ['PATH']}",
                            "PVRT_LOAD_WORK": str(tmp_path / "work")})
    assert r.returncode == 0, r.stderr
    return r


def test_guest_cyclictest_load_stops_the_whole_load_and_reports_its_work(tmp_path):
    """guest/cyclictest-load under busybox sh with a stub cyclictest (two
    threads, the second one's buckets only in its own column) and a stub
    hackbench: every bucket line of either thread is printed, the load's
    work is reported, and no load process is left to write into the
    results."""
    import shutil
    import subprocess
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("no busybox on this host")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cyclictest").write_text(
        "#!/bin/sh\nfor a; do case $a in --histfile=*) h=${a#--histfile=};; esac; done\n"
        # Until the load has done some work (a loaded host may be slow).
        "i=0; while [ ! -s \"$PVRT_LOAD_WORK\" ] && [ $i -lt 300 ]; do sleep 0.1;"
        " i=$((i+1)); done\nprintf '000010 000005 000000\\n000011 000000 000007\\n"
        "000012 000000 000000\\n# Total: 000000005 000000007\\n# Min Latencies: 00010 00011\\n"
        "# Avg Latencies: 00010 00011\\n# Max Latencies: 00010 00011\\n"
        "# Histogram Overflows: 00000 00000\\n' > $h\n")
    pids = tmp_path / "pids"
    (bindir / "hackbench").write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 0.4\n")
    r = _run_cyclictest_load(busybox, tmp_path, bindir, "hackbench")
    body = console.sections(r.stdout)["cyclictest"][1]
    lat = console.cyclictest(body)
    assert lat.hist == {10: 5, 11: 7} and lat.samples == 12
    work = console.load_work(body)
    assert set(work) == {"hackbench"} and work["hackbench"] >= 1
    alive = []
    for pid in map(int, pids.read_text().split()):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if state != "Z":            # a zombie has ended: its reaper is not ours
            alive.append((pid, state))
    assert not alive, "a hackbench outlived the load"


# stress-ng 0.15.06's --metrics-brief lines (Debian 12's, the one the
# initramfs packs), as it printed them for `stress-ng --cpu 1 --pipe 1 -t 1s -q
# --metrics-brief` on this host.
STRESS_NG_METRICS = (
    "stress-ng: metrc: [7901] stressor       bogo ops real time  usr time  sys time"
    "   bogo ops/s     bogo ops/s\n"
    "stress-ng: metrc: [7901]                           (secs)    (secs)    (secs)"
    "   (real time) (usr+sys time)\n"
    "stress-ng: metrc: [7901] cpu                 700      1.00      0.66      0.00"
    "       699.23        1060.61\n"
    "stress-ng: metrc: [7901] pipe             224262      1.00      0.13      0.70"
    "    224077.38      270195.58\n"
    "stress-ng: metrc: [7901] miscellaneous metrics:\n"
    "stress-ng: metrc: [7901] pipe                 142.55 MB per sec pipe write rate"
    " (geometic mean of 1 instances)\n")


def test_guest_cyclictest_load_reports_stress_ngs_bogo_ops(tmp_path):
    """Under the stress-ng mix the load's work is stress-ng's own bogo-op
    count per stressor, read from its --metrics-brief lines: with 0.15's
    format ("stress-ng: metrc: [pid] stressor ops ...") every stressor is
    reported, not an empty "# load work:" that makes every run invalid."""
    import shutil
    import subprocess
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("no busybox on this host")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cyclictest").write_text(
        "#!/bin/sh\nfor a; do case $a in --histfile=*) h=${a#--histfile=};; esac; done\n"
        "printf '000010 000005\\n# Total: 000000005\\n# Max Latencies: 00010\\n' > $h\n")
    (bindir / "stress-ng").write_text("#!/bin/sh\ncat <<'EOF'\n" + STRESS_NG_METRICS + "EOF\n")
    r = _run_cyclictest_load(busybox, tmp_path, bindir, "stress")
    body = console.sections(r.stdout)["cyclictest"][1]
    assert console.load_work(body) == {"cpu": 700, "pipe": 224262}


def test_latency_over_time_puts_each_window_at_its_end():
    """cyclictest -o N prints the cycle of each window's maximum, not the
    window's end: a maximum early in the second window must still be
    drawn at 2 s, a thread's k-th line at (k + 1) N cycles."""
    body = ["# cyclictest start uptime 3.50 interval 200 reduce 5000",
            "       0:    4999:      31", "       1:     100:      40",
            "       0:    5001:    2507", "       1:    9999:      12"]
    start, series = console.cyclictest_series(body)
    assert start == 3.5 and series == [(1.0, 31, 0), (1.0, 40, 1), (2.0, 2507, 0), (2.0, 12, 1)]


def test_ikt_report_marked_lines_and_a_kernel_message_between():
    """The guest marks /proc/irq/ikt's lines: a kernel message the console
    printed in the middle (its time stamp already stripped) is not a row,
    and a marked line that cannot be read still raises."""
    marked = ["IKT| " + ln for ln in IKT_REPORT]
    rows = console.ikt_report(marked[:3] + ["random: crng init done"] + marked[3:])
    assert rows == console.ikt_report(IKT_REPORT)
    with pytest.raises(ValueError):
        console.ikt_report(marked[:2] + ["IKT|      7 broken"] + marked[2:])
    # Unmarked (older logs): every line is the file's, as before.
    with pytest.raises(ValueError):
        console.ikt_report(IKT_REPORT[:2] + ["random: crng init done"] + IKT_REPORT[2:])


# One WARN_ON() report, as the kernel prints it (cut here ... end trace).
def _warn(where, stamp="2.0"):
    return (f"[ {stamp}] ------------[ cut here ]------------\n"
            f"[ {stamp}] WARNING: CPU: 0 PID: 7 at {where}\n"
            f"[ {stamp}] Modules linked in:\n"
            f"[ {stamp}] Call Trace:\n"
            f"[ {stamp}]  <TASK>\n"
            f"[ {stamp}]  </TASK>\n"
            f"[ {stamp}] ---[ end trace 0000000000000000 ]---\n")


_BEGIN = "    # misuse: expect a warning: unlock by non-owner\n"
_END = "    # misuse: end of expected warning\n"


def test_an_expected_warning_is_one_report_in_its_bracket():
    text = _BEGIN + _warn("kernel/locking/pv_mutex.c:9 pv_mutex_unlock+0x1") + _END
    assert console.splats(text) == []
    assert console.missing_expected(text) == []


def test_a_second_report_in_a_bracket_is_not_expected():
    """A bracket expects one report: a second WARN, or another kind of
    report (a lockdep splat, a sleeping-in-atomic BUG), inside it fails."""
    text = (_BEGIN + _warn("kernel/locking/pv_mutex.c:9 pv_mutex_unlock+0x1")
            + _warn("kernel/sched/core.c:1 foo+0x1", "2.1") + _END)
    assert console.splats(text) == [
        (10, "WARNING: CPU: 0 PID: 7 at kernel/sched/core.c:1 foo+0x1"),
        (12, "Call Trace:")]
    assert console.missing_expected(text) == []
    bug = (_BEGIN + _warn("kernel/locking/pv_mutex.c:9 pv_mutex_unlock+0x1")
           + "[ 2.2] BUG: sleeping function called from invalid context at x.c:1\n" + _END)
    assert console.splats(bug) == [
        (9, "BUG: sleeping function called from invalid context at x.c:1")]


def test_a_lockdep_report_is_one_report():
    text = (_BEGIN + "[ 3.3] ============================================\n"
            "[ 3.3] WARNING: possible recursive locking detected\n"
            "[ 3.3] --------------------------------------------\n"
            "[ 3.3] stack backtrace:\n"
            "[ 3.3] Call Trace:\n" + _END)
    assert console.splats(text) == []
    assert console.missing_expected(text) == []


def test_a_bracket_ends_with_its_case():
    """A case that never printed its end line (it failed an assertion in
    between) does not hide the reports of the cases after it."""
    text = (_BEGIN + _warn("kernel/locking/pv_mutex.c:9 pv_mutex_unlock+0x1")
            + "[ 2.5]     not ok 3 pvk_misuse\n"
            + _warn("kernel/foo.c:1 foo+0x1", "2.6"))
    assert console.splats(text) == [(11, "WARNING: CPU: 0 PID: 7 at kernel/foo.c:1 foo+0x1"),
                                    (13, "Call Trace:")]
    assert console.missing_expected(text) == [
        (1, "unlock by non-owner (no 'end of expected warning' before line 9)")]


def test_a_lockdep_report_and_a_warn_in_one_bracket_are_two_reports():
    """pv_spin_unlock() releasing lockdep's record before its owner check:
    lockdep's "bad unlock balance" report, then the expected WARN."""
    text = (_BEGIN + "[ 4.46] =====================================\n"
            "[ 4.46] WARNING: bad unlock balance detected!\n"
            "[ 4.47] but there are no more locks to release!\n"
            "[ 4.49] Call Trace:\n"
            + _warn("../../linux/kernel/locking/pv_spinlock.c:116 pv_spin_unlock+0x987/0xc30")
            + _END)
    assert console.splats(text) == [
        (7, "WARNING: CPU: 0 PID: 7 at ../../linux/kernel/locking/pv_spinlock.c:116"
            " pv_spin_unlock+0x987/0xc30"),
        (9, "Call Trace:")]


def test_a_trace_without_a_report_in_a_bracket_is_not_expected():
    text = _BEGIN + "[ 2.0] Call Trace:\n[ 2.0]  dump_stack_lvl+0x62/0x90\n" + _END
    assert console.splats(text) == [(2, "Call Trace:")]
    assert console.missing_expected(text) == [(1, "unlock by non-owner")]


def test_bracket_lines_and_a_repeated_headline_are_not_splats():
    """The locktorture stage's brackets (postings' console): "expect a
    warning: ... (!!!)" is the bracket's own line, not a report, and
    locktorture prints its "Violations: ... !!!" statistics line twice (the
    stats thread, then the cleanup): one report.  The skip-deboost bracket
    got no report at all."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "posting-locktorture-brackets.log")
    with open(path) as f:
        text = f.read()
    assert console.splats(text) == []
    assert console.missing_expected(text) == [
        (7, "skip-deboost, PI violations counted (!!!)")]
    # A different headline in the same bracket is still a second report.
    twice = text.replace("Violations: 46 (boost 11, deboost 35) !!!\n[  167.210799]",
                         "Violations: 45 (boost 11, deboost 34) !!!\n[  167.210799]")
    assert [ln for _, ln in console.splats(twice)] == [
        "rtmutex_lock-torture: PI checks: 692 (boost 13, deboost 679)  Inconclusive: 15"
        "  Violations: 46 (boost 11, deboost 35) !!!"]


def test_a_kernel_message_glued_to_a_guest_line_is_a_line_of_its_own():
    """The PREEMPT_RT run 1 of the idle smp1/smp2 floor run (20261124-200324)
    lost its section: the kernel printed "cyclictest (81) used greatest stack
    depth" into the marker line, which then read "PVRT-BEGIN
    cyclictest[   69.043283] ...".  The message is split off and the guest
    line joined with its rest, the next line without a time stamp."""
    msg = "cyclictest (81) used greatest stack depth: 13000 bytes left"
    text = (f"PVRT-BEGIN cyclictest[   69.043283] {msg}\n\n# x\nPVRT-END cyclictest rc=0\n")
    assert console.sections(text) == {"cyclictest": (0, ["# x"])}
    assert console.lines(text)[:2] == [msg, "PVRT-BEGIN cyclictest"]
    # A number cut in two: the digits after the message belong to it; a
    # second kernel line in between is a line too.
    assert console.lines("# Max Latencies: 0[   12.345678] clocksource: tsc\n"
                         "[   12.345679] eth0: up\n0310\nnext\n") == [
        "clocksource: tsc", "eth0: up", "# Max Latencies: 00310", "next"]
    assert console.lines("a [1.5] b\n[    1.000001] c\n") == ["a [1.5] b", "c"]
    assert console.lines("tail[    1.000001] c") == ["c", "tail"]
    # Glued after a space; two messages in one guest line; a kernel line
    # with a kernel message glued to it joins no guest line (the review's
    # reproducer lost the PVRT-END marker).
    assert console.lines("# Max Latencies: [   12.345678] msg\n00310\n") == [
        "msg", "# Max Latencies: 00310"]
    assert console.lines("ab[    1.000001] m1\ncd[    1.000002] m2\nef\n") == [
        "m1", "m2", "abcdef"]
    assert console.lines("[    1.000000] k1[    1.000001] k2\nPVRT-END cyclictest rc=0\n") == [
        "k1", "k2", "PVRT-END cyclictest rc=0"]
    assert console.lines("  [    1.000000] indented\n") == ["indented"]
