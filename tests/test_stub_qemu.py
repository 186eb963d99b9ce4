# SPDX-License-Identifier: GPL-2.0
"""boot and validate against a stub qemu-system-x86_64 on PATH: timeouts,
missing markers and the validate table, without a real QEMU."""

import json
import os
import re
import time

import pytest

from pvrt import boot, build, experiment, report, validate

CONSOLE_OK = """\
[    0.000000] Linux version 6.12.117+
PVRT-BOOTED 6.12.117+ cpus=1
PVRT-PHASE memory 1.00
PVRT-BEGIN cyclictest
# cyclictest start uptime 1.00 interval 200
0:     5000:      40
0:    10000:     310
# Min Latencies: 00008
# Avg Latencies: 00012
# Max Latencies: 00310
# Histogram Overflows: 00000
000008 004000
000012 005999
000310 000001
PVRT-END cyclictest rc=0
PVRT-EXIT rc=0
"""


def _stub_qemu(tmp_path, monkeypatch, script):
    """A qemu-system-x86_64 on PATH that runs the shell SCRIPT; PVRT_TOP is
    this repository, PVRT_BUILD under TMP_PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    qemu = bindir / "qemu-system-x86_64"
    qemu.write_text("#!/bin/sh\n[ \"$1\" = --version ] &&"
                    " { echo 'QEMU emulator version 0.0 (stub)'; exit 0; }\n" + script)
    qemu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    # The provenance of the boots is this stub's, not a cached real QEMU's.
    boot.host_provenance.cache_clear()
    monkeypatch.setattr(boot, "host_provenance", boot.host_provenance.__wrapped__)
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))


@pytest.fixture
def stub(tmp_path, monkeypatch):
    """Put a qemu-system-x86_64 on PATH that prints $STUB_CONSOLE, then
    sleeps $STUB_SLEEP seconds (and writes its pid to $STUB_PID)."""
    _stub_qemu(tmp_path, monkeypatch, 'echo $$ > "$STUB_PID"\ncat "$STUB_CONSOLE"\n'
               'sleep "${STUB_SLEEP:-0}"\n')
    monkeypatch.setenv("STUB_PID", str(tmp_path / "qemu.pid"))
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"\0")
    initrd = tmp_path / "initrd"
    initrd.write_bytes(b"")

    def run(console, sleep=0, timeout=30):
        (tmp_path / "console").write_text(console)
        monkeypatch.setenv("STUB_CONSOLE", str(tmp_path / "console"))
        monkeypatch.setenv("STUB_SLEEP", str(sleep))
        return boot.boot(str(kernel), "true", str(tmp_path / "boot.log"), initrd=str(initrd),
                         icount=True, timeout=timeout)
    run.pidfile = tmp_path / "qemu.pid"
    run.kernel, run.initrd = kernel, initrd
    return run


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_clean_boot(stub):
    res = stub(CONSOLE_OK)
    assert res.problems() == [] and res.rc == 0 and "cyclictest" in res.sections()


def test_hung_guest_times_out_and_qemu_is_killed(stub):
    t0 = time.time()
    res = stub("PVRT-BOOTED x\n", sleep=600, timeout=2)
    assert time.time() - t0 < 30
    assert res.timed_out and "timed out after" in res.problems()[0]
    pid = int(stub.pidfile.read_text())
    assert not alive(pid)


def test_missing_markers_are_problems(stub):
    assert stub("Kernel panic - not syncing: VFS\n").problems()[0] == \
        "userspace never started (no PVRT-BOOTED)"
    assert "the command did not finish (no PVRT-EXIT)" in stub("PVRT-BOOTED x\n").problems()


def test_validate_measure_and_table_from_the_stub(stub, tmp_path, monkeypatch):
    (tmp_path / "console").write_text(CONSOLE_OK)
    monkeypatch.setenv("STUB_CONSOLE", str(tmp_path / "console"))
    monkeypatch.setattr(validate.boot.initramfs, "ensure", lambda *a: str(stub.initrd))
    monkeypatch.setattr(validate, "kunit_counts", lambda *a: None)
    out = tmp_path / "out"
    (out / "arch/x86/boot").mkdir(parents=True)
    (out / "arch/x86/boot/bzImage").write_bytes(b"\0")
    row = validate.measure(os.environ["PVRT_TOP"], str(tmp_path / "build"), "tree", "stock", 2,
                           "stress-set", 1, str(tmp_path), str(out))
    assert (row["samples"], row["min"], row["max"], row["p99"]) == (10000, 8, 310, 12)
    assert row["series"] == [(1.0, 40, 0), (2.0, 310, 0)] and row["phases"] == [("memory", 0.0)]
    table = report.text_table(report.LAT_HEAD, report.latency_table([row]))
    assert table.splitlines()[2].split() == ["stock", "stress-set", "1", "10000", "8", "10.4",
                                             "12", "12", "12", "310", "310", "310"]


def chain_console(mutex_verdict):
    out = ["PVRT-BOOTED x"]
    for scen, lock, verdict, wait in (("PVLOCK09", "pv_mutex", "SUCCESS", 46601),
                                      ("PVLOCK10", "rt_mutex", "SUCCESS", 46602),
                                      ("PVLOCK11", "mutex", mutex_verdict, 548267)):
        out += [f"[ 1.0] PVRT-TORTURE-START {scen}",
                f"pi_football: chain lock={lock} cpus=1 hold_us=20000 game_ms=500: 12 rounds,"
                " 6 with offense",
                "pi_football: T_sched max 5 us (100 wake-ups per CPU), T_cs max 46577 us,"
                " calibration wait max 46590 us",
                f"pi_football: high's wait with offense max {wait} us, bound T_cs + 2 T_sched"
                " 46588 us, ratio 1.00 (limit 1.10)",
                f"pi_football: End of test: {verdict}",
                f"[ 9.0] PVRT-TORTURE-STOP {scen} rc=0"]
    return "\n".join(out + ["PVRT-EXIT rc=0", ""])


def _measure_chain(stub, tmp_path, monkeypatch):
    """validate.measure_chain on the stub QEMU printing TMP_PATH/console."""
    monkeypatch.setenv("STUB_CONSOLE", str(tmp_path / "console"))
    monkeypatch.setattr(validate.boot.initramfs, "ensure", lambda *a: str(stub.initrd))
    out = tmp_path / "out"
    (out / "arch/x86/boot").mkdir(parents=True)
    (out / "arch/x86/boot/bzImage").write_bytes(b"\0")
    return validate.measure_chain(os.environ["PVRT_TOP"], str(out), 5, str(tmp_path))


@pytest.mark.parametrize("mutex_verdict, problems", [("FAILURE", 0), ("SUCCESS", 1)])
def test_chain_rows_judged_as_cflist_expects(stub, tmp_path, monkeypatch, mutex_verdict,
                                             problems):
    """The seed experiment boots the CFLIST chain scenarios: a plain mutex
    that meets the bound is a problem (the check would be blind)."""
    (tmp_path / "console").write_text(chain_console(mutex_verdict))
    rows = _measure_chain(stub, tmp_path, monkeypatch)
    assert [(r["lock"], r["wait_max_us"], r["bound_us"]) for r in rows] == [
        ("pv_mutex", 46601, 46588), ("rt_mutex", 46602, 46588), ("mutex", 548267, 46588)]
    assert sum(len(r["problems"]) for r in rows) == problems


@pytest.fixture
def validate_stub(tmp_path, monkeypatch, capsys):
    """scripts/validate with the builds faked and a stub QEMU that prints
    the console given for the kernel it boots: run(consoles, *args) with
    CONSOLES {variant: console text} returns (exit status, results.json
    rows, what validate printed)."""
    _stub_qemu(tmp_path, monkeypatch, 'while [ $# -gt 0 ]; do [ "$1" = -kernel ] && k=$2;'
               ' shift; done\ncat "${k%/*}/console"\n')
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "initrd").write_bytes(b"")
    monkeypatch.setattr(experiment, "apply_tree", lambda *a, **k: "tree")
    monkeypatch.setattr(experiment, "tree_ids", lambda tree: {"base": "b", "tip": "t"})
    monkeypatch.setattr(validate.tools, "require", lambda *a: None)
    monkeypatch.setattr(validate.initramfs, "ensure", lambda *a: str(tmp_path / "initrd"))
    monkeypatch.setattr(validate, "kunit_counts", lambda *a: None)
    consoles = {}

    def build_variant(top, tree, var, out=None, log=print):
        out = out or str(tmp_path / "out" / var.name)
        image = build.kernel_image(out)
        os.makedirs(os.path.dirname(image), exist_ok=True)
        with open(image, "wb") as f:
            f.write(b"\0")
        with open(os.path.join(os.path.dirname(image), "console"), "w") as f:
            f.write(consoles[var.name])
        # What build_variant records: the base commit for a stock baseline.
        with open(os.path.join(out, build.SOURCE_FILE), "w") as f:
            json.dump({"tree": var.tree, "commit": ("b" if var.from_base else "t") * 40}, f)
        return out

    monkeypatch.setattr(build, "build_variant", build_variant)

    def run(by_variant, *args):
        consoles.clear()
        consoles.update(by_variant)
        rc = validate.main(["--variants", ",".join(by_variant), "--seconds", "2",
                            "--no-devices", *args])
        (results,) = (tmp_path / "build" / "report").iterdir()
        return rc, json.loads((results / "results.json").read_text()), capsys.readouterr().out
    return run


# A kernel message written into cyclictest's summary line.
# Bytes lost in the UART (an overrun): the line cannot be read.
CONSOLE_GARBLED = CONSOLE_OK.replace("# Max Latencies: 00310", "# Max Lacies: 00310")
# A kernel message printed into the line: the line is joined again.
CONSOLE_GLUED = CONSOLE_OK.replace(
    "# Max Latencies: 00310",
    "# Max Latencies: 0[   12.345678] clocksource: Switched to clocksource tsc\n0310")


def test_a_kernel_message_printed_into_the_summary_is_read_around(validate_stub):
    """A kernel message in the middle of cyclictest's summary line leaves the
    run valid, with the maximum cyclictest printed (310, not 0)."""
    rc, rows, _ = validate_stub({"stock": CONSOLE_OK, "project": CONSOLE_GLUED},
                                "--runs", "1", "--jobs", "1")
    (row,) = [r for r in rows if r["variant"] == "project"]
    assert row["problems"] == [] and row["max"] == 310 and row["samples"] == 10000


def test_a_garbled_cyclictest_section_is_the_runs_problem(validate_stub):
    """A cyclictest summary broken by an interleaved console write makes
    that run invalid; the other boots go on and validate fails."""
    rc, rows, out = validate_stub({"stock": CONSOLE_OK, "project": CONSOLE_GARBLED},
                                  "--runs", "2", "--jobs", "1")
    assert rc == 1
    assert sorted((r["variant"], r["run"]) for r in rows) == [
        ("project", 1), ("project", 2), ("stock", 1), ("stock", 2)]
    for r in rows:
        if r["variant"] == "stock":
            assert r["problems"] == [] and r["samples"] == 10000
        else:
            assert r["problems"] == ["cyclictest output unreadable: no cyclictest histogram"
                                     " summary (# Min/Avg/Max Latencies) found"]
            assert r.get("samples") is None
    assert re.search(r"^project +stress-set +1 +project-stress-set-1\.log +cyclictest output"
                     r" unreadable", out, re.M)


def console_without_samples(overflows, cmax):
    """CONSOLE_OK with no histogram bucket: OVERFLOWS samples above its range."""
    return "\n".join(ln for ln in CONSOLE_OK.splitlines() if not ln.startswith("000")).replace(
        "Overflows: 00000", f"Overflows: {overflows:05d}").replace(
        "Max Latencies: 00310", f"Max Latencies: {cmax:05d}") + "\n"


def test_a_run_without_samples_is_invalid_and_fails_validate(validate_stub):
    """Zero samples: the run is invalid and listed, and a kernel without a
    valid run fails validate."""
    rc, rows, out = validate_stub({"stock": CONSOLE_OK,
                                   "project": console_without_samples(0, 0)})
    assert rc == 1
    proj = next(r for r in rows if r["variant"] == "project")
    assert proj["samples"] == 0 and proj["problems"] == ["no samples"]
    assert re.search(r"^project +stress-set +1 +project-stress-set-1\.log +no samples$", out, re.M)
    assert "no valid run of project under stress-set" in out


def test_a_run_whose_every_sample_overflowed_is_a_measurement(validate_stub):
    """Every sample above the histogram's range: cyclictest's "# Max
    Latencies" still gives the run's maximum.  The run is valid, counts in
    the table and the headline (with a note), and is not listed as invalid."""
    rc, rows, out = validate_stub({"stock": CONSOLE_OK,
                                   "project": console_without_samples(42, 25000)})
    proj = next(r for r in rows if r["variant"] == "project")
    assert proj["samples"] == 42 and proj["hist"] == {} and proj["problems"] == []
    assert rc == 0
    assert "Invalid runs" not in out and "no valid run" not in out
    line = next(ln for ln in out.splitlines() if ln.startswith("project "))
    assert line.split()[:4] == ["project", "stress-set", "1", "42"]
    assert line.endswith(" 25000 (all 42 samples overflowed the histogram)")
    assert "project / stock PREEMPT  80.65 (project 25000 / stock 310 us" in out


def test_chain_problem_names_the_splat(stub, tmp_path, monkeypatch):
    """A splat inside PVLOCK09's section: the row's problem names it, not a
    "verdict SUCCESS, expected SUCCESS" that says nothing."""
    splat = "[   13.4] BUG: scheduling while atomic: pi_football/77/0x00000002"
    (tmp_path / "console").write_text(chain_console("FAILURE").replace(
        "PVRT-TORTURE-START PVLOCK09\n", "PVRT-TORTURE-START PVLOCK09\n" + splat + "\n"))
    rows = _measure_chain(stub, tmp_path, monkeypatch)
    (why,) = rows[0]["problems"]
    assert why.startswith("PVLOCK09: 1 splat: ") and "BUG: scheduling while atomic" in why
    assert "verdict" not in why
    assert report.headline(rows)[0][3] == f"not enough valid runs: pv_mutex chain 0 of 1 ({why})"


def test_resume_measures_an_invalid_run_again(validate_stub, tmp_path):
    """--resume keeps valid runs and measures invalid ones again: the run
    replaces the invalid one (no double counting) and the goal is judged."""
    rc, rows, out = validate_stub({"stock": CONSOLE_OK, "project": console_without_samples(0, 0)})
    assert rc == 1 and "not enough valid runs: project 0 of 1" in out
    (rdir,) = (tmp_path / "build" / "report").iterdir()
    rc, rows, out = validate_stub({"stock": CONSOLE_OK, "project": CONSOLE_OK},
                                  "--resume", str(rdir))
    assert rc == 0
    assert sorted((r["variant"], r["run"], r["samples"], r["problems"]) for r in rows) == [
        ("project", 1, 10000, []), ("stock", 1, 10000, [])]
    assert "not enough valid runs" not in out and "Invalid runs" not in out
    assert "project / stock PREEMPT  1.00 (project 310 / stock 310 us" in out


NO_SECTION = re.sub(r"PVRT-BEGIN cyclictest\n.*PVRT-END cyclictest rc=0\n", "", CONSOLE_OK,
                    flags=re.S)


@pytest.mark.parametrize("console, problem", [
    (NO_SECTION, "no cyclictest section (no PVRT-BEGIN cyclictest)"),
    (CONSOLE_OK.replace("PVRT-END cyclictest rc=0", "PVRT-END cyclictest rc=1"),
     "cyclictest exited with rc=1"),
    (CONSOLE_OK.replace("PVRT-END cyclictest rc=0\n", ""),
     "cyclictest section not finished (no PVRT-END cyclictest)")],
    ids=["no-section", "rc-1", "no-end"])
def test_a_run_without_a_cyclictest_result_names_why(validate_stub, console, problem):
    """An otherwise clean boot whose cyclictest section is missing, ended
    with a non-zero status or never ended: the run's problem says so."""
    rc, rows, out = validate_stub({"stock": CONSOLE_OK, "project": console})
    assert rc == 1
    proj = next(r for r in rows if r["variant"] == "project")
    assert proj["problems"] == [problem]
    assert re.search(rf"^project +stress-set +1 +project-stress-set-1\.log +{re.escape(problem)}$",
                     out, re.M)


