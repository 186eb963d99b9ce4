# SPDX-License-Identifier: GPL-2.0
"""scripts/lock-advisor: parsers, safety rules and ranking on recorded input."""

import os

import pytest

from pvrt import advisor, build, console
from pvrt.errors import PvrtError

DATA = os.path.join(os.path.dirname(__file__), "data", "lock-advisor-project.log")

LOCK_STAT = """\
lock_stat version 0.4
-----------------------------------------------------------------------
                              class name    con-bounces    contentions   waittime-min   waittime-max waittime-total   waittime-avg    acq-bounces   acquisitions   holdtime-min   holdtime-max holdtime-total   holdtime-avg
-----------------------------------------------------------------------

                      &proc_lock:            2              4           0.50          10.00          20.00           5.00             10           1000           0.10          40.00         2000.00           2.00
                      ----------
                      &proc_lock              3          [<00000000a1b2c3d4>] proc_reader+0x10/0x80
                      &proc_lock              1          [<00000000a1b2c3d5>] proc_writer+0x22/0x90
                      ----------
                      &proc_lock              4          [<00000000a1b2c3d6>] proc_reader+0x10/0x80
.......................................................................
                      &irq_lock:            0              0           0.00           0.00           0.00           0.00              0            500           0.10         999.00          500.00           1.00
                      &bh_lock:            0              0           0.00           0.00           0.00           0.00              0            300           0.10           9.00          300.00           1.00
                      &off_lock:            0              0           0.00           0.00           0.00           0.00              0            200           0.10           9.00          200.00           1.00
                      &inner_lock:            0              0           0.00           0.00           0.00           0.00              0            100           0.10           7.00          100.00           1.00
                      raw_outer:            0              0           0.00           0.00           0.00           0.00              0            100           0.10           3.00          100.00           1.00
                      &rw_lock-W:            0              0           0.00           0.00           0.00           0.00              0             10           0.10           3.00           10.00           1.00
                      &rw_lock-R:            0              0           0.00           0.00           0.00           0.00              0             30           0.10           5.00           30.00           1.00
                      &short_lock:           50            100           0.10           1.00          10.00           0.10             60            200           0.01           0.05            2.00           0.01
                      &mm->mmap_lock-W:            0              0           0.00           0.00           0.00           0.00              0             50           0.10         900.00         1000.00          20.00
                      &pcp->lock:            0              0           0.00           0.00           0.00           0.00              0            900           0.10         500.00          900.00           1.00
                      sched_map-wait-type-override:            0              0           0.00           0.00           0.00           0.00              0            900           0.10         800.00          900.00           1.00
                      &unused_lock:            0              0           0.00           0.00           0.00           0.00              0              0           0.00           0.00            0.00           0.00
"""

LOCKDEP = """\
all lock classes:
00000000aaaa0001 FD:    1 BD:    1 +.+. WT:config: &proc_lock

00000000aaaa0002 FD:    1 BD:    1 -.-. WT:config: &irq_lock

00000000aaaa0003 FD:    1 BD:    1 +... WT:config: &bh_lock

00000000aaaa0004 FD:    1 BD:    1 .... WT:config: &off_lock

00000000aaaa0005 FD:    1 BD:    2 +.+. WT:config: &inner_lock

00000000aaaa0006 FD:    2 BD:    1 +.+. WT:spin: raw_outer
 -> [00000000aaaa0005] &inner_lock

00000000aaaa0007 FD:    1 BD:    1 +.+. WT:config: &rw_lock

00000000aaaa0008 FD:    1 BD:    1 +.+. WT:config: &short_lock

00000000aaaa0009 FD:   40 BD:    1 ++++ WT:sleep: &mm->mmap_lock
 -> [00000000aaaa0005] &inner_lock

00000000aaaa000a FD:    1 BD:    1 +.+. WT:config: &unused_lock

00000000aaaa000b FD:    1 BD:    1 +.+. WT:config: &pcp->lock

00000000aaaa000c FD:    1 BD:    1 +.+. WT:config,override: sched_map-wait-type-override
"""

SECTIONS = [
    {"started": "_raw_spin_lock", "ended": "_raw_spin_unlock", "caller": "proc_reader",
     "lock_op": "_raw_spin_unlock", "count": 3, "max_us": 300, "mean_us": 200.0,
     "task": "cat", "stack": ["proc_reader", "seq_read"]},
    {"started": "free_pages", "ended": "free_pages", "caller": "zap_pte_range",
     "lock_op": None, "count": 1, "max_us": 100, "mean_us": 100.0,
     "task": "stress-ng", "stack": ["zap_pte_range", "unmap_page_range"]},
]


