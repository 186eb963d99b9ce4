# SPDX-License-Identifier: GPL-2.0
"""scripts/torture: scenario files, grouping, console verdicts."""

import os

import pytest

from pvrt import boot, build, torture

TOP = os.path.join(os.path.dirname(__file__), "..")

LOCKTORTURE_OK = """\
[   26.49] Writes:  Total: 4036971  Max/Min: 1075441/969727   Fail: 0
[   26.49] pv_mutex_lock-torture: PI checks: 11922197 (boost 51344, deboost 11870853)  Inconclusive: 268472  Violations: 0 (boost 0, deboost 0)
[   26.49] pv_mutex_lock-torture:--- End of test: SUCCESS: acq_writer_lim=0 nested_locks=4
"""

LOCKTORTURE_BROKEN = """\
[   24.09] pv_mutex_lock-torture: PI violation (deboost): writer 2 prio 79 after unlocking nested[1], want 120
[   26.51] Writes:  Total: 3000  Max/Min: 800/700   Fail: 0
[   26.51] pv_mutex_lock-torture: PI checks: 10264737 (boost 40000, deboost 10224737)  Inconclusive: 269860  Violations: 17 (boost 0, deboost 17) !!!
[   26.51] pv_mutex_lock-torture:--- End of test: FAILURE: acq_writer_lim=0
"""

FOOTBALL_MUTEX = """\
[   64.45] pi_football: football lock=mutex cpus=2 hold_us=10000 game_ms=200: 87 rounds, 87 with offense
[   64.45] pi_football: holder's priority once the chain was built: worst 89, wanted 59 or better; 174 of 174 games (rounds x CPUs) short of it
[   64.45] pi_football: ball moves while the defense held: total 152982942 in 173 of 174 games, worst game 1265130; high's wait max 245111 us
[   64.45] pi_football: mutex has no priority inheritance: this is the inversion the test shows
[   64.45] pi_football: End of test: FAILURE
"""

CHAIN_PV = """\
[   31.92] pi_football: chain lock=pv_mutex cpus=1 hold_us=20000 game_ms=500: 440 rounds, 220 with offense
[   31.92] pi_football: holder's priority once the chain was built: worst 59, wanted 59 or better; 0 of 440 games (rounds x CPUs) short of it
[   31.92] pi_football: T_sched max 38 us (100 wake-ups per CPU), T_cs max 40153 us, calibration wait max 40392 us
[   31.92] pi_football: high's wait with offense max 40381 us, bound T_cs + 2 T_sched 40229 us, ratio 1.00 (limit 1.10)
[   31.92] pi_football: End of test: SUCCESS
"""

# pi_football since the chain's bound is T_cs + T_handoff, others' time
# excluded (a recorded PVLOCK09 run: the guest's rmmod, which 6.12's fair
# server ran above the chain, took 1713 us of one game's wait).
CHAIN_PV_HANDOFF = """\
[   23.514217] pi_football: chain lock=pv_mutex cpus=1 hold_us=20000 game_ms=500: 386 rounds, 193 with offense
[   23.514267] pi_football: holder's priority once the chain was built: worst 59, wanted 59 or better; 0 of 386 games (rounds x CPUs) short of it
[   23.514318] pi_football: T_sched max 17 us (100 wake-ups per CPU, mean 5341 ns), T_cs max 46615 us, calibration wait max 46643 us
[   23.514369] pi_football: others' time in high's wait (not the holder's, mid's or the offense's CPU time): max 8 us in calibration rounds, 1713 us in games (wall wait max 48302 us); excluded from the times below
[   23.514430] pi_football: chain time of calibration rounds 46581..46634 us: T_handoff 72 us (longest minus T_cs, plus the spread)
[   23.514476] pi_football: high's wait with offense max 46591 us, bound T_cs + T_handoff 46688 us, (wait - T_cs) / (2 T_sched) -0.68, ratio 0.99 (limit 1.00)
[   23.514538] pi_football: End of test: SUCCESS
"""

CHAIN_MUTEX = """\
[   62.92] pi_football: high's wait with offense max 589330 us, bound T_cs + 2 T_sched 66688 us, ratio 8.83 (limit 1.10)
[   62.93] pi_football: End of test: FAILURE
"""