def test_resume_with_an_older_results_json(validate_stub, tmp_path):
    """A results.json an older validate wrote (no "kind", no p99.99,
    p99.999, series or phases; problems [] for a run without samples or
    without a cyclictest section): its valid runs are kept, an all-overflow
    run among them, and the runs without samples are measured again."""
    rdir = tmp_path / "build" / "report" / "20261120-080000"
    rdir.mkdir(parents=True)

    def old(variant, run_no, **kw):
        return dict({"variant": variant, "load": "stress-set", "run": run_no, "seconds": 2,
                     "log": str(rdir / f"{variant}-stress-set-{run_no}.log"), "problems": [],
                     "key": f"latency/{variant}/stress-set/{run_no}"}, **kw)

    figures = {"samples": 10000, "min": 8, "avg": 10.4, "max": 300, "p99": 12, "p999": 12}
    # An older meta.json: no tree ids, no kernel_config (stock was built from
    # the base already: a run whose stock was the series' is not resumed).
    (rdir / "meta.json").write_text(json.dumps({"started": "2026-11-20 08:00:00",
                                                "load": "stress-set", "seconds": 2,
                                                "runs": 2, "variants": ["stock", "project"],
                                                "kernel_trees": {"stock": "base b"}}))
    (rdir / "results.json").write_text(json.dumps([
        old("stock", 1, hist={"8": 4000, "12": 5999, "300": 1}, **figures),
        old("project", 1, hist={}, **dict(figures, samples=0, max=0)),
        old("stock", 2, hist={}, **dict(figures, samples=42, max=25000)),
        old("project", 2)]))
    rc, rows, out = validate_stub({"stock": CONSOLE_OK, "project": CONSOLE_OK},
                                  "--runs", "2", "--resume", str(rdir))
    assert rc == 0
    assert sorted((r["variant"], r["run"], r["samples"], r["max"]) for r in rows) == [
        ("project", 1, 10000, 310), ("project", 2, 10000, 310),
        ("stock", 1, 10000, 300), ("stock", 2, 42, 25000)]
    assert "Invalid runs" not in out and "not enough valid runs" not in out
    assert re.search(r"^stock +stress-set +2 +10042 .* 300 25000 \(all 42 samples overflowed"
                     r" the histogram\)$", out, re.M)
    assert "project / stock PREEMPT  0.025 (project 310..310 / stock 300..25000 us" in out


