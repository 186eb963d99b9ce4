# SPDX-License-Identifier: GPL-2.0
"""scripts/attribute-latency: the timerlat trace of guest/latency-attribute
parsed, each tail sample classified, the samples grouped, and runs that are
no result refused.

The logs in tests/data/attribute/ are console logs of real boots of the
project kernel (allnoconfig-based, -smp 1 -icount) running
guest/latency-attribute, recorded by scripts/attribute-latency; see the
README there.  Where a case needs a run that went wrong (lost events, a
sample missing from the trace), it changes a copy of a real log in the
open, below."""

import json
import os
import re

import pytest

from pvrt import attribute, console
from pvrt.errors import PvrtError

DATA = os.path.join(os.path.dirname(__file__), "data", "attribute")
TAIL = os.path.join(DATA, "project-stress-set-smp1.log")      # recorded at THRESHOLD us
NONE = os.path.join(DATA, "project-none-smp1.log")            # no load, recorded at 500 us


def text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def threshold_of(log_text):
    """The threshold the guest traced at, from its own section."""
    return int(re.search(r"threshold (\d+) us", log_text).group(1))


def trace_lines(log_text):
    return console.sections(log_text)["attrib-trace"][1]


def test_parse_reads_every_tail_sample_with_its_window_and_stack():
    log = text(TAIL)
    thr = threshold_of(log)
    tr = attribute.parse_trace(trace_lines(log))
    assert tr["lost"] == 0
    assert tr["totals"]["threshold_us"] == thr
    # The guest counted 8 at or above the threshold: the last 4 came from the
    # timerlat thread that rtla's exit restarted (sequence back to #5,
    # print_stack back to 0, interrupting rtla itself), after the run.
    assert tr["totals"]["over"] == 8 and tr["after_run"] == 4
    assert len(tr["samples"]) == 4
    assert tr["reference"], "the guest prints every 100th window below the threshold"
    for s in tr["samples"]:
        assert s["thread_ns"] >= thr * 1000
        assert s["irq_ns"] is not None and s["irq_ns"] <= s["thread_ns"]
        assert s["stack"] and attribute.func_of(s["stack"][0]) == "timerlat_irq"
        # The timer's own interrupt is in every window after its IRQ sample.
        assert any(e["kind"] == "irq" for e in s["after"])
    for s in tr["reference"]:
        assert s["thread_ns"] < thr * 1000 and s["stack"] is None


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


def sample(**kw):
    """A sample as parse_trace() returns it: a 100 us thread latency whose
    IRQ came 2 us after the timer expired at t = 1 s."""
    s = {"cpu": 0, "seq": 1, "thread_ns": 100000, "ts": 10**9 + 100000, "irq_ns": 2000,
         "irq_ts": 10**9 + 2000, "interrupted": "hackbench:70", "interrupted_pid": 70,
         "before": [], "after": [{"kind": "irq", "name": "local_timer", "num": 236,
                                  "start": 10**9 + 1000, "dur": 30000}],
         "stack": ["timerlat_irq+0x1/0x2", "asm_sysvec_apic_timer_interrupt+0x16/0x20",
                   "zap_pte_range+0x10/0x100", "unmap_page_range+0x20/0x200"]}
    s.update(kw)
    return s


TYPICAL = {"irq_delay": 1000, "timer_irq": 30000, "blocking": 0, "irq_work": 0,
           "threads": 0, "dispatch": 5000}


def thread_noise(pid, dur, name="hackbench"):
    return {"kind": "thread", "name": name, "num": pid, "start": 10**9 + 3000, "dur": dur}


