# SPDX-License-Identifier: GPL-2.0
"""scripts/trace-latency: the preemptirqsoff report parser and its grouping."""

import os

from pvrt import console, tracelat

DATA = os.path.join(os.path.dirname(__file__), "data", "preemptirqsoff-stock.txt")


def sections():
    with open(DATA, encoding="utf-8") as f:
        return console.latency_trace(console.lines(f.read()))


def test_each_second_gives_its_worst_section_with_its_stack():
    secs = sections()
    assert [(s["second"], s["latency_us"]) for s in secs] == [(1, 1649), (2, 397), (3, 388)]
    first = secs[0]
    assert (first["task"], first["started"], first["ended"]) == \
        ("hackbench", "free_unref_page", "free_unref_page")
    assert first["stack"][:2] == ["skb_release_data", "__kfree_skb"]
    assert first["caller"] == "skb_release_data" and first["lock_op"] is None
    assert secs[1]["stack"][:2] == ["down_write", "unlink_anon_vmas"]
    assert secs[2]["task"] == "rcu_preempt"


def test_lock_functions_are_named_and_skipped_for_the_caller():
    text = """=== max 7 248
#    | task: hackbench-70 (uid:0 nice:0 policy:0 rt_prio:0)
#  => started at: _raw_spin_lock
#  => ended at:   _raw_spin_unlock
hackbenc-70  0...1.  250us : <stack trace>
 => tracer_preempt_on
 => _raw_spin_unlock
 => unmap_page_range
 => unmap_vmas
=== max 8 0
"""
    (sec,) = console.latency_trace(console.lines(text))     # a zero second is dropped
    assert sec["stack"] == ["_raw_spin_unlock", "unmap_page_range", "unmap_vmas"]
    assert sec["lock_op"] == "_raw_spin_unlock" and sec["caller"] == "unmap_page_range"


def test_worst_sections_group_by_place_worst_first():
    s = sections()
    again = dict(s[1], latency_us=500, second=4)
    rows = console.worst_sections(s + [again], top=2)
    assert [(r["started"], r["max_us"], r["count"]) for r in rows] == \
        [("free_unref_page", 1649, 1), ("down_write", 500, 2)]
    assert rows[1]["mean_us"] == (397 + 500) / 2
    table = tracelat.table("stock", rows)
    assert "skb_release_data" in table and "1649" in table


def test_traced_twin_shares_the_build_and_keeps_the_cmdline():
    top = os.path.join(os.path.dirname(__file__), "..")
    v = tracelat.traced(top, "threadirqs")
    assert v.name == "stock-trace" and v.cmdline == ["threadirqs"]
    assert v.fragments[-1] == tracelat.TRACE_FRAGMENT
    assert tracelat.traced(top, "project").fragments[-1] == tracelat.TRACE_FRAGMENT
