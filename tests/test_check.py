# SPDX-License-Identifier: GPL-2.0
"""pvrt.check: stage selection and what a crashing stage does to the run."""

import argparse
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts", "lib"))
from pvrt import check  # noqa: E402


@pytest.mark.parametrize("only, bad", [("series,checkpach", "checkpach"),
                                        ("kunit", "kunit"), ("", "''")])
def test_unknown_only_stage_is_refused(only, bad, capsys):
    with pytest.raises(SystemExit) as e:
        check.main(["--only", only])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"unknown stage(s) {bad}" in err and "stages: tools,series," in err


def test_crashing_stage_counts_as_failed_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    class Crashing(check.Check):
        STAGES = [("a", "a stage that crashes", "st_a"), ("b", "a stage after it", "st_b")]

        def st_a(self):
            raise KeyError("boom")

        def st_b(self):
            self.res.case("b", "still runs", True)

    rc = Crashing(argparse.Namespace(only=None)).main()
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAIL  stage crashed" in out and "KeyError: 'boom'" in out
    assert "ok  still runs" in out
    assert out.rstrip().splitlines()[-1] == "1 passed, 1 failed"


def test_bisect_skips_only_commits_no_build_reads():
    from pvrt.check import docs_only
    assert docs_only(["Documentation/locking/pv-mutex.rst", "MAINTAINERS"])
    assert not docs_only(["Documentation/locking/pv-mutex.rst", "kernel/locking/pv_mutex.c"])
    assert not docs_only(["Documentation/Kconfig"])     # sourced by the top Kconfig
    assert not docs_only([])


def test_stale_bisect_worktree_repairs_itself(tmp_path):
    """build/linux re-created under build/bisect: the worktree is made again."""
    from pvrt import gitutil

    def repo(path):
        gitutil.run(["git", "init", "-q", str(path)])
        (path / "f").write_text("x\n")
        gitutil.run(["git", "-C", str(path), "add", "f"])
        gitutil.run(["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t",
                     "commit", "-q", "-m", "c"])
        return gitutil.out(["git", "-C", str(path), "rev-parse", "HEAD"])

    tree, wt = tmp_path / "linux", tmp_path / "bisect"
    head = repo(tree)
    gitutil.ensure_worktree(str(tree), str(wt), head)
    assert (wt / "f").exists()
    shutil.rmtree(tree)                 # scripts/apply re-creates the workspace
    head = repo(tree)
    gitutil.ensure_worktree(str(tree), str(wt), head)
    assert gitutil.out(["git", "-C", str(wt), "rev-parse", "HEAD"]) == head


def _recording_check(tmp_path, monkeypatch, calls, fail_build=False):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    class Rec(check.Check):
        def prepare(self, need):
            calls.append(f"prepare {need}")

    for key, _title, fn in check.Check.STAGES:
        monkeypatch.setattr(Rec, fn, lambda self, key=key: calls.append(key), raising=False)
    return Rec


@pytest.mark.parametrize("only, want", [
    ("boot", ["prepare workspace", "prepare project", "boot"]),
    ("series,boot", ["series", "prepare project", "boot"]),
    ("series,x86_64,boot", ["series", "x86_64", "boot"]),
    ("kunit-uml", ["prepare workspace", "prepare uml", "kunit-uml"]),
    ("tools", ["tools"]),
])
def test_a_stage_gets_what_it_needs_when_its_maker_is_not_selected(tmp_path, monkeypatch,
                                                                    only, want):
    calls = []
    Rec = _recording_check(tmp_path, monkeypatch, calls)
    Rec(argparse.Namespace(only=only)).main()
    assert calls == want


def test_a_failed_build_keeps_its_lint_cases(tmp_path, monkeypatch, capsys):
    """The project kernel does not build: the W=1/sparse cases still count, as failures."""
    import subprocess
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    def broken(*a, **k):
        raise subprocess.CalledProcessError(2, ["make", "bzImage"])

    monkeypatch.setattr(check.build, "build", broken)
    c = check.Check(argparse.Namespace(only="x86_64"))
    monkeypatch.setattr(c, "changed_lines", lambda: {"kernel/a.c": None, "kernel/b.c": {3}})
    c.st_x86_build()
    assert (c.res.passed, c.res.failed) == (0, 3)
    assert "make bzImage exited with 2" in capsys.readouterr().out


def test_make_check_works_in_its_own_tree(tmp_path, monkeypatch):
    """make check never touches the developer's workspace build/linux: it
    applies and builds in build/check, under that directory's lock."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    seen = {}

    def fake_main(self):
        seen["tree"], seen["bdir"] = self.tree, self.bdir
        seen["env"] = os.environ["PVRT_BUILD"]
        return 0

    monkeypatch.setattr(check.Check, "main", fake_main)
    assert check.main(["--only", "tools"]) == 0
    assert seen["tree"] == str(tmp_path / "build" / "check" / "linux")
    assert seen["env"] == seen["bdir"] == str(tmp_path / "build" / "check")
    assert (tmp_path / "build" / "check" / "run.lock").exists()
