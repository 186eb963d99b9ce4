# SPDX-License-Identifier: GPL-2.0
"""The validation report: pooled percentiles, the goals' verdicts, rtla parsing."""

import os

import pytest

from pvrt import console, report, validate


def lat(variant, run_no, hist, mx, load="stress-set"):
    return {"kind": "latency", "variant": variant, "load": load, "run": run_no,
            "samples": sum(hist.values()), "min": min(hist), "avg": 1.0, "max": mx,
            "hist": hist}


def test_pool_sums_histograms_and_keeps_every_maximum():
    rows = [lat("stock", 1, {10: 9999, 700: 1}, 700), lat("stock", 2, {10: 9999, 900: 1}, 900)]
    p = report.pool(rows)["stock"]
    assert p["samples"] == 20000 and p["maxes"] == [700, 900] and p["median_max"] == 800
    assert p["p99"] == 10 and p["max"] == 900
    # 99.99 % of 20000 samples is 19998: the 10 us bucket holds that many.
    # 99.999 % is 19999.8: only the last sample, 900 us, reaches it.
    assert p["p9999"] == 10 and p["p99999"] == 900


def test_headline_ratio_of_median_maxima_and_verdicts():
    rows = [lat(v, n, {5: 99, mx: 1}, mx) for n in (1, 2, 3)
            for v, mx in (("stock", 1000 + n), ("rt", 30 + n), ("project", 400 + n))]
    head = {h[0]: h for h in report.headline(rows)}
    stock = head["max latency under stress-set: project / stock PREEMPT"]
    assert stock[1].startswith("0.40 ") and stock[3] == "met"
    rt = head["max latency under stress-set: project / PREEMPT_RT"]
    assert rt[1].startswith(f"{402 / 32:.2f} ")
    assert rt[3] == f"missed: {402 / 32 / 1.5:.1f} x the limit"


def test_headline_says_one_run_is_not_a_claim():
    rows = [lat("stock", 1, {5: 1, 100: 1}, 100), lat("project", 1, {5: 1, 40: 1}, 40)]
    (h,) = report.headline(rows)
    assert h[3] == "met (1 run: not a claim)"


def test_headline_compares_with_stock_pcp0_when_it_ran():
    """stock-pcp0 (stock PREEMPT with the project's PCP batch setting) in
    the run: the headline gives project / stock-pcp0, a ratio without a goal."""
    rows = [lat(v, 1, {5: 99, mx: 1}, mx)
            for v, mx in (("stock", 1000), ("stock-pcp0", 800), ("rt", 300), ("project", 400))]
    head = {h[0]: h for h in report.headline(rows)}
    pcp = head["max latency under stress-set: project / stock PREEMPT with"
               " CONFIG_PCP_BATCH_SCALE_MAX=0 (stock-pcp0)"]
    assert pcp[1].startswith("0.50 (project 400 / stock-pcp0 800 us")
    assert pcp[2:] == ("none: what the project gains beyond that option", "-")
    assert len(head) == 4
    assert len(report.headline([r for r in rows if r["variant"] != "stock-pcp0"])) == 3


def test_stock_pcp0_row_without_valid_runs_is_not_enough():
    """The stock-pcp0 row has no goal, but an invalid stock-pcp0 run still
    leaves it unjudged: "not enough valid runs", no ratio."""
    rows = [lat(v, 1, {5: 99, mx: 1}, mx)
            for v, mx in (("stock", 1000), ("stock-pcp0", 800), ("project", 400))]
    rows[1]["problems"] = ["timed out after 640s"]
    head = {h[0]: h for h in report.headline(rows)}
    pcp = head["max latency under stress-set: project / stock PREEMPT with"
               " CONFIG_PCP_BATCH_SCALE_MAX=0 (stock-pcp0)"]
    assert pcp[1:] == ("-", "none: what the project gains beyond that option",
                       "not enough valid runs: stock-pcp0 0 of 1")
    assert head["max latency under stress-set: project / stock PREEMPT"][3] == \
        "met (1 run: not a claim)"


SPLAT = "console line 812: BUG: scheduling while atomic: stress-ng-vm/1255/0x00000002"


