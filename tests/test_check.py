# SPDX-License-Identifier: GPL-2.0
"""pvrt.check: stage selection and what a crashing stage does to the run."""

import argparse
import os
import re
import shutil
import subprocess
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
    ("boot", ["prepare workspace", "prepare project", "prepare kunit-modules", "boot"]),
    ("series,boot", ["series", "prepare project", "prepare kunit-modules", "boot"]),
    ("series,x86_64,boot", ["series", "x86_64", "boot"]),
    ("kunit-uml", ["prepare workspace", "kunit-uml"]),
    ("bisect,boot", ["prepare workspace", "bisect", "prepare project", "prepare kunit-modules",
                     "boot"]),
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
    monkeypatch.setattr(c, "kunitconfigs_stand_alone", lambda: None)
    c.st_x86_build()
    assert c.project_built is False
    # Two lint cases and the tuned stock kernel's configuration check fail.
    assert (c.res.passed, c.res.failed) == (0, 4)
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
def test_a_bad_budget_is_refused(value, tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setenv("PVRT_CHECK_BUDGET", value)
    monkeypatch.setattr(check.Check, "main", lambda self: pytest.fail("ran with a bad budget"))
    with pytest.raises(SystemExit) as e:
        check.main(["--only", "tools"])
    assert e.value.code == 2


def test_only_runs_and_failed_stages_leave_the_recorded_times_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "check-timings.json").write_text('{"a": 7, "b": 7}')

    class Failing(_Stub):
        def st_b(self):
            self.res.case("b", "ran", False)

    _Stub(argparse.Namespace(only="a", budget=0)).main()
    assert (cache / "check-timings.json").read_text() == '{"a": 7, "b": 7}'
    Failing(argparse.Namespace(only=None, budget=0)).main()
    import json
    saved = json.loads((cache / "check-timings.json").read_text())
    assert saved["b"] == 7 and saved["a"] < 7 and "c" in saved


def test_every_stage_has_a_cold_time():
    assert set(check.COLD_SECONDS) == {k for k, _t, _f in check.Check.STAGES}


def test_a_stage_booting_a_kernel_that_was_not_built_expects_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    t = check.COLD_SECONDS["lockdep"]
    assert c.expected("lockdep", {}) == t + check.KERNEL_BUILD_SECONDS["project-debug"]
    image = tmp_path / "build" / "out" / "project-debug" / "arch/x86/boot/bzImage"
    image.parent.mkdir(parents=True)
    image.write_text("")
    assert c.expected("lockdep", {}) == t + check.KERNEL_BUILD_SECONDS["incremental"]
    c.built.add("project-debug")
    assert c.expected("lockdep", {}) == t


@pytest.mark.parametrize("key, kernel", [("x86_64", "project"), ("boot", "project"),
                                         ("torture", "project"), ("lockdep", "project-debug"),
                                         ("kunit-debug", "project-debug"),
                                         ("kunit-rt", "project-rt"), ("tools", None)])
