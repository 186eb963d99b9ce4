# SPDX-License-Identifier: GPL-2.0
"""make check's checkpatch and W=1/sparse verdicts on recorded output."""

from pvrt import lint

ALLOW = {"pv-mutex:MACRO_ARG_REUSE": "the macro is rtmutex.c's, reused as is"}
P = "0004-locking-pv_mutex-Add.patch"


def test_clean_terse_run_has_no_summary_and_passes():
    assert lint.checkpatch_verdict("", "", 0, "pv-mutex", ALLOW) == ([], [])


def test_listed_check_passes_unlisted_warning_fails():
    out = (f"{P}:10: CHECK:MACRO_ARG_REUSE: Macro argument reuse 'x'\n"
           "total: 0 errors, 0 warnings, 1 checks, 200 lines checked\n")
    assert lint.checkpatch_verdict(out, "", 0, "pv-mutex", ALLOW) == \
        ([], ["pv-mutex:MACRO_ARG_REUSE"])
    out2 = (f"{P}:10: CHECK:MACRO_ARG_REUSE: Macro argument reuse 'x'\n"
            f"{P}:12: WARNING:LONG_LINE: line length of 101 exceeds 100 columns\n"
            "total: 0 errors, 1 warnings, 1 checks, 200 lines checked\n")
    bad, used = lint.checkpatch_verdict(out2, "", 1, "pv-mutex", ALLOW)
    assert used == ["pv-mutex:MACRO_ARG_REUSE"]
    assert bad[0].endswith("line length of 101 exceeds 100 columns") and "total:" in bad[1]


def test_a_listed_type_is_listed_per_patch_only():
    out = (f"{P}:10: CHECK:MACRO_ARG_REUSE: Macro argument reuse 'x'\n"
           "total: 0 errors, 0 warnings, 1 checks, 200 lines checked\n")
    bad, used = lint.checkpatch_verdict(out, "", 0, "ikt", ALLOW)
    assert used == [] and len(bad) == 2


def test_crash_without_summary_and_stderr_fail():
    bad, _ = lint.checkpatch_verdict("", "Can't locate Foo.pm\n", 2, "ikt", ALLOW)
    assert bad[0].startswith("checkpatch exited 2") and bad[-1] == "Can't locate Foo.pm"


def test_diagnostics_count_only_on_the_series_lines(tmp_path):
    changed = {"kernel/locking/pv_mutex.c": None, "kernel/locking/rtmutex.c": {100, 101}}
    out = ("kernel/locking/pv_mutex.c:5:3: warning: unused variable 'x'\n"
           "kernel/locking/rtmutex.c:100:1: warning: symbol 'y' was not declared\n"
           "kernel/locking/rtmutex.c:300:1: error: incorrect type in assignment\n"
           "kernel/sched/core.c:1:1: warning: the base tree's own\n"
           "  CC      kernel/locking/pv_mutex.o\n")
    bad = lint.diagnostics_on_changed_lines(out, str(tmp_path), changed)
    assert bad == ["kernel/locking/pv_mutex.c:5:3: warning: unused variable 'x'",
                   "kernel/locking/rtmutex.c:100:1: warning: symbol 'y' was not declared"]