def test_headline_counts_only_valid_runs():
    """A run with problems (a splat, a time-out, no PVRT-EXIT) is listed as
    invalid and left out of every figure; a goal with fewer valid runs than
    were made is "not enough valid runs", never met."""
    rows = [lat("stock", n, {5: 99, 1000: 1}, 1000) for n in (1, 2, 3)]
    rows += [dict(lat("project", n, {5: 99, 400: 1}, 400), problems=[SPLAT]) for n in (1, 2)]
    rows += [lat("project", 3, {5: 99, 600: 1}, 600)]
    (h,) = report.headline(rows)
    assert h[1].startswith("0.60 ") and h[3] == "not enough valid runs: project 1 of 3"
    assert [(r["variant"], r["run"], why) for r, why in report.invalid_runs(rows)] == [
        ("project", 1, [SPLAT]), ("project", 2, [SPLAT])]
    assert [(t[0], t[2], t[10]) for t in report.latency_table(rows)] == [
        ("stock", 3, 1000), ("project", 1, 600)]
    md = report.markdown(rows, {"load": "stress-set"}, {})
    assert "| project | stress-set | 1 | - | " + SPLAT + " |" in md
    # No valid run at all: the goal is still there, and not met.
    rows = [lat("stock", 1, {5: 99, 1000: 1}, 1000),
            dict(lat("project", 1, {5: 99, 400: 1}, 400), problems=[SPLAT])]
    (h,) = report.headline(rows)
    assert (h[1], h[3]) == ("-", "not enough valid runs: project 0 of 1")
    # A cyclictest run without a sample counts for nothing.
    rows[1].update(problems=[], hist={}, samples=0)
    assert report.headline(rows)[0][3] == "not enough valid runs: project 0 of 1"
    assert report.invalid_runs(rows)[0][1] == ["no samples"]


def test_a_run_whose_every_sample_overflowed_counts():
    """A run without a sample within the histogram's range still measured
    its maximum (cyclictest's "# Max Latencies"): it is valid, pooled (its
    percentiles are its maximum), and the table notes it."""
    over = dict(lat("project", 1, {1: 1}, 25000), hist={}, samples=42, min=21000)
    rows = [lat("stock", 1, {5: 99, 1000: 1}, 1000), over]
    assert report.valid(over) and report.invalid_runs(rows) == []
    (h,) = report.headline(rows)
    assert h[1].startswith("25.00 (project 25000 / stock 1000 us") and h[3].startswith("missed")
    proj = report.latency_table(rows)[1]
    assert proj[:5] == ("project", "stress-set", 1, 42, 21000)
    assert proj[6:] == (25000, 25000, 25000, 25000, 25000,
                        "25000 (all 42 samples overflowed the histogram)")


def test_headline_ikt_goal_needs_clean_boots():
    rows = [{"kind": "ikt", "load": "rt-hog", "handler": "IKT thread", "p99": 9000,
             "max": 9000, "problems": [SPLAT]},
            {"kind": "ikt", "load": "rt-hog", "handler": "threadirqs", "p99": 10000,
             "max": 10000, "problems": []}]
    head = {h[0]: h[3] for h in report.headline(rows)}
    assert head["interrupt response max under rt-hog: IKT thread / threadirqs"] == \
        "not enough valid runs: IKT thread 0 of 1"
    # The same-priority pair was not measured at all: never "met".
    assert head["interrupt response max under rt-hog: IKT thread / threadirqs + chrt"] == \
        "not enough valid runs: IKT thread 0 of 1, threadirqs + chrt 0 of 1"


def _irow(handler, prio, mx, load="rt-hog", **kw):
    return dict({"kind": "ikt", "load": load, "handler": handler, "p99": mx, "max": mx,
                 "threaded": True, "prio": prio, "prio_max": prio, "samples": 1000,
                 "problems": []}, **kw)


def test_headline_ikt_same_priority_pair_compares_mechanisms():
    """The same-priority pair is judged only when both threads ran at one
    priority for every sample; the boot-configured pair compares settings
    and says so."""
    rows = [_irow("IKT thread", 90, 9000), _irow("threadirqs + chrt", 90, 10000),
            _irow("threadirqs", 50, 30000)]
    head = {h[0]: h for h in report.headline(rows)}
    same = head["interrupt response max under rt-hog: IKT thread / threadirqs + chrt"]
    assert same[3] == "met" and "same priority, FIFO 90" in same[1]
    boot = head["interrupt response max under rt-hog: IKT thread / threadirqs"]
    assert boot[3] == "met" and "as configured at boot, FIFO 90 / 50" in boot[1]
    # chrt did not take (the thread stayed at FIFO 50): not the same mechanism test.
    rows[1] = _irow("threadirqs + chrt", 50, 10000)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["interrupt response max under rt-hog: IKT thread / threadirqs + chrt"][3] == \
        "not comparable: FIFO 90 / 50"
    # A priority that changed during the run is no single priority either.
    rows[1] = _irow("threadirqs + chrt", 50, 10000, prio_max=90)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["interrupt response max under rt-hog: IKT thread / threadirqs + chrt"][3] == \
        "not comparable: FIFO 90 / 50-90"