def test_each_stage_that_boots_a_kernel_counts_its_build(key, kernel, tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    assert c.build_cost(key) == (check.KERNEL_BUILD_SECONDS[kernel] if kernel else 0)
    c.built.update({"project", "project-debug", "project-rt"})
    assert c.build_cost(key) == 0


def test_a_stage_that_built_another_stages_kernel_does_not_record_its_time(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    class Boots(_Stub):
        BUILT_BY = {"b": "project"}

    Boots(argparse.Namespace(only=None, budget=0)).main()
    import json
    saved = json.loads((tmp_path / "cache" / "check-timings.json").read_text())
    assert set(saved) == {"a", "c"}


def test_a_timings_file_that_cannot_be_written_is_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    (tmp_path / "cache").write_text("a file where the cache directory should be")
    assert _Stub(argparse.Namespace(only=None, budget=0)).main() == 0
    out = capsys.readouterr().out
    assert "note: stage times not saved" in out
    assert out.rstrip().splitlines()[-1] == "3 passed, 0 failed"


def test_boot_is_not_run_on_a_project_kernel_that_did_not_build(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    c.project_built = False
    monkeypatch.setattr(check.boot, "boot", lambda *a, **k: pytest.fail("booted"))
    c.st_boot()
    assert (c.res.passed, c.res.failed) == (0, 1)
    assert "not run: the project kernel did not build" in capsys.readouterr().out


class _FakeBoot:
    def __init__(self, text=""):
        self.appends, self.text = [], "PVRT-BOOTED 1.00\n" + text + "PVRT-EXIT rc=0\n"

    def __call__(self, kernel, cmd, log_path, **kw):
        self.appends.append(kw["append"].split())
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(self.text)
        from pvrt import boot
        return boot.BootResult(log_path, self.text, False, 1)


@pytest.mark.parametrize("stage, want, unwanted", [
    ("st_boot", ["ikt.prio=ikt-kunit-boot:61", "ikt.prio=ikt-kunit-boot:62"], "kunit.enable=0"),
    ("st_debug_kunit", ["ikt.prio=ikt-kunit-boot:61", "ikt.prio=ikt-kunit-boot:62"],
     "kunit.enable=0"),
    ("st_lockdep", ["kunit.enable=0"], "ikt.prio=ikt-kunit-boot:62"),
    ("st_rt_kunit", ["ikt.prio=ikt-kunit-boot:61", "ikt.prio=ikt-kunit-boot:62"],
     "kunit.enable=0"),
])
def test_each_boot_gets_its_kernel_parameters(stage, want, unwanted, tmp_path, monkeypatch):
    """The KUnit boots carry both ikt.prio= rules the ikt suite checks; the
    lockdep boot switches the debug kernel's KUnit suites off."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    fake = _FakeBoot()
    monkeypatch.setattr(check.boot, "boot", fake)
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.build, "configure", lambda *a, **k: [])
    monkeypatch.setattr(check.build, "series_kunitconfigs", lambda *a, **k: [])
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (1, 0))
    c = check.Check(argparse.Namespace(only=None))
    getattr(c, stage)()
    # the debug KUnit stage boots the unconverted debug kernel second
    assert len(fake.appends) == (2 if stage == "st_debug_kunit" else 1)
    assert all(w in fake.appends[0] for w in want) and unwanted not in fake.appends[0]


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

    calls = []

    def build_one(i, commit, log_name):
        calls.append(i)
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
    assert calls == [1, 3, 4]                   # the documentation commit is not built


def test_bisect_leaves_the_tree_on_its_branch_when_a_build_raises(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    _commit(tree, "base", {"f": "0\n"})
    commits = [_commit(tree, "one", {"f": "1\n"}), _commit(tree, "two", {"f": "2\n"})]

    def build_one(i, commit, log_name):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check.bisect_builds(str(tree), commits, build_one, check.Results(), None)
    assert _git(tree, "symbolic-ref", "--short", "HEAD") == "main"
    assert (tree / "f").read_text() == "2\n"


def test_kconfig_defines_tells_a_later_commits_option_from_a_dropped_one(tmp_path):
    """Bisect forgives a fragment line only when the commit has no such option."""
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    _commit(tree, "base", {"kernel/Kconfig.locks": "config PV_MUTEX\n\tbool\n",
                           "init/Kconfig": "menuconfig EXPERT\n\tbool\n"
                                           "config HAVE_LEGACY_CLK # TODO: drop\n"})
    assert check.kconfig_defines(str(tree), "CONFIG_HAVE_LEGACY_CLK")
    assert check.kconfig_defines(str(tree), "CONFIG_PV_MUTEX")
    assert check.kconfig_defines(str(tree), "CONFIG_EXPERT")
    assert not check.kconfig_defines(str(tree), "CONFIG_PV_SPINLOCK")
    assert not check.kconfig_defines(str(tree), "CONFIG_PV")


def test_a_configuration_failure_fails_its_commit_and_the_bisect_goes_on(tmp_path, monkeypatch,
                                                                           capsys):
    import subprocess
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    _commit(tree, "base", {"f": "0\n"})
    commits = [_commit(tree, "one", {"Kconfig": "config X\n"}),
               _commit(tree, "two", {"Kconfig": "config X\n\tbool\n"}),
               _commit(tree, "three", {"Kconfig": "config X\n\tbool\nconfig Y\n\tbool\n"})]
    c.tree = str(tree)
    monkeypatch.setattr(c, "commits", lambda: commits)
    state = {"strict": []}

    def configure(top, tree, variant, out, strict=True):
        state["strict"].append(strict)
        if "bool" not in (tmp_path / "tree" / "Kconfig").read_text():
            raise subprocess.CalledProcessError(2, ["make", "allnoconfig"])
        return ["CONFIG_Y: wanted y, got n"]

    monkeypatch.setattr(check.build, "configure", configure)
    monkeypatch.setattr(c, "run", lambda cmd, log_name=None, **kw: check.Built(0, "built"))
    c.st_bisect()
    out = capsys.readouterr().out
    assert (c.res.passed, c.res.failed) == (1, 2)
    assert "FAIL  [1/3] builds: one" in out and "make allnoconfig exited with 2" in out
    assert "ok  [2/3] builds: two" in out                  # Y: a later commit's option
    assert "FAIL  [3/3] builds: three" in out and "CONFIG_Y: wanted y" in out
    assert state["strict"] == [False, False, True]         # the last commit: strict
    assert "project" not in c.built                        # the last commit failed


def test_files_the_project_does_not_build_are_linted_on_the_debug_kernel(tmp_path, monkeypatch,
                                                                         capsys):
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.boot, "boot", _FakeBoot())
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (1, 0))
    linted = []

    def lint_objects(tree, out, cfiles):
        linted.append((os.path.basename(out), list(cfiles)))
        return {"kernel/locking/lockdep_proc.o": ["kernel/locking/lockdep_proc.c"]}, []

    monkeypatch.setattr(check.lint, "lint_objects", lint_objects)
    monkeypatch.setattr(check.lint, "diagnostics_on_changed_lines", lambda *a: ["bad line"])
    c = check.Check(argparse.Namespace(only=None))
    monkeypatch.setattr(c, "changed_lines", lambda: {})
    monkeypatch.setattr(c, "run", lambda cmd, *a, **k: check.subprocess.CompletedProcess(
        cmd, 0, "", ""))
    c.lint_left = ["kernel/locking/lockdep_proc.c"]
    c.st_debug_kunit()
    assert linted == [("project-debug", ["kernel/locking/lockdep_proc.c"])]
    out = capsys.readouterr().out
    assert "FAIL  W=1 and sparse clean on the series' lines: kernel/locking/lockdep_proc.o" in out
    assert "(debug kernel)" in out


def test_x86_64_checks_each_kunitconfig_alone_and_hands_over_unbuilt_files(tmp_path, monkeypatch,
                                                                            capsys):
    import subprocess
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.build, "build", lambda *a, **k: str(tmp_path / "out"))
    monkeypatch.setattr(check.build, "series_kunitconfigs",
                        lambda top, tree, arch=None: [os.path.join(tree, "k/a/.kunitconfig"),
                                                      os.path.join(tree, "k/b/.kunitconfig")])
    monkeypatch.setattr(check.lint, "lint_objects",
                        lambda tree, out, cfiles: ({}, ["kernel/locking/lockdep_proc.c"]))
    c = check.Check(argparse.Namespace(only=None))
    monkeypatch.setattr(c, "changed_lines", lambda: {"kernel/locking/lockdep_proc.c": None})

    def run(cmd, *a, **k):
        bad = any("k/b/.kunitconfig" in x for x in cmd)
        return subprocess.CompletedProcess(cmd, 1 if bad else 0, "", "dropped CONFIG_X")

    monkeypatch.setattr(c, "run", run)
    monkeypatch.setattr(c, "tuned_stock_config", lambda out: None)
    c.st_x86_build()
    out = capsys.readouterr().out
    assert "ok  kunit.py config --arch=x86_64 --kunitconfig=k/a/.kunitconfig" in out
    assert "FAIL  kunit.py config --arch=x86_64 --kunitconfig=k/b/.kunitconfig" in out
    assert c.project_built is True and "project" in c.built
    assert c.lint_left == ["kernel/locking/lockdep_proc.c"]


def test_prepare_marks_a_project_kernel_that_did_not_build(tmp_path, monkeypatch):
    import subprocess
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    def broken(*a, **k):
        raise subprocess.CalledProcessError(2, ["make"])

    monkeypatch.setattr(check.build, "build", broken)
    c = check.Check(argparse.Namespace(only=None))
    assert not c.stage("prepare: project", lambda: c.prepare("project"))
    assert c.project_built is False and "project" not in c.built


@pytest.mark.parametrize("built", [True, False])
def test_prepare_builds_the_kunit_modules_against_the_project_kernel(built, tmp_path,
                                                                      monkeypatch):
    """--only boot: the boot loads the KUnit modules, which only the
    x86_64 stage builds; prepare builds them against the project kernel it
    made (a kernel change leaves the old ones stale), as boot's cases."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only="boot"))
    seen = []
    monkeypatch.setattr(c, "kunit_module_modpost", lambda out, stage="x86_64", kernel="project":
                        seen.append((out, stage, kernel)))
    c.project_built = built
    c.prepare("kunit-modules")
    assert seen == [(os.path.join(c.bdir, "out", "project") if built else None, "boot",
                     "project")]


def test_lockdep_checks_that_the_advisors_own_kernel_configures(tmp_path, monkeypatch, capsys):
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.boot, "boot", _FakeBoot())
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    configured = []

    def configure(top, tree, variant, out, strict=True):
        configured.append((variant.name, strict))
        raise check.PvrtError("variant project-lockstat: Kconfig dropped fragment lines")

    monkeypatch.setattr(check.build, "configure", configure)
    c = check.Check(argparse.Namespace(only=None))
    c.st_lockdep()
    assert configured == [("project-lockstat", True)]
    assert "FAIL  the lock advisor's kernel (project-lockstat) configures" in \
        capsys.readouterr().out


def test_a_docs_commit_after_a_broken_one_is_built_again(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    _git(tree, "init", "-q", "-b", "main")
    _commit(tree, "base", {"f": "0\n"})
    commits = [_commit(tree, "broken", {"f": "1\n"}),
               _commit(tree, "docs", {"Documentation/x.rst": "x\n"})]
    calls = []

    def build_one(i, commit, log_name):
        calls.append(i)
        return check.Built(1, "error")

    res = check.Results()
    check.bisect_builds(str(tree), commits, build_one, res,
                        lambda r: (r.returncode == 0, r.output))
    assert calls == [1, 2] and (res.passed, res.failed) == (0, 2)


def test_a_debug_kernel_that_does_not_build_fails_its_lint_cases(tmp_path, monkeypatch, capsys):
    import subprocess
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))

    def broken(*a, **k):
        raise subprocess.CalledProcessError(2, ["make"])

    monkeypatch.setattr(check.build, "build_variant", broken)
    c = check.Check(argparse.Namespace(only=None))
    c.lint_left = ["kernel/locking/lockdep_proc.c"]
    assert not c.stage("kunit-debug", c.st_debug_kunit)
    out = capsys.readouterr().out
    assert "FAIL  W=1 and sparse clean on the series' lines: kernel/locking/lockdep_proc.c" in out


RTLOCK_PASSED = ("[    3.88] \x20   ok 4 pvs_rtlock_in_rcu_reader\n"
                 "[    3.90] \x20   ok 5 pvs_rtlock_unlock_not_owner\n")
# make check's kunit-debug console before the pv_spinlock suites were linked
# ahead of pv_mutex_kunit (pvk_deadlock_aa's report had switched lockdep off).
RTLOCK_LOCKDEP_OFF = (
    "[    3.575796]     ok 1 pvs_rtlock_keeps_state\n"
    "[    3.887531]     ok 4 pvs_rtlock_in_rcu_reader # SKIP lockdep was off (debug_locks=0):"
    " its part is not checked\n"
    "[    3.905616]     ok 5 pvs_rtlock_unlock_not_owner # SKIP lockdep was off"
    " (debug_locks=0): its part is not checked\n")


@pytest.mark.parametrize("text, bad", [
    (RTLOCK_PASSED, []),
    (RTLOCK_LOCKDEP_OFF, ["pvs_rtlock_in_rcu_reader: ok # SKIP lockdep was off",
                          "pvs_rtlock_unlock_not_owner: ok # SKIP lockdep was off"]),
    (RTLOCK_PASSED.replace("ok 5", "not ok 5"), ["pvs_rtlock_unlock_not_owner: not ok"]),
    (RTLOCK_PASSED.splitlines(keepends=True)[0], ["pvs_rtlock_unlock_not_owner: no result"]),
    (RTLOCK_PASSED + "[ 4.0]     ok 6 pvs_new_case # SKIP lockdep was off (debug_locks=0)\n",
     ["pvs_new_case: # SKIP lockdep was off"]),
])
def test_the_debug_kernel_checks_the_rtlock_cases_lockdep_parts(text, bad, tmp_path,
                                                                monkeypatch, capsys):
    """On the debug kernel the rtlock cases must pass with their lockdep
    part: a case skipped because lockdep was off fails the stage."""
    got = check.kunit.lockdep_parts_unchecked(text)
    assert len(got) == len(bad) and all(g.startswith(b) for g, b in zip(got, bad))
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.boot, "boot", _FakeBoot(text))
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (9, 0))
    monkeypatch.setattr(check.Check, "noconv_debug_kunit", lambda self: None)
    c = check.Check(argparse.Namespace(only=None))
    c.st_debug_kunit()
    out = capsys.readouterr().out
    verdict = "FAIL" if bad else "ok"
    assert f"{verdict}  the pv_spinlock rtlock cases' lockdep parts ran with lockdep on" in out
    assert c.res.failed == (1 if bad else 0)