@pytest.mark.parametrize("args, tip, qemu, why", [
    (("--seconds", "3"), "t", None, "seconds 2 there, 3 now"),
    (("--load", "hackbench"), "t", None, "load 'stress-set' there, 'hackbench' now"),
    ((), "t2", None, "tip 't' there, 't2' now"),
    ((), "t", "QEMU emulator version 7.2.0", "QEMU 'QEMU emulator version 7.2.0' there")])
def test_resume_refuses_runs_measured_otherwise(validate_stub, tmp_path, monkeypatch,
                                                args, tip, qemu, why):
    """--resume pools new runs with the old ones only when they measure the
    same thing: the same --seconds, load, KERNEL_CONFIG, tree and QEMU.
    Otherwise it says what differs and measures nothing."""
    rc, rows, _out = validate_stub({"stock": CONSOLE_OK, "project": console_without_samples(0, 0)})
    (rdir,) = (tmp_path / "build" / "report").iterdir()
    if qemu:
        old = json.loads((rdir / "results.json").read_text())
        for r in old:
            r["provenance"]["qemu"] = qemu
        (rdir / "results.json").write_text(json.dumps(old))
    before = (rdir / "results.json").read_text(), (rdir / "meta.json").read_text()
    monkeypatch.setattr(experiment, "tree_ids", lambda tree: {"base": "b", "tip": tip})
    with pytest.raises(validate.ValidateError, match=re.escape(why)):
        validate.main(["--variants", "stock,project", "--seconds", "2", "--no-devices",
                       "--resume", str(rdir), *args])
    assert ((rdir / "results.json").read_text(), (rdir / "meta.json").read_text()) == before


