# SPDX-License-Identifier: GPL-2.0
"""scripts/throughput: the guest's figures and the comparison table."""

import json
import os
import shutil
import subprocess
import resource

import pytest

from pvrt import throughput
from pvrt.errors import PvrtError

SECTION = """\
hackbench 0 1.104
write 0 10.00 11.00
read 0 11.02 11.66
opens 0 11.70 12.55
fork 0 0.912345
faults 0 0.930001
hackbench 1 1.210
write 1 20.00 21.28
read 1 21.30 21.94
opens 1 22.00 22.80
fork 1 0.95
faults 1 0.91
""".splitlines()


def test_figures_per_run():
    f = throughput.parse(SECTION)
    assert f["hackbench"] == [1.104, 1.21]
    assert f["write"] == [128.0, 100.0]          # 128 MB in 1.00 s and in 1.28 s
    assert f["read"] == [200.0, 200.0]
    assert f["opens"] == [0.85, 0.8]
    assert f["fork"] == [0.912345, 0.95]
    assert f["faults"] == [0.930001, 0.91]
    assert throughput.parse(SECTION, runs=2) == f


def test_missing_or_broken_figures_are_errors_not_zeros():
    with pytest.raises(PvrtError, match="hackbench printed no time"):
        throughput.parse(["hackbench 0 "])
    with pytest.raises(PvrtError, match="two uptimes"):
        throughput.parse(["write 0 12.00"])
    with pytest.raises(PvrtError, match="no measurable time"):
        throughput.parse(["write 0 12.00 12.00"])


def test_table_gives_medians_ranges_and_ratios_to_the_first_kernel():
    stock = {"variant": "stock", "summary": throughput.summary(throughput.parse(SECTION))}
    slow = {"variant": "project", "summary": {"hackbench": (2.314, 2.2, 2.4)}}
    text = throughput.table([stock, slow])
    lines = text.splitlines()
    assert lines[2].split()[0] == "stock" and "x1.00" in lines[2]
    assert "1.16 [1.10..1.21]" in lines[2]
    assert "x2.00" in lines[3]                   # 2.314 / median(1.104, 1.21) = 2.0
    # a figure the kernel's runs did not give is "-", not a number
    assert lines[3].split()[-5:] == ["-"] * 5


def _tree_base_env(tmp_path, monkeypatch):
    import os
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(throughput.tools, "require", lambda *a: None)


def test_no_build_looks_for_a_stock_boot_in_the_base_build(tmp_path, monkeypatch):
    """--no-build --variants threadirqs boots stock's build, which is built
    from the series' base: out/stock-base, not out/threadirqs or out/stock."""
    _tree_base_env(tmp_path, monkeypatch)
    for d in ("threadirqs", "stock"):
        img = tmp_path / "out" / d / "arch/x86/boot"
        img.mkdir(parents=True)
        (img / "bzImage").write_bytes(b"k")
    with pytest.raises(PvrtError, match=f"no kernel in {tmp_path}/out/stock-base;"):
        throughput.main(["--no-build", "--variants", "threadirqs"])
    img = tmp_path / "out" / "stock-base" / "arch/x86/boot"
    img.mkdir(parents=True)
    (img / "bzImage").write_bytes(b"k")
    booted = []

    class Booted(Exception):
        pass

    def boot(image, cmd, log_path, **k):
        booted.append((image, k.get("append")))
        raise Booted
    monkeypatch.setattr(throughput.boot, "boot", boot)
    monkeypatch.setattr(throughput.validate, "run_jobs",
                        lambda jobs, *a, **k: [r for j in jobs for r in j.fn()])
    with pytest.raises(Booted):
        throughput.main(["--no-build", "--variants", "threadirqs"])
    assert booted == [(str(img / "bzImage"), "threadirqs")]


@pytest.mark.parametrize("drop, why", [
    ("fork ", r"figures missing: fork \(1 of 2\)"),
    ("faults", r"figures missing: faults \(0 of 2\)"),
    ("hackbench 1", r"figures missing: hackbench \(1 of 2\)"),
])
def test_a_run_without_every_figure_is_refused(drop, why):
    lines = [ln for ln in SECTION if not ln.startswith(drop)
             or (drop == "fork " and ln.startswith("fork 0"))]
    with pytest.raises(PvrtError, match=why):
        throughput.parse(lines, runs=2)