@pytest.mark.parametrize("text, failing", [
    ("", None),
    ("[ 1.0] BUG: scheduling while atomic: kunit_try_catch/42/0x00000002\n", "console free"),
    ("[ 1.0] pvk: expect a warning: unlock by a non-owner\n"
     "[ 1.1] pvk: end of expected warning\n", "every expected warning came"),
])
def test_the_debug_kunit_boot_judges_its_console(text, failing, tmp_path, monkeypatch, capsys):
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.boot, "boot",
                        _FakeBoot("[ 0.5] Good, all 345 testcases passed! |\n" + RTLOCK_PASSED
                                  + text))
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (88, 0))
    c = check.Check(argparse.Namespace(only=None))
    c.st_debug_kunit()
    out = capsys.readouterr().out
    assert "ok  KUnit on x86_64 with lockdep, KASAN, UBSAN: 88 passed, 0 failed" in out
    assert "ok  lockdep's selftests pass without PV_SPINLOCK" in out
    # both boots (the debug kernel, the unconverted one) are judged
    assert c.res.failed == (2 if failing else 0)
    if failing:
        assert f"FAIL  KUnit on x86_64 with lockdep, KASAN, UBSAN: {failing}" in out
        assert f"FAIL  KUnit on x86_64 without PV_SPINLOCK, with lockdep: {failing}" in out


def test_the_unconverted_debug_boot_needs_lockdeps_selftests(tmp_path, monkeypatch, capsys):
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(check.boot, "boot", _FakeBoot(
        "[ 0.5] BUG:   1 unexpected failures (out of 345) - debugging disabled! |\n"))
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (9, 0))
    c = check.Check(argparse.Namespace(only=None))
    c.noconv_debug_kunit()
    out = capsys.readouterr().out
    assert "FAIL  lockdep's selftests pass without PV_SPINLOCK" in out
    assert "FAIL  KUnit on x86_64 without PV_SPINLOCK, with lockdep: console free" in out


def test_check_writes_every_case_as_junit(tmp_path, monkeypatch):
    """check.xml next to pytest.xml: one case per case, a failed one (here
    the stage the budget left out) with its reason."""
    from pvrt import junit
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = _Stub(argparse.Namespace(only=None, budget=50))
    assert c.main() == 1
    cases = junit.read(os.path.join(c.logs, "check.xml"))
    assert cases == [("a", "ran", True), ("b", "not run: time budget", False),
                     ("c", "ran", True)]


def _boot_ikt_junit(secs, tmp_path, monkeypatch):
    """The boot stage's /proc/irq/ikt cases for guest sections SECS: {name: ok}."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    c.boot_ikt(secs)
    return {name: (ok, detail) for _, name, ok, detail in c.res.junit}


@pytest.mark.parametrize("name, case", [
    ("ikt-cap", "refused by the writer's CAP_SYS_NICE"),
    ("ikt-hidepid", "hidepid=ptraceable hides"),
])
@pytest.mark.parametrize("sec, detail", [
    (None, "no {name} section"),
    ((1, ["refused: sh: write error: Invalid argument", "not refused with EPERM"]),
     "not refused with EPERM"),
])
def test_boot_ikt_fails_a_missing_or_failed_guest_section(name, case, sec, detail, tmp_path,
                                                          monkeypatch, capsys):
    """ikt-check's ikt-cap and ikt-hidepid sections: a section the guest did
    not print, or one that ended with rc != 0, fails its case with the
    section's last lines; the other section's case still passes."""
    good = {"ikt-prio": (0, []), "ikt-cap": (0, ["refused: ok"]),
            "ikt-hidepid": (0, ["ok"])}
    cases = _boot_ikt_junit(good, tmp_path, monkeypatch)
    mine = [k for k in cases if case in k]
    other = [k for k in cases if ("hidepid=ptraceable hides" if name == "ikt-cap"
                                  else "refused by the writer's CAP_SYS_NICE") in k]
    assert len(mine) == 1 and len(other) == 1
    assert cases[mine[0]][0] and cases[other[0]][0]

    secs = dict(good)
    if sec is None:
        del secs[name]
    else:
        secs[name] = sec
    cases = _boot_ikt_junit(secs, tmp_path, monkeypatch)
    ok, got = cases[mine[0]]
    assert not ok
    assert detail.format(name=name) in got
    assert cases[other[0]][0]
    assert f"FAIL  {mine[0]}" in capsys.readouterr().out


@pytest.mark.parametrize("left,ok", [([], True), (["CONFIG_HZ_1000: y / n"], False)])
def test_tuned_stock_differs_only_by_the_series(tmp_path, monkeypatch, capsys, left, ok):
    """stock-tuned is configured beside the project kernel and compared: an
    option the series does not add that differs fails the case."""
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    seen = []
    monkeypatch.setattr(check.build, "configure",
                        lambda top, tree, var, out: seen.append((var.name, out, var.from_base)))
    monkeypatch.setattr(check.build, "not_series_difference", lambda a, b, tree: left)
    c = check.Check(argparse.Namespace(only="x86_64"))
    c.tuned_stock_config(str(tmp_path / "out"))
    # Configured from the base (in the check tree's base worktree): stock code.
    assert seen and seen[0][0] == "stock-tuned" and seen[0][2] is True
    assert (c.res.passed, c.res.failed) == ((1, 0) if ok else (0, 1))
    if not ok:
        assert "CONFIG_HZ_1000: y / n" in capsys.readouterr().out


class _Res:
    def __init__(self, text, problems=(), booted=True):
        self.text, self._p, self.booted, self.log_path = text, list(problems), booted, "log"

    def problems(self):
        return self._p


GOOD_PREEMPT_NONE = ("ikt: off: the kernel is not preemptible (preempt=none or"
                     " preempt=voluntary); boot with preempt=full for interrupt threads\n"
                     "# IKT off (preempt=none); threads default to SCHED_FIFO 50\n"
                     "ikt_bench: result thread threaded=0 prio=0 prio_max=0 samples=20 min=1"
                     " avg=1 p50=1 p99=1 max=1\n"
                     "ikt_bench: done\n")


@pytest.mark.parametrize("text,problems,ok", [
    (GOOD_PREEMPT_NONE, [], (True, True)),
    # IKT left on by a kernel that is not preemptible: the gate is broken.
    (GOOD_PREEMPT_NONE.replace("ikt: off: the kernel is not preemptible", "x")
     .replace("# IKT off (preempt=none)", "# IKT on"), [], (False, True)),
    # Off, but the report gives another reason than the preemption model.
    (GOOD_PREEMPT_NONE.replace("# IKT off (preempt=none)", "# IKT off (ikt=off)"), [],
     (False, True)),
    # The on-stack hrtimer not annotated: debug objects warn.
    (GOOD_PREEMPT_NONE + "ODEBUG: object 00000000 is on stack, but NOT annotated.\n",
     ["console line 4: ODEBUG: object 00000000 is on stack, but NOT annotated."],
     (True, False)),
    (GOOD_PREEMPT_NONE.replace("ikt_bench: done", "ikt_bench: failed: -110"), [],
     (True, False)),
    # The flag says off, but handlers are still force-threaded.
    (GOOD_PREEMPT_NONE.replace("threaded=0 prio=0 prio_max=0", "threaded=20 prio=50 prio_max=50"),
     [], (False, True)),
])
def test_preempt_none_boot_is_judged(tmp_path, monkeypatch, text, problems, ok):
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only="boot"))
    c.judge_preempt_none(_Res(text, problems), ("off", "odebug"))
    got = {name: passed for _stage, name, passed, _d in c.res.junit}
    assert (got["off"], got["odebug"]) == ok


def test_odebug_is_a_splat():
    from pvrt import console
    assert console.splats("ODEBUG: init on stack object (hrtimer) not annotated\n")


FUTEX_OK = ["futex-pi-timeout: 3 runs, timeout 100 ms, late after 500 ms, rest 3 s,"
            " sched_rt_runtime_us 950000, sched_rt_period_us 1000000"] + [
    f"futex-pi-timeout: run {i}: FUTEX_LOCK_PI2 100 ms: returned -1 (ETIMEDOUT) after"
    f" {ms} ms, queued {ms - 10} ms before the deadline (at least 50), owner switched out 0 times meanwhile: ok"
    for i, ms in ((1, 100), (2, 135), (3, 100))]


@pytest.mark.parametrize("sec, ok", [
    ((0, FUTEX_OK), True),
    # the rtmutex spin fix's "before" figures: the first run overran
    ((1, FUTEX_OK[:1] + [FUTEX_OK[1].replace("100 ms,", "1110 ms,").replace(": ok", ": LATE")]
      + FUTEX_OK[2:]), False),
    # a run that did not show a wait on a running owner
    ((1, FUTEX_OK[:2] + [FUTEX_OK[2].replace("0 times meanwhile: ok", "1 times meanwhile:"
                                             " NOT SHOWN (no wait on a running owner)")]
      + FUTEX_OK[3:]), False),
    # refused: the program's own limits
    ((2, FUTEX_OK[:1] + ["futex-pi-timeout: sched_rt_period_us must be at most 3000000"]),
     False),
    ((2, FUTEX_OK[:1] + ["futex-pi-timeout: needs 2 CPUs"]), False),
    ((0, FUTEX_OK[:3]), False),         # a run missing
    ((None, FUTEX_OK[:2]), False),      # the program never ended its section
    (None, False),
])
def test_the_boot_judges_the_futex_pi_timeout_section(sec, ok, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    c.boot_futex_pi({} if sec is None else {"futex-pi": sec})
    assert (c.res.passed, c.res.failed) == ((1, 0) if ok else (0, 1))
    out = capsys.readouterr().out
    assert ("ok  FUTEX_LOCK_PI2" if ok else "FAIL  FUTEX_LOCK_PI2") in out


def _kunit_module_tree(tmp_path, monkeypatch):
    """A Check whose tree holds a stand-in source of every KUnit module."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    tests = os.path.join(c.tree, "kernel", "locking", "tests")
    os.makedirs(tests)
    for mod in check.Check.KUNIT_MODULES:
        with open(os.path.join(tests, f"{mod}.c"), "w", encoding="utf-8") as f:
            f.write("/* suite */\n")
    return c


