# SPDX-License-Identifier: GPL-2.0
"""scripts/latency-bisect on a stub: a git tree whose commits a fake build
and a fake cyclictest judge."""

import json
import os
import subprocess

import pytest

from pvrt import latbisect, validate

TOP = os.path.join(os.path.dirname(__file__), "..")


def test_bisect_finds_the_first_bad_commit_around_skips():
    seq = [f"c{i}" for i in range(10)]          # c6 is the first bad, c4 and c5 do not build
    verdicts = {c: ("bad" if i >= 6 else "good") for i, c in enumerate(seq)}
    verdicts.update(c4=latbisect.SKIP, c5=latbisect.SKIP)
    tested = []

    def test(c):
        tested.append(c)
        return verdicts[c]
    first, skipped = latbisect.bisect(seq, test, lambda m: None)
    assert first == "c6" and skipped == ["c4", "c5"]
    assert len(tested) <= 6
    verdicts.update(c4="good", c5="good")
    assert latbisect.bisect(seq, verdicts.get, lambda m: None) == ("c6", [])


@pytest.fixture
def tree(tmp_path):
    """A git tree of 8 commits: commit 5 makes the kernel slow, commit 3
    does not build."""
    t = tmp_path / "linux"
    t.mkdir()

    def git(*a):
        subprocess.run(["git", "-C", str(t), *a], check=True, capture_output=True,
                       env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))
    git("init", "-q")
    for i in range(8):
        (t / "n").write_text(str(i))
        if i == 3:
            (t / "broken").write_text("")
        if i == 4:
            (t / "broken").unlink()
        if i == 5:
            (t / "slow").write_text("")
        git("add", "-A")
        git("commit", "-qm", f"patch {i}")
    return t