def rows_by_class(t_sched_ns=2000, sections=SECTIONS):
    stats = advisor.parse_lock_stat(LOCK_STAT.splitlines())
    deps = advisor.parse_lockdep(LOCKDEP.splitlines())
    rows, others = advisor.analyse(stats, deps, t_sched_ns, sections, top=0)
    return {r["class"]: r for r in rows}, others


def test_lock_stat_rows_points_and_read_write_halves():
    stats = advisor.parse_lock_stat(LOCK_STAT.splitlines())
    p = stats["&proc_lock"]
    assert (p["acquisitions"], p["contentions"], p["hold_avg"], p["hold_max"]) == \
        (1000, 4, 2.0, 40.0)
    # contention and contending points of one class, summed per function
    assert p["points"] == {"proc_reader": 7, "proc_writer": 1}
    rw = stats["&rw_lock"]
    assert rw["read"] and rw["acquisitions"] == 40 and rw["hold_max"] == 5.0
    assert rw["hold_avg"] == pytest.approx(40.0 / 40)
    assert not stats["&proc_lock"]["read"]


def test_lockdep_classes_wait_types_and_edges():
    deps = advisor.parse_lockdep(LOCKDEP.splitlines())
    assert deps["&irq_lock"]["usage"] == "-.-." and deps["&irq_lock"]["wait"] == "config"
    assert deps["raw_outer"]["wait"] == "spin"
    assert deps["raw_outer"]["after"] == ["&inner_lock"]
    assert deps["&mm->mmap_lock"]["wait"] == "sleep"


def test_only_spinlock_t_classes_are_ranked():
    rows, others = rows_by_class()
    assert "raw_outer" not in rows and "&mm->mmap_lock" not in rows
    assert "&rw_lock" not in rows, "a class taken for reading is an rwlock_t"
    assert "&unused_lock" not in rows, "a class not taken in the run says nothing"
    assert "sched_map-wait-type-override" not in rows, "an annotation is no lock"
    assert others == {"raw_spinlock_t": 1, "rwlock_t": 1, "sleeping lock": 1,
                      "annotation": 1}


def test_each_lockdep_safety_rule_makes_a_class_unsafe():
    rows, _ = rows_by_class()
    assert rows["&irq_lock"]["verdict"] == "unsafe"
    assert any(n.startswith("hardirq") for n in rows["&irq_lock"]["notes"])
    assert any(n.startswith("softirq") for n in rows["&irq_lock"]["notes"])
    assert [n.split(":")[0] for n in rows["&bh_lock"]["notes"]] == ["bh-off"]
    assert [n.split(":")[0] for n in rows["&off_lock"]["notes"]] == ["irqs-off"]
    # taken under a raw spinlock: unsafe; under a sleeping lock: fine
    assert rows["&inner_lock"]["notes"] == ["nested: taken inside raw_spinlock_t raw_outer"]


def test_a_per_cpu_lock_is_left_for_review_not_recommended():
    rows, _ = rows_by_class()
    assert rows["&pcp->lock"]["verdict"] == "review"
    assert rows["&pcp->lock"]["notes"][0].startswith("per-CPU")
    assert rows["&proc_lock"]["verdict"] == "convert"


def test_unsafe_is_never_recommended_whatever_its_numbers():
    rows, _ = rows_by_class()
    # &irq_lock has the longest hold of all and would otherwise rank first
    assert rows["&irq_lock"]["hold_max_us"] == max(r["hold_max_us"] for r in rows.values())
    ranked = advisor.analyse(advisor.parse_lock_stat(LOCK_STAT.splitlines()),
                             advisor.parse_lockdep(LOCKDEP.splitlines()), 2000, SECTIONS,
                             top=0)[0]
    verdicts = [r["verdict"] for r in ranked]
    assert verdicts.index("unsafe") > verdicts.index("convert")
    assert all(r["verdict"] == "unsafe" for r in ranked[verdicts.index("unsafe"):])