def sect(text):
    return torture.console.lines(text)


def test_every_scenario_loads_with_one_module():
    scens = torture.load(TOP)
    names = [s.name for s in scens]
    assert len(names) == len(set(names)) >= 14
    for s in scens:
        assert s.module in torture.MODULES and s.params, s.name
    by = {s.name: s for s in scens}
    # The debug scenario takes its options from the debug fragment itself.
    assert "CONFIG_PROVE_LOCKING=y" in by["PVLOCK01"].fragment
    assert "CONFIG_KASAN=y" in by["PVLOCK01"].fragment
    # Broken twins and lock types without PI must fail, and the short set has
    # at least one of them and one debug scenario.
    short = torture.select(scens, short=True)
    assert any(s.expect == "FAILURE" for s in short)
    assert any("CONFIG_PROVE_LOCKING=y" in s.fragment for s in short)
    assert sum(s.short for s in short) <= 120


def test_debug_flag_puts_every_scenario_on_the_debug_fragment():
    keys = {torture.fragment_key(s.fragment) for s in torture.load(TOP, debug=True)}
    assert len(keys) == 1 and "CONFIG_KASAN=y" in keys.pop()


def test_unknown_scenario_and_bad_boot_files_are_refused():
    scens = torture.load(TOP)
    with pytest.raises(torture.TortureError, match="unknown scenario"):
        torture.select(scens, ["PVLOCK01", "PVLOCK99"])
    s = torture.Scenario("X")
    with pytest.raises(torture.TortureError, match="both"):
        torture.parse_boot(s, "locktorture.torture_type=pv_mutex_lock pi_football.lock=mutex")
    with pytest.raises(torture.TortureError, match="no parameter"):
        torture.parse_boot(torture.Scenario("Y"), "threadirqs")


def test_include_loop_is_an_error(tmp_path):
    (tmp_path / "a").write_text("#include b\n")
    (tmp_path / "b").write_text("#include a\n")
    with pytest.raises(torture.TortureError, match="loop"):
        torture.read_fragment(str(tmp_path), "a")


def test_parse_locktorture_and_football_sections():
    ok = torture.parse_section(sect(LOCKTORTURE_OK))
    assert ok["verdict"] == "SUCCESS" and ok["acquisitions"] == 4036971
    assert ok["pi_violations"] == 0 and ok["pi_checks"] == 11922197
    assert ok["pi_boost_checks"] == 51344
    bad = torture.parse_section(sect(LOCKTORTURE_BROKEN))
    assert bad["verdict"] == "FAILURE" and bad["pi_violations"] == 17
    fb = torture.parse_section(sect(FOOTBALL_MUTEX))
    assert fb["rounds"] == 87 and fb["ball_moves"] == 152982942 and fb["unboosted"] == 174
    assert fb["pi_violations"] == 173 + 174 and fb["wait_max_us"] == 245111
    ch = torture.parse_section(sect(CHAIN_PV))
    assert (ch["wait_max_us"], ch["bound_us"], ch["t_sched_us"], ch["t_cs_us"]) == \
        (40381, 40229, 38, 40153)
    assert ch["pi_violations"] == 0      # over the bound itself, within the slack
    assert ch["verdict"] == "SUCCESS"
    assert torture.parse_section(sect(CHAIN_MUTEX))["pi_violations"] == 1


def test_parse_chain_with_handoff_term():
    """The bound T_cs + T_handoff, with others' time measured and excluded:
    the runner reads the bound, the hand-off term and others' time, and
    judges the wait against the bound itself (limit 1.00)."""
    ch = torture.parse_section(sect(CHAIN_PV_HANDOFF))
    assert (ch["wait_max_us"], ch["bound_us"], ch["t_cs_us"], ch["handoff_us"]) == \
        (46591, 46688, 46615, 72)
    assert (ch["others_cal_us"], ch["others_game_us"]) == (8, 1713)
    assert ch["over_bound"] is False and ch["pi_violations"] == 0
    (line,) = torture.figures([dict(ch, module="pi_football", scenario="PVLOCK09")])
    assert "T_cs 46615 us + T_handoff 72 us" in line and "1713 us in games" in line
    # 1 us over the bound, no slack: over it, a PI violation.
    over = CHAIN_PV_HANDOFF.replace("offense max 46591 us", "offense max 46689 us")
    ch = torture.parse_section(sect(over))
    assert ch["over_bound"] is True and ch["pi_violations"] == 1


