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


@pytest.mark.parametrize("rc, run, ktap, errors, failed", [
    # A kernel message between "KTAP version 1" and "# Subtest:" made
    # kunit.py lose a subtest and report the rest missing (CI, 2026-11-23:
    # "Ran 111 tests: passed: 82, crashed: 26, skipped: 3, errors: 55");
    # the KTAP lines alone: 84 ran, 81 passed, 3 skipped, clean.
    (1, (111, 82, 81, 3), (84, 81, 0, 3), 55, 0),
    # parse errors, but the KTAP lines hold fewer passes than kunit.py
    # saw: tests were lost, not misparsed.
    (1, (111, 82, 81, 3), (40, 37, 0, 3), 55, 1),
    # parse errors and a real failure in the KTAP lines: it counts.
    (1, (111, 82, 81, 3), (84, 80, 1, 3), 55, 1),
    # no parse errors: the count rule alone, as above.
    (1, (111, 82, 81, 3), (84, 81, 0, 3), 0, 1),
])
def test_verdict_with_parse_errors(rc, run, ktap, errors, failed):
    assert kunit.verdict(rc, run, ktap, errors).failed == failed


def test_parse_errors_of_the_summary_line():
    text = "[x] Ran 111 tests: passed: 82, crashed: 26, skipped: 3, errors: 55\n"
    assert kunit.run_parse_errors(text) == 55
    assert kunit.run_parse_errors("[x] Ran 7 tests: passed: 7\n") == 0


def test_run_summary_counts_crashes_and_errors_as_failures():
    text = "[x] Ran 7 tests: passed: 3, failed: 1, crashed: 1, skipped: 1, errors: 1\n"
    assert kunit.run_summary(text) == (7, 3, 3, 1)
    assert kunit.run_summary("no summary") is None