def test_ikt_bench_counts_every_sample():
    """ikt_bench's threaded= counts samples: a threaded handler that ran in
    hard interrupt context for some samples is "mixed" and a problem, as is
    a priority that changed; the last sample alone decides nothing."""
    from pvrt import bench_ikt
    text = ("ikt_bench: result thread threaded=999 prio=50 prio_max=50 samples=1000 min=1"
            " avg=1 p50=1 p99=1 max=1\n"
            "ikt_bench: result hard threaded=0 prio=0 prio_max=0 samples=1000 min=1"
            " avg=1 p50=1 p99=1 max=1\n"
            "ikt_bench: result timer threaded=1000 prio=1 prio_max=70 samples=1000 min=1"
            " avg=1 p50=1 p99=1 max=1\nikt_bench: done\n")
    found, done = bench_ikt.parse(text)
    assert done and found["thread"]["threaded"] is None and found["hard"]["threaded"] is False
    rows = {m: dict(r, load="rt-hog", handler=h, boot="") for (m, h), r in
            zip((("thread", "IKT thread"), ("hard", "hard"), ("timer", "timer: ktimers")),
                (found["thread"], found["hard"], found["timer"]))}
    assert bench_ikt.context(rows["thread"]) == "mixed"
    assert bench_ikt.context_problems(rows["thread"]) == [
        "rt-hog/IKT thread: 999 of 1000 samples ran in a thread, expected all"]
    assert bench_ikt.context_problems(rows["hard"]) == []
    assert bench_ikt.context_problems(rows["timer"]) == [
        "rt-hog/timer: ktimers: its priority changed during the run (FIFO 1-70)"]
    # IKT's timer callbacks must all run in ktimers; mainline's may run in
    # whichever task enables bottom halves: informative, not a problem.
    mixed = dict(rows["timer"], threaded=None, threaded_n=183, prio_max=1)
    assert bench_ikt.context_problems(mixed) == [
        "rt-hog/timer: ktimers: 183 of 1000 samples ran in a thread, expected all"]
    assert bench_ikt.context_problems(dict(mixed, handler="timer: ksoftirqd")) == []
    assert bench_ikt.prio(dict(mixed, prio=0, prio_max=50)) == "0-50"
    # Pooled with a clean run, the row stays mixed and keeps its problems.
    (p,) = bench_ikt.pool([dict(rows["thread"], hist={1: 1000}, problems=["x"]),
                           dict(rows["thread"], threaded=True, threaded_n=1000,
                                hist={1: 1000}, problems=[])])
    assert p["threaded"] is None and p["threaded_n"] == 1999 and p["problems"] == ["x"]


def test_headline_chain_and_ikt_goals():
    rows = [{"kind": "chain", "lock": "pv_mutex", "wait_max_us": 1200, "bound_us": 1000,
             "t_cs_us": 990, "t_sched_us": 5},
            {"kind": "chain", "lock": "mutex", "wait_max_us": 9000, "bound_us": 1000,
             "t_cs_us": 990, "t_sched_us": 5},
            {"kind": "ikt", "load": "rt-hog", "handler": "IKT thread", "p99": 9000,
             "max": 20000},
            {"kind": "ikt", "load": "rt-hog", "handler": "threadirqs", "p99": 10000,
             "max": 10000}]
    head = {h[0]: h for h in report.headline(rows)}
    chain = head[CHAIN_GOAL]
    assert chain[1].startswith("21.00 ") and chain[3] == "missed: 21.0 x 2 T_sched over T_cs"
    assert head["interrupt response p99 under rt-hog: IKT thread / threadirqs"][3] == "met"
    assert head["interrupt response max under rt-hog: IKT thread / threadirqs"][3] == \
        "missed: 2.0 x the limit"


