# SPDX-License-Identifier: GPL-2.0
"""scripts/attribute-latency: the timerlat trace of guest/latency-attribute
parsed, rtla's window found in it, each tail sample classified, the samples
grouped, and runs that are no result refused.

The log in tests/data/attribute/ is the console log of one real boot of a
defconfig-based kernel (-smp 1 -icount) running guest/latency-attribute,
recorded by scripts/attribute-latency; see the README there.  Where a case
needs a run that went wrong (lost events, a sample missing from the trace,
a load that did not cover the window), it changes a copy of that log in the
open, below."""

import json
import os
import re
import subprocess

import pytest

from pvrt import attribute, console
from pvrt.errors import PvrtError

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.path.dirname(__file__), "data", "attribute")
LOG = os.path.join(DATA, "stock-tuned-stress-set-smp1.log")
GUEST = os.path.join(TOP, "guest", "latency-attribute")


def text(path=LOG):
    with open(path, encoding="utf-8") as f:
        return f.read()


def section(log_text, name):
    return console.sections(log_text)[name][1]


def stack_threshold(log_text):
    """The threshold the guest traced stacks at, from its own section."""
    return int(re.search(r"threshold (\d+) us", log_text).group(1))


def analysed(log_text=None, **kw):
    return attribute.analyse(text() if log_text is None else log_text, load="stress-set", **kw)


# --- the recorded run ------------------------------------------------------------------

def test_the_recorded_run_is_a_result_with_rtla_s_window_found():
    log = text()
    res = analysed(log)
    assert res["problems"] == [], res["problems"]
    # The trace holds more than rtla counted (the instance records on after
    # rtla's own stopped, and through the restart of rtla's exit): the run
    # of samples with rtla's histogram is its window, found once.
    (cpu, w), = res["windows"].items()
    assert w["last"] - w["first"] + 1 == res["timerlat_samples"] == res["hist_samples"]
    assert res["trace_samples"] > res["timerlat_samples"]
    assert w["matches"] == 1
    # The tail: every sample of the window at or above timerlat's own p99.9.
    assert res["threshold_us"] == res["hist_thread_p999"] >= res["stack_threshold_us"]
    assert len(res["samples"]) == w["tail"] > 0
    assert all(r["thread_us"] >= res["threshold_us"] and r["has_stack"] for r in res["samples"])
    assert all(r["class"] in attribute.CLASSES and r["key"] for r in res["samples"])


def test_the_load_covered_the_window():
    res = analysed()
    m = res["load_marks"]
    first, last = (t + m["clock"] for t in res["window_s"])
    assert m["start"] <= first and last <= m["stop"] and m["state"] == "running"


def test_parse_reads_every_printed_sample_with_its_window_and_stack():
    log = text()
    tr = attribute.parse_trace(section(log, "attrib-trace"))
    assert tr["lost"] == 0 and tr["foreign"] == 0
    assert tr["totals"]["threshold_us"] == stack_threshold(log)
    assert sum(len(v) for v in tr["lat"].values()) == tr["totals"]["samples"]
    # The samples printed in full inside rtla's window (after it, the
    # timerlat thread rtla's exit restarts saves no stacks).
    w = analysed(log)["windows"][0]
    full = [s for s in tr["samples"] if s["thread_ns"] // 1000 >= tr["totals"]["printed_from_us"]
            and w["first"] <= s["seq"] <= w["last"]]
    assert full and all(s["stack"] for s in full)
    for s in full:
        assert s["irq_ns"] is not None and s["irq_ns"] <= s["thread_ns"]
        assert attribute.func_of(s["stack"][0]) == "timerlat_irq"
        # The timer's own interrupt is in every window after its IRQ sample.
        assert any(e["kind"] == "irq" for e in s["after"])