@pytest.mark.parametrize("case,want", [
    # The interrupted thread kept the CPU for 60 us: preemption off, at the site.
    (dict(after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 1000,
                  "dur": 30000}, thread_noise(70, 60000)]),
     ("preemption off", "zap_pte_range < unmap_page_range")),
    # The timer's interrupt started 60 us late: interrupts off, where it landed.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000,
          after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 60000,
                  "dur": 30000}]),
     ("interrupts off", "zap_pte_range < unmap_page_range")),
    # ... in the idle task: exit from idle.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000, interrupted_pid=0, interrupted="<idle>:0",
          after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 60000,
                  "dur": 30000}]),
     ("exit from idle", "zap_pte_range < unmap_page_range")),
    # An interrupt that ran across the expiry delayed the timer's: its work.
    (dict(irq_ns=62000, irq_ts=10**9 + 62000,
          before=[{"kind": "irq", "name": "virtio0", "num": 24, "start": 10**9 - 5000,
                   "dur": 64000}],
          after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 60000,
                  "dur": 30000}]),
     ("interrupt/softirq work", "irq virtio0:24")),
    # A softirq ran 60 us between the interrupt and the thread.
    (dict(after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 1000,
                  "dur": 30000},
                 {"kind": "softirq", "name": "RCU", "num": 9, "start": 10**9 + 3000,
                  "dur": 60000}]),
     ("interrupt/softirq work", "softirq RCU")),
    # The timer's interrupt itself ran 90 us (its other hrtimers).
    (dict(after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 1000,
                  "dur": 90000}]),
     ("interrupt/softirq work", "the timer interrupt itself (expired hrtimers)")),
    # Another thread ran 60 us first.
    (dict(after=[{"kind": "irq", "name": "local_timer", "num": 236, "start": 10**9 + 1000,
                  "dur": 30000}, thread_noise(99, 60000, "migration/0")]),
     ("blocking thread", "migration/0")),
])
def test_the_part_beyond_a_typical_sample_names_the_cause(case, want):
    cls, key, det = attribute.classify(sample(**case), TYPICAL)
    assert (cls, key) == want
    assert sum(det["parts"].values()) >= sample(**case)["thread_ns"] - 1


def test_a_part_every_sample_pays_is_no_cause():
    """The timer interrupt's 30 us is in every sample: without the typical
    split it is the largest part of this 65 us one, with it the 25 us the
    interrupted thread kept the CPU are the cause."""
    s = sample(thread_ns=65000, ts=10**9 + 65000,
               after=[{"kind": "irq", "name": "local_timer", "num": 236,
                       "start": 10**9 + 1000, "dur": 30000}, thread_noise(70, 25000)])
    assert attribute.classify(s)[0] == "interrupt/softirq work"
    assert attribute.classify(s, TYPICAL)[0] == "preemption off"