def boot_result(tmp_path, body):
    text = "PVRT-BOOTED 6.12\n" + body + "PVRT-EXIT rc=0\n"
    return boot.BootResult(str(tmp_path / "log"), text, False, 1.0)


def section(name, text, rc=0):
    """One run as guest/torture brackets it: markers in the kernel log, the
    module's lines between them; RC is the module load and unload status."""
    return (f"[    1.00] PVRT-TORTURE-START {name}\n{text}"
            f"[    9.00] PVRT-TORTURE-STOP {name} rc={rc}\n")


def test_verdicts_compare_with_what_the_scenario_expects(tmp_path):
    good, twin, liar, splat, lost = (torture.Scenario(n) for n in "ABCDE")
    twin.expect = liar.expect = "FAILURE"
    for s in (good, twin, liar, splat, lost):
        s.module = "locktorture"
    body = (section("A", LOCKTORTURE_OK, 0) + section("B", LOCKTORTURE_BROKEN)
            + section("C", LOCKTORTURE_OK, 0)
            + section("D", "[ 1.0] WARNING: CPU: 1 PID: 7 at kernel/locking/rtmutex.c:1 x\n"
                      + LOCKTORTURE_OK, 0))
    rows = torture.verdicts([good, twin, liar, splat, lost], boot_result(tmp_path, body),
                            dict.fromkeys("ABCDE", 5), "project/smp2")
    ok = {r["scenario"]: r["ok"] for r in rows}
    assert ok == {"A": True, "B": True, "C": False, "D": False, "E": False}
    assert rows[4]["problem"].startswith("no output")
    table = torture.table(rows)
    assert table.count("NOT OK") == 3 and "PVLOCK" not in table


LOCKTORTURE_IDLE = """\
[   26.49] Writes:  Total: 0  Max/Min: 0/0   Fail: 0
[   26.49] pv_mutex_lock-torture: PI checks: 0 (boost 0, deboost 0)  Inconclusive: 0  Violations: 0 (boost 0, deboost 0)
[   26.49] pv_mutex_lock-torture:--- End of test: SUCCESS: acq_writer_lim=0 nested_locks=4
"""

FOOTBALL_IDLE = """\
[   64.45] pi_football: football lock=pv_mutex cpus=2 hold_us=10000 game_ms=200: 0 rounds, 0 with offense
[   64.45] pi_football: holder's priority once the chain was built: worst 0, wanted 59 or better; 0 of 0 games (rounds x CPUs) short of it
[   64.45] pi_football: ball moves while the defense held: total 0 in 0 of 0 games, worst game 0; high's wait max 0 us
[   64.45] pi_football: End of test: SUCCESS
"""


@pytest.mark.parametrize("module, params, text, problem", [
    ("locktorture", ["torture_type=pv_mutex_lock"], LOCKTORTURE_OK, None),
    ("locktorture", ["torture_type=pv_mutex_lock"], LOCKTORTURE_IDLE, "no progress: no writes"),
    ("locktorture", ["torture_type=pv_mutex_lock"],
     LOCKTORTURE_OK.replace("PI checks: 11922197", "PI checks: 0"), "no progress: no PI checks"),
    ("locktorture", ["torture_type=rtmutex_lock", "pi_check=1"],
     LOCKTORTURE_OK.splitlines()[0] + "\n" + LOCKTORTURE_OK.splitlines()[2] + "\n",
     "no progress: no PI checks"),
    # pi_check off (rtmutex_lock's default, or 0): no PI check is asked for.
    ("locktorture", ["torture_type=rtmutex_lock"],
     LOCKTORTURE_OK.splitlines()[0] + "\n" + LOCKTORTURE_OK.splitlines()[2] + "\n", None),
    ("locktorture", ["torture_type=pv_mutex_lock", "pi_check=0"],
     LOCKTORTURE_OK.replace("PI checks: 11922197", "PI checks: 0"), None),
    ("pi_football", ["lock=pv_mutex", "mode=football"], FOOTBALL_IDLE, "no progress: no rounds"),
    ("pi_football", ["lock=pv_mutex", "mode=chain"], CHAIN_PV, None)])