def test_the_guest_filter_on_a_raw_trace_excerpt():
    """guest/latency-attribute's awk filter, run on the raw trace_pipe lines
    the recorded boot printed (attrib-raw), prints each sample's latency,
    the windows at or above its floor with their stacks, and its count."""
    script = text(GUEST)
    prog = re.search(r"filter\(\) \{\n\tawk (.*?)\n\}\n", script, re.S).group(1)
    raw = "\n".join(section(text(), "attrib-raw")) + "\n"
    out = subprocess.run(["sh", "-c", "thr=60\nfilter() {\n\tawk " + prog + "\n}\nfilter 70"],
                         input=raw, capture_output=True, text=True, check=True).stdout
    tr = attribute.parse_trace(out.splitlines())
    threads = [ln for ln in raw.splitlines() if "context thread timer_latency" in ln]
    assert tr["totals"]["samples"] == len(threads) > 0
    assert tr["totals"]["printed_from_us"] == 70
    lat = [int(ln.split("timer_latency")[1].split()[0]) // 1000 for ln in threads]
    assert [us for _seq, us in tr["lat"][0]] == lat
    assert tr["totals"]["over"] == sum(1 for v in lat if v >= 60)
    full = [s for s in tr["samples"] if s["thread_ns"] >= 70000]
    assert len(full) == sum(1 for v in lat if v >= 70) > 0
    assert all(s["stack"] for s in full)


# --- not a result ------------------------------------------------------------------------

def mutate(pattern, repl, log=None, count=1):
    log = text() if log is None else log
    new = re.sub(pattern, repl, log, count=count, flags=re.M)
    assert new != log, pattern
    return new


def problems_of(log):
    return analysed(log)["problems"]


@pytest.mark.parametrize("pattern,repl,want", [
    # The ring buffer overwrote or dropped events: its statistics say so.
    (r"^overrun: 0$", "overrun: 17", "17 overrun"),
    (r"^commit overrun: 0$", "commit overrun: 2", "2 commit overrun"),
    (r"^dropped events: 0$", "dropped events: 5", "5 dropped events"),
    # The guest did not read the whole buffer.
    (r"^entries: 0$", "entries: 12", "12 unread entries"),
    # The reader saw a gap: the kernel's own "[LOST N EVENTS]" line.
    (r"^(PVRT-BEGIN attrib-trace\n)", r"\1CPU:0 [LOST 3 EVENTS]\n", "the trace lost 3 events"),
    # rtla failed.
    (r"^PVRT-END attrib-hist rc=0$", "PVRT-END attrib-hist rc=1", "exited with rc=1"),
    # No statistics at all.
    (r"(PVRT-BEGIN attrib-stats\n)(.*\n)*?(PVRT-END attrib-stats)", r"\1\3",
     "no ring buffer statistics"),
    # The guest's filter and rtla ran at different thresholds.
    (r"at-or-above (\d+) us", "at-or-above 1 us", "the guest's filter ran at 1 us"),
    # The load started after rtla's window did, or was stopped before it ended.
    (r"^PVRT-LOAD start \S+", "PVRT-LOAD start 9999.0", "the load started at 9999.00 s"),
    (r"^PVRT-LOAD stop \S+ running", "PVRT-LOAD stop 1.0 running", "the load ended at 1.00 s"),
    (r"^PVRT-LOAD stop (\S+) running", r"PVRT-LOAD stop \1 exited",
     "the load ended by itself"),
    (r"^PVRT-CLOCK .*\n", "", "whether the load covered rtla's window is not known"),
])
def test_a_run_that_went_wrong_is_not_a_result(pattern, repl, want, capsys, tmp_path):
    probs = problems_of(mutate(pattern, repl))
    assert any(want in p for p in probs), probs


def test_not_a_result_prints_no_table(capsys, tmp_path):
    res = analysed(mutate(r"^overrun: 0$", "overrun: 17"))
    rc = attribute.report_results({"stock-tuned": res}, str(tmp_path / "a.json"),
                                  str(tmp_path / "a.png"), 10)
    out = capsys.readouterr().out
    assert rc == 1 and "stock-tuned: not a result" in out and "per class" not in out
    assert not (tmp_path / "a.png").exists()


def _lat_lines(log):
    return [ln for ln in section(log, "attrib-trace") if ln.startswith("# lat ")]


def test_a_trace_that_lost_a_sample_rtla_counted_is_not_a_result():
    """A sample missing from the trace (a gap in its sequence) leaves no run
    of the trace's samples with rtla's histogram."""
    log = text()
    res = analysed(log)
    w = res["windows"][0]
    line = next(ln for ln in _lat_lines(log)
                if w["first"] + 100 <= int(ln.split()[3].rstrip(":")) <= w["last"] - 100)
    head, vals = line.split(":")
    cut = f"{head}:{' '.join(vals.split()[1:])}"
    cut = cut.replace(f" {head.split()[3]}", f" {int(head.split()[3]) + 1}", 1)
    probs = problems_of(log.replace(line, cut, 1))
    assert any("no run of the trace's" in p for p in probs), probs


def test_a_thread_restart_inside_the_window_is_not_a_result():
    """The window's samples must be one run of one timerlat thread: a
    sequence that starts again inside it (rtla's exit restarting the
    threads early) matches no run."""
    log = text()
    res = analysed(log)
    w = res["windows"][0]
    lines = _lat_lines(log)
    i = next(i for i, ln in enumerate(lines)
             if int(ln.split()[3].rstrip(":")) >= (w["first"] + w["last"]) // 2)
    head, vals = lines[i].split(":")
    restarted = f"# lat 0 1:{vals}"
    probs = problems_of(log.replace(lines[i], restarted, 1))
    assert any("no run of the trace's" in p for p in probs), probs


def test_a_tail_sample_missing_from_the_printed_windows_is_not_a_result():
    log = text()
    res = analysed(log)
    r = res["samples"][0]
    thread = next(ln for ln in section(log, "attrib-trace")
                  if f"#{r['seq']} " in ln and "context thread" in ln)
    probs = problems_of(log.replace(thread + "\n", "", 1))
    assert any("the trace printed" in p for p in probs), probs


def test_a_tail_sample_without_its_stack_is_not_a_result():
    log = text()
    res = analysed(log)
    r = res["samples"][0]
    lines = section(log, "attrib-trace")
    i = next(i for i, ln in enumerate(lines) if f"#{r['seq']} " in ln and "context thread" in ln)
    j = next(j for j in range(i + 1, len(lines)) if "<stack trace>" in lines[j])
    k = j + 1
    while k < len(lines) and lines[k].lstrip().startswith("=>"):
        k += 1
    cut = log.replace("\n".join(lines[j:k]) + "\n", "", 1)
    probs = problems_of(cut)
    assert "1 tail samples without a stack" in probs, probs


def test_a_p999_below_the_stack_threshold_is_not_a_result():
    """Stacks are saved from the stack threshold up: a tail that starts
    below it cannot be attributed, and says which threshold to use."""
    log = text()
    p999 = analysed(log)["threshold_us"]
    high = mutate(r"threshold (\d+) us", f"threshold {p999 + 1} us", log)
    high = mutate(r"at-or-above (\d+) us", f"at-or-above {p999 + 1} us", high)
    probs = problems_of(high)
    assert any(f"--threshold {p999} or lower" in p for p in probs), probs


def test_a_kernel_message_in_the_trace_is_skipped_and_counted():
    log = text()
    first = section(log, "attrib-trace")[0]
    noisy = log.replace(first, "[   12.345678] random: crng init done\n" + first, 1)
    res = analysed(noisy)
    assert res["problems"] == []
    assert any("1 lines in the trace section were no trace line" in n for n in res["notes"])


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(PvrtError, match="no '# samples' line"):
        attribute.parse_trace(section(text(), "attrib-trace")[:20])
    with pytest.raises(PvrtError, match="no attrib-hist section"):
        attribute.analyse("PVRT-BOOTED 6.12\nPVRT-EXIT rc=0\n", 50)
    with pytest.raises(PvrtError, match="section attrib-trace not finished"):
        attribute.analyse(text().replace("PVRT-END attrib-trace rc=0", ""), 50)
    with pytest.raises(PvrtError, match="not found"):
        attribute.main(["--input", str(tmp_path / "missing.log")])


# --- rtla's window ---------------------------------------------------------------------

def test_the_window_is_the_run_with_rtla_s_histogram():
    lat = [(10 + i, us) for i, us in enumerate([40, 41, 90, 40, 40, 41, 40, 95, 41])]
    # rtla counted 40, 41, 40, 95: #15-#18 holds 41 40 95 41, #14-#17 is the
    # one.
    assert attribute.find_window(lat, {40: 2, 41: 1, 95: 1}) == (14, 17, 1)
    # Equal latencies at the edges fit twice: the first is taken, and said.
    assert attribute.find_window([(1, 40), (2, 40), (3, 40)], {40: 2}) == (1, 2, 2)
    # A gap in the sequence cuts the runs.
    assert attribute.find_window([(1, 40), (3, 41)], {40: 1, 41: 1}) is None
    assert attribute.find_window(lat, {40: 9}) is None


def test_samples_outside_rtla_s_window_are_left_out():
    res = analysed()
    w = res["windows"][0]
    assert res["outside_window"] > 0
    assert all(w["first"] <= r["seq"] <= w["last"] for r in res["samples"])


# --- classification --------------------------------------------------------------------

def test_the_frames_below_the_interrupt_entry_are_the_interrupted_code():
    stack = ["timerlat_irq+0x1ee/0x270", "__hrtimer_run_queues+0xfe/0x230",
             "hrtimer_interrupt+0xf9/0x240", "__sysvec_apic_timer_interrupt+0x4e/0x120",
             "sysvec_apic_timer_interrupt+0x60/0x80",
             "asm_sysvec_apic_timer_interrupt+0x16/0x20",
             "free_unref_page+0x108/0x460", "rcu_core+0x27e/0x6a0"]
    assert attribute.interrupted_frames(stack) == stack[-2:]
    # Without an entry frame the tracer's and hrtimer's own frames go.
    assert attribute.interrupted_frames(stack[:4] + stack[-2:]) == stack[-2:]
    assert attribute.interrupted_frames(None) == []


# The timer's interrupt in the idle loop (x86 defconfig under QEMU).
IDLE_STACK = ["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
              "pv_native_safe_halt+0xf/0x20", "default_idle+0x9/0x20",
              "default_idle_call+0x2c/0xe0", "do_idle+0x1e5/0x220",
              "cpu_startup_entry+0x29/0x30"]

# Samples #34977 and #54811 of run attrib-20261124-200524: the timer
# interrupted the RCU softirq the idle task ran on an interrupt's exit.
SOFTIRQ_ON_IDLE_STACK = [
    "timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
    "_raw_spin_unlock_irqrestore+0x1d/0x40", "free_unref_page_commit+0x1c2/0x2f0",
    "free_unref_page+0x2ac/0x4b0", "__put_partials+0xf8/0x140", "rcu_core+0x25c/0x720",
    "handle_softirqs+0xd9/0x2a0", "irq_exit_rcu+0x73/0x90",
    "sysvec_apic_timer_interrupt+0x6d/0x80", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
    "pv_native_safe_halt+0xf/0x20", "default_idle+0x9/0x20"]


def sample(**kw):
    """A sample as parse_trace() returns it: a 100 us thread latency whose
    IRQ came 2 us after the timer expired at t = 1 s."""
    s = {"cpu": 0, "seq": 1, "thread_ns": 100000, "ts": 10**9 + 100000, "irq_ns": 2000,
         "irq_ts": 10**9 + 2000, "interrupted": "hackbench:70", "interrupted_pid": 70,
         "interrupted_comm": "hackbench",
         "before": [], "after": [timer()],
         "stack": ["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
                   "zap_pte_range+0x10/0x100", "unmap_page_range+0x20/0x200"]}
    s.update(kw)
    return s


def timer(start=10**9 + 1000, dur=30000):
    return {"kind": "irq", "name": "local_timer", "num": 236, "start": start, "dur": dur}


TYPICAL = {"irq_delay": 1000, "timer_irq": 30000, "blocking": 0, "irq_work": 0,
           "threads": 0, "dispatch": 5000}


def thread_noise(pid, dur, name="hackbench", start=10**9 + 31000):
    return {"kind": "thread", "name": name, "num": pid, "start": start, "dur": dur}


@pytest.mark.parametrize("case,want", [
    # The interrupted thread kept the CPU for 60 us: preemption off, at the site.
    (dict(after=[timer(), thread_noise(70, 60000)]),
     ("preemption off", "zap_pte_range < unmap_page_range")),
    # The timer's interrupt started 60 us late: interrupts off, where it landed.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000, after=[timer(10**9 + 60000)]),
     ("interrupts off", "zap_pte_range < unmap_page_range")),
    # ... in the idle loop: exit from idle.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000, interrupted_pid=0, interrupted="<idle>:0",
          interrupted_comm="<idle>", after=[timer(10**9 + 60000)], stack=IDLE_STACK),
     ("exit from idle", "pv_native_safe_halt < default_idle < default_idle_call")),
    # ... in the idle task, but in code it ran with interrupts off, not
    # the idle loop (second review, item 3): interrupts off, said to be the
    # idle task's.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000, interrupted_pid=0, interrupted="<idle>:0",
          interrupted_comm="<idle>", after=[timer(10**9 + 60000)],
          stack=["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
                 "zap_pte_range+0x10/0x100", "unmap_page_range+0x20/0x200"]),
     ("interrupts off", "zap_pte_range < unmap_page_range (idle task)")),
    # An interrupt that ran across the expiry delayed the timer's: its work.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000,
          before=[{"kind": "irq", "name": "virtio0", "num": 24, "start": 10**9 - 5000,
                   "dur": 64000}], after=[timer(10**9 + 60000)]),
     ("interrupt/softirq work", "irq virtio0:24 at zap_pte_range < unmap_page_range")),
    # A softirq ran 60 us between the interrupt and the thread: named with
    # the site the timer interrupted.
    (dict(after=[timer(), {"kind": "softirq", "name": "RCU", "num": 9,
                           "start": 10**9 + 31000, "dur": 60000}]),
     ("interrupt/softirq work", "softirq RCU at zap_pte_range < unmap_page_range")),
    # The timer's interrupt itself ran 90 us (timerlat's stack save first).
    (dict(after=[timer(dur=90000)]),
     ("interrupt/softirq work", "the timer interrupt (incl. timerlat's stack save)")),
    # Another thread ran 60 us first.
    (dict(after=[timer(), thread_noise(99, 60000, "migration/0")]),
     ("blocking thread", "migration/0")),
    # The timer interrupted rtla: the tools' own cost.
    (dict(interrupted="rtla:300", interrupted_comm="rtla", interrupted_pid=300,
          after=[timer(), thread_noise(300, 60000, "rtla")]),
     ("measurement", "rtla at zap_pte_range < unmap_page_range")),
])
def test_the_part_beyond_a_typical_sample_names_the_cause(case, want):
    cls, key, det = attribute.classify(sample(**case), TYPICAL)
    assert (cls, key) == want
    assert sum(det["parts"].values()) >= sample(**case)["thread_ns"] - 1