@pytest.mark.parametrize("line, why", [
    ("fork 0 ", "fork printed no time"),           # fork-fault failed: nothing on stdout
    ("fork 0 0.5 0.6", "fork printed no time"),
    ("faults 0 abc", "faults printed no time"),
    ("faults 0 0", "not positive"),
    ("fork 0 -1.0", "not positive"),
    ("fork 0 nan", "not positive"),
    ("fork 0 inf", "not positive"),
    ("fork 1 0.5", "run 1 where run 0 was due"),
    ("write 0 1.00 inf", "no measurable time"),
    ("write 0 nan 1.00", "no measurable time"),
])
def test_malformed_figures_are_refused(line, why):
    with pytest.raises(PvrtError, match=why):
        throughput.parse([line])


@pytest.mark.parametrize("line", ["fork x 0.5", "fork", "fork -1 0.5", "fork 0.5"])
def test_a_line_without_a_run_number_is_no_figure(line):
    """Not a figure line (a kernel message starts with the program's name:
    "hackbench (475) used greatest stack depth: 13400 bytes left", as in a
    real boot); the run it should have given is then missing."""
    assert throughput.parse([line])["fork"] == []
    with pytest.raises(PvrtError, match=r"figures missing: hackbench \(0 of 1\), .*fork"):
        throughput.parse([line], runs=1)


def test_kernel_messages_in_the_section_are_not_figures():
    lines = SECTION[:1] + ["hackbench (475) used greatest stack depth: 13400 bytes left",
                           "fork-fault (470) used greatest stack depth: 13576 bytes left"] \
        + SECTION[1:]
    assert throughput.parse(lines, runs=2) == throughput.parse(SECTION, runs=2)


def test_a_figure_printed_twice_for_a_run_is_refused():
    with pytest.raises(PvrtError, match="run 0 where run 1 was due"):
        throughput.parse(["fork 0 0.5", "fork 0 0.6"])


def _k(name, **figs):
    """A kernel's row with (median, min, max) per figure."""
    return {"variant": name, "summary": figs}


# hackbench in seconds (lower is better), write in MB/s (higher is better).
STOCK = _k("stock", hackbench=(1.0, 0.9, 1.1), write=(200.0, 190.0, 210.0))
TUNED = _k("stock-tuned", hackbench=(1.0, 0.95, 1.05), write=(200.0, 200.0, 200.0))
RT = _k("rt", hackbench=(1.4, 1.3, 1.5), write=(100.0, 90.0, 110.0))


def test_price_is_positive_for_a_cost_and_of_time_for_rates():
    # 1.1 s against 1.0 s: 10 % more time; 100 MB/s against 200: twice the time.
    assert throughput.price((1.1, 1.1, 1.1), (1.0, 1.0, 1.0), False)[0] == pytest.approx(0.1)
    assert throughput.price((100, 100, 100), (200, 200, 200), True)[0] == pytest.approx(1.0)
    # faster is a negative price
    assert throughput.price((0.9, 0.9, 0.9), (1.0, 1.0, 1.0), False)[0] == pytest.approx(-0.1)
    # the range: A's best against B's worst .. A's worst against B's best
    assert throughput.price((1.2, 1.1, 1.3), (1.0, 0.9, 1.1), False) == \
        pytest.approx((0.2, 0.0, 1.3 / 0.9 - 1))
    assert throughput.price((100, 80, 125), (200, 200, 250), True) == \
        pytest.approx((1.0, 0.6, 250 / 80 - 1))


