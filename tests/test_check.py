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