def test_a_part_every_sample_pays_is_no_cause():
    """The timer interrupt's 30 us is in every sample: without the typical
    split it is the largest part of this 55 us one, with it the 20 us the
    interrupted thread kept the CPU are the cause."""
    s = sample(thread_ns=55000, ts=10**9 + 55000, after=[timer(), thread_noise(70, 20000)])
    assert attribute.classify(s)[0] == "interrupt/softirq work"
    assert attribute.classify(s, TYPICAL)[0] == "preemption off"


def test_idle_that_kept_the_cpu_is_exit_from_idle():
    """Review item 4: the idle task's thread_noise (swapper/0:0) after the
    timer's interrupt is the way out of idle, not a preemption-off section."""
    s = sample(interrupted="<idle>:0", interrupted_comm="<idle>", interrupted_pid=0,
               after=[timer(), thread_noise(0, 60000, "swapper/0")], stack=IDLE_STACK)
    assert attribute.classify(s, TYPICAL)[0] == "exit from idle"


def test_a_softirq_on_the_idle_task_is_not_exit_from_idle():
    """Second review, item 3: interrupts off inside the RCU softirq the idle
    task ran is the softirq's section, not the way out of idle."""
    s = sample(irq_ns=62000, irq_ts=10**9 + 62000, interrupted_pid=0, interrupted="<idle>:0",
               interrupted_comm="<idle>", after=[timer(10**9 + 60000)],
               stack=SOFTIRQ_ON_IDLE_STACK)
    cls, key, _det = attribute.classify(s, TYPICAL)
    assert cls == "interrupts off"
    assert key == ("_raw_spin_unlock_irqrestore < free_unref_page_commit < free_unref_page"
                   " (softirq on idle)")
    # The same with the idle task's own noise after the interrupt.
    s = sample(interrupted_pid=0, interrupted="<idle>:0", interrupted_comm="<idle>",
               after=[timer(), thread_noise(0, 60000, "swapper/0")],
               stack=SOFTIRQ_ON_IDLE_STACK)
    assert attribute.classify(s, TYPICAL)[0] == "preemption off"