def test_goal_met_and_missed_per_figure():
    # hackbench: rt +40 %, project +10 % (<= +20 %): met.
    # write: rt +100 %, project 200/160 - 1 = +25 % (<= +50 %): met;
    # at 125 MB/s, +60 % > +50 %: missed.
    proj = _k("project", hackbench=(1.1, 1.0, 1.2), write=(160.0, 150.0, 170.0))
    got, missing = throughput.prices([STOCK, TUNED, RT, proj])
    by = {p["figure"]: p for p in got}
    assert missing == []
    assert by["hackbench"]["goal"] == "met"
    assert by["hackbench"]["pairs"]["project vs stock-tuned"][0] == pytest.approx(0.1)
    assert by["hackbench"]["pairs"]["rt vs stock"][0] == pytest.approx(0.4)
    assert by["write"]["goal"] == "met"
    slow = _k("project", hackbench=(1.3, 1.2, 1.4), write=(125.0, 120.0, 130.0))
    by = {p["figure"]: p for p in throughput.prices([STOCK, TUNED, RT, slow])[0]}
    assert by["hackbench"]["goal"] == "missed"        # +30 % > +20 %
    assert by["write"]["goal"] == "missed"            # +60 % > +50 %
    text = throughput.price_table([STOCK, TUNED, RT, slow])
    row = next(ln for ln in text.splitlines() if ln.startswith("hackbench s"))
    assert "+30.0% [+14.3%..+47.4%]" in row and "+40.0% [+18.2%..+66.7%]" in row
    assert row.endswith("missed (+30.0% > +20.0%)")
    # a figure no kernel measured is not judged, and no zero stands in for it
    row = next(ln for ln in text.splitlines() if ln.startswith("400 fork+exit s"))
    assert row.endswith("not judged: no fork figure of project; no fork figure of"
                        " stock-tuned; no fork figure of rt; no fork figure of stock")
    assert "met" not in row and "%" not in row
    # one kernel without the figure (its runs failed): that figure is not judged
    no_rt = _k("rt", write=(100.0, 90.0, 110.0))
    by = {p["figure"]: p for p in throughput.prices([STOCK, TUNED, no_rt, slow])[0]}
    assert by["hackbench"]["goal"] == "not judged: no hackbench figure of rt"
    assert by["hackbench"]["pairs"]["rt vs stock"] is None
    assert by["write"]["goal"] == "missed"


def test_rt_costing_nothing_leaves_the_project_no_price():
    free_rt = _k("rt", hackbench=(1.0, 1.0, 1.0))
    proj = _k("project", hackbench=(1.01, 1.01, 1.01))
    by = {p["figure"]: p for p in throughput.prices([STOCK, TUNED, free_rt, proj])[0]}
    assert by["hackbench"]["goal"] == "missed"


def test_rt_faster_than_stock_asks_the_project_to_cost_nothing():
    """The 5-run table of 20261125-052414: PREEMPT_RT wrote tmpfs 7.9 %
    faster than stock, and the project at stock-tuned's speed read "missed
    (+0.0% > -3.9%)": half a gain asked the project to be faster than
    stock-tuned.  Where PREEMPT_RT costs nothing the project may cost
    nothing either."""
    fast_rt = _k("rt", write=(121.9, 121.9, 121.9))
    stock = _k("stock", write=(112.3, 112.3, 112.3))
    tuned = _k("stock-tuned", write=(113.3, 112.3, 113.3))
    same = _k("project", write=(113.3, 112.3, 113.3))
    by = {p["figure"]: p for p in throughput.prices([stock, tuned, fast_rt, same])[0]}
    assert by["write"]["goal"] == "met"
    slower = _k("project", write=(112.0, 112.0, 112.0))
    by = {p["figure"]: p for p in throughput.prices([stock, tuned, fast_rt, slower])[0]}
    assert by["write"]["goal"] == "missed"
    row = next(ln for ln in throughput.price_table([stock, tuned, fast_rt, same]).splitlines()
               if ln.startswith("tmpfs write"))
    assert row.endswith("met (+0.0% <= +0.0%)")


def test_price_table_says_which_kernels_are_missing():
    proj = _k("project", hackbench=(1.1, 1.0, 1.2))
    got, missing = throughput.prices([STOCK, proj, RT])
    assert missing == ["stock-tuned"]
    assert all(p["goal"] == "not judged: no stock-tuned" for p in got)
    assert got[0]["pairs"]["project vs stock-tuned"] is None
    assert got[0]["pairs"]["rt vs stock"][0] == pytest.approx(0.4)
    text = throughput.price_table([STOCK, proj, RT])
    assert "missing from --variants: stock-tuned (the table needs project, stock-tuned," \
           " rt, stock)" in text
    assert "met" not in text and "missed" not in text
    assert throughput.prices([proj])[1] == ["stock-tuned", "rt", "stock"]