@pytest.mark.parametrize("stage, kernel, mdir", [
    ("x86_64", "project", "{}-module"),
    ("kunit-debug", "debug", "{}-module-debug"),
])
def test_each_kunit_suite_builds_as_a_module(stage, kernel, mdir, tmp_path, monkeypatch, capsys):
    """pv_mutex_kunit and pv_spinlock_kunit, each built as an external module
    against the kernel's Module.symvers: a modpost error fails its case."""
    import subprocess
    c = _kunit_module_tree(tmp_path, monkeypatch)
    built = []

    def run(cmd, *a, **k):
        m = next(x for x in cmd if x.startswith("M="))[2:]
        mod = os.path.basename(m).split("-module")[0]
        built.append(os.path.basename(m))
        assert open(os.path.join(m, "Makefile"), encoding="utf-8").read() == f"obj-m += {mod}.o\n"
        if mod == "pv_spinlock_kunit":   # as a symbol the kernel does not export makes it
            return subprocess.CompletedProcess(cmd, 2, "", 'ERROR: modpost: "max_lock_depth"'
                                               " [pv_spinlock_kunit.ko] undefined!")
        open(os.path.join(m, f"{mod}.ko"), "w", encoding="utf-8").close()
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(c, "run", run)
    c.kunit_module_modpost(str(tmp_path / "out"), stage, kernel)
    assert built == [mdir.format(m) for m in check.Check.KUNIT_MODULES]
    out = capsys.readouterr().out
    assert f"ok  pv_mutex_kunit builds as a module (modpost against the {kernel} kernel)" in out
    assert f"FAIL  pv_spinlock_kunit builds as a module (modpost against the {kernel} kernel)" \
        in out and '"max_lock_depth" [pv_spinlock_kunit.ko] undefined' in out
    assert [j[0] for j in c.res.junit] == [stage, stage]


def _board_stage(tmp_path, monkeypatch, job):
    """The board stage with the builds, the board and the job stubbed: JOB(argv, bdir)
    plays validate --target (writes a report directory, returns or raises)."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    ids = {"board-stock": "aa" * 20, "board": "bb" * 20}
    calls = []

    def build_(top, tree, name, log=print):
        calls.append(f"build {name}")
        return str(tmp_path / "build" / "out" / name)
    monkeypatch.setattr(check.build, "build", build_)
    monkeypatch.setattr(check.target, "built_build_id",
                        lambda out: (ids[os.path.basename(out)], "<"))

    def start(top, bdir, kernel, port, **k):
        calls.append("start " + kernel.split(os.sep + "out" + os.sep)[1].split(os.sep)[0])
        running.append(4242)
        return 40022
    running = []
    monkeypatch.setattr(check.board, "start", start)
    monkeypatch.setattr(check.board, "qemu_pid", lambda bdir: running[-1] if running else None)

    def stop(bdir):
        calls.append("stop")
        return running.pop() if running else None
    monkeypatch.setattr(check.board, "stop", stop)
    monkeypatch.setattr(check.board, "gone", lambda pid: True)

    def main(argv):
        calls.append("validate " + " ".join(argv))
        return job(argv, str(tmp_path / "build"))
    monkeypatch.setattr(check.validate, "main", main)
    return check.Check(argparse.Namespace(only="board")), ids, calls


def _board_report(bdir, rows):
    import json
    d = os.path.join(bdir, "report", "20261124-170000")
    os.makedirs(d)
    with open(os.path.join(d, "results.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f)


def _board_rows(ids, **change):
    hw = {"kind": "hwlat", "max_us": 14, "problems": []}
    runs = [{"kind": "latency", "variant": v, "load": "stress-set", "run": 1, "samples": 24000,
             "max": 300, "problems": [], "build_id": ids[v], "log": f"{v}.log"}
            for v in ("board-stock", "board")]
    for r in runs:
        r.update(change.get(r["variant"], {}))
    return [hw] + runs


def test_the_board_stage_passes_a_job_that_booted_each_kernel(tmp_path, monkeypatch, capsys):
    def job(argv, bdir):
        _board_report(bdir, _board_rows(ids))
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    chk.st_board()
    out = capsys.readouterr().out
    assert chk.res.failed == 0 and chk.res.passed == 11, out
    assert calls[:3] == ["build board-stock", "build board", "start board"]
    assert calls[-1] == "stop"
    argv = calls[3].split()
    assert argv[argv.index("--variants") + 1] == "board-stock,board"
    assert "--seconds 5 --hwlat-seconds 3 --load none" in calls[3]


@pytest.mark.parametrize("what", ["wrong kernel", "refused", "no samples", "splat"])
def test_the_board_stage_fails_a_wrong_kernel_and_a_bad_run(what, tmp_path, monkeypatch,
                                                            capsys):
    """The board booted the other variant's image (the same rows a job
    without the build-id check would write), the job refused it, a run
    without samples, a splat: each fails the stage, and the board is stopped."""
    def job(argv, bdir):
        if what == "refused":
            _board_report(bdir, _board_rows(ids)[:1])
            raise check.target.TargetError("the board booted ... not the kernel just built")
        change = {"wrong kernel": {"board-stock": {"build_id": ids["board"]}},
                  "no samples": {"board": {"samples": 0}},
                  "splat": {"board": {"problems": ["BUG: scheduling while atomic"]}}}[what]
        _board_report(bdir, _board_rows(ids, **change))
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    chk.st_board()
    out = capsys.readouterr().out
    assert chk.res.failed and chk.res.passed + chk.res.failed == 11
    assert calls[-1] == "stop"
    failing = {"wrong kernel": "board-stock: the board ran the kernel built",
               "refused": "validate --target ran to its end",
               "no samples": "board: cyclictest samples",
               "splat": "board: a clean console"}[what]
    assert f"FAIL  {failing}" in out


def test_the_board_is_stopped_when_it_does_not_start_or_the_job_crashes(tmp_path, monkeypatch,
                                                                          capsys):
    def job(argv, bdir):
        raise KeyboardInterrupt
    chk, _ids, calls = _board_stage(tmp_path, monkeypatch, job)
    with pytest.raises(KeyboardInterrupt):
        chk.st_board()
    assert calls[-1] == "stop"

    def start(*a, **k):
        raise check.PvrtError("the board did not answer on ssh in 600s")
    chk, _ids, calls = _board_stage(tmp_path, monkeypatch, job)
    monkeypatch.setattr(check.board, "start", start)
    chk.st_board()
    out = capsys.readouterr().out
    assert "FAIL  validate --target ran to its end" in out and "did not answer" in out
    assert chk.res.passed + chk.res.failed == 11 and calls[-1] == "stop"


@pytest.mark.parametrize("exc", [SystemExit(2), subprocess.TimeoutExpired("ssh", 60),
                                 subprocess.CalledProcessError(1, "ssh")])
@pytest.mark.parametrize("where", ["start", "job"])
def test_the_board_stage_records_its_cases_whatever_the_job_raises(exc, where, tmp_path,
                                                                    monkeypatch, capsys):
    """argparse's SystemExit, ssh's TimeoutExpired or CalledProcessError, from
    board.start or from the job: the stage's own cases, the board stopped."""
    def job(argv, bdir):
        raise exc
    chk, _ids, calls = _board_stage(tmp_path, monkeypatch, job)
    if where == "start":
        def start(*a, **k):
            raise exc
        monkeypatch.setattr(check.board, "start", start)
    chk.st_board()
    out = capsys.readouterr().out
    assert "FAIL  validate --target ran to its end" in out
    assert chk.res.passed + chk.res.failed == 11 and calls[-1] == "stop"