def test_a_softirq_the_timer_interrupted_is_not_blocking():
    """Review item 5: when the timer interrupted a softirq, osnoise starts
    the interrupted thread's noise at that softirq's start (timerlat_irq()),
    so its thread_noise holds the softirq's part before the interrupt."""
    softirq = {"kind": "softirq", "name": "RCU", "num": 9, "start": 10**9 - 4000,
               "dur": 2000}
    s = sample(after=[timer(), softirq, thread_noise(70, 11400, start=10**9 - 4000)])
    parts = attribute.components(s)[0]
    # The softirq started 5 us before the timer's interrupt (at +1 us).
    assert parts["blocking"] == 11400 - 5000


def test_the_parts_over_the_latency_are_said():
    s = sample(thread_ns=50000, after=[timer(), thread_noise(70, 40000)])
    parts, _who, over = attribute.components(s)
    # 1 us late, 30 us of timer interrupt, 40 us of thread: 21 us too many.
    assert parts["dispatch"] == 0 and over == 1000 + 30000 + 40000 - 50000


def test_no_part_that_stands_out_is_near_typical():
    """Review item 6: a sample 2 us over a typical one whose largest excess
    is 1 us, or whose largest excess is a third of what it has over a
    typical one, has no cause of its own."""
    s = sample(thread_ns=38000, after=[timer(dur=31000)])
    assert attribute.classify(s, TYPICAL)[0] == "near typical"
    spread = sample(thread_ns=66000, irq_ns=8000, irq_ts=10**9 + 8000,
                    after=[timer(10**9 + 7000, dur=40000), thread_noise(70, 10000)])
    cls, _key, det = attribute.classify(spread, TYPICAL)
    assert cls == "near typical", det["excess"]


def test_a_sample_below_every_typical_part_does_not_break():
    """Review item 7: with no part above its typical value (all excess <=
    0) the tie went to "threads", a part with no thread to name, and the
    name lookup raised (None.rsplit)."""
    typical = dict(TYPICAL, blocking=7000, irq_work=1000, dispatch=6000)
    s = sample(thread_ns=21000, irq_ns=1000, irq_ts=10**9 + 1000,
               after=[timer(10**9, dur=15000)])
    assert attribute.classify(s, typical)[0] == "near typical"
    assert attribute._biggest([]) is None


def test_user_space_is_not_a_missing_stack():
    s = sample(after=[timer(), thread_noise(70, 60000)],
               stack=["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20"])
    assert attribute.classify(s, TYPICAL)[1] == "(user space)"
    assert attribute.classify(dict(s, stack=None), TYPICAL)[1] == "(no stack)"


def test_the_irq_time_stamps_are_calibrated_on_the_reference():
    """Nit 15: the IRQ sample's time stamp is truncated to the microsecond,
    so the timer appears to start before it expired; the reference's median
    offset is added back."""
    ref = [sample(irq_ts=10**9 + 4000 + i, after=[timer(10**9 + 1000)]) for i in range(3)]
    # expiry = irq_ts - irq_ns = 1 s + 2000..2002 ns; the timer starts at 1000.
    assert attribute.irq_calibration(ref) == -1001
    late = sample(irq_ns=12000, irq_ts=10**9 + 12000, after=[timer(10**9 + 9000)])
    assert attribute.components(late)[0]["irq_delay"] == 9000
    assert attribute.components(late, -2000)[0]["irq_delay"] == 11000


def test_the_typical_split_is_the_median_of_the_reference_samples():
    res = analysed()
    assert res["reference_samples"] >= 50
    assert res["baseline_us"]["timer_irq"] > 0
    assert attribute.baseline([]) == {p: 0 for p in attribute.PARTS}


# --- aggregation -----------------------------------------------------------------------

def row(cls, key, us, seq, frames=()):
    return {"class": cls, "key": key, "thread_us": us, "seq": seq, "cpu": 0,
            "interrupted": "x:1", "frames": [{"frame": f, "line": None, "inlined": []}
                                             for f in frames]}


