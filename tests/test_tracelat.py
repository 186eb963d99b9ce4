# SPDX-License-Identifier: GPL-2.0
"""scripts/trace-latency: the preemptirqsoff report parser and its grouping."""

import os

import pytest

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


def _stub_build_and_boot(tmp_path, monkeypatch, mod):
    """MOD's build and boot recorded: [(what, the build directory)]."""
    from pvrt import build
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    seen = []

    class Booted(Exception):
        pass

    def build_variant(top, tree, var, out=None, **k):
        seen.append(("build", var.name, out))
        return out

    def boot(image, cmd, log_path, **k):
        seen.append(("boot", k.get("append"), os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.dirname(image))))))
        raise Booted
    monkeypatch.setattr(build, "build_variant", build_variant)
    monkeypatch.setattr(mod.boot, "boot", boot)
    return seen, Booted


def test_a_stock_kernels_traced_twin_is_built_and_booted_in_the_base_build(tmp_path,
                                                                           monkeypatch):
    """threadirqs' twin is stock's, built from the series' base: out/stock-trace-base."""
    top = os.path.join(os.path.dirname(__file__), "..")
    seen, booted = _stub_build_and_boot(tmp_path, monkeypatch, tracelat)
    with pytest.raises(booted):
        tracelat.trace_variant(top, "tree", "threadirqs", 10, "none", str(tmp_path))
    out = str(tmp_path / "out" / "stock-trace-base")
    assert seen == [("build", "stock-trace", out), ("boot", "threadirqs", out)]


def test_a_stock_kernels_lockstat_twin_is_built_and_booted_in_the_base_build(tmp_path,
                                                                             monkeypatch):
    from pvrt import advisor
    top = os.path.join(os.path.dirname(__file__), "..")
    seen, booted = _stub_build_and_boot(tmp_path, monkeypatch, advisor)
    with pytest.raises(booted):
        advisor.boot_advisor(top, "tree", "stock-tuned", 10, "none", str(tmp_path))
    out = str(tmp_path / "out" / "stock-tuned-lockstat-base")
    assert seen == [("build", "stock-tuned-lockstat", out), ("boot", "", out)]