def test_a_broken_board_is_given_up_in_minutes(tmp_path, monkeypatch):
    def job(argv, bdir):
        _board_report(bdir, _board_rows(ids))
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    seen = {}
    real = check.board.start

    def start(*a, **k):
        seen.update(k)
        return real(*a, **k)
    monkeypatch.setattr(check.board, "start", start)
    chk.st_board()
    assert seen.get("timeout") == 180
    argv = calls[3].split()
    assert argv[argv.index("--target-boot-timeout") + 1] == "180"


def test_sigterm_during_the_board_job_stops_the_board(tmp_path, monkeypatch):
    """check.main turns SIGTERM and SIGHUP into SystemExit, so that the
    stage's finally stops the board's QEMU; a board still reported running
    after the stop fails the stage (gone() False)."""
    import signal

    def job(argv, bdir):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not interrupt the job")
    chk, _ids, calls = _board_stage(tmp_path, monkeypatch, job)
    old = signal.getsignal(signal.SIGTERM)
    try:
        with check.exit_on_signals():
            with pytest.raises(SystemExit) as e:
                chk.st_board()
        assert e.value.code == 128 + signal.SIGTERM
        assert calls[-1] == "stop"
    finally:
        signal.signal(signal.SIGTERM, old)
    assert signal.getsignal(signal.SIGTERM) == old


def test_sigterm_ends_the_whole_check_not_one_stage(tmp_path, monkeypatch):
    """Check.stage records a stage's SystemExit as its failed case, but the
    SIGTERM/SIGHUP of exit_on_signals must end the check: no later stage."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    chk = check.Check(argparse.Namespace(only=None))

    def killed():
        raise check.Terminated(143)
    with pytest.raises(check.Terminated):
        chk.stage("board", killed)


def test_a_signal_ignored_by_the_caller_stays_ignored():
    """nohup or a CI runner ignoring SIGHUP: the check must not die of it."""
    import signal
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with check.exit_on_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)


def test_a_board_qemu_that_survives_the_stop_fails_the_stage(tmp_path, monkeypatch, capsys):
    def job(argv, bdir):
        _board_report(bdir, _board_rows(ids))
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    monkeypatch.setattr(check.board, "gone", lambda pid: False)
    chk.st_board()
    out = capsys.readouterr().out
    assert "FAIL  the board's QEMU is stopped" in out and "pid 4242 still runs" in out


def test_a_hwlat_row_without_problems_is_judged(tmp_path, monkeypatch, capsys):
    def job(argv, bdir):
        rows = _board_rows(ids)
        del rows[0]["problems"]
        _board_report(bdir, rows)
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    chk.st_board()
    assert chk.res.failed == 0 and chk.res.passed == 11


def test_the_board_job_stops_waiting_for_a_board_whose_qemu_is_gone(tmp_path, monkeypatch):
    seen = []

    def job(argv, bdir):
        seen.append(check.target.ALIVE())
        running.clear()
        seen.append(check.target.ALIVE())
        _board_report(bdir, _board_rows(ids))
        return 0
    chk, ids, calls = _board_stage(tmp_path, monkeypatch, job)
    running = []
    monkeypatch.setattr(check.board, "qemu_pid", lambda bdir: running[-1] if running else None)
    real = check.board.start

    def start(*a, **k):
        running.append(real(*a, **k) and 4242)
        return 40022
    monkeypatch.setattr(check.board, "start", start)
    chk.st_board()
    assert seen == [True, False] and check.target.ALIVE is None


@pytest.mark.parametrize("failing", ["ikt-check", "bench-loader-check", "futex-pi-timeout",
                                     "kunit-module", ""])
def test_the_futex_pi_program_runs_whatever_failed_before_it(failing, tmp_path, monkeypatch):
    """The boot's guest command, run by a shell with each step a stub: an
    earlier step's failure must not hide the futex verdict or the KUnit
    modules' (a "no futex-pi section" instead), and the command's status
    still says it failed."""
    import subprocess
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    fake = _FakeBoot()
    cmds = []
    monkeypatch.setattr(check.boot, "boot", lambda k, cmd, *a, **kw: (cmds.append(cmd),
                                                                       fake(k, cmd, *a, **kw))[1])
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.build, "configure", lambda *a, **k: [])
    monkeypatch.setattr(check.build, "series_kunitconfigs", lambda *a, **k: [])
    monkeypatch.setattr(check.kunit, "kunit_counts", lambda tree, log: (1, 0))
    c = check.Check(argparse.Namespace(only=None))
    c.st_boot()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for step in ("ikt-check", "torture", "cyclictest-load", "bench-loader-check",
                 "futex-pi-timeout", "kunit-module"):
        (bindir / step).write_text(f"#!/bin/sh\necho {step}\nexit {int(step == failing)}\n")
        (bindir / step).chmod(0o755)
    r = subprocess.run(["sh", "-c", cmds[0]], capture_output=True, text=True,
                       env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert "futex-pi-timeout" in r.stdout.split() and "kunit-module" in r.stdout.split()
    assert (r.returncode != 0) == bool(failing)


def test_a_modpost_warning_fails_the_module_build(tmp_path, monkeypatch, capsys):
    """modpost's warnings (a section mismatch, a missing MODULE_DESCRIPTION())
    leave its status 0 and the .ko built: they fail the case too."""
    import subprocess
    c = _kunit_module_tree(tmp_path, monkeypatch)

    def run(cmd, *a, **k):
        m = next(x for x in cmd if x.startswith("M="))[2:]
        mod = os.path.basename(m).split("-module")[0]
        open(os.path.join(m, f"{mod}.ko"), "w", encoding="utf-8").close()
        warn = (f"WARNING: modpost: missing MODULE_DESCRIPTION() in {mod}.o\n"
                if mod == "pv_mutex_kunit" else "")
        return subprocess.CompletedProcess(cmd, 0, "  MODPOST Module.symvers\n", warn)

    monkeypatch.setattr(c, "run", run)
    c.kunit_module_modpost(str(tmp_path / "out"))
    out = capsys.readouterr().out
    assert "FAIL  pv_mutex_kunit builds as a module" in out
    assert "missing MODULE_DESCRIPTION() in pv_mutex_kunit.o" in out
    assert "ok  pv_spinlock_kunit builds as a module" in out


# The boot's built-in KUnit run as the console shows it: each suite names
# its module.
KUNIT_BUILTIN = """\
[    0.46] KTAP version 1
[    0.46] 1..2
[    0.46]     KTAP version 1
[    0.46]     # Subtest: pv_spinlock_api
[    0.46]     # module: pv_spinlock_kunit
[    0.46]     1..2
[    0.46]     ok 1 pvs_api
[    0.47]     ok 2 pvs_trylock_softirq # SKIP needs PV_SPINLOCK or DEBUG_ATOMIC_SLEEP
[    0.47] ok 1 pv_spinlock_api
[    0.47]     KTAP version 1
[    0.47]     # Subtest: pv_mutex
[    0.47]     # module: pv_mutex_kunit
[    0.47]     1..3
[    0.47]         KTAP version 1
[    0.47]         # Subtest: pvk_chain
[    0.48]         ok 1 pv_mutex
[    0.48]         ok 2 rt_mutex # SKIP rt_mutex does not return -EDEADLK
[    0.48]     ok 1 pvk_chain
[    0.48]     # pvk_misuse: expect a warning: unlock by a non-owner
[    0.48] WARNING: CPU: 0 PID: 249 at kernel/locking/pv_mutex.c:290 pv_mutex_slowunlock+0xc6/0x2c0
[    0.48]     # pvk_misuse: end of expected warning
[    0.48]     ok 2 pvk_misuse
[    0.49]     ok 3 pvk_chain_too_deep
[    0.49] ok 2 pv_mutex
PVRT-BOOTED 6.12.117+ cpus=2
"""


def kunit_module_section(mod, insmod="0", rmmod="0", rc=0, edit=lambda ktap: ktap, extra=()):
    """guest/kunit-module's section of MOD: its suites from KUNIT_BUILTIN
    run again as the module's own KTAP run (EDIT changes those lines), the
    insmod and rmmod status lines (None leaves one out), EXTRA lines, rc."""
    ktap, cur = [], None
    for line in KUNIT_BUILTIN.splitlines()[2:-1]:
        if "# Subtest: " in line and "        " not in line:
            cur = line
        if cur and f"# module: {mod}" in KUNIT_BUILTIN.split(cur)[1].splitlines()[1]:
            ktap.append(line.replace("[    0.", "[   20."))
    n = sum(1 for ln in ktap if "# Subtest: " in ln and "        " not in ln)
    out = [f"[   20.00] PVRT-BEGIN kunit-module-{mod}",
           "[   20.01] pv_mutex_kunit: loading out-of-tree module taints kernel.",
           "[   20.01] KTAP version 1", f"[   20.01] 1..{n}"] + edit(ktap)
    if insmod is not None:
        out.append(f"[   21.00] kunit-module: insmod {mod} rc={insmod}"
                   + ("" if insmod == "0" else " insmod: can't insert: Invalid argument"))
    if rmmod is not None and insmod == "0":
        out.append(f"[   21.10] kunit-module: rmmod {mod} rc={rmmod}"
                   + ("" if rmmod == "0" else " rmmod: can't unload: Resource busy"))
    out += list(extra)
    if rc is not None:
        out.append(f"[   21.20] PVRT-END kunit-module-{mod} rc={rc}")
    return "\n".join(out) + "\n"


def _judge_kunit_modules(tmp_path, monkeypatch, sections, kos=None, builtin=KUNIT_BUILTIN):
    """boot_kunit_modules() on the built-in run and SECTIONS: {case name: (ok, detail)}."""
    from pvrt import boot
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    text = builtin + "".join(sections) + "PVRT-EXIT rc=0\n"
    c.boot_kunit_modules(boot.BootResult("boot.log", text, False, 1),
                         kos or {m: None for m in check.Check.KUNIT_MODULES})
    return {name.split(" as a module")[0]: (ok, detail) for _, name, ok, detail in c.res.junit}


def test_each_kunit_module_loads_runs_its_suites_and_unloads(tmp_path, monkeypatch, capsys):
    got = _judge_kunit_modules(tmp_path, monkeypatch, [kunit_module_section(m)
                                                       for m in check.Check.KUNIT_MODULES])
    assert got == {"pv_mutex_kunit": (True, "\n(console: boot.log)"),
                   "pv_spinlock_kunit": (True, "\n(console: boot.log)")}
    out = capsys.readouterr().out
    assert "pv_mutex_kunit: 1 suites, 3 cases: 3 ok, 0 skipped, 0 not ok" in out
    assert "pv_spinlock_kunit: 1 suites, 2 cases: 1 ok, 1 skipped, 0 not ok" in out


def _break(old, new):
    return lambda ktap: [ln.replace(old, new) for ln in ktap]


@pytest.mark.parametrize("section, why", [
    # a failing case of the module's run
    (dict(edit=_break("ok 3 pvk_chain_too_deep", "not ok 3 pvk_chain_too_deep")),
     "pv_mutex: not ok pvk_chain_too_deep"),
    (dict(edit=_break("] ok 2 pv_mutex", "] not ok 2 pv_mutex")),
     "pv_mutex: the suite reported not ok"),
    # insmod failed: no suite ran, no rmmod
    (dict(insmod="1", rc=1, edit=lambda ktap: []),
     "insmod exited with 1: insmod: can't insert: Invalid argument"),
    (dict(insmod=None, rmmod=None, rc=1), "no insmod status"),
    # rmmod failed, the module stays
    (dict(rmmod="1", rc=1), "rmmod exited with 1: rmmod: can't unload: Resource busy"),
    (dict(rmmod=None, rc=1), "no rmmod status"),
    # a thread of the module's run outlived it
    (dict(rc=1, extra=["[   21.15] kunit-module: left running after rmmod: 733 pvk-P2 D"]),
     "kunit-module: left running after rmmod: 733 pvk-P2 D"),
    # fewer cases than built in, or a case the plan announced and never reported
    (dict(edit=lambda ktap: [ln for ln in ktap if "pvk_chain_too_deep" not in ln]),
     "pv_mutex: 2 of 3 announced cases reported"),
    (dict(edit=lambda ktap: [ln.replace("1..3", "1..2") for ln in ktap
                             if "pvk_chain_too_deep" not in ln]),
     "pv_mutex: 2 cases, 3 built in"),
    # a skip must say why
    (dict(edit=_break("ok 2 pvk_misuse", "ok 2 pvk_misuse # SKIP")),
     "pv_mutex: pvk_misuse skipped without a reason"),
    # case by case against the built-in run: a skip the built-in run did
    # not have, another case in a case's place, every case skipped
    (dict(edit=_break("ok 3 pvk_chain_too_deep",
                      "ok 3 pvk_chain_too_deep # SKIP max_lock_depth is not exported")),
     "pv_mutex: pvk_chain_too_deep: ok # SKIP max_lock_depth is not exported; built in: ok"),
    (dict(edit=_break("ok 3 pvk_chain_too_deep", "ok 3 pvk_misuse")),
     "pv_mutex: result 5 is pvk_misuse, built in pvk_chain_too_deep"),
    (dict(edit=lambda ktap: [re.sub(r"(    ok \d+ \S+)( # SKIP.*)?$", r"\1 # SKIP x", ln)
                             for ln in ktap]),
     "pv_mutex: pvk_misuse: ok # SKIP x; built in: ok"),
    # a parameterized case's parameters (two levels in) are results too:
    # a skip without a reason, another reason, one missing, one not ok
    (dict(edit=_break("rt_mutex # SKIP rt_mutex does not return -EDEADLK", "rt_mutex # SKIP")),
     "pv_mutex: pvk_chain/rt_mutex skipped without a reason"),
    (dict(edit=_break("does not return -EDEADLK", "is not built")),
     "pv_mutex: pvk_chain/rt_mutex: ok # SKIP rt_mutex is not built; built in:"
     " ok # SKIP rt_mutex does not return -EDEADLK"),
    (dict(edit=lambda ktap: [ln for ln in ktap if "ok 2 rt_mutex" not in ln]),
     "pv_mutex: result 2 is pvk_chain, built in pvk_chain/rt_mutex"),
    (dict(edit=_break("ok 1 pv_mutex", "not ok 1 pv_mutex")),
     "pv_mutex: not ok pvk_chain/pv_mutex"),
    # no KTAP at all, or another suite than built in
    (dict(edit=lambda ktap: []), "no KUnit results in the module's run"),
    (dict(edit=_break("# Subtest: pv_mutex", "# Subtest: pv_mutex_old")),
     "suites pv_mutex_old; built in: pv_mutex"),
    # the module's console window: a splat, an expected warning that did
    # not come (a WARN_ONCE() already spent at boot)
    (dict(extra=["[   21.15] BUG: sleeping function called from invalid context"]),
     "splat: BUG: sleeping function called from invalid context"),
    (dict(edit=lambda ktap: [ln for ln in ktap if "WARNING:" not in ln]),
     "expected warning missing: unlock by a non-owner"),
    # the guest never ended the section (the boot died in the module's run)
    (dict(rc=None), "the section never ended"),
    # a suite of another module
    (dict(edit=_break("# module: pv_mutex_kunit", "# module: other")),
     "pv_mutex: from module other"),
])
def test_a_kunit_module_run_that_is_not_clean_fails(section, why, tmp_path, monkeypatch):
    """Each way the module's run can go wrong fails its case, with the
    reason; the other module's case still passes."""
    got = _judge_kunit_modules(tmp_path, monkeypatch, [
        kunit_module_section("pv_spinlock_kunit"),
        kunit_module_section("pv_mutex_kunit", **section)])
    assert not got["pv_mutex_kunit"][0] and why in got["pv_mutex_kunit"][1]
    assert got["pv_spinlock_kunit"][0]