def test_aggregate_counts_worst_and_share():
    rows = [row("preemption off", "a", 80.0, 1), row("preemption off", "a", 120.0, 2),
            row("interrupts off", "b", 200.0, 3)]
    g = attribute.aggregate(rows)
    assert [(x["key"], x["samples"], x["worst_us"]) for x in g] == [("a", 2, 120.0),
                                                                    ("b", 1, 200.0)]
    assert g[0]["share"] == round(2 / 3, 4) and g[0]["example"]["seq"] == 2
    assert g[1]["latency_share"] == round(200 / 400, 4)


def test_measurement_samples_have_no_share():
    rows = [row("preemption off", "a", 80.0, 1), row("measurement", "rtla at x", 300.0, 2)]
    g = attribute.aggregate(rows)
    assert [(x["class"], x["share"]) for x in g] == [("preemption off", 1.0),
                                                      ("measurement", None)]


def test_one_section_seen_at_several_points_adds_up_inclusively():
    """Review item 10: samples inside filemap_map_pages() at its own code
    and in helpers it calls are rows of their own by site; the inclusive
    count puts them together."""
    rows = [row("preemption off", "set_pte_range < filemap_map_pages", 70.0, 1,
                ["set_pte_range+0x16/0x1f0", "filemap_map_pages+0x1/0x2", "do_syscall_64+0x1/0x2"]),
            row("preemption off", "next_uptodate_folio < filemap_map_pages", 65.0, 2,
                ["next_uptodate_folio+0x1/0x2", "filemap_map_pages+0x3/0x2"]),
            row("interrupts off", "x", 90.0, 3, ["x+0x1/0x2"])]
    inc = attribute.inclusive(rows)
    assert inc[0]["function"] == "filemap_map_pages" and inc[0]["samples"] == 2
    assert inc[0]["share"] == round(2 / 3, 4) and inc[0]["worst_us"] == 70.0
    assert "do_syscall_64" not in {g["function"] for g in inc}


def test_the_table_of_the_recorded_run():
    res = analysed()
    rows = attribute.aggregate(res["samples"])
    # The recorded run's 7 tail samples, all khugepaged's and the fork
    # phase's preemption-off sections (second review, item 5: what the
    # data says, not a sum that holds by construction).
    assert [(g["key"], g["class"], g["samples"], g["worst_us"]) for g in rows] == [
        ("collapse_huge_page < hpage_collapse_scan_pmd < khugepaged", "preemption off", 4,
         572.6),
        ("_raw_spin_unlock_irq < folio_isolate_lru < collapse_huge_page", "preemption off", 2,
         403.4),
        ("clear_page_erms < alloc_pages_bulk_noprof < alloc_pages_bulk_array_mempolicy_noprof",
         "preemption off", 1, 237.6)]
    assert [round(g["share"], 3) for g in rows] == [0.571, 0.286, 0.143]
    table = attribute.table("stock-tuned", res, 5)
    assert f">= {res['threshold_us']} us (timerlat's p99.9)" in table
    assert "per class:" in table and "inclusive:" in table and rows[0]["key"] in table


def test_a_reference_above_every_sample_says_so():
    res = analysed(reference_us=100000)
    assert res["problems"] == [] and res["reference_over"] == 0
    assert "reference 100000 us: 0 samples at or above it" in attribute.table("x", res, 3)
    empty = dict(res, samples=[])
    assert "no sample in the tail, nothing to attribute" in attribute.table("x", empty, 3)


# --- the command -----------------------------------------------------------------------

def test_input_reanalyses_a_recorded_boot_next_to_it(tmp_path, capsys):
    rec = tmp_path / "rec"
    rec.mkdir()
    log = rec / "stock-tuned-stress-set-smp1.log"
    log.write_text(text())
    assert attribute.main(["--input", str(log), "--threshold", "90"]) == 0
    out = capsys.readouterr().out
    # Nit 13: the variant is the name up to the load, "stock-tuned".
    assert out.startswith("stock-tuned: ") and "reference 90 us" in out
    res = json.loads((rec / "stock-tuned-stress-set-smp1.attribution.json").read_text())
    assert res["stock-tuned"]["sections"]


def test_the_log_name_gives_variant_and_load():
    assert attribute.log_name("/x/stock-tuned-stress-set-smp1.log") == ("stock-tuned",
                                                                         "stress-set")
    assert attribute.log_name("/x/project-none-smp2.log") == ("project", "none")
    assert attribute.log_name("/x/boot.log") == ("boot", None)


@pytest.mark.parametrize("argv", [
    [], ["--threshold", "0"], ["--from", "x", "--threshold", "5"],
    ["--threshold", "5", "--seconds", "0"], ["--threshold", "5", "--cpus", "3"],
    ["--threshold", "5", "--load", "nosuch"],
    ["--threshold", "5", "--kernel-dir", "x", "--variants", "a,b"],
    ["--threshold", "5", "--kernel-dir", "x", "--variants", "a", "--debug-info"],
])
def test_bad_arguments_are_refused_before_any_build(argv, capsys):
    with pytest.raises(SystemExit) as e:
        attribute.main(argv)
    assert e.value.code == 2 and "error:" in capsys.readouterr().err


def latency_run(**kw):
    r = {"kind": "latency", "variant": "project", "load": "stress-set", "rig": "smp1",
         "problems": [], "samples": 2000, "min": 1, "avg": 10.0, "max": 90,
         "hist": {"10": 1997, "50": 2, "90": 1}}
    r.update(kw)
    return r


def test_the_reference_is_the_pooled_p999_of_the_valid_runs(tmp_path):
    ok = latency_run()
    bad = latency_run(problems=["a splat"], hist={"500": 2000}, max=500)
    other = latency_run(rig="smp2", hist={"400": 2000}, max=400)
    (tmp_path / "results.json").write_text(json.dumps([ok, bad, other, dict(ok)]))
    # 4000 valid samples: 3994 at 10 us, 4 at 50, 2 at 90; p99.9 needs 3996.
    assert attribute.threshold_from(str(tmp_path), "project", "stress-set", 1) == 50
    assert attribute.threshold_from(str(tmp_path), "project", "stress-set", 2) == 400


def test_a_run_whose_load_did_no_work_is_not_a_reference(tmp_path):
    """Review item 11: the runs scripts/validate counts (report.judge_load()):
    a run whose load reported no work is left out."""
    work = {"stress-set-fork": 10}
    ok = latency_run(load_work=work)
    idle = latency_run(load_work={"stress-set-fork": 0}, hist={"300": 2000}, max=300)
    other = latency_run(variant="stock", load_work=work)
    (tmp_path / "results.json").write_text(json.dumps([ok, idle, other]))
    assert attribute.threshold_from(str(tmp_path), "project", "stress-set", 1) == 50


