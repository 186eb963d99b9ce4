# SPDX-License-Identifier: GPL-2.0
"""check's KUnit verdicts on recorded counts: (ran, passed, failed, skipped)."""

import pytest

from pvrt import kunit


@pytest.mark.parametrize("rc, run, ktap, failed", [
    (0, (10, 10, 0, 0), (10, 10, 0, 0), 0),         # clean
    (1, (10, 8, 2, 0), (10, 8, 2, 0), 2),           # real failures count as such
    # kunit.py misparsed a kernel message as a failure; the KTAP lines say
    # the same 10 tests ran and passed: forgiven, with a note.
    (1, (10, 9, 1, 0), (10, 10, 0, 0), 0),
    # Non-zero exit, no failure anywhere (a build error after a stale log,
    # a timeout): one failure.
    (1, (10, 10, 0, 0), (10, 10, 0, 0), 1),
    # The counts differ because fewer tests ran in the KTAP lines: not a
    # misparse, the run lost tests.  (Forgiven before the verdict had a test.)
    (1, (10, 9, 1, 0), (5, 5, 0, 0), 1),
    (0, (0, 0, 0, 0), (0, 0, 0, 0), 1),             # nothing ran
])
def test_verdict(rc, run, ktap, failed):
    assert kunit.verdict(rc, run, ktap).failed == failed


def test_run_summary_counts_crashes_and_errors_as_failures():
    text = "[x] Ran 7 tests: passed: 3, failed: 1, crashed: 1, skipped: 1, errors: 1\n"
    assert kunit.run_summary(text) == (7, 3, 3, 1)
    assert kunit.run_summary("no summary") is None