def test_resume_keeps_the_record_of_how_the_run_started(validate_stub, tmp_path):
    validate_stub({"stock": CONSOLE_OK, "project": console_without_samples(0, 0)})
    (rdir,) = (tmp_path / "build" / "report").iterdir()
    first = json.loads((rdir / "meta.json").read_text())
    validate_stub({"stock": CONSOLE_OK, "project": CONSOLE_OK}, "--resume", str(rdir))
    meta = json.loads((rdir / "meta.json").read_text())
    assert meta["started"] == first["started"] and meta["command"] == first["command"]
    assert len(meta["resumed"]) == 1 and "--resume" in meta["resumed"][0]["command"]


def test_every_run_records_what_booted_and_summary_json_judges(validate_stub, tmp_path):
    """results.json: each run's uname -v and command line (from the guest's
    PVRT-KERNEL / PVRT-CMDLINE lines), the QEMU and userspace versions and
    the host; summary.json: every goal with its verdict, every run with its
    validity, in the report and in a file for dashboards."""
    rt = CONSOLE_OK.replace("cpus=1\n", "cpus=1\nPVRT-KERNEL #1 SMP"
                            " PREEMPT_RT Tue Nov 24\nPVRT-CMDLINE console=ttyS0 threadirqs\n")
    rc, rows, out = validate_stub({"stock": rt, "project": console_without_samples(0, 0)})
    assert rc == 1
    stock = next(r for r in rows if r["variant"] == "stock")
    prov = stock["provenance"]
    assert prov["uname_v"] == "#1 SMP PREEMPT_RT Tue Nov 24"
    assert prov["cmdline"] == "console=ttyS0 threadirqs"
    assert prov["qemu"] == "QEMU emulator version 0.0 (stub)"
    for key in ("rt-tests", "stress-ng", "busybox-static", "host", "host_kernel", "host_cpu"):
        assert prov[key]
    (rdir,) = (tmp_path / "build" / "report").iterdir()
    md = (rdir / "report.md").read_text()
    assert "- booted stock: `#1 SMP PREEMPT_RT Tue Nov 24`, command line" in md
    # Which tree each kernel came from: the stock baseline from the base.
    assert prov["kernel_tree"] == "base " + "b" * 12
    project = next(r for r in rows if r["variant"] == "project")
    assert project["provenance"]["kernel_tree"] == "series " + "t" * 12
    assert "`, built from the base tree at bbbbbbbbbbbb" in md
    assert json.loads((rdir / "meta.json").read_text())["kernel_trees"] == {
        "stock": "base " + "b" * 12, "project": "series " + "t" * 12}
    assert "instruction-counted latency" in md and "`rep` string instruction" in md
    summ = json.loads((rdir / "summary.json").read_text())
    assert summ["invalid_runs"] == 1 and summ["all_goals_met"] is False
    (goal,) = [g for g in summ["goals"] if "stock PREEMPT" in g["what"]]
    assert goal["judged"] is False and goal["verdict"].startswith("not enough valid runs")
    assert {(r["variant"], r["valid"]) for r in summ["runs"]} == {("stock", True),
                                                                 ("project", False)}
    assert "summary for dashboards: " in out