def test_a_kunit_module_run_that_lost_console_lines_fails(tmp_path, monkeypatch):
    """The console dropped lines in the module's window: what it did not
    print (a splat, a failing case) cannot be judged."""
    got = _judge_kunit_modules(tmp_path, monkeypatch, [
        kunit_module_section("pv_spinlock_kunit"),
        kunit_module_section("pv_mutex_kunit",
                             extra=["[   21.15] ** 12 printk messages dropped **"])])
    assert got["pv_mutex_kunit"] == (False, "the console dropped lines:"
                                     " ** 12 printk messages dropped **\n(console: boot.log)")


def test_a_kunit_module_the_guest_did_not_find_says_so(tmp_path, monkeypatch):
    """guest/kunit-module found no .ko: its own line is the reason (no
    insmod ran, so neither insmod nor rmmod failed)."""
    got = _judge_kunit_modules(tmp_path, monkeypatch, [
        kunit_module_section("pv_spinlock_kunit"),
        kunit_module_section("pv_mutex_kunit", insmod=None, rmmod=None, rc=2,
                             edit=lambda ktap: [],
                             extra=["[   20.02] kunit-module: no pv_mutex_kunit.ko in"
                                    " /lib/modules/*/kunit"])])
    ok, detail = got["pv_mutex_kunit"]
    assert not ok and detail.startswith("kunit-module: no pv_mutex_kunit.ko in"
                                        " /lib/modules/*/kunit\n")
    assert "insmod" not in detail and "rmmod" not in detail
    got = _judge_kunit_modules(tmp_path, monkeypatch, [
        kunit_module_section("pv_spinlock_kunit"),
        kunit_module_section("pv_mutex_kunit", insmod="1", rc=1, edit=lambda ktap: [])])
    assert "rmmod" not in got["pv_mutex_kunit"][1]