def test_no_build_with_base_defconfig_boots_the_defconfig_builds(tmp_path, monkeypatch):
    """--base defconfig: the kernels scripts/validate --base defconfig built,
    out/<variant>-x86_64_defconfig (-base for a "tree base" one)."""
    _tree_base_env(tmp_path, monkeypatch)
    for d in ("project", "stock-base"):                 # allnoconfig builds only
        img = tmp_path / "out" / d / "arch/x86/boot"
        img.mkdir(parents=True)
        (img / "bzImage").write_bytes(b"k")
    with pytest.raises(PvrtError, match="no kernel in .*/out/project-x86_64_defconfig;"):
        throughput.main(["--no-build", "--base", "defconfig", "--variants", "project"])
    top = os.environ["PVRT_TOP"]
    outs = throughput.out_dirs(top, str(tmp_path), ["threadirqs", "project", "rt"],
                               "x86_64_defconfig")
    assert outs == {"threadirqs": str(tmp_path / "out" / "stock-x86_64_defconfig-base"),
                    "project": str(tmp_path / "out" / "project-x86_64_defconfig"),
                    "rt": str(tmp_path / "out" / "rt-x86_64_defconfig-base")}


class _Res:
    """A boot's result as boot.boot() returns it."""

    def __init__(self, text, problems=()):
        self.text, self._problems = text, list(problems)

    def sections(self):
        from pvrt import console
        return console.sections(self.text)

    def problems(self):
        return list(self._problems)


def _one_run(i=0, fork="0.9"):
    return [f"hackbench {i} 1.3", f"write {i} 10.00 11.00", f"read {i} 11.00 11.50",
            f"opens {i} 12.00 12.80", f"fork {i} {fork}", f"faults {i} 0.92"]


@pytest.mark.parametrize("body, rc, want", [
    (_one_run(), 0, []),
    (_one_run(fork=""), 1, ["guest/throughput ended with rc=1",
                            "fork printed no time: 'fork 0 '"]),
    (_one_run()[:4], 0, ["figures missing: fork (0 of 1), faults (0 of 1)"]),
])
def test_boot_one_refuses_a_run_with_a_failed_or_missing_figure(tmp_path, monkeypatch,
                                                                body, rc, want):
    _tree_base_env(tmp_path, monkeypatch)
    text = "\n".join(["PVRT-BEGIN throughput", *body, f"PVRT-END throughput rc={rc}"])
    monkeypatch.setattr(throughput.boot, "boot", lambda *a, **k: _Res(text))
    row = throughput.boot_one(os.environ["PVRT_TOP"], "project", str(tmp_path), 1,
                              str(tmp_path))
    assert row["problems"] == want
    assert bool(row["summary"]) == (not want)
    if not want:
        assert row["summary"]["fork"] == (0.9, 0.9, 0.9)


def test_main_prints_both_tables_and_fails_a_kernel_without_figures(tmp_path, monkeypatch,
                                                                    capsys):
    _tree_base_env(tmp_path, monkeypatch)
    outs = throughput.out_dirs(os.environ["PVRT_TOP"], str(tmp_path),
                               ["stock", "stock-tuned", "rt", "project"], None)
    for d in outs.values():
        img = os.path.join(d, "arch/x86/boot")
        os.makedirs(img, exist_ok=True)
        with open(os.path.join(img, "bzImage"), "wb") as f:
            f.write(b"k")

    def boot(image, cmd, log_path, **k):
        assert cmd == "throughput 2"
        if "/rt-base/" in image:
            return _Res("PVRT-BEGIN throughput\nPVRT-END throughput rc=0", ["oops"])
        lines = _one_run(0) + _one_run(1)
        return _Res("\n".join(["PVRT-BEGIN throughput", *lines, "PVRT-END throughput rc=0"]))
    monkeypatch.setattr(throughput.boot, "boot", boot)
    monkeypatch.setattr(throughput.validate, "run_jobs",
                        lambda jobs, *a, **k: [r for j in jobs for r in j.fn()])
    assert throughput.main(["--no-build", "--runs", "2"]) == 1
    out = capsys.readouterr().out
    assert "project vs stock-tuned" in out and "rt vs stock" in out
    assert "not judged: no hackbench figure of rt" in out
    assert "problems: rt: oops; figures missing: hackbench (0 of 2)" in out
    res = out.split("results: ")[1].strip()
    with open(os.path.join(res, "price.json"), encoding="utf-8") as f:
        saved = json.load(f)
    assert saved["missing"] == [] and saved["base"] == "allnoconfig"
    assert saved["figures"][0]["pairs"]["project vs stock-tuned"] == [0.0, 0.0, 0.0]