CHAIN_GOAL = "chained inversion, pv_mutex: (high's wait - T_cs) / T_handoff"


def chain_row(**kw):
    return dict({"kind": "chain", "lock": "pv_mutex", "scenario": "PVLOCK09",
                 "wait_max_us": 46601, "bound_us": 48239, "t_cs_us": 48229, "t_sched_us": 5,
                 "verdict": "SUCCESS",
                 "expect": "SUCCESS", "splats": [], "problem": None, "problems": []}, **kw)


def test_headline_chain_goal_is_not_met_by_an_invalid_run():
    """The pv_mutex chain row with problems (a splat in its section, no
    progress, no verdict) is not a measurement: its goal is "not enough valid
    runs" with the reason, never met, whatever the ratio."""
    head = {h[0]: h for h in report.headline([chain_row()])}
    assert head[CHAIN_GOAL][3] == "met"
    why = "PVLOCK09: 1 splat: BUG: scheduling while atomic: pi_football/77/0x00000002"
    row = chain_row(splats=["BUG: scheduling while atomic: pi_football/77/0x00000002"],
                    problems=[why])
    (h,) = report.headline([row])
    assert h[1].startswith("-162.80 ")
    assert h[3] == f"not enough valid runs: pv_mutex chain 0 of 1 ({why})"
    # No section line at all (the boot died first): the goal is still there.
    why = "PVLOCK09: verdict none, expected SUCCESS; no output: timed out after 900s"
    row = chain_row(wait_max_us=None, bound_us=None, verdict=None, problem="no output",
                    problems=[why])
    (h,) = report.headline([row])
    assert (h[1], h[3]) == ("-", f"not enough valid runs: pv_mutex chain 0 of 1 ({why})")
    # The scenario's own FAILURE over the bound is a measurement: missed.
    row = chain_row(wait_max_us=60000, verdict="FAILURE",
                    problems=["PVLOCK09: verdict FAILURE, expected SUCCESS"])
    (h,) = report.headline([row])
    assert h[3] == "missed: 1177.1 x 2 T_sched over T_cs"
    # FAILURE within the bound (an unboosted holder): not met either.
    row["wait_max_us"] = 46601
    assert report.headline([row])[0][3].startswith("not enough valid runs: pv_mutex chain 0 of 1")


RTLA_TOP = """\
                                     Timer Latency
  0 00:00:30   |          IRQ Timer Latency (us)        |         Thread Timer Latency (us)
CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max
  0 #29961     |        4         1         6       311 |       11         5        19       873
""".splitlines()


def test_parse_rtla_summary_and_analysis():
    # What rtla 6.12 printed in a stock boot under the stress set.
    aa = """\
## CPU 0 hit stop tracing, analyzing it ##
  IRQ handler delay:                                         0.00 us (0.00 %)
  IRQ latency:                                            1613.34 us
  Blocking thread:
                    stress-ng-vm:1255
    Blocking thread stack trace
                -> timerlat_irq
                -> hrtimer_interrupt
                -> asm_sysvec_apic_timer_interrupt
                -> _raw_spin_unlock_irqrestore
                -> free_unref_page_commit
                -> free_unref_folios
                -> release_pages
------------------------------------------------------------------------
     IRQ latency:                                         1613.34 us (100%)""".splitlines()
    row = validate.parse_rtla(RTLA_TOP, aa)
    assert (row["samples"], row["irq_avg"], row["irq_max"], row["thread_max"]) == \
        (29961, 6, 311, 873)
    assert row["aa_summary"] == (
        "IRQ handler delay 0.00 us; IRQ latency 1613.34 us; blocking thread stress-ng-vm;"
        " interrupted in _raw_spin_unlock_irqrestore < free_unref_page_commit"
        " < free_unref_folios")
    assert validate.parse_rtla([], [])["aa_summary"] is None