def test_a_success_without_progress_does_not_pass(tmp_path, module, params, text, problem):
    """SUCCESS with no write, no PI check where pi_check is on, or no
    football round tested nothing: the scenario does not pass."""
    scen = torture.Scenario("A")
    scen.module, scen.params = module, params
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section("A", text, 0)), {"A": 5},
                              "project/smp2")
    assert row["verdict"] == "SUCCESS" and row["problem"] == problem
    assert row["ok"] == (problem is None)


REAL = os.path.join(os.path.dirname(__file__), "data", "torture-football-chain.log")


def real_football_and_chain(edit=lambda text: text):
    """PVLOCK06, 08 (football) and 09 (chain) as make check's short torture
    printed them (build/check/logs/torture, boot-02 and boot-03; the
    markers rewritten to guest/torture's kernel-log lines), judged."""
    with open(REAL, encoding="utf-8") as f:
        text = edit(f.read())
    scens = torture.select(torture.load(TOP), ["PVLOCK06", "PVLOCK08", "PVLOCK09"])
    res = boot.BootResult(REAL, text, False, 1.0)
    return {r["scenario"]: r for r in torture.verdicts(scens, res, dict.fromkeys(
        ("PVLOCK06", "PVLOCK08", "PVLOCK09"), 10), "project/smp2")}


def test_real_football_and_chain_runs_judge_as_before():
    rows = real_football_and_chain()
    assert {n: (r["verdict"], r["rounds"], r["rounds_offense"], r["ok"], r["problem"])
            for n, r in rows.items()} == {
        "PVLOCK06": ("SUCCESS", 262, 262, True, None),
        "PVLOCK08": ("FAILURE", 23, 23, True, None),
        "PVLOCK09": ("SUCCESS", 193, 96, True, None)}


def test_a_chain_without_a_round_with_offense_tested_nothing(tmp_path):
    """mode=chain alternates calibration rounds (no offense) and game
    rounds: "1 rounds, 0 with offense" is a calibration only.  Neither the
    pv_mutex chain nor its broken twin (PVLOCK11, plain mutex, expected to
    fail) has tested an inversion: neither passes."""
    rows = real_football_and_chain(lambda t: t.replace("193 rounds, 96 with offense",
                                                       "1 rounds, 0 with offense"))
    assert not rows["PVLOCK09"]["ok"]
    assert rows["PVLOCK09"]["problem"] == "no progress: 1 rounds, none with offense"
    twin = torture.select(torture.load(TOP), ["PVLOCK11"])
    text = ("[ 3.0] pi_football: chain lock=mutex cpus=1 hold_us=20000 game_ms=500:"
            " 1 rounds, 0 with offense\n" + CHAIN_MUTEX)
    (row,) = torture.verdicts(twin, boot_result(tmp_path, section("PVLOCK11", text)),
                              {"PVLOCK11": 10}, "project/icount")
    assert row["verdict"] == "FAILURE" and row["expect"] == "FAILURE"
    assert row["problem"] == "no progress: 1 rounds, none with offense" and not row["ok"]
    # Football rounds all have the offense.
    rows = real_football_and_chain(lambda t: t.replace("262 rounds, 262 with offense",
                                                       "262 rounds, 0 with offense"))
    assert rows["PVLOCK06"]["problem"] == "no progress: 262 rounds, none with offense"


@pytest.mark.parametrize("module, params, text", [
    ("locktorture", ["torture_type=pv_mutex_lock"], LOCKTORTURE_OK.splitlines()[0] + "\n"),
    ("locktorture", ["torture_type=pv_mutex_lock"], ""),
    ("pi_football", ["lock=pv_mutex", "mode=chain"], CHAIN_PV.replace(
        "[   31.92] pi_football: End of test: SUCCESS\n", ""))])