def test_a_reference_run_without_a_histogram_is_a_clear_error(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps([latency_run(hist=None)]))
    with pytest.raises(PvrtError, match="has no histogram"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)


def test_bad_reference_directories_are_clear_errors(tmp_path):
    with pytest.raises(PvrtError, match="no results.json"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)
    (tmp_path / "results.json").write_text("[{")
    with pytest.raises(PvrtError, match="not JSON"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)
    (tmp_path / "results.json").write_text(json.dumps([latency_run(problems=["x"])]))
    with pytest.raises(PvrtError, match="no valid cyclictest run of project"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)


# --- symbols ---------------------------------------------------------------------------

def symbols(syms):
    sym = attribute.Symbols.__new__(attribute.Symbols)
    sym.vmlinux, sym.tree, sym.debug_info = "vmlinux", None, True
    sym.mismatch, sym.asked = [], set()
    sym.syms = syms
    return sym


def test_a_vmlinux_of_another_build_is_caught():
    sym = symbols({"zap_pte_range": [(0xffffffff81200000, 0x100)]})
    assert sym.address("zap_pte_range+0x10/0x100", ret=False) == 0xffffffff81200010
    assert sym.address("zap_pte_range+0x10/0x100") == 0xffffffff8120000f
    assert sym.address("zap_pte_range+0x10/0x180") is None
    assert sym.mismatch and "size 0x180 in the trace" in sym.mismatch[0]


def test_a_vmlinux_whose_sizes_all_differ_is_not_a_result(monkeypatch):
    """Every frame of the recorded run checked against a vmlinux whose
    functions all have another size: not the traced kernel."""
    res = analysed()
    funcs = {attribute.func_of(f["frame"]) for r in res["samples"] for f in r["frames"]}
    sym = symbols({f: [(0xffffffff81000000, 0x7)] for f in funcs})
    monkeypatch.setattr(attribute.subprocess, "run", lambda *a, **k: pytest.fail("addr2line"))
    probs = analysed(symbols=sym)["problems"]
    assert any("the vmlinux is not the traced kernel's" in p for p in probs), probs


def test_a_few_frames_of_another_size_lose_only_their_file_line():
    """Nit 16: one mismatched function keeps the run a result."""
    res = analysed()
    funcs = sorted({attribute.func_of(f["frame"]) for r in res["samples"] for f in r["frames"]})
    sym = symbols({funcs[0]: [(0xffffffff81000000, 0x7)]})
    sym.debug_info = False
    out = analysed(symbols=sym)
    assert out["problems"] == []
    assert any("sizes differ from the vmlinux's" in n for n in out["notes"])


def test_addr2line_output_becomes_file_line_with_the_inlined_chain(monkeypatch):
    """addr2line -a -f -i prints, per address, a function and a file:line
    line per inlined function, innermost first: its output for the
    interrupted instruction folio_add_file_rmap_ptes+0x5/0xa0 of an earlier
    run, on its --debug-info twin's vmlinux (where the function is at
    0xffffffff81187500, the next symbol at 0xffffffff811875a0)."""
    sym = symbols({"folio_add_file_rmap_ptes": [(0xffffffff81187500, 0xa0)]})
    out = text(os.path.join(DATA, "addr2line-folio_add_file_rmap_ptes.txt"))
    calls = []

    class Done:
        stdout = out

    def run(cmd, **_kw):
        calls.append(cmd)
        return Done()
    monkeypatch.setattr(attribute.subprocess, "run", run)
    key = ("folio_add_file_rmap_ptes+0x5/0xa0", False)
    chain = sym.lines([key])[key]
    assert calls[0][-1] == "0xffffffff81187505"
    assert chain[0] == ("constant_test_bit", "arch/x86/include/asm/bitops.h:206")
    assert chain[-1] == ("folio_add_file_rmap_ptes", "mm/rmap.c:1507")
    assert len(chain) == 8
    row_ = attribute.frame_row(key[0], chain)
    assert row_["line"] == "mm/rmap.c:1507"
    assert row_["inlined"][0] == "constant_test_bit arch/x86/include/asm/bitops.h:206"
    assert attribute.frame_row("x+0x1/0x2", [])["line"] is None


def test_a_twin_with_other_code_is_caught(tmp_path):
    """Nit 17: the debug-info twin must have the measured kernel's code,
    byte for byte (.text), not only its symbols' addresses."""
    src = tmp_path / "a.c"
    src.write_text("int f(int x) { return x + 1; }\n")
    for name, extra in (("a", []), ("b", ["-g"]), ("c", ["-DX"])):
        d = tmp_path / name
        d.mkdir()
        if name == "c":
            src.write_text("int f(int x) { return x + 2; }\n")
        subprocess.run(["gcc", "-O2", "-c", str(src), "-o", str(d / "vmlinux")] + extra,
                       check=True)
        (d / "System.map").write_text("0000000000000000 T f\n")
    assert attribute.same_text(str(tmp_path / "a"), str(tmp_path / "b")) is None
    assert "the .text sections differ" in attribute.same_text(str(tmp_path / "a"),
                                                              str(tmp_path / "c"))


# --- --input runs the boot's checks (second review, blocker 1) ------------------------

def input_run(tmp_path, capsys, log_text, name="stock-tuned-stress-set-smp1.log"):
    log = tmp_path / name
    log.write_text(log_text)
    rc = attribute.main(["--input", str(log)])
    return rc, capsys.readouterr().out


@pytest.mark.parametrize("pattern,repl,want", [
    (r"^(PVRT-BEGIN attrib-hist)$",
     r"WARNING: CPU: 0 PID: 51 at mm/vmalloc.c:3000 vmap+0x10/0x20\n\1",
     "WARNING: CPU: 0 PID: 51 at mm/vmalloc.c"),
    (r"^(PVRT-BEGIN attrib-hist)$", r"BUG: scheduling while atomic: rtla/60/0x00000002\n\1",
     "BUG: scheduling while atomic"),
    (r"^PVRT-EXIT rc=0$", "PVRT-EXIT rc=3", "the command exited with 3"),
    (r"^PVRT-EXIT rc=0\n?", "", "the command did not finish"),
    (r"^PVRT-BOOTED .*\n", "", "no PVRT-BOOTED"),
])
def test_input_runs_the_boot_checks(pattern, repl, want, tmp_path, capsys):
    rc, out = input_run(tmp_path, capsys, mutate(pattern, repl))
    assert rc == 1 and "not a result" in out and want in out, out
    assert "per class" not in out