def test_latency_bisect_end_to_end_on_a_stub(tree, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", TOP)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    built = []

    def build_variant(top, work, variant, out, log=print):
        built.append(open(os.path.join(work, "n")).read())
        if os.path.exists(os.path.join(work, "broken")):
            raise subprocess.CalledProcessError(2, "make")
        return out

    dirs = set()

    def measure(top, bdir, work, variant, secs, load, n, outdir, out, cpus=1, isolated=False):
        dirs.add(outdir)
        assert os.path.isdir(outdir)
        slow = os.path.exists(os.path.join(work, "slow"))
        mx = (900 if slow else 300) + 7 * n       # runs of one kernel vary a little
        return {"kind": "latency", "variant": variant, "load": load, "run": n, "samples": 1000,
                "min": 5, "avg": 9.0, "max": mx, "p99": 20, "p999": 40, "p9999": mx,
                "hist": {10: 999, mx: 1}, "problems": [], "load_work": {"hackbench": 9}}
    monkeypatch.setattr(latbisect.build, "build_variant", build_variant)
    monkeypatch.setattr(latbisect.validate, "measure", measure)
    rev = subprocess.run(["git", "-C", str(tree), "rev-list", "--reverse", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    rc = latbisect.main([rev[0], rev[7], "--tree", str(tree), "--seconds", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert f"first bad commit: {rev[5][:12]} patch 5" in out
    assert "max under stress-set, -smp 1, 5 x 2 s (median): 321 us at" in out
    assert f"at {rev[4][:12]} -> 921 us" in out
    # patch 3 did not build: skipped, not judged; the tree's checkout untouched.
    assert "skip " in out and "patch 3" in out
    assert open(tree / "n").read() == "7"
    # Every step's consoles in a directory of its own: none overwrites another's.
    assert len(dirs) == len(built) - 1            # patch 3 did not build, so no runs
    # With a threshold instead of the test, and 3 runs.
    rc = latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"])
    assert rc == 0 and f"first bad commit: {rev[5][:12]}" in capsys.readouterr().out
    # The other way round: the commit that made it faster.  From patch 5 on
    # the kernel is slow; patch 6 and 7 keep it slow, so within 5..7 nothing
    # improves, and the search for an improvement over patch 0 is refused:
    # its runs are better than patch 7's only the other way.
    with pytest.raises(latbisect.BisectError, match="is not better than GOOD"):
        latbisect.main([rev[0], rev[7], "--tree", str(tree), "--improvement"])
    capsys.readouterr()


def test_latency_bisect_finds_an_improvement(tree, tmp_path, monkeypatch, capsys):
    """A tree whose patch 5 makes the kernel fast: --improvement names it,
    both with the statistical test and with a threshold; without
    --improvement the same range is refused (BAD is not worse)."""
    logged = []
    monkeypatch.setattr(latbisect.logs, "logger", lambda name: logged.append)
    monkeypatch.setenv("PVRT_TOP", TOP)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(latbisect.build, "build_variant", lambda *a, **k: None)

    def measure(top, bdir, work, variant, secs, load, n, outdir, out, cpus=1, isolated=False):
        fast = os.path.exists(os.path.join(work, "slow"))    # the fixture's patch 5
        mx = (300 if fast else 900) + 7 * n
        return {"kind": "latency", "variant": variant, "load": load, "run": n, "samples": 1000,
                "min": 5, "avg": 9.0, "max": mx, "p99": 20, "p999": 40, "p9999": mx,
                "hist": {10: 999, mx: 1}, "problems": [], "load_work": {"hackbench": 9}}
    monkeypatch.setattr(latbisect.validate, "measure", measure)
    rev = subprocess.run(["git", "-C", str(tree), "rev-list", "--reverse", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--improvement"]) == 0
    out = capsys.readouterr().out
    assert f"first improving commit: {rev[5][:12]} patch 5" in out
    assert f"921 us at {rev[4][:12]} -> 321 us" in out
    assert " new " in out and " old " in out and " bad " not in out
    assert logged and not any(m.endswith((" bad", " good", ", bad", ", good")) for m in logged)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--improvement",
                           "--threshold", "500"]) == 0
    assert f"first improving commit: {rev[5][:12]}" in capsys.readouterr().out
    with pytest.raises(latbisect.BisectError, match="is not worse than GOOD"):
        latbisect.main([rev[0], rev[7], "--tree", str(tree)])


def test_bad_input_is_refused_before_anything_is_built(tree, tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", TOP)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(latbisect.build, "build_variant",
                        lambda *a, **k: pytest.fail("built"))
    rev = subprocess.run(["git", "-C", str(tree), "rev-list", "--reverse", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    with pytest.raises(latbisect.BisectError, match="is not an ancestor"):
        latbisect.main([rev[5], rev[2], "--tree", str(tree)])
    with pytest.raises(latbisect.BisectError, match="unknown commit"):
        latbisect.main(["nosuch", rev[2], "--tree", str(tree)])
    with pytest.raises(SystemExit):
        latbisect.main([rev[0], rev[2], "--tree", str(tree), "--runs", "3"])
    with pytest.raises(Exception, match="no variant"):
        latbisect.main([rev[0], rev[2], "--tree", str(tree), "--variant", "nosuch"])
    # Without --tree (a bisect of the series) a stock baseline, or a variant
    # booting its build, is built from the base: the same kernel at every step.
    monkeypatch.setattr(latbisect.experiment, "apply_tree",
                        lambda *a: pytest.fail("the series applied"))
    for name in ("stock-tuned", "threadirqs", "stock-tuned-threadirqs"):
        with pytest.raises(latbisect.BisectError, match=f"{name} is built from the series' base"):
            latbisect.main([rev[0], rev[2], "--variant", name])


@pytest.mark.parametrize("name,built", [("stock", "stock"), ("threadirqs", "stock")])
def test_a_stock_variant_of_another_tree_is_built_from_each_commit(tree, tmp_path, monkeypatch,
                                                                   name, built):
    """scripts/latency-bisect v6.12.1 v6.12.9 --tree ~/src/linux --variant
    stock (the README's example): each step builds the commit under test in
    the bisect checkout, not a base worktree of it."""
    _stub(monkeypatch, tmp_path)
    seen = []
    real = latbisect.build.build_variant

    def build_variant(top, work, variant, out, log=print):
        seen.append((variant.name, variant.from_base, work))
        return real(top, work, variant, out, log)
    monkeypatch.setattr(latbisect.build, "build_variant", build_variant)
    rev = subprocess.run(["git", "-C", str(tree), "rev-list", "--reverse", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--variant", name,
                           "--threshold", "500"]) == 0
    work = str(tmp_path / "build" / "bisect" / "linux")
    assert seen and set(seen) == {(built, False, work)}


def _stub(monkeypatch, tmp_path, broken=()):
    """Builds and runs stubbed: commits whose "n" is in BROKEN do not build;
    the fixture's patch 5 makes the kernel slow."""
    monkeypatch.setenv("PVRT_TOP", TOP)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    def build_variant(top, work, variant, out, log=print):
        if open(os.path.join(work, "n")).read() in broken:
            raise subprocess.CalledProcessError(2, "make")
        return out

    def measure(top, bdir, work, variant, secs, load, n, outdir, out, cpus=1, isolated=False):
        mx = (900 if os.path.exists(os.path.join(work, "slow")) else 300) + 7 * n
        return {"kind": "latency", "variant": variant, "load": load, "run": n, "samples": 1000,
                "min": 5, "avg": 9.0, "max": mx, "p99": 20, "p999": 40, "p9999": mx,
                "hist": {10: 999, mx: 1}, "problems": [], "load_work": {"hackbench": 9}}
    monkeypatch.setattr(latbisect.build, "build_variant", build_variant)
    monkeypatch.setattr(latbisect.validate, "measure", measure)


def _revs(tree):
    return subprocess.run(["git", "-C", str(tree), "rev-list", "--reverse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.split()


def test_every_commit_before_the_answer_skipped_names_good_as_before(tree, tmp_path,
                                                                       monkeypatch, capsys):
    _stub(monkeypatch, tmp_path, broken={"1", "2", "3", "4"})
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    out = capsys.readouterr().out
    assert f"first bad commit: {rev[5][:12]} patch 5" in out
    assert f"at {rev[0][:12]} -> 914 us" in out
    assert "could not be tested (skipped): " + ", ".join(r[:12] for r in rev[1:5]) in out


def test_annotated_tags_name_their_commits(tree, tmp_path, monkeypatch, capsys):
    _stub(monkeypatch, tmp_path)
    rev = _revs(tree)
    for name, r in (("v0", rev[4]), ("v1", rev[7])):
        subprocess.run(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t",
                        "tag", "-a", "-m", name, name, r], check=True)
    assert latbisect.main(["v0", "v1", "--tree", str(tree), "--threshold", "500"]) == 0
    out = capsys.readouterr().out
    assert f"first bad commit: {rev[5][:12]} patch 5" in out
    assert f"at {rev[4][:12]} -> 914 us" in out
    (rdir,) = (tmp_path / "build" / "results").iterdir()
    data = json.loads((rdir / "bisect.json").read_text())
    assert data["before"] == rev[4]
    assert [s["commit"] for s in data["steps"]][:2] == [rev[4], rev[7]]


def test_a_second_tree_gets_its_own_checkout(tree, tmp_path, monkeypatch, capsys):
    _stub(monkeypatch, tmp_path)
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(tree), str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "patch 8"], check=True)
    head = _revs(other)[-1]
    assert head not in rev
    assert latbisect.main([rev[2], head, "--tree", str(other), "--threshold", "500"]) == 0
    assert f"first bad commit: {rev[5][:12]}" in capsys.readouterr().out
    work = tmp_path / "build" / "bisect" / "linux"
    common = subprocess.run(["git", "-C", str(work), "rev-parse", "--path-format=absolute",
                             "--git-common-dir"], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert common == str(other / ".git")
    # A checkout that is no git tree at all is replaced too.
    subprocess.run(["rm", "-rf", str(work / ".git")], check=True)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0


@pytest.mark.parametrize("extra, says", [
    ([], "GOOD .* is not good by the test: 314 us is over --threshold 200"),
    (["--improvement"], "GOOD .* is not old by the test: 314 us is already below --threshold 400")])
def test_a_threshold_good_does_not_meet_is_refused(tree, tmp_path, monkeypatch, extra, says):
    _stub(monkeypatch, tmp_path)
    rev = _revs(tree)
    thr = "400" if extra else "200"
    good, bad = (rev[0], rev[7]) if not extra else (rev[0], rev[4])
    with pytest.raises(latbisect.BisectError, match=says):
        latbisect.main([good, bad, "--tree", str(tree), "--threshold", thr, *extra])


def test_a_variant_typo_is_refused_before_the_workspace_is_applied(tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", TOP)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(latbisect.experiment, "apply_tree",
                        lambda *a, **k: pytest.fail("applied"))
    with pytest.raises(Exception, match="no variant"):
        latbisect.main(["HEAD~1", "HEAD", "--variant", "nosuch"])


def _json(tmp_path):
    (rdir,) = (tmp_path / "build" / "results").iterdir()
    return json.loads((rdir / "bisect.json").read_text())


def test_a_bad_that_does_not_build_is_its_own_error(tree, tmp_path, monkeypatch):
    _stub(monkeypatch, tmp_path, broken={"7"})
    rev = _revs(tree)
    with pytest.raises(latbisect.BisectError, match="BAD .* cannot be tested: does not build"):
        latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"])
    # bisect.json has its one schema whatever happened, with the steps so far.
    data = _json(tmp_path)
    assert (data["first_bad"], data["good"], data["bad"]) == (None, rev[0], rev[7])
    assert [(s["commit"], s["verdict"]) for s in data["steps"]] == [(rev[0], "good"),
                                                                    (rev[7], "skip")]


def test_a_step_skipped_for_invalid_runs_says_why(tree, tmp_path, monkeypatch, capsys):
    _stub(monkeypatch, tmp_path)
    measure = latbisect.validate.measure

    def splat(top, bdir, work, *a, **k):
        row = measure(top, bdir, work, *a, **k)
        if open(os.path.join(work, "n")).read() == "4":
            row["problems"] = ["BUG: sleeping function called from invalid context"]
        return row
    monkeypatch.setattr(latbisect.validate, "measure", splat)
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    capsys.readouterr()
    data = _json(tmp_path)
    (step,) = [s for s in data["steps"] if s["commit"] == rev[4]]
    assert step["verdict"] == "skip"
    assert "run 1: BUG: sleeping function" in step["problem"]
    assert data["first_bad"] == rev[5] and data["skipped"] == [rev[4]]


def test_a_step_whose_load_did_less_work_than_at_good_is_skipped(tree, tmp_path, monkeypatch,
                                                                 capsys):
    """Every run of a bisect is of one variant: the load-work gate compares a
    step's runs with GOOD's (the same load, the same seconds).  Patch 3's
    load does a fifth of GOOD's work: its runs are invalid, the step skipped."""
    _stub(monkeypatch, tmp_path)
    measure = latbisect.validate.measure

    def lazy(top, bdir, work, *a, **k):
        row = measure(top, bdir, work, *a, **k)
        if open(os.path.join(work, "n")).read() == "3":
            row["load_work"] = {"hackbench": 2}
        return row
    monkeypatch.setattr(latbisect.validate, "measure", lazy)
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    capsys.readouterr()
    data = _json(tmp_path)
    (step,) = [s for s in data["steps"] if s["commit"] == rev[3]]
    assert step["verdict"] == "skip"
    assert "less than 50% of its work at GOOD: hackbench 2, GOOD's median 9" in step["problem"]
    assert data["first_bad"] == rev[5]


def test_a_step_that_does_not_boot_spends_one_run(tree, tmp_path, monkeypatch, capsys):
    _stub(monkeypatch, tmp_path)
    measure = latbisect.validate.measure
    tried = []

    def no_boot(top, bdir, work, *a, **k):
        row = measure(top, bdir, work, *a, **k)
        n = open(os.path.join(work, "n")).read()
        tried.append(n)
        if n == "3":
            row.update(samples=0, problems=["timed out after 660s",
                                            "userspace never started (no PVRT-BOOTED)",
                                            "no cyclictest section (no PVRT-BEGIN cyclictest)"])
        return row
    monkeypatch.setattr(latbisect.validate, "measure", no_boot)
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    capsys.readouterr()
    assert tried.count("3") == 1 and tried.count("0") == 3
    data = _json(tmp_path)
    (step,) = [s for s in data["steps"] if s["commit"] == rev[3]]
    assert step["verdict"] == "skip" and len(step["runs"]) == 1
    assert step["problem"] == ("does not boot: run 1: timed out after 660s; its other 2 run(s)"
                               " skipped")


def _lazy(monkeypatch, works):
    """The load of the commits whose "n" is in WORKS did WORKS[n] hackbench work (9 at GOOD)."""
    measure = latbisect.validate.measure

    def lazy(top, bdir, work, *a, **k):
        row = measure(top, bdir, work, *a, **k)
        n = open(os.path.join(work, "n")).read()
        if n in works:
            row["load_work"] = {"hackbench": works[n]}
        return row
    monkeypatch.setattr(latbisect.validate, "measure", lazy)


def test_each_steps_load_work_ratio_to_good_is_logged(tree, tmp_path, monkeypatch, capsys):
    """A load that did 2/3 of GOOD's work passes the gate, but says so."""
    _stub(monkeypatch, tmp_path)
    _lazy(monkeypatch, {str(n): 6 for n in range(1, 8)})
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    out = capsys.readouterr()
    data = _json(tmp_path)
    for s in data["steps"][1:]:
        assert s["load_ratio"] == 0.667 and s["verdict"] != "skip", s
        assert all(r["load_ratio"] == {"hackbench": 0.667} for r in s["runs"])
    assert "load work 67% of GOOD's" in out.out + out.err


def test_the_load_work_gate_is_an_option(tree, tmp_path, monkeypatch, capsys):
    _stub(monkeypatch, tmp_path)
    _lazy(monkeypatch, {"3": 6})
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500",
                           "--load-fraction", "0.7"]) == 0
    (step,) = [s for s in _json(tmp_path)["steps"] if s["commit"] == rev[3]]
    assert step["verdict"] == "skip" and "less than 70% of its work" in step["problem"]
    for bad in ("0", "1.5", "x"):
        with pytest.raises(SystemExit):
            latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500",
                            "--load-fraction", bad])


def test_a_step_skipped_only_by_the_load_gate_shows_its_figure(tree, tmp_path, monkeypatch,
                                                               capsys):
    """The regression sought can halve the load's work too: the step the
    gate skips keeps its figure, and the answer warns that it may be the one."""
    _stub(monkeypatch, tmp_path)
    _lazy(monkeypatch, {"4": 2})
    rev = _revs(tree)
    assert latbisect.main([rev[0], rev[7], "--tree", str(tree), "--threshold", "500"]) == 0
    out = capsys.readouterr().out
    (step,) = [s for s in _json(tmp_path)["steps"] if s["commit"] == rev[4]]
    assert step["verdict"] == "skip" and step["figure"] == 314 and step["load_ratio"] == 0.222
    assert (f"{rev[4][:12]} skipped only by the load-work gate (load work 22% of GOOD's):"
            " max 314 us: the commit sought may be this one") in out


def test_a_run_that_timed_out_with_samples_booted():
    assert latbisect.boot_failure({"samples": 1000, "problems": ["timed out after 660s"]}) \
        is None
    assert latbisect.boot_failure({"samples": 0, "problems": ["timed out after 660s"]})