def test_a_section_without_its_end_of_test_line_says_so(tmp_path, module, params, text):
    """A section cut before "End of test" (the module hung, the console
    lost it): the problem is the missing verdict, not a progress count."""
    scen = torture.Scenario("A")
    scen.module, scen.params = module, params
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section("A", text, 0)), {"A": 5},
                              "project/smp2")
    assert row["verdict"] is None and row["problem"] == "no End of test line"
    assert not row["ok"]


def test_one_boot_per_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    scens = torture.select(torture.load(TOP), ["PVLOCK01", "PVLOCK05", "PVLOCK06",
                                               "PVLOCK09", "PVLOCK12"])
    kernels, boots, appends = [], [], []

    def kernel_for(top, tree, fragment, log):
        name = "debug" if "CONFIG_KASAN=y" in fragment else "project"
        kernels.append(name)
        return name, str(tmp_path / name), ["kunit.enable=0"]

    def fake_boot(kernel, cmd, log_path, **kw):
        boots.append((cmd, kw["icount"]))
        appends.append(kw["append"])
        body = "".join(section(s.name, LOCKTORTURE_OK, 0) for s in scens)
        return boot_result(tmp_path, body)

    monkeypatch.setattr(torture, "kernel_for", kernel_for)
    monkeypatch.setattr(boot, "boot", fake_boot)
    monkeypatch.setattr(build, "kernel_image", lambda out, arch="x86_64": out)
    rows, outdir = torture.run(TOP, "tree", scens, duration=7, outdir=str(tmp_path),
                               log=lambda m: None)
    # debug (PVLOCK01), project SMP (05, 06, 12), project icount (09): two
    # kernels, three boots.
    assert sorted(kernels) == ["debug", "project"]
    assert len(boots) == 3 and [b[1] for b in boots].count(True) == 1
    # The kernel's own parameters reach every boot (no KUnit run at a torture boot).
    assert all("kunit.enable=0" in a.split() for a in appends)
    smp_cmd = next(c for c, icount in boots if not icount and "PVLOCK05" in c)
    assert smp_cmd.startswith("torture PVLOCK05 7 locktorture torture_type=rtmutex_lock")
    assert "torture PVLOCK06 7 pi_football lock=pv_mutex mode=football" in smp_cmd
    assert (tmp_path / "torture.json").exists()
    assert [r["scenario"] for r in rows] == ["PVLOCK01", "PVLOCK05", "PVLOCK06",
                                             "PVLOCK12", "PVLOCK09"]


def test_debug_scenarios_boot_the_one_debug_kernel(tmp_path, monkeypatch):
    """PVLOCK01 (debug fragment) runs on build.debug_twin, which the lockdep
    and debug KUnit stages boot too, with its KUnit suites off; a scenario
    neither kernel satisfies gets a kernel of its own."""
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    built = []

    common = open(os.path.join(TOP, torture.CFG_DIR, "CFcommon"), encoding="utf-8").read()

    def fake_configure(top, tree, variant, out, strict=True):
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, ".config"), "w", encoding="utf-8") as f:
            f.write(build.fragment_text(top, TOP, variant, strict=False) + common)

    def fake_build(top, tree, name, out=None, log=print):
        fake_configure(top, tree, build.Variant(name, top),
                       os.path.join(str(tmp_path), "out", name))

    monkeypatch.setattr(build, "configure", fake_configure)
    monkeypatch.setattr(build, "build", fake_build)
    monkeypatch.setattr(build, "build_variant",
                        lambda top, tree, v, out=None, log=print: built.append(v.name))
    scen = {s.name: s for s in torture.load(TOP)}
    name, _out, args = torture.kernel_for(TOP, TOP, scen["PVLOCK05"].fragment, print)
    assert (name, args, built) == ("project", ["kunit.enable=0"], [])
    name, _out, args = torture.kernel_for(TOP, TOP, scen["PVLOCK01"].fragment, print)
    assert (name, args, built) == ("project-debug", ["kunit.enable=0"], ["project-debug"])
    name, _out, args = torture.kernel_for(TOP, TOP, scen["PVLOCK01"].fragment
                                          + "CONFIG_KCSAN=y\n", print)
    assert name.startswith("torture-") and args == [] and built[-1] == name