def test_input_takes_the_load_from_the_log_not_its_name(tmp_path, capsys):
    log = mutate(r"^PVRT-LOAD start \S+", "PVRT-LOAD start 9999.0")
    rc, out = input_run(tmp_path, capsys, log, name="run.log")
    assert rc == 1 and "the load started at 9999.00 s" in out, out


def test_input_without_the_load_line_or_a_name_is_not_a_result(tmp_path, capsys):
    log = mutate(r"^PVRT-LOAD start .*\n", "")
    rc, out = input_run(tmp_path, capsys, log, name="run.log")
    assert rc == 1 and "which load ran is not known" in out, out


def test_a_load_line_other_than_the_name_s_load_is_not_a_result():
    log = mutate(r"^(PVRT-LOAD start \S+) stress-set", r"\1 hackbench")
    assert any("the log says hackbench" in p for p in problems_of(log))


def test_the_load_is_read_from_its_start_line():
    assert attribute.load_marks(text())["load"] == "stress-set"


# --- rtla's stderr apart from its histogram (second review, blocker 2) ---------------

@pytest.mark.parametrize("pattern,repl", [
    # rtla's message flushed inside a bucket row, the count on a line of its own.
    (r"^132           0         1 $", "132           0 Oops, error disabling tracer\n1"),
    (r"^132           0         1 $", "132           0 \n        1"),
    # ... or inside the per-CPU max: line, read on -smp 2 where ALL: is not.
    (r"^max:         58       572 $", "max:         58  Oops, error disabling tracer\n572"),
])
def test_a_histogram_row_that_is_no_row_is_a_clear_error(pattern, repl):
    with pytest.raises(PvrtError, match="rtla's histogram"):
        analysed(mutate(pattern, repl))


def test_rtla_s_stderr_is_its_own_section():
    script = text(GUEST)
    assert re.search(r"> /tmp/attrib-hist 2> /tmp/attrib-rtla-stderr &", script)
    assert "Oops" not in "".join(section(text(), "attrib-hist"))
    assert section(text(), "attrib-rtla-stderr") == ["Oops, error disabling tracer"]


# --- the load's work (second review, item 4) ------------------------------------------

def test_the_guest_records_the_load_s_work():
    script = text(GUEST)
    assert "PVRT_LOAD_WORK=$work setsid stress-set" in script
    assert "echo hackbench >> $work" in script and "--metrics-brief" in script
    assert 'print "# load work:" w' in script
    assert section(text(), "attrib-load") == [
        "# load work: stress-set-console=1 stress-set-file-io=2 stress-set-fork=1"
        " stress-set-memory=2 stress-set-proc=1"]


@pytest.mark.parametrize("pattern,repl,want", [
    (r"^# load work: .*$", "# load work:", "the load (stress-set) reported no work"),
    (r"^# load work: .*$", "# load work: hdd=0 cpu=120", "the load (stress-set) did no hdd"),
    # The stress set stuck in one phase: alive, but not the load.
    (r"^PVRT-PHASE (console|memory 31|file-io 32|proc 33).*\n", "",
     "the stress set did not start every phase inside rtla's window"),
])
def test_a_load_that_did_not_work_is_not_a_result(pattern, repl, want):
    probs = problems_of(mutate(pattern, repl, count=0))
    assert any(want in p for p in probs), probs


def test_a_stress_set_log_before_the_load_section_reads_its_phases():
    log = mutate(r"^PVRT-BEGIN attrib-load\n.*\nPVRT-END attrib-load rc=0\n", "")
    res = analysed(log)
    assert res["problems"] == [], res["problems"]
    assert res["load_work"] == console.load_work(section(text(), "attrib-load"))


def test_a_load_without_its_work_record_is_not_a_result():
    log = mutate(r"^PVRT-BEGIN attrib-load\n.*\nPVRT-END attrib-load rc=0\n", "")
    log = mutate(r"^(PVRT-LOAD start \S+) stress-set", r"\1 hackbench", log)
    probs = attribute.analyse(log)["problems"]
    assert any("no record of the load's work" in p for p in probs), probs


# --- checks the first review's tests did not guard (second review, item 5) -----------

# rtla's window in the recorded run, on the trace clock: samples #11580 to
# #17579; the first printed one inside it is #11679, 99 periods later.
WINDOW_S = (28.004, 34.003)


def test_the_window_s_edges_are_placed_by_whole_periods():
    res = analysed()
    w = res["windows"][0]
    assert (w["first"], w["last"]) == (11580, 17579)
    assert tuple(res["window_s"]) == WINDOW_S


def _first_sample_uptime():
    return WINDOW_S[0] + attribute.load_marks(text())["clock"]


@pytest.mark.parametrize("delta,late", [(0.05, True), (-0.05, False)])
def test_the_load_start_against_the_window_s_first_sample(delta, late):
    """The window's first sample is placed from a printed sample of its run
    plus whole periods (the first printed one is 0.48 s later): a load
    started 50 ms after it did not cover the window, 50 ms before it did."""
    log = mutate(r"^PVRT-LOAD start \S+",
                 f"PVRT-LOAD start {_first_sample_uptime() + delta:.3f}")
    probs = problems_of(log)
    assert any("after rtla's first sample" in p for p in probs) == late, probs
    assert late or probs == []


@pytest.mark.parametrize("delta,early", [(-0.05, True), (0.05, False)])
def test_the_load_stop_against_the_window_s_last_sample(delta, early):
    last = WINDOW_S[1] + attribute.load_marks(text())["clock"]
    log = mutate(r"^PVRT-LOAD stop \S+ running", f"PVRT-LOAD stop {last + delta:.3f} running")
    probs = problems_of(log)
    assert any("before rtla's last sample" in p for p in probs) == early, probs