def test_apply_and_build_builds_from_the_base_target(tmp_path, monkeypatch):
    """experiment.apply_and_build(base_target=...) builds each kernel once,
    from x86_64_defconfig, in the directory --no-build looks in."""
    from pvrt import experiment
    top = os.path.join(os.path.dirname(__file__), "..")
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(experiment, "apply_tree", lambda *a: "TREE")
    built = []

    def build_variant(top_, tree, var, out=None, log=print):
        built.append((var.name, var.base, var.out_name))
        return os.path.join(str(tmp_path), "out", var.out_name)
    monkeypatch.setattr(experiment.build, "build_variant", build_variant)
    _tree, outs = experiment.apply_and_build(top, str(tmp_path), ["stock", "threadirqs"],
                                             print, base_target="x86_64_defconfig")
    assert built == [("stock", "x86_64_defconfig", "stock-x86_64_defconfig-base")]
    assert outs == throughput.out_dirs(top, str(tmp_path), ["stock", "threadirqs"],
                                       "x86_64_defconfig")


@pytest.fixture(scope="module")
def fork_fault(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("no gcc")
    exe = str(tmp_path_factory.mktemp("ff") / "fork-fault")
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-static", "-pthread", "-o", exe,
                    os.path.join(os.path.dirname(__file__), "..", "guest", "fork-fault.c")],
                   check=True)
    return exe


def _ff(exe, *args, limit_as=None):
    def pre():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=60,
                          preexec_fn=pre)


@pytest.mark.parametrize("args", [("fork", "20", "256"), ("fault", "4", "3")])
def test_fork_fault_prints_its_seconds(fork_fault, args):
    r = _ff(fork_fault, *args)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) > 0 and r.stdout.count("\n") == 1
    throughput.parse([f"{args[0].replace('fault', 'faults')} 0 {r.stdout}"], runs=None)


@pytest.mark.parametrize("args", [("fork", "20", "65536"), ("fault", "64", "1")])
def test_fork_fault_fails_loudly_when_a_call_fails(fork_fault, args):
    """mmap refused (RLIMIT_AS of 32 MiB): exit 1, the call on stderr, no figure
    on stdout, which the parser refuses as guest/throughput prints it."""
    r = _ff(fork_fault, *args, limit_as=32 << 20)
    assert r.returncode == 1
    assert r.stderr.startswith("fork-fault: mmap: ")
    assert r.stdout == ""
    with pytest.raises(PvrtError, match="printed no time"):
        throughput.parse([f"fork 0 {r.stdout}"])


@pytest.mark.parametrize("args", [(), ("fork", "10"), ("fork", "0", "4"), ("fault", "8", "x"),
                                  ("fault", "5000", "1"), ("spin", "1", "1")])
def test_fork_fault_refuses_bad_arguments(fork_fault, args):
    r = _ff(fork_fault, *args)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith(("fork-fault: ",
                                                                         "usage: "))


def test_a_run_more_than_asked_for_is_refused():
    with pytest.raises(PvrtError, match=r"^runs beyond those asked for: hackbench \(2 of 1\)"
                                        r", write \(2 of 1\).*faults \(2 of 1\)$"):
        throughput.parse(SECTION, runs=1)