def test_report_written_with_plots(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [lat(v, 1, {5: 99, mx: 1}, mx) for v, mx in (("stock", 900), ("project", 300))]
    rows[0].update(series=[(0.0, 5), (1.0, 900)], phases=[("memory", 0.0), ("fork", 0.5)])
    paths = report.write(rows, {"load": "stress-set", "seconds": 20, "runs": 1,
                                "variants": ["stock", "project"]}, str(tmp_path))
    for key in ("histogram", "survival", "over_time", "report"):
        assert os.path.getsize(paths[key]) > 500, key
    md = (tmp_path / "report.md").read_text()
    assert "| max latency under stress-set: project / stock PREEMPT | 0.33" in md
    assert "![survival](survival.png)" in md


def test_a_missed_latency_goal_names_the_tracer_sections():
    rows = [lat(v, 1, {5: 99, mx: 1}, mx) for v, mx in (("stock", 900), ("project", 800))]
    assert report.remaining_causes(rows, "stress-set") == []       # no tracer run
    rows.append({"kind": "trace", "variant": "project", "sections": [
        {"second": 1, "latency_us": 1600, "task": "stress-ng-vm", "started": "free_pcppages",
         "ended": "_raw_spin_unlock_irqrestore", "stack": ["free_unref_page_commit"],
         "lock_op": "_raw_spin_unlock_irqrestore", "caller": "free_unref_page_commit"}]})
    (line,) = report.remaining_causes(rows, "stress-set")
    assert line.startswith("1600 us: free_unref_page_commit (_raw_spin_unlock_irqrestore;")
    md = report.markdown(rows, {"load": "stress-set"}, {})
    assert "- 1600 us: free_unref_page_commit" in md


def test_a_run_whose_load_did_too_little_work_is_invalid():
    """Load bounded by time: a kernel on which the load did less than half
    the work it did on the others is measured under less load; a load
    that reported no work did not run.  Runs without the record (older
    results, load none) are not judged."""
    hist = {10: 100}
    rows = [dict(lat("stock", 1, hist, 10), load_work={"stress-set-fork": 10, "find": 4}),
            dict(lat("rt", 1, hist, 10), load_work={"stress-set-fork": 12, "find": 4}),
            dict(lat("project", 1, hist, 10), load_work={"stress-set-fork": 4, "find": 4}),
            dict(lat("threadirqs", 1, hist, 10), load_work={}),
            lat("stock-pcp0", 1, hist, 10)]
    report.judge_load(rows)
    bad = {r["variant"]: why for r, why in report.invalid_runs(rows)}
    assert set(bad) == {"project", "threadirqs"}
    assert bad["project"] == ["the load did less than 50% of its work on the other kernels:"
                              " stress-set-fork 4, the other kernels' median 10"]
    assert bad["threadirqs"] == ["the load (stress-set) reported no work"]
    assert {r["variant"] for r in report.latency_rows(rows)} == {"stock", "rt", "stock-pcp0"}
    # Judged again from scratch: a fixed row is valid again.
    rows[2]["load_work"]["stress-set-fork"] = 9
    report.judge_load(rows)
    assert {r["variant"] for r, _ in report.invalid_runs(rows)} == {"threadirqs"}


def test_chain_goal_is_the_bound_without_slack():
    """The recorded PVLOCK09 run (wait 46602 us, T_cs 48229 us, T_sched 5
    us) meets the goal; a holder unboosted for 200 us, 4 % of the bound
    and within the old 10 % slack, misses it: 20 x 2 T_sched."""
    assert report.headline([chain_row(wait_max_us=46602)])[0][3] == "met"
    (h,) = report.headline([chain_row(wait_max_us=48229 + 10, problems=[])])
    assert h[3] == "met"                         # exactly T_cs + 2 T_sched
    (h,) = report.headline([chain_row(wait_max_us=48229 + 200, verdict="FAILURE",
                                      problems=["PVLOCK09: verdict FAILURE"])])
    assert h[3] == "missed: 20.0 x 2 T_sched over T_cs"


def test_soak_plot_and_duration(tmp_path):
    """--soak: one long run per kernel, every window's maximum kept and
    drawn over hours with the running maximum (soak.png)."""
    assert [validate.duration(x) for x in ("90", "600s", "30m", "2h")] == [90, 600, 1800, 7200]
    for bad in ("0", "1d", "x", "-5m"):
        with pytest.raises(Exception, match="want a duration"):
            validate.duration(bad)
    rows = []
    for v, worst in (("stock", 900), ("project", 300)):
        r = lat(v, 1, {10: 3000, worst: 1}, worst)
        r["series"] = [(float(t), 10 + (worst - 10) * (t == 1800)) for t in range(1, 3601)]
        rows.append(r)
    paths = report.write(rows, {"load": "stress-set", "seconds": 3600, "runs": 1,
                                "soak": 3600}, str(tmp_path))
    assert os.path.getsize(paths["soak"]) > 10000
    assert "Soak: window maxima and running maximum" in open(paths["report"]).read()
    # Without --soak no soak plot.
    (tmp_path / "x").mkdir()
    assert "soak" not in report.write(rows, {"load": "stress-set"}, str(tmp_path / "x"))


def test_soak_excludes_runs_and_seconds(capsys):
    for extra in (["--runs", "3"], ["--seconds", "20"], ["--full"]):
        with pytest.raises(SystemExit):
            validate.main(["--soak", "1h", *extra])
        assert "--soak is one run of DURATION per kernel" in capsys.readouterr().err


def test_bench_ikt_same_priority_pair_that_is_not():
    """bench-ikt's own ratios and exit status refuse a same-priority pair
    whose threads ran at different priorities, as the report does."""
    from pvrt import bench_ikt
    rows = [_irow("IKT thread", 90, 9000, boot="", samples=10),
            _irow("threadirqs + chrt", 50, 10000, boot="", samples=10)]
    assert bench_ikt.incomparable(rows) == [
        "rt-hog: IKT thread / threadirqs + chrt is a same-priority pair, but ran at FIFO 90 / 50"]
    assert "NOT COMPARABLE" in bench_ikt.ratios([dict(r, min=1, avg=1, p50=1) for r in rows])
    rows[1]["prio"] = rows[1]["prio_max"] = 90
    assert bench_ikt.incomparable(rows) == []


def test_chain_goal_in_units_of_the_measured_handoff():
    """A run that measured T_handoff (its calibration rounds' kick-off and two
    lock hand-offs, others' time excluded) is judged in units of that term:
    a healthy wait 60 us over T_cs, 3 x 2 T_sched but within the hand-offs
    the kernel needs, meets the goal; a holder unboosted for 200 us misses
    it, in units of T_handoff."""
    row = chain_row(wait_max_us=46626 + 60, t_cs_us=46626, t_sched_us=10, handoff_us=87,
                    bound_us=46713)
    (h,) = report.headline([row])
    assert h[3] == "met" and h[1].startswith("0.69 ") and "T_handoff 87 us" in h[1]
    (h,) = report.headline([dict(row, wait_max_us=46626 + 200, verdict="FAILURE",
                                 problems=["PVLOCK09: verdict FAILURE"])])
    assert h[3] == "missed: 2.3 x T_handoff over T_cs"


def test_a_two_cpu_runs_windows_are_one_line_per_cpu():
    """cyclictest -t 2 -a prints its threads' windows interleaved in console
    order; drawn as one line, the stock-tuned smp2 panel of the FULL run went
    back in time.  Each CPU's windows are their own series, in time order;
    results saved before the thread was recorded are thread 0."""
    body = ["# cyclictest start uptime 3.50 interval 200 reduce 5000",
            "       0:    4000:      31", "       1:    4999:      40",
            "       1:    9000:      45", "       1:   14000:      44",
            "       0:    6000:      33", "       0:   12000:      32"]
    _, series = console.cyclictest_series(body)
    per = report.series_by_thread(series)
    assert per == {0: [(1.0, 31), (2.0, 33), (3.0, 32)], 1: [(1.0, 40), (2.0, 45), (3.0, 44)]}
    assert all(xs == sorted(xs) for xs in ([t for t, _ in p] for p in per.values()))
    assert report.series_by_thread([[1.0, 5], [2.0, 7]]) == {0: [(1.0, 5), (2.0, 7)]}


def _rig_rows(rt2, tuned2=3000, stock2=6000, proj2=600, rt1=30, runs=(1, 2, 3)):
    """Three runs per kernel on smp1 and smp2: each run's maximum as given,
    the bulk of its samples at 5 us."""
    rows = []
    for n in runs:
        for rig, figures in (("smp1", (("stock-tuned", 4000), ("stock", 5000), ("rt", rt1),
                                       ("project", 400))),
                             ("smp2", (("stock-tuned", tuned2), ("stock", stock2), ("rt", rt2),
                                       ("project", proj2)))):
            for v, mx in figures:
                if mx is None:
                    continue
                r = lat(v, n, {5: 99999, mx: 1}, mx)
                r["rig"] = rig
                rows.append(r)
    return rows


def _set_max(rows, variant, rig, us):
    """Give every run of VARIANT on RIG the maximum US (one sample)."""
    for r in rows:
        if r["variant"] == variant and r["rig"] == rig:
            r["max"] = us
            r["hist"] = {5: 99999, us: 1}
    return rows


def test_a_rig_with_a_floor_of_its_own_judges_only_above_it():
    """The -smp 2 icount rig of 20261125-022931: PREEMPT_RT's median maximum
    1870 us there against 29 us on smp1, every kernel on the rig's floor.
    Its ratios with PREEMPT_RT, and with a kernel below twice the floor, are
    not judged (they read "met" before); a kernel far above it is."""
    rows = _rig_rows(rt2=1870)
    head = {h[0]: h for h in report.headline(rows)}
    rt2 = head["max latency under stress-set (smp2): project / PREEMPT_RT"]
    assert rt2[3] == ("not judged: PREEMPT_RT measures the smp2 rig's round-robin floor"
                      " (PREEMPT_RT's median maximum 1870 us there, 30 us on smp1)")
    tuned2 = head["max latency under stress-set (smp2): project / stock-tuned (stock PREEMPT"
                  " with the project's configuration, none of its code)"]
    assert tuned2[1].startswith("0.20 ") and tuned2[3] == (
        "not judged: stock-tuned's median maximum is below 2 x the smp2 rig's round-robin"
        " floor (PREEMPT_RT's median maximum 1870 us there, 30 us on smp1), there or on smp1")
    assert head["max latency under stress-set (smp2): project / stock PREEMPT"][3] == "met"
    assert head["p99.99 latency under stress-set (smp2): project / PREEMPT_RT"][3].startswith(
        "not judged: PREEMPT_RT measures")
    # smp1 is judged as ever.
    assert head["max latency under stress-set: project / PREEMPT_RT"][3].startswith("missed")
    goals = {g["what"]: g for g in report.summary(rows, {"load": "stress-set"})["goals"]}
    assert not goals["max latency under stress-set (smp2): project / PREEMPT_RT"]["judged"]
    assert goals["max latency under stress-set (smp2): project / stock PREEMPT"]["judged"]
    line = ("- smp2: a floor of its own, PREEMPT_RT's median maximum 1870 us against 30 us on"
            " smp1 (QEMU's round-robin of the vCPUs): a goal there is met only against a kernel,"
            " and missed only by a project, whose median maximum is at least 2 x that floor"
            " there and on smp1; the others are not judged")
    assert report.rig_lines(rows, "stress-set") == [line]
    assert line in report.markdown(rows, {"load": "stress-set"}, {})


def test_a_rig_without_a_floor_is_judged_and_an_unmeasured_one_is_not():
    """PREEMPT_RT within twice its smp1 figure: the smp2 goals are judged.
    Without PREEMPT_RT's runs the floor is unknown: nothing on smp2 is."""
    head = {h[0]: h for h in report.headline(_rig_rows(rt2=50, proj2=60))}
    assert head["max latency under stress-set (smp2): project / PREEMPT_RT"][3] == "met"
    assert report.rig_lines(_rig_rows(rt2=50), "stress-set")[0].startswith(
        "- smp2: no floor of its own")
    head = {h[0]: h for h in report.headline(_rig_rows(rt2=None, rt1=None))}
    assert head["max latency under stress-set (smp2): project / stock PREEMPT"][3] == (
        "not judged: the smp2 rig's own floor is unmeasured (no PREEMPT_RT runs on smp2;"
        " no PREEMPT_RT runs on smp1)")
    assert head["max latency under stress-set: project / stock PREEMPT"][3] == "met"


def test_headline_p9999_goal_against_preempt_rt():
    """Issue 21's tail goal: p99.99 of the pooled histograms, project /
    PREEMPT_RT <= 1.5."""
    rows = [lat(v, n, {5: 9990, tail: 9, mx: 1}, mx) for n in (1, 2, 3)
            for v, tail, mx in (("rt", 20, 30), ("project", 40, 400))]
    head = {h[0]: h for h in report.headline(rows)}
    tail = head["p99.99 latency under stress-set: project / PREEMPT_RT"]
    assert tail[1] == "2.00 (project 40 / rt 20 us, pooled over 3 / 3 runs)"
    assert tail[2:] == ("<= 1.5", "missed by 33%")


def test_a_rig_floor_needs_every_preempt_rt_run_valid():
    """The review's reproducer: PREEMPT_RT's smp2 runs 2978 and 1870 us
    invalid, 471 us valid.  A floor from the one valid run read
    project / stock-tuned (stock-tuned 1300 us) "met"; with a PREEMPT_RT run
    invalid the floor is unmeasured and nothing on smp2 is judged."""
    rows = [r for r in _rig_rows(rt2=471, tuned2=1300) if True]
    for r in rows:
        if r["variant"] == "rt" and r["rig"] == "smp2" and r["run"] in (2, 3):
            r["problems"] = ["console line 9: BUG: scheduling while atomic"]
            r["max"] = {2: 2978, 3: 1870}[r["run"]]
    head = {h[0]: h for h in report.headline(rows)}
    tuned2 = head["max latency under stress-set (smp2): project / stock-tuned (stock PREEMPT"
                  " with the project's configuration, none of its code)"]
    assert tuned2[3] == ("not judged: the smp2 rig's own floor is unmeasured (PREEMPT_RT 1 of 3"
                         " runs valid on smp2)")
    # An invalid project run still says so, whatever the floor.
    for r in rows:
        if r["variant"] == "project" and r["rig"] == "smp2" and r["run"] == 1:
            r["problems"] = ["timed out after 600s"]
    head = {h[0]: h for h in report.headline(rows)}
    assert head["max latency under stress-set (smp2): project / stock PREEMPT"][3].startswith(
        "not enough valid runs: project 2 of 3")


def test_a_rig_floor_keeps_a_miss_the_project_owns_and_a_met_only_against_its_own():
    """A project far above the floor on the rig and on smp1 misses against
    PREEMPT_RT and stock-tuned: "missed", not "not judged".  A reference far
    above the floor on the rig only (its smp1 figure near the floor) does not
    make a "met"."""
    rows = _rig_rows(rt2=1870, tuned2=3000, proj2=20000)
    _set_max(rows, "project", "smp1", 8000)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["max latency under stress-set (smp2): project / PREEMPT_RT"][3].startswith(
        "missed")
    assert head["max latency under stress-set (smp2): project / stock-tuned (stock PREEMPT with"
                " the project's configuration, none of its code)"][3].startswith("missed")
    # The same miss from a project near the floor on smp1 is not judged.
    rows = _rig_rows(rt2=1870, tuned2=3000, proj2=20000)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["max latency under stress-set (smp2): project / PREEMPT_RT"][3].startswith(
        "not judged: the project's median maximum is below 2 x")
    # stock at 9000 us on smp2 but 1000 us on smp1: its smp2 figure is the rig's.
    rows = _rig_rows(rt2=1870, stock2=9000)
    _set_max(rows, "stock", "smp1", 1000)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["max latency under stress-set (smp2): project / stock PREEMPT"][3].startswith(
        "not judged: stock's median maximum is below 2 x")


def test_a_rig_floor_begins_above_twice_preempt_rt_smp1_figure():
    """RIG_FLOOR_FACTOR's boundary: PREEMPT_RT at exactly twice its smp1
    maximum has no floor; just above, it has one (and the boundary of
    RIG_MARGIN: a kernel at exactly twice the floor counts)."""
    assert report.rig_floor(_rig_rows(rt2=60), "stress-set", "smp2") is None
    assert report.rig_floor(_rig_rows(rt2=61), "stress-set", "smp2") == {"floor": 61,
                                                                        "smp1": 30}
    rows = _rig_rows(rt2=1000, tuned2=2000, proj2=600)
    _set_max(rows, "stock-tuned", "smp1", 2000)
    head = {h[0]: h for h in report.headline(rows)}
    assert head["max latency under stress-set (smp2): project / stock-tuned (stock PREEMPT with"
                " the project's configuration, none of its code)"][3] == "met"


def test_validate_prints_each_rig_floor(capsys):
    """The printed summary carries the rig's line, as report.md does."""
    rows = _rig_rows(rt2=1870)
    validate.print_summary(rows, {"load": "stress-set", "seconds": 60, "runs": 3},
                           {"report": "/x/report.md"})
    assert report.rig_lines(rows, "stress-set")[0] in capsys.readouterr().out