def test_the_typical_split_is_the_median_of_the_reference_samples():
    log = text(TAIL)
    tr = attribute.parse_trace(trace_lines(log))
    base = attribute.baseline(tr["reference"])
    timer = sorted(attribute.components(s)[0]["timer_irq"] for s in tr["reference"])
    assert base["timer_irq"] == timer[len(timer) // 2] > 0
    assert attribute.baseline([]) == {p: 0 for p in attribute.PARTS}


def test_a_recorded_run_is_a_result_and_every_sample_is_attributed():
    log = text(TAIL)
    thr = threshold_of(log)
    res = attribute.analyse(log, thr)
    assert res["problems"] == []
    assert len(res["samples"]) == res["hist_over"] > 0
    assert all(r["class"] in attribute.CLASSES and r["key"] for r in res["samples"])
    rows = attribute.aggregate(res["samples"])
    assert sum(g["samples"] for g in rows) == len(res["samples"])
    assert abs(sum(g["share"] for g in rows) - 1) < 0.01
    assert [g["samples"] for g in rows] == sorted((g["samples"] for g in rows), reverse=True)
    assert max(g["worst_us"] for g in rows) == max(r["thread_us"] for r in res["samples"])
    classes = attribute.aggregate(res["samples"], by="class")
    assert {g["class"] for g in classes} == {r["class"] for r in res["samples"]}
    table = attribute.table("project", res, 5)
    assert f">= {thr} us" in table and "per class:" in table
    assert rows[0]["key"] in table


def test_aggregate_counts_worst_and_share():
    rows = [{"class": "preemption off", "key": "a", "thread_us": 80.0, "seq": 1, "cpu": 0,
             "interrupted": "x:1", "frames": []},
            {"class": "preemption off", "key": "a", "thread_us": 120.0, "seq": 2, "cpu": 0,
             "interrupted": "x:1", "frames": []},
            {"class": "interrupts off", "key": "b", "thread_us": 200.0, "seq": 3, "cpu": 0,
             "interrupted": "y:2", "frames": []}]
    g = attribute.aggregate(rows)
    assert [(x["key"], x["samples"], x["worst_us"]) for x in g] == [("a", 2, 120.0),
                                                                    ("b", 1, 200.0)]
    assert g[0]["share"] == round(2 / 3, 4) and g[0]["example"]["seq"] == 2
    assert g[1]["latency_share"] == round(200 / 400, 4)


def test_lost_events_are_not_a_result(capsys, tmp_path):
    log = text(TAIL)
    thr = threshold_of(log)
    # The ring buffer overwrote events: its statistics say so.
    overrun = re.sub(r"^overrun: 0$", "overrun: 17", log, count=1, flags=re.M)
    assert overrun != log
    res = attribute.analyse(overrun, thr)
    assert any("17 overrun" in p for p in res["problems"])
    rc = attribute.report_results({"project": res}, str(tmp_path / "a.json"),
                                  str(tmp_path / "a.png"), 10)
    out = capsys.readouterr().out
    assert rc == 1 and "project: not a result" in out and "per class" not in out
    assert not (tmp_path / "a.png").exists()
    # The reader saw the gap: the kernel's own "[LOST N EVENTS]" line.
    first = trace_lines(log)[0]
    lost = log.replace(first, "CPU:0 [LOST 3 EVENTS]\n" + first, 1)
    assert "the trace lost 3 events" in attribute.analyse(lost, thr)["problems"]


def test_a_trace_missing_a_sample_rtla_counted_is_not_a_result():
    log = text(TAIL)
    thr = threshold_of(log)
    lines = trace_lines(log)
    # Drop the first tail sample's thread line: rtla's histogram still counts it.
    i = next(i for i, ln in enumerate(lines) if "context thread" in ln
             and int(ln.split("timer_latency")[1].split()[0]) >= thr * 1000)
    cut = log.replace(lines[i] + "\n", "", 1)
    probs = attribute.analyse(cut, thr)["problems"]
    assert any(p.startswith("rtla counted") for p in probs), probs


def test_a_run_without_tail_samples_says_so(capsys, tmp_path):
    log = text(NONE)
    thr = threshold_of(log)
    res = attribute.analyse(log, thr)
    assert res["problems"] == [] and res["samples"] == [] and res["timerlat_samples"] > 0
    assert "no sample above the threshold" in attribute.table("project", res, 10)
    rc = attribute.report_results({"project": res}, str(tmp_path / "a.json"),
                                  str(tmp_path / "a.png"), 10)
    assert rc == 0 and "no sample above the threshold" in capsys.readouterr().out
    assert json.loads((tmp_path / "a.json").read_text())["project"]["sections"] == []


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(PvrtError, match="line 2: not a trace line"):
        attribute.parse_trace(["# samples 1 irq 1 at-or-above 50 us: 0 lost-lines 0",
                               "garbage"])
    with pytest.raises(PvrtError, match="no '# samples' line"):
        attribute.parse_trace(trace_lines(text(TAIL))[:20])
    with pytest.raises(PvrtError, match="no attrib-hist section"):
        attribute.analyse("PVRT-BOOTED 6.12\nPVRT-EXIT rc=0\n", 50)
    with pytest.raises(PvrtError, match="no results.json"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)
    (tmp_path / "results.json").write_text("[{")
    with pytest.raises(PvrtError, match="not JSON"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)
    (tmp_path / "results.json").write_text(json.dumps([
        {"kind": "latency", "variant": "project", "load": "stress-set", "rig": "smp1",
         "problems": ["no samples"], "samples": 0, "hist": {}}]))
    with pytest.raises(PvrtError, match="no valid cyclictest run of project"):
        attribute.threshold_from(str(tmp_path), "project", "stress-set", 1)
    with pytest.raises(PvrtError, match="not found"):
        attribute.main(["--input", str(tmp_path / "missing.log")])
    # A recorded boot has the stacks of its own threshold only: another one
    # is refused, and nothing is written next to it.
    rec = tmp_path / "rec"
    rec.mkdir()
    log = rec / "project-stress-set-smp1.log"
    log.write_text(text(TAIL))
    with pytest.raises(PvrtError, match="traced at 65 us, not 60 us"):
        attribute.main(["--input", str(log), "--threshold", "60"])
    assert os.listdir(rec) == [log.name]
    assert attribute.main(["--input", str(log)]) == 0
    assert (rec / "project-stress-set-smp1.attribution.json").exists()


@pytest.mark.parametrize("argv", [
    [], ["--threshold", "0"], ["--from", "x", "--threshold", "5"],
    ["--threshold", "5", "--seconds", "0"], ["--threshold", "5", "--cpus", "3"],
    ["--threshold", "5", "--load", "nosuch"],
])
def test_bad_arguments_are_refused_before_any_build(argv, capsys):
    with pytest.raises(SystemExit) as e:
        attribute.main(argv)
    assert e.value.code == 2 and "error:" in capsys.readouterr().err


def test_the_threshold_is_the_pooled_p999_of_the_valid_runs(tmp_path):
    ok = {"kind": "latency", "variant": "project", "load": "stress-set", "rig": "smp1",
          "problems": [], "samples": 2000, "min": 1, "avg": 10.0, "max": 90,
          "hist": {"10": 1997, "50": 2, "90": 1}}
    bad = dict(ok, problems=["a splat"], hist={"500": 2000}, max=500)
    other = dict(ok, rig="smp2", hist={"400": 2000}, max=400)
    (tmp_path / "results.json").write_text(json.dumps([ok, bad, other, dict(ok)]))
    # 4000 valid samples: 3994 at 10 us, 4 at 50, 2 at 90; p99.9 needs 3996.
    assert attribute.threshold_from(str(tmp_path), "project", "stress-set", 1) == 50
    assert attribute.threshold_from(str(tmp_path), "project", "stress-set", 2) == 400


def test_a_vmlinux_of_another_build_is_caught():
    sym = attribute.Symbols.__new__(attribute.Symbols)
    sym.vmlinux, sym.tree, sym.debug_info, sym.mismatch = "vmlinux", None, True, []
    sym.syms = {"zap_pte_range": [(0xffffffff81200000, 0x100)]}
    assert sym.address("zap_pte_range+0x10/0x100", ret=False) == 0xffffffff81200010
    assert sym.address("zap_pte_range+0x10/0x100") == 0xffffffff8120000f
    assert sym.address("zap_pte_range+0x10/0x180") is None
    assert sym.mismatch and "size 0x180 in the trace" in sym.mismatch[0]


def test_addr2line_output_becomes_file_line_with_the_inlined_chain(monkeypatch):
    """addr2line -a -f -i prints, per address, a function and a file:line
    line per inlined function, innermost first: its output for the
    interrupted instruction folio_add_file_rmap_ptes+0x5/0xa0 of the recorded
    20 s run, on the --debug-info twin's vmlinux (where the function is at
    0xffffffff81187500, the next symbol at 0xffffffff811875a0)."""
    sym = attribute.Symbols.__new__(attribute.Symbols)
    sym.vmlinux, sym.tree, sym.debug_info, sym.mismatch = "vmlinux", None, True, []
    sym.syms = {"folio_add_file_rmap_ptes": [(0xffffffff81187500, 0xa0)]}
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
    row = attribute.frame_row(key[0], chain)
    assert row["line"] == "mm/rmap.c:1507"
    assert row["inlined"][0] == "constant_test_bit arch/x86/include/asm/bitops.h:206"
    assert attribute.frame_row("x+0x1/0x2", [])["line"] is None