def test_a_kunit_module_without_a_section_or_a_ko_fails_with_the_reason(tmp_path, monkeypatch):
    got = _judge_kunit_modules(tmp_path, monkeypatch, [kunit_module_section("pv_mutex_kunit")],
                               {"pv_mutex_kunit": None, "pv_spinlock_kunit":
                                "not loaded: the x86_64 stage did not build"
                                " build/out/pv_spinlock_kunit-module/pv_spinlock_kunit.ko"})
    assert got["pv_mutex_kunit"][0]
    assert got["pv_spinlock_kunit"] == (False, "not loaded: the x86_64 stage did not build"
                                        " build/out/pv_spinlock_kunit-module/"
                                        "pv_spinlock_kunit.ko")
    got = _judge_kunit_modules(tmp_path, monkeypatch, [kunit_module_section("pv_mutex_kunit")])
    assert got["pv_spinlock_kunit"] == (False, "no kunit-module-pv_spinlock_kunit section"
                                        " (console: boot.log)")


def test_a_suite_the_boot_did_not_run_built_in_has_nothing_to_compare_with(tmp_path,
                                                                            monkeypatch):
    got = _judge_kunit_modules(tmp_path, monkeypatch, [kunit_module_section("pv_mutex_kunit")],
                               builtin=KUNIT_BUILTIN.replace("# module: pv_mutex_kunit",
                                                             "# module: other"))
    assert not got["pv_mutex_kunit"][0]
    assert "the boot's built-in run has no suite of pv_mutex_kunit" in got["pv_mutex_kunit"][1]


def _project_out(c, tmp_path, kos=("pv_mutex_kunit", "pv_spinlock_kunit"), stale=()):
    """The project kernel's build directory (bzImage, kernel.release, an
    installed module) and the KUnit modules the x86_64 stage built: KOS,
    those in STALE older than the kernel."""
    out = tmp_path / "build" / "out" / "project"
    (out / "arch/x86/boot").mkdir(parents=True)
    (out / "arch/x86/boot/bzImage").write_bytes(b"\0")
    os.utime(out / "arch/x86/boot/bzImage", (1000, 1000))
    (out / "include/config").mkdir(parents=True)
    (out / "include/config/kernel.release").write_text("6.12.117+\n")
    kdir = out / "modroot/lib/modules/6.12.117+/kernel/kernel"
    kdir.mkdir(parents=True)
    (kdir / "torture.ko").write_bytes(b"torture")
    for mod in kos:
        mdir = tmp_path / "build" / "out" / f"{mod}-module"
        mdir.mkdir(parents=True)
        (mdir / f"{mod}.ko").write_bytes(mod.encode())
        t = 500 if mod in stale else 2000
        os.utime(mdir / f"{mod}.ko", (t, t))
    return str(out)


def test_the_kunit_modules_go_into_the_guests_modules(tmp_path, monkeypatch):
    """The guest gets the kernel's own modules and each KUnit module built
    against this kernel in lib/modules/<release>/kunit; one not built, or
    older than the kernel, is not loaded and says why."""
    c = _kunit_module_tree(tmp_path, monkeypatch)
    out = _project_out(c, tmp_path, kos=("pv_mutex_kunit",))
    root, kos = c.kunit_modroot(out)
    assert kos == {"pv_mutex_kunit": None, "pv_spinlock_kunit": "not loaded: the x86_64 stage"
                   " did not build build/out/pv_spinlock_kunit-module/pv_spinlock_kunit.ko"}
    mods = os.path.join(root, "lib/modules/6.12.117+")
    assert sorted(os.path.relpath(os.path.join(d, f), mods) for d, _, fs in os.walk(mods)
                  for f in fs) == ["kernel/kernel/torture.ko", "kunit/pv_mutex_kunit.ko"]
    c = _kunit_module_tree(tmp_path / "2", monkeypatch)
    out = _project_out(c, tmp_path / "2", stale=("pv_spinlock_kunit",))
    root, kos = c.kunit_modroot(out)
    assert kos["pv_mutex_kunit"] is None
    assert kos["pv_spinlock_kunit"] == (
        "not loaded: build/out/pv_spinlock_kunit-module/pv_spinlock_kunit.ko is older than the"
        " project kernel (the x86_64 stage did not build it against this kernel)")
    assert os.listdir(os.path.join(root, "lib/modules/6.12.117+/kunit")) == ["pv_mutex_kunit.ko"]


def test_the_boot_loads_each_kunit_module_it_has(tmp_path, monkeypatch, capsys):
    """st_boot: the guest command loads the modules the x86_64 stage built,
    from the modules given to the guest; the one it did not build fails
    its case with that reason."""
    c = _kunit_module_tree(tmp_path, monkeypatch)
    _project_out(c, tmp_path, kos=("pv_mutex_kunit",))
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                ".."))
    c = check.Check(argparse.Namespace(only=None))
    seen = {}

    def fake_boot(kernel, cmd, log_path, **kw):
        from pvrt import boot
        seen["cmd"], seen["modroot"] = cmd, kw["modroot"]
        seen["kos"] = os.listdir(os.path.join(kw["modroot"], "lib/modules/6.12.117+/kunit"))
        text = (KUNIT_BUILTIN + kunit_module_section("pv_mutex_kunit")
                + "PVRT-EXIT rc=0\n")
        return boot.BootResult(log_path, text, False, 1)

    monkeypatch.setattr(check.boot, "boot", fake_boot)
    monkeypatch.setattr(check.build, "build_variant", lambda *a, **k: None)
    monkeypatch.setattr(check.build, "configure", lambda *a, **k: [])
    monkeypatch.setattr(check.build, "series_kunitconfigs", lambda *a, **k: [])
    c.st_boot()
    assert "; kunit-module pv_mutex_kunit || rc=1; exit $rc" in seen["cmd"]
    assert seen["kos"] == ["pv_mutex_kunit.ko"]
    out = capsys.readouterr().out
    assert "ok  pv_mutex_kunit as a module: insmod runs its suites as built in" in out
    assert ("FAIL  pv_spinlock_kunit as a module: insmod runs its suites as built in" in out
            and "not loaded: the x86_64 stage did not build" in out)


@pytest.mark.parametrize("edit, why", [
    (lambda t: t, None),
    # lib/kunit/test.c does not run a case already KUNIT_SKIPPED: a case
    # array shared by two suites shows its skip's reason only in the first
    (lambda t: t.replace("# SKIP needs PV_SPINLOCK or DEBUG_ATOMIC_SLEEP", "# SKIP "),
     "pv_spinlock_api: pvs_trylock_softirq skipped without a reason"),
    (lambda t: t.replace("rt_mutex # SKIP rt_mutex does not return -EDEADLK", "rt_mutex # SKIP"),
     "pv_mutex: pvk_chain/rt_mutex skipped without a reason"),
])
def test_a_built_in_skip_must_say_why(edit, why, tmp_path, monkeypatch, capsys):
    """st_boot: each case or parameter the built-in run skipped says why."""
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))

    def fake_boot(kernel, cmd, log_path, **kw):
        from pvrt import boot
        return boot.BootResult(log_path, edit(KUNIT_BUILTIN) + "PVRT-EXIT rc=0\n", False, 1)

    monkeypatch.setattr(check.boot, "boot", fake_boot)
    monkeypatch.setattr(c, "kunit_modroot", lambda out: (str(tmp_path), {}))
    monkeypatch.setattr(c, "kunit_counted", lambda *a: None)
    monkeypatch.setattr(check.build, "series_kunitconfigs", lambda *a, **k: ["x"])
    c.st_boot()
    got = {name: (ok, detail) for _, name, ok, detail in c.res.junit}
    name = "KUnit suites built into the validation kernel: every skip says why"
    assert got[name] == ((True, "") if why is None else (False, why))