def test_a_boot_problem_outside_every_run_fails_every_scenario(tmp_path):
    """A splat after the last run (an rmmod that oopsed, a late lockdep
    report) or a boot that timed out may belong to any scenario of the
    boot: none of them passes.  A splat inside a run's window is that
    run's only."""
    a, b = torture.Scenario("A"), torture.Scenario("B")
    for s in (a, b):
        s.module, s.params = "locktorture", ["torture_type=pv_mutex_lock"]
    late = "[   30.0] BUG: sleeping function called from invalid context at x.c:1\n"
    rows = torture.verdicts([a, b], boot_result(
        tmp_path, section("A", LOCKTORTURE_OK) + section("B", LOCKTORTURE_OK) + late),
        {"A": 5, "B": 5}, "project/smp2")
    assert [r["ok"] for r in rows] == [False, False]
    assert all(r["problem"].startswith("boot: console line ") for r in rows)
    assert all("sleeping function" in r["problem"] for r in rows)
    # Inside B's window: B's splat, A passes.
    rows = torture.verdicts([a, b], boot_result(
        tmp_path, section("A", LOCKTORTURE_OK) + section("B", late + LOCKTORTURE_OK)),
        {"A": 5, "B": 5}, "project/smp2")
    assert [r["ok"] for r in rows] == [True, False]
    assert rows[1]["splats"] and rows[1]["problem"] is None
    # A hung guest: both runs printed their verdict, the boot timed out.
    text = "PVRT-BOOTED 6.12\n" + section("A", LOCKTORTURE_OK) + section("B", LOCKTORTURE_OK)
    res = boot.BootResult(str(tmp_path / "log"), text, True, 300.0)
    rows = torture.verdicts([a, b], res, {"A": 5, "B": 5}, "project/smp2")
    assert [r["ok"] for r in rows] == [False, False]
    assert all(r["problem"].startswith("boot: timed out") for r in rows)


def test_a_run_that_never_ended_or_failed_to_load_does_not_pass(tmp_path):
    a = torture.Scenario("A")
    a.module, a.params = "locktorture", ["torture_type=pv_mutex_lock"]
    text = ("PVRT-BOOTED 6.12\n[    1.00] PVRT-TORTURE-START A\n" + LOCKTORTURE_OK
            + "PVRT-EXIT rc=0\n")
    (row,) = torture.verdicts([a], boot.BootResult(str(tmp_path / "l"), text, False, 1.0),
                              {"A": 5}, "project/smp2")
    assert not row["ok"] and row["problem"].startswith("no PVRT-TORTURE-STOP")
    (row,) = torture.verdicts([a], boot_result(tmp_path, section("A", LOCKTORTURE_OK, 1)),
                              {"A": 5}, "project/smp2")
    assert not row["ok"] and row["problem"] == "the module did not load or unload (rc=1)"


TIMEOUT_TWIN = """\
[   20.00] pi_football: !!! CPU 1: medium never went to sleep in the lock
[   20.01] pi_football: football lock=mutex cpus=2 hold_us=10000 game_ms=200: 3 rounds, 3 with offense
[   20.02] pi_football: holder's priority once the chain was built: worst 89, wanted 59 or better; 0 of 6 games (rounds x CPUs) short of it
[   20.03] pi_football: ball moves while the defense held: total 0 in 0 of 6 games, worst game 0; high's wait max 10 us
[   20.04] pi_football: End of test: FAILURE
"""


@pytest.mark.parametrize("name, edit, problem", [
    # PVLOCK12's pi_inject twin, FAILURE without a PI violation.
    ("PVLOCK12", lambda t: t.replace("Violations: 17 (boost 0, deboost 17) !!!",
                                     "Violations: 0 (boost 0, deboost 0)").replace(
        "[   24.09] pv_mutex_lock-torture: PI violation (deboost): writer 2 prio 79 after"
        " unlocking nested[1], want 120\n", ""),
     "FAILURE without its signature: no PI violation"),
    # PVLOCK11's chain with a plain mutex, its wait within the bound.
    ("PVLOCK11", None, "FAILURE without its signature: high's wait within the bound"),
    # PVLOCK08's football with a plain mutex, no ball move: a player's
    # time-out failed it (that line is a splat, too).
    ("PVLOCK08", None, "FAILURE without its signature: no ball moves")])