def test_the_tracer_s_buffer_code_in_another_task_is_measurement():
    """rtla's once-a-second read copies a page with interrupts off; the
    frames say so even when the task is not rtla (a kworker, the reader's
    splice in another task)."""
    s = sample(irq_ns=62000, irq_ts=10**9 + 62000, after=[timer(10**9 + 60000)],
               interrupted="kworker/0:1:40", interrupted_comm="kworker/0:1",
               interrupted_pid=40,
               stack=["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
                      "ring_buffer_read_page+0x1a0/0x3e0",
                      "tracing_buffers_splice_read+0x1c0/0x400", "splice_file_to_pipe+0x1/0x2"])
    cls, key, _det = attribute.classify(s, TYPICAL)
    assert cls == "measurement"
    assert key == ("kworker/0:1 at ring_buffer_read_page < tracing_buffers_splice_read"
                   " < splice_file_to_pipe")


# --- an ambiguous window (second review, item 7) --------------------------------------

def test_windows_with_other_tail_samples_are_ambiguous():
    """rtla's histogram {40: 1, 200: 1} fits three runs of this trace; the
    first two hold tail sample #2, the third #4: which samples are rtla's
    tail is not known."""
    lat = [(1, 40), (2, 200), (3, 40), (4, 200)]
    w = attribute.choose_window(lat, {40: 1, 200: 1}, 200)
    assert w["matches"] == 3 and w["ambiguous"]
    # Three runs of equal latencies hold the same (no) tail samples: the
    # first is taken, and the span the load must cover is all of them.
    w = attribute.choose_window([(1, 40), (2, 40), (3, 40)], {40: 2}, 100)
    assert w["matches"] == 2 and not w["ambiguous"]
    assert (w["first"], w["last"], w["span"]) == (1, 2, (1, 3))
    assert attribute.choose_window([(1, 40), (3, 41)], {40: 1, 41: 1}, 100) is None


def test_an_ambiguous_window_is_not_a_result(monkeypatch):
    real = attribute.choose_window

    def twice(lat, hist, p999):
        w = real(lat, hist, p999)
        return dict(w, matches=2, ambiguous=True)
    monkeypatch.setattr(attribute, "choose_window", twice)
    assert any("fits 2 runs of the trace" in p for p in problems_of(text()))


# --- restarts counted once (second review, item 8) ------------------------------------

def test_a_restart_with_no_printed_sample_does_not_move_the_window():
    """A timerlat thread that ran (and restarted) before the window without
    a sample printed in full: the printed samples are lined up with the
    "# lat" lines by position, not by restarts of their own."""
    log = mutate(r"^(PVRT-BEGIN attrib-trace\n)", r"\1# lat 0 99999: 40 41\n")
    res = analysed(log)
    assert res["problems"] == [], res["problems"]
    assert len(res["samples"]) == len(analysed()["samples"]) > 0


def test_the_table_says_the_reference_s_cut():
    """Nit 11: the reference is every 100th sample below the guest's cut,
    the higher of the histogram's p99 and the stack threshold."""
    res = analysed()
    cut = res["printed_from_us"]
    assert cut == 74 > res["stack_threshold_us"]
    assert (f"median of {res['reference_samples']} below {cut} us (the higher of the"
            " histogram's p99 and the stack threshold)") in attribute.table("x", res, 3)


def test_a_printed_sample_not_in_the_lat_lines_is_not_a_result():
    log = mutate(r"(context thread timer_latency +)237608 ns", r"\g<1>937608 ns")
    assert any("1 samples printed in full are not in the '# lat' lines" in p
               for p in problems_of(log)), problems_of(log)


def test_the_guest_stops_the_whole_load(tmp_path):
    """Nits 9-10: the load runs as a process group of its own, without the
    trace pipe (fd 3), and stop_load() leaves none of its processes, a
    child writing (the console phase's seq) included; its work is noted."""
    script = text(GUEST)
    fns = script[script.index("work=/tmp/attrib-load-work"):script.index("# Keep, per CPU")]
    fns = fns.replace("/tmp/attrib-load-work", str(tmp_path / "work"))
    fake = tmp_path / "stress-set"
    fake.write_text('#!/bin/sh\necho stress-set-memory >> "$PVRT_LOAD_WORK"\n'
                    'ls -l /proc/$$/fd/ > "$PVRT_LOAD_WORK.fds"\n'
                    # A child of another name, as the console phase's seq.
                    'sleep 30 &\nsleep 30\n')
    fake.chmod(0o755)
    run = (fns + "\nsecs=1; warmup=0; load=stress-set\nnow() { echo 1.0; }\n"
           "exec 3< /dev/null\nstart_load\nsleep 0.5\nstop_load\n"
           "sleep 0.2\nps -o pid= -g \"$lpid\" || true\n")
    out = subprocess.run(["sh", "-c", run], capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}"))
    lines = out.stdout.split("\n")
    assert lines[0] == "PVRT-LOAD start 1.0 stress-set" and lines[1].startswith(
        "PVRT-LOAD stop 1.0 running"), out
    assert [ln for ln in lines[2:] if ln.strip()] == [], out
    assert (tmp_path / "work").read_text() == "stress-set-memory\n"
    assert " 3 -> " not in (tmp_path / "work.fds").read_text()


def test_base_defconfig_builds_from_it_and_refuses_another_base_s_thresholds(tmp_path,
                                                                              monkeypatch):
    """--base defconfig: the kernels of scripts/validate --base defconfig, and
    a --from run of allnoconfig kernels gives them no threshold."""
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(attribute.tools, "require", lambda *a: None)
    (tmp_path / "results.json").write_text(json.dumps([latency_run()]))
    (tmp_path / "meta.json").write_text(json.dumps({"base_config": "allnoconfig",
                                                    "kernel_config": None}))
    with pytest.raises(PvrtError, match="built from allnoconfig, these from defconfig"):
        attribute.main(["--base", "defconfig", "--from", str(tmp_path), "--variants",
                        "project"])
    seen = []

    class Built(Exception):
        pass

    def apply_and_build(top, bdir, names, log, base_target=None):
        seen.append((names, base_target))
        raise Built
    monkeypatch.setattr(attribute.experiment, "apply_and_build", apply_and_build)
    (tmp_path / "meta.json").write_text(json.dumps({"base_config": "defconfig"}))
    with pytest.raises(Built):
        attribute.main(["--base", "defconfig", "--from", str(tmp_path), "--variants",
                        "project"])
    with pytest.raises(Built):
        attribute.main(["--threshold", "50", "--variants", "project"])
    assert seen == [(["project"], "x86_64_defconfig"), (["project"], None)]