def _fake_kunit_py(tree):
    """A kunit.py parse in TREE that, as the real one, reads the first
    top-level KTAP run it is given only, and counts the result lines of
    its cases (one level in)."""
    path = os.path.join(tree, "tools", "testing", "kunit", "kunit.py")
    os.makedirs(os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write("import re, sys\n"
                "runs = re.split(r'^K?TAP version \\d+$', open(sys.argv[2]).read(), flags=re.M)\n"
                "text = runs[1] if len(runs) > 1 else ''\n"
                "ok = len(re.findall(r'^    ok ', text, re.M))\n"
                "bad = len(re.findall(r'^    not ok ', text, re.M))\n"
                "print(f'Ran {ok + bad} tests: passed: {ok}, failed: {bad}' if ok + bad else"
                " 'no tests')\n")


@pytest.mark.parametrize("builtin, counted", [
    # what a parse of the first run gives with or without the modules'
    # runs after it
    (KUNIT_BUILTIN, "ok  KUnit suites built in: 5 passed, 0 failed"),
    # the suites did not run at boot: the modules' runs are not theirs
    ("PVRT-BOOTED 6.12.117+ cpus=2\n", "FAIL  KUnit suites built in\n        no KUnit results"),
])
def test_the_modules_runs_never_stand_in_for_the_built_in_run(builtin, counted, tmp_path,
                                                               monkeypatch, capsys):
    """kunit_counted() of the boot: the modules' runs after the built-in
    one (a failing case among them) never stand in for a built-in run that
    is not there; they are judged module by module (boot_kunit_modules)."""
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    c = check.Check(argparse.Namespace(only=None))
    _fake_kunit_py(c.tree)
    log = tmp_path / "boot.log"
    log.write_text(builtin + kunit_module_section(
        "pv_mutex_kunit", edit=_break("ok 2 pvk_misuse", "not ok 2 pvk_misuse"))
        + kunit_module_section("pv_spinlock_kunit", rc=None))
    c.kunit_counted("boot", "KUnit suites built in", str(log))
    assert counted in capsys.readouterr().out


def test_guest_kunit_module_loads_runs_and_unloads_each_module(tmp_path):
    """guest/kunit-module: per module a section in the kernel log with
    insmod's and rmmod's status, WARN_ONCE()s cleared before each load; a
    missing .ko, a failed insmod or rmmod, and a kernel thread that outlives
    the module each end its section with rc != 0 and fail the script."""
    import subprocess
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bin_, proc, dbg = tmp_path / "bin", tmp_path / "proc", tmp_path / "debug"
    for d in (bin_, proc, dbg):
        d.mkdir()
    (dbg / "clear_warn_once").write_text("")
    calls = tmp_path / "calls"

    def kthread(pid, comm):
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "stat").write_text(f"{pid} ({comm}) S 2 0 0\n")
        (proc / str(pid) / "comm").write_text(comm + "\n")
        (proc / str(pid) / "status").write_text(f"Name:\t{comm}\nState:\tD (disk sleep)\n")
    kthread(2, "kthreadd")
    kthread(10, "ksoftirqd/0")
    for tool, body in {
            "insmod": 'echo "insmod $*" >> "$CALLS"; cat "$DEBUGFS/clear_warn_once" >> "$CALLS"\n'
                      ': > "$DEBUGFS/clear_warn_once"\n'
                      'case "$1" in *bad_kunit.ko) echo "insmod: can\'t insert" >&2; exit 1;;'
                      ' *leaky_kunit.ko) mkdir "$PROC/77"; printf "77 (pvk-P1) S 2 0\\n"'
                      ' > "$PROC/77/stat"; echo pvk-P1 > "$PROC/77/comm";'
                      ' printf "State:\\tD (disk sleep)\\n" > "$PROC/77/status";;'
                      ' *) mkdir -p "$PROC/99"; echo "99 (kworker/0:2) I 2 0" > "$PROC/99/stat";'
                      ' echo kworker/0:2 > "$PROC/99/comm";; esac',
            "rmmod": 'echo "rmmod $*" >> "$CALLS"; [ "$1" != stuck_kunit ] ||'
                     ' { echo "rmmod: can\'t unload" >&2; exit 1; }',
            "find": '[ "$5" = missing_kunit.ko ] || echo "/lib/modules/6.12/kunit/$5"'}.items():
        (bin_ / tool).write_text("#!/bin/sh\n" + body + "\n")
        (bin_ / tool).chmod(0o755)
    kmsg = tmp_path / "kmsg"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "CALLS": str(calls), "PVRT_KMSG": str(kmsg),
           "PVRT_PROC": str(proc), "PROC": str(proc), "PVRT_DEBUGFS": str(dbg),
           "DEBUGFS": str(dbg)}
    script = os.path.join(top, "guest", "kunit-module")
    r = subprocess.run(["sh", script, "good_kunit"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert kmsg.read_text().splitlines() == [
        "PVRT-BEGIN kunit-module-good_kunit", "kunit-module: insmod good_kunit rc=0",
        "kunit-module: rmmod good_kunit rc=0", "PVRT-END kunit-module-good_kunit rc=0"]
    assert calls.read_text().splitlines() == [
        "insmod /lib/modules/6.12/kunit/good_kunit.ko", "1", "rmmod good_kunit"]
    kmsg.write_text("")
    r = subprocess.run(["sh", script, "missing_kunit", "bad_kunit", "stuck_kunit",
                        "leaky_kunit", "good_kunit"], env=env, capture_output=True, text=True)
    assert r.returncode == 1
    assert kmsg.read_text().splitlines() == [
        "PVRT-BEGIN kunit-module-missing_kunit",
        "kunit-module: no missing_kunit.ko in /lib/modules/*/kunit",
        "PVRT-END kunit-module-missing_kunit rc=2",
        "PVRT-BEGIN kunit-module-bad_kunit", "kunit-module: insmod bad_kunit rc=1 insmod:"
        " can't insert", "PVRT-END kunit-module-bad_kunit rc=1",
        "PVRT-BEGIN kunit-module-stuck_kunit", "kunit-module: insmod stuck_kunit rc=0",
        "kunit-module: rmmod stuck_kunit rc=1 rmmod: can't unload",
        "PVRT-END kunit-module-stuck_kunit rc=1",
        "PVRT-BEGIN kunit-module-leaky_kunit", "kunit-module: insmod leaky_kunit rc=0",
        "kunit-module: rmmod leaky_kunit rc=0",
        "kunit-module: left running after rmmod: 77 pvk-P1 D",
        "PVRT-END kunit-module-leaky_kunit rc=1",
        "PVRT-BEGIN kunit-module-good_kunit", "kunit-module: insmod good_kunit rc=0",
        "kunit-module: rmmod good_kunit rc=0", "PVRT-END kunit-module-good_kunit rc=0"]


def test_guest_kunit_module_scans_proc_with_one_process_per_scan(tmp_path):
    """guest/kunit-module's scans of /proc for kernel threads start a few
    processes each, not two per /proc entry (a guest has hundreds: the scans
    took seconds each); a comm with a space or a parenthesis is kept whole,
    user tasks and workqueue workers are left out."""
    import subprocess
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bin_, proc, dbg = tmp_path / "bin", tmp_path / "proc", tmp_path / "debug"
    for d in (bin_, proc, dbg):
        d.mkdir()
    (dbg / "clear_warn_once").write_text("")
    calls = tmp_path / "calls"

    def task(pid, comm, ppid=2):
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "stat").write_text(f"{pid} ({comm}) S {ppid} 0 0\n")
        (proc / str(pid) / "comm").write_text(comm + "\n")
        (proc / str(pid) / "status").write_text(f"Name:\t{comm}\nState:\tS (sleeping)\n")
    for pid in range(10, 110):
        task(pid, f"ksoftirqd/{pid}")
    task(200, "kworker/1:1")
    task(201, "sh", ppid=1)
    for tool in ("sed", "cat", "awk", "grep", "tr"):
        (bin_ / tool).write_text(f'#!/bin/sh\necho {tool} >> "$CALLS"\nexec /bin/{tool} "$@"\n')
        (bin_ / tool).chmod(0o755)
    (bin_ / "insmod").write_text('#!/bin/sh\ncase "$1" in *leaky_kunit.ko) mkdir "$PROC/77";'
                                 ' printf "77 (pvk (P) 1) S 2 0\\n" > "$PROC/77/stat";'
                                 ' echo "pvk (P) 1" > "$PROC/77/comm";'
                                 ' printf "State:\\tD (disk sleep)\\n" > "$PROC/77/status";;'
                                 ' esac\n')
    (bin_ / "rmmod").write_text("#!/bin/sh\n")
    (bin_ / "find").write_text('#!/bin/sh\necho "/lib/modules/6.12/kunit/$5"\n')
    for tool in ("insmod", "rmmod", "find"):
        (bin_ / tool).chmod(0o755)
    kmsg = tmp_path / "kmsg"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "CALLS": str(calls), "PVRT_KMSG": str(kmsg),
           "PVRT_PROC": str(proc), "PROC": str(proc), "PVRT_DEBUGFS": str(dbg)}
    r = subprocess.run(["sh", os.path.join(top, "guest", "kunit-module"), "leaky_kunit"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert "kunit-module: left running after rmmod: 77 pvk (P) 1 D" in kmsg.read_text()
    assert len(calls.read_text().splitlines()) <= 12, calls.read_text()


def test_a_board_kernels_old_build_directory_is_removed():
    """A board kernel whose build moved (board-stock: out/board-stock-base,
    built from the series' base) leaves its old directory, a kernel build,
    in build/check: make check removes it."""
    from pvrt import build
    top = os.path.join(os.path.dirname(__file__), "..")
    for name in check.Check.BOARD_VARIANTS:
        now = os.path.relpath(build.out_dir(top, name, "b"), "b")
        if now != os.path.join("out", name):
            assert os.path.join("out", name) in check.Check.OBSOLETE, name
        assert now not in check.Check.OBSOLETE