CONSOLE_TWO_CPUS = CONSOLE_OK.replace("# Min Latencies: 00008\n", "# Min Latencies: 00008 00009\n") \
    .replace("# Avg Latencies: 00012\n", "# Avg Latencies: 00012 00011\n") \
    .replace("# Max Latencies: 00310\n", "# Max Latencies: 00310 00090\n") \
    .replace("# Histogram Overflows: 00000\n", "# Histogram Overflows: 00000 00000\n") \
    .replace("000008 004000\n", "000008 004000 000000\n000009 000000 009999\n") \
    .replace("000012 005999\n", "000012 005999 000000\n") \
    .replace("000310 000001\n", "000090 000000 000001\n000310 000001 000000\n")


def test_cpus_and_isolated_rigs(validate_stub, tmp_path):
    """--cpus 1,2 --isolated: per kernel an -smp 1 run, an -smp 2 run with
    a measuring thread per CPU, and an -smp 2 run with the last CPU
    isolated; QEMU gets -smp N with -icount, the guest the thread layout,
    the kernel the isolation; the table and the headline have a row per
    set-up, each CPU's maximum in the run's column."""
    rc, rows, out = validate_stub({"stock": CONSOLE_TWO_CPUS, "project": CONSOLE_TWO_CPUS},
                                  "--cpus", "1,2", "--isolated")
    assert rc == 0, out
    assert sorted((r["variant"], r["rig"]) for r in rows) == [
        ("project", "smp1"), ("project", "smp2"), ("project", "smp2-isolated"),
        ("stock", "smp1"), ("stock", "smp2"), ("stock", "smp2-isolated")]
    (rdir,) = (tmp_path / "build" / "report").iterdir()
    logs = {r["rig"]: open(r["log"]).readline() for r in rows if r["variant"] == "project"}
    assert "-smp 1 -icount" in logs["smp1"] and "-smp 2 -icount" in logs["smp2"]
    assert "isolcpus=domain,managed_irq,1 irqaffinity=0" in logs["smp2-isolated"]
    assert "isolcpus" not in logs["smp2"]
    smp2 = next(r for r in rows if r["variant"] == "stock" and r["rig"] == "smp2")
    assert [t["max"] for t in smp2["threads"]] == [310, 90]
    assert smp2["samples"] == 20000
    assert "project / stock PREEMPT" in out
    for rig in ("smp2", "smp2-isolated"):
        assert f"max latency under stress-set ({rig}): project / stock PREEMPT" in out
    assert re.search(r"^stock \(smp2\) +stress-set +1 +20000 .* 310 \(per CPU 310/90\)$",
                     out, re.M)
    # Isolated: the figures of the thread on the isolated CPU.
    assert re.search(r"^stock \(smp2-isolated\) +stress-set +1 +10000 .* 90 \(per CPU"
                     r" 310/90\)$", out, re.M)


def test_guest_asks_cyclictest_for_a_thread_per_cpu(tmp_path):
    import shutil
    import subprocess
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("no busybox on this host")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "cyclictest").write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path}/args\n")
    (bindir / "cyclictest").chmod(0o755)
    script = os.path.join(os.path.dirname(__file__), "..", "guest", "cyclictest-load")
    for extra in ([], ["2"], ["2", "isolated"], ["4", "isolated"]):
        subprocess.run([busybox, "sh", script, "1", "none", *extra], capture_output=True,
                       env={"PATH": f"{bindir}:{os.environ['PATH']}",
                            "PVRT_LOAD_WORK": str(tmp_path / "w")}, timeout=60, check=False)
    args = (tmp_path / "args").read_text().splitlines()
    # Isolated too: a thread on every CPU (round-robin TCG serves a lone
    # CPU's timer late); the host takes the isolated CPU's.
    assert [a.split(" -D ")[0] for a in args] == [
        "-m -p 99 -i 200", "-m -p 99 -i 200 -t 2 -a", "-m -p 99 -i 200 -t 2 -a",
        "-m -p 99 -i 200 -t 4 -a"]