def test_a_broken_twin_passes_only_with_its_own_signature(tmp_path, name, edit, problem):
    (scen,) = torture.select(torture.load(TOP), [name])
    assert scen.expect == "FAILURE"
    if name == "PVLOCK12":
        text = edit(LOCKTORTURE_BROKEN)
    elif name == "PVLOCK11":
        text = ("[ 3.0] pi_football: chain lock=mutex cpus=1 hold_us=20000 game_ms=500:"
                " 6 rounds, 3 with offense\n"
                + CHAIN_MUTEX.replace("max 589330 us", "max 66000 us"))
    else:
        text = TIMEOUT_TWIN
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section(name, text)),
                              {name: 5}, "project/smp2")
    assert row["verdict"] == "FAILURE" and row["problem"] == problem and not row["ok"]
    # The same twin with its signature passes; a PI twin's "!!!" line is its
    # signature, not a splat.
    good = {"PVLOCK12": LOCKTORTURE_BROKEN, "PVLOCK08": FOOTBALL_MUTEX,
            "PVLOCK11": "[ 3.0] pi_football: chain lock=mutex cpus=1 hold_us=20000"
                        " game_ms=500: 6 rounds, 3 with offense\n" + CHAIN_MUTEX}[name]
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section(name, good)),
                              {name: 5}, "project/smp2")
    assert row["ok"] and row["splats"] == [], row


# A recorded PVLOCK11 run (plain mutex) with the bound T_cs + T_handoff:
# high's wait holds the offense's 500 ms game, which is the chain's time.
CHAIN_MUTEX_HANDOFF = """\
[   64.914218] pi_football: chain lock=mutex cpus=1 hold_us=20000 game_ms=500: 64 rounds, 32 with offense
[   64.914267] pi_football: holder's priority once the chain was built: worst 89, wanted 59 or better; 64 of 64 games (rounds x CPUs) short of it
[   64.914318] pi_football: T_sched max 16 us (100 wake-ups per CPU, mean 5325 ns), T_cs max 46615 us, calibration wait max 46634 us
[   64.914369] pi_football: others' time in high's wait (not the holder's, mid's or the offense's CPU time): max 8 us in calibration rounds, 10 us in games (wall wait max 546593 us); excluded from the times below
[   64.914429] pi_football: chain time of calibration rounds 46572..46626 us: T_handoff 64 us (longest minus T_cs, plus the spread)
[   64.914476] pi_football: high's wait with offense max 546582 us, bound T_cs + T_handoff 46679 us, (wait - T_cs) / (2 T_sched) 15355.25, ratio 11.70 (limit 1.00)
[   64.914539] pi_football: mutex has no priority inheritance: this is the inversion the test shows
[   64.914571] pi_football: End of test: FAILURE
"""


def test_the_mutex_chain_twin_fails_over_the_handoff_bound(tmp_path):
    """PVLOCK11 with the bound T_cs + T_handoff: FAILURE with its own
    signature, high's wait above the bound; the same run within the bound
    (a FAILURE for another reason) is not the twin's failure."""
    (scen,) = torture.select(torture.load(TOP), ["PVLOCK11"])
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section("PVLOCK11",
                                                                     CHAIN_MUTEX_HANDOFF)),
                              {"PVLOCK11": 20}, "project/icount")
    assert row["ok"] and row["over_bound"] and row["handoff_us"] == 64, row
    within = CHAIN_MUTEX_HANDOFF.replace("offense max 546582 us", "offense max 46600 us")
    (row,) = torture.verdicts([scen], boot_result(tmp_path, section("PVLOCK11", within)),
                              {"PVLOCK11": 20}, "project/icount")
    assert not row["ok"]
    assert row["problem"] == "FAILURE without its signature: high's wait within the bound"


