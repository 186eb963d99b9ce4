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


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """No test reads or writes the machine's stage times (check-timings.json)."""
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path / "cache"))


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
    ("kunit-uml", ["prepare workspace", "kunit-uml"]),
    ("bisect,boot", ["prepare workspace", "bisect", "boot"]),
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


class _Stub(check.Check):
    STAGES = [("a", "a cheap stage", "st_a"), ("b", "a long stage", "st_b"),
              ("c", "a cheap stage after it", "st_c")]
    NEEDS = {}
    COLD_SECONDS = {"a": 1, "b": 100, "c": 1}

    def st_a(self):
        self.res.case("a", "ran", True)

    def st_b(self):
        self.res.case("b", "ran", True)

    def st_c(self):
        self.res.case("c", "ran", True)


def test_a_stage_that_cannot_end_within_the_budget_fails_as_not_run(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    rc = _Stub(argparse.Namespace(only=None, budget=50)).main()
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAIL  not run: time budget" in out and "expected 100 s" in out
    assert out.count("ok  ran") == 2            # a and c: c still fits
    assert out.rstrip().splitlines()[-1] == "2 passed, 1 failed"


def test_the_budget_expects_a_stage_to_take_its_last_time_here(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "check-timings.json").write_text('{"b": 10}')
    assert _Stub(argparse.Namespace(only=None, budget=50)).main() == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == "3 passed, 0 failed"
    # The run recorded its own times for the next one.
    import json
    saved = json.loads((cache / "check-timings.json").read_text())
    assert set(saved) == {"a", "b", "c"} and saved["b"] < 10
    # No budget: everything runs whatever it is expected to take.
    (cache / "check-timings.json").write_text('{"b": 1e9}')
    assert _Stub(argparse.Namespace(only=None, budget=0)).main() == 0


@pytest.mark.parametrize("value", ["-1", "soon"])
def test_a_bad_budget_is_refused(value, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_CHECK_BUDGET", value)
    with pytest.raises(SystemExit) as e:
        check.main(["--only", "tools"])
    assert e.value.code == 2


def _git(tree, *args):
    from pvrt import gitutil
    return gitutil.out(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
                       + list(args))


def _commit(tree, msg, files):
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", msg)
    return _git(tree, "rev-parse", "HEAD")


MINI_MAKEFILE = """\
OBJS := a.o b.o
all: $(OBJS)
%.o: %.c
\t$(CC) -Werror -MD -c -o $@ $<
-include $(OBJS:.o=.d)
"""


@pytest.mark.skipif(not shutil.which("cc") or not shutil.which("make"), reason="no cc/make")
def test_bisect_fails_the_commit_that_breaks_an_untouched_file_through_a_header(tmp_path):
    """Incremental builds commit by commit: a header change that breaks a.c,
    which the commit does not touch, fails that commit and no other; the
    tree is left on its branch."""
    import subprocess
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    base = _commit(tree, "base", {"Makefile": MINI_MAKEFILE, "h.h": "int f(int x);\n",
                                  "a.c": '#include "h.h"\nint g(void) { return f(1); }\n',
                                  "b.c": "int b;\n"})
    commits = [
        _commit(tree, "b: more", {"b.c": "int b = 2;\n"}),
        _commit(tree, "docs", {"Documentation/x.rst": "x\n"}),
        _commit(tree, "h: f takes two", {"h.h": "int f(int x, int y);\n"}),
        _commit(tree, "a: fixed", {"a.c": '#include "h.h"\nint g(void) { return f(1, 2); }\n'}),
    ]
    assert commits and base

    def build_one(i, commit, log_name):
        r = subprocess.run(["make", "-C", str(tree)], capture_output=True, text=True)
        r.output = r.stdout + r.stderr
        return r

    res = check.Results()
    check.bisect_builds(str(tree), commits, build_one, res,
                        lambda r: (r.returncode == 0, r.output[-300:]))
    assert (res.passed, res.failed) == (3, 1)
    assert len(res.failures) == 1 and "[3/4] builds: h: f takes two" in res.failures[0]
    assert "a.c" in res.failures[0]
    assert _git(tree, "symbolic-ref", "--short", "HEAD") == "main"
