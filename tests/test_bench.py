# SPDX-License-Identifier: GPL-2.0
"""pvrt.bench_pv_mutex: parsing the module's lines and the tables."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts", "lib"))
from pvrt import bench_pv_mutex as bench  # noqa: E402


def test_parse_and_tables():
    text = ("[ 1.0] pv_mutex_bench: uncontended pv_mutex 50\n"
            "[ 1.0] pv_mutex_bench: uncontended rt_mutex 100\n"
            "[ 1.0] pv_mutex_bench: uncontended mutex 40\n"
            "[ 2.0] pv_mutex_bench: chain pv_mutex 1 1000\n"
            "[ 2.0] pv_mutex_bench: chain rt_mutex 1 2000\n"
            "[ 2.0] pv_mutex_bench: chain pv_mutex 2 1500\n"
            "[ 2.0] pv_mutex_bench: chain rt_mutex 2 3000\n"
            "[ 2.0] pv_mutex_bench: chain pv+rt 1 2200\n"
            "[ 2.0] pv_mutex_bench: chain pv+rt 2 3300\n"
            "[ 3.0] pv_mutex_bench: done\n")
    unc, chain, done = bench.parse(text)
    assert done and unc == {"pv_mutex": 50, "rt_mutex": 100, "mutex": 40}
    assert chain == {"pv_mutex": {1: 1000, 2: 1500}, "rt_mutex": {1: 2000, 2: 3000},
                     "pv+rt": {1: 2200, 2: 3300}}
    out = bench.tables(unc, chain)
    assert "pv_mutex         50         0.50" in out
    assert "      2      1500      3000      3300   0.50     1.10" in out
    assert "per chain level (least-squares slope): pv_mutex 500 ns, rt_mutex 1000 ns," \
           " pv+rt 1100 ns; pv/rt 0.50" in out


def test_slope_is_least_squares():
    assert bench.slope([(1, 2), (2, 4), (4, 8)]) == 2
    assert bench.slope([(1, 5)]) is None


def test_one_percentile_convention_everywhere():
    """console.percentile: nearest rank on 1 us buckets, the bucket's lower
    edge; bench-ikt's pooled rows and cyclictest's table agree on it."""
    from pvrt import bench_ikt, console
    hist = {3: 50, 7: 49, 20: 1}                    # 100 samples
    assert console.percentile(hist, 100, 50) == 3
    assert console.percentile(hist, 100, 99) == 7
    assert console.percentile(hist, 100, 99.5) == 20
    assert console.percentile(hist, 101, 100, above=99) == 99    # an overflow
    assert console.Latency(hist, 0, 3, 5.0, 20).p99 == 7
    # bench-ikt: one run's p50/p99 come from its histogram as well (us -> ns),
    # not from the module's sorted-array indices (its p99 here is 20 us).
    row = {"load": "hackbench", "handler": "IKT thread", "boot": "", "threaded": True,
           "prio": 50, "samples": 100, "min": 3000, "avg": 5000, "p50": 3500, "p99": 20000,
           "max": 20900, "hist": hist}
    (p,) = bench_ikt.pool([row])
    assert (p["p50"], p["p99"]) == (3000, 7000)
    # Never outside the exact extremes: a 3.4 us minimum lies in the 3 us bucket.
    (p,) = bench_ikt.pool([dict(row, min=3400)])
    assert p["p50"] == 3400