@pytest.mark.parametrize("line", [
    "Badness at kernel/locking/rtmutex.c:1",
    "NMI watchdog: Watchdog detected hard LOCKUP on cpu 1",
    "sched: RT throttling activated",
    "Writes:  Total: 4036971  Max/Min: 1075441/969727   Fail: 3 !!!",
    "pv_mutex_lock-torture: PI checks: 10 (boost 1, deboost 9)  Inconclusive: 0"
    "  Violations: 2 (boost 0, deboost 2) !!!"])
def test_more_console_badness_fails_a_run_that_expects_success(tmp_path, line):
    """rcutorture's console-badness.sh patterns the parser lacked, and RT
    throttling, which falsifies any SCHED_FIFO figure of the boot."""
    scen = torture.Scenario("A")
    scen.module, scen.params = "locktorture", ["torture_type=pv_mutex_lock"]
    (row,) = torture.verdicts([scen], boot_result(
        tmp_path, section("A", f"[   20.00] {line}\n" + LOCKTORTURE_OK)), {"A": 5},
        "project/smp2")
    assert row["splats"] == [line] and not row["ok"]


def test_summary_line():
    rows = real_football_and_chain()
    assert torture.summary(rows.values()) == "Summary: 3 scenarios, 3 ok, 0 NOT OK; splats 0"
    rows["PVLOCK08"]["ok"] = False
    rows["PVLOCK08"]["splats"] = ["x", "y"]
    assert torture.summary(list(rows.values())) == (
        "Summary: 3 scenarios, 2 ok, 1 NOT OK (PVLOCK08); splats 2")


def test_guest_torture_brackets_the_run_in_the_kernel_log(tmp_path):
    """guest/torture writes its markers to the kernel log (in order with
    the module's messages on the console) and replays nothing from dmesg,
    whose first lines are gone once the buffer wraps."""
    import subprocess
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "calls"
    for tool, body in {"insmod": 'echo "insmod $*" >> "$CALLS"; exit ${INSMOD_RC:-0}',
                       "rmmod": 'echo "rmmod $*" >> "$CALLS"',
                       "sleep": 'echo "sleep $*" >> "$CALLS"',
                       "find": 'echo "/lib/modules/x/$3"',
                       "dmesg": "echo dmesg must not be used >&2; exit 9"}.items():
        (bin_ / tool).write_text("#!/bin/sh\n" + body + "\n")
        (bin_ / tool).chmod(0o755)
    kmsg = tmp_path / "kmsg"
    script = os.path.join(TOP, "guest", "torture")
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "CALLS": str(calls), "PVRT_KMSG": str(kmsg)}
    r = subprocess.run(["sh", script, "T1", "7", "locktorture", "nested_locks=4"], env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert kmsg.read_text().splitlines() == ["PVRT-TORTURE-START T1",
                                             "PVRT-TORTURE-STOP T1 rc=0"]
    assert calls.read_text().splitlines() == [
        "insmod /lib/modules/x/torture.ko*", "insmod /lib/modules/x/locktorture.ko*"
        " nested_locks=4", "sleep 7", "rmmod locktorture", "rmmod torture"]
    env["INSMOD_RC"] = "1"
    kmsg.write_text("")
    r = subprocess.run(["sh", script, "T2", "7", "pi_football"], env=env,
                       capture_output=True, text=True, check=False)
    assert r.returncode == 1
    assert kmsg.read_text().splitlines()[-1] == "PVRT-TORTURE-STOP T2 rc=1"


def test_torture_and_check_write_junit(tmp_path):
    """Every scenario is a JUnit case; a failed one carries its reason."""
    from pvrt import junit
    rows = list(real_football_and_chain().values())
    rows[1]["ok"], rows[1]["problem"] = False, "FAILURE without its signature: no ball moves"
    path = junit.write(str(tmp_path / "t.xml"), "torture", torture.junit_cases(rows))
    assert junit.read(path) == [("project/smp2", "PVLOCK06", True),
                                ("project/smp2", "PVLOCK08", False),
                                ("project/smp2", "PVLOCK09", True)]
    assert "without its signature" in (tmp_path / "t.xml").read_text()