def test_equation_5_threshold_and_verdict():
    rows, _ = rows_by_class(t_sched_ns=2000)
    p = rows["&proc_lock"]
    assert p["p"] == pytest.approx(0.004)
    # 4 * 2 us * 0.004 / 0.996
    assert p["threshold_us"] == pytest.approx(4 * 2.0 * 0.004 / 0.996)
    assert p["verdict"] == "convert"
    # contended half the time, held 0.01 us on average: 4 * 2 * 0.5 / 0.5 = 8 us
    s = rows["&short_lock"]
    assert s["threshold_us"] == pytest.approx(8.0) and s["verdict"] == "no gain (eq. 5)"
    assert advisor.threshold_us(2.0, 1.0) == float("inf")


def test_sections_are_attributed_through_contention_points():
    rows, _ = rows_by_class()
    assert rows["&proc_lock"]["covers"] == [(1, 300)]
    assert rows["&proc_lock"]["covers_pct"] == pytest.approx(75.0)
    assert rows["&off_lock"]["covers"] == []


def test_convertible_classes_rank_by_coverage_first():
    rows, _ = rows_by_class()
    ranked = advisor.analyse(advisor.parse_lock_stat(LOCK_STAT.splitlines()),
                             advisor.parse_lockdep(LOCKDEP.splitlines()), 2000, SECTIONS,
                             top=0)[0]
    assert ranked[0]["class"] == "&proc_lock"


def test_t_sched_line():
    line = ("[   12.3] pi_football: T_sched max 41 us (1000 wake-ups per CPU, mean 5230 ns),"
            " T_cs max 1012 us, calibration wait max 1100 us")
    assert advisor.parse_t_sched([line]) == (5230, 41)
    assert advisor.parse_t_sched(["T_sched max 41 us (100 wake-ups per CPU)"]) is None


def test_a_boot_without_the_sections_is_an_error():
    with pytest.raises(PvrtError, match="lock_stat"):
        advisor.analyse_text("PVRT-BOOTED\n", [], 10)


def wrap(name, body, rc=0):
    return f"PVRT-BEGIN {name}\n{body}PVRT-END {name} rc={rc}\n"


def test_lockdep_switched_off_is_reported():
    stat = LOCK_STAT.replace("lock_stat version 0.4\n", "lock_stat version 0.4\n"
                             "*WARNING* lock debugging disabled!! - possibly due to a"
                             " lockdep warning\n")
    text = (wrap("lock_stat", stat) + wrap("lockdep", LOCKDEP) +
            wrap("t_sched", "T_sched max 4 us (10 wake-ups per CPU, mean 3000 ns)\n"))
    rows, _o, t_sched, warnings = advisor.analyse_text(text, SECTIONS, 0)
    assert t_sched == (3000, 4) and rows
    assert warnings and "switched itself off" in warnings[0]
    _r, _o, _t, clean = advisor.analyse_text(text.replace("*WARNING* lock debugging", "x"),
                                             SECTIONS, 0)
    assert clean == []


def test_recorded_boot_of_the_project_kernel():
    """The sections of a real boot of the converted project kernel
    (scripts/lock-advisor, 30 s of stress-set)."""
    with open(DATA, encoding="utf-8") as f:
        text = f.read()
    rows, others, t_sched, warnings = advisor.analyse_text(text, [], 0)
    assert warnings == []
    assert t_sched[0] > 0
    by = {r["class"]: r for r in rows}
    # the page allocator's zone->lock is only ever taken with interrupts off
    assert by["&zone->lock"]["verdict"] == "unsafe"
    assert any(n.startswith("irqs-off") for n in by["&zone->lock"]["notes"])
    assert others.get("raw_spinlock_t", 0) > 0
    # the series' conversions are sleeping locks to lockdep in this kernel
    deps = advisor.parse_lockdep(console.sections(text)["lockdep"][1])
    for name in ("&info->lock", "cdev_lock.lock", "&ent->pde_unload_lock"):
        assert deps[name]["wait"] == "sleep", name
        assert name not in by


def test_lockstat_twin_drops_what_switches_lockdep_off():
    top = os.path.join(os.path.dirname(__file__), "..")
    v = advisor.lockstat_twin(top, "project")
    assert v.name == "project-lockstat"
    assert v.fragments[-1] == advisor.LOCKSTAT_FRAGMENT
    assert advisor.BENCH_FRAGMENT not in v.fragments
    assert "series-kunitconfigs" not in v.fragments
    assert "variants/fragments/validation.config" in v.fragments
    assert v.cmdline == build.Variant("project", top).cmdline
