# SPDX-License-Identifier: GPL-2.0
"""KUnit results: counting them and judging a run.

kunit.py's own summary of a run can disagree with the KTAP lines of the
kernel console: kernel messages printed between result lines make it
misparse a suite that ran fine.  The results are therefore counted again
from the KTAP lines alone (kunit_summary), and verdict() decides what a
non-zero kunit.py exit means given both counts.
"""

import collections
import os
import re
import subprocess
import sys
import tempfile

from pvrt import console

SUMMARY = re.compile(r"Ran (\d+) tests?: passed: (\d+)(?:, failed: (\d+))?"
                     r"(?:, crashed: (\d+))?(?:, skipped: (\d+))?(?:, errors: (\d+))?")

Verdict = collections.namedtuple("Verdict", "passed failed why note")


def run_summary(text):
    """(ran, passed, failed, skipped) of kunit.py's last summary line in TEXT,
    or None; failed counts crashed tests and parse errors too."""
    m = None
    for m in SUMMARY.finditer(text):
        pass
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), sum(int(m.group(i) or 0) for i in (3, 4, 6)),
            int(m.group(5) or 0))


def run_parse_errors(text):
    """The "errors" of kunit.py's last summary line in TEXT (its parser's
    complaints: missing subtests, unexpected test numbers), 0 if none."""
    m = None
    for m in SUMMARY.finditer(text):
        pass
    return int(m.group(6) or 0) if m else 0


def kunit_summary(tree, log_path):
    """kunit.py parse on the KTAP lines of a console log.

    Returns (ran, passed, failed, skipped, parser output) or None when it
    finds no results; failed counts crashed tests and parse errors too.
    """
    with open(log_path, encoding="utf-8", errors="replace") as f:
        text = console.ktap_only(f.read())
    with tempfile.TemporaryDirectory(prefix="pvrt-ktap-") as tmp:
        path = os.path.join(tmp, "ktap.log")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        res = subprocess.run([sys.executable, os.path.join(tree, "tools/testing/kunit/kunit.py"),
                              "parse", path], cwd=tree, capture_output=True, text=True)
    s = run_summary(res.stdout)
    return None if s is None else s + (res.stdout,)


def kunit_counts(tree, log_path):
    """(passed, failed) of the KUnit results on a console log, or None."""
    s = kunit_summary(tree, log_path)
    if not s or s[0] == 0:
        return None
    return s[1], s[2]


def verdict(returncode, run, ktap, parse_errors=0):
    """Judge a kunit.py run: RUN and KTAP are (ran, passed, failed, skipped)
    from kunit.py's own summary and from the KTAP lines alone.

    The KTAP count decides.  A non-zero exit is forgiven only when the two
    counts agree on which tests ran and kunit.py's extra failures are all
    the KTAP lines' passes (its misparse of interleaved kernel messages),
    or when kunit.py's parser reported PARSE_ERRORS (a kernel message
    between "KTAP version 1" and a subtest makes it lose the subtest and
    invent missing ones) while the KTAP lines alone parse cleanly and hold
    at least every test kunit.py saw pass; any other non-zero exit, or a
    run in which no test ran, is one more failure.
    """
    ran, passed, failed, _skipped = ktap
    note = None
    if run[2] != failed:
        note = (f"kunit.py run counted {run[2]} failed, the KTAP lines alone {failed}:"
                " kernel messages interleaved with the results")
    if ran == 0:
        return Verdict(passed, failed + 1, "no test ran", note)
    if returncode == 0 or failed:
        return Verdict(passed, failed, f"{failed} failed" if failed else "", note)
    misparse = (run[0] == ran and run[2] > 0 and run[1] + run[2] == passed + failed) or \
        (parse_errors > 0 and passed + _skipped >= run[1])
    if misparse:
        return Verdict(passed, 0, "", note)
    return Verdict(passed, 1, f"kunit.py exited {returncode} with every KTAP result passing",
                   note)


# A case's KTAP result line: "ok 4 pvs_rtlock_in_rcu_reader # SKIP why".
RESULT = re.compile(r"^\s*(not ok|ok) \d+ (\S+)(?:\s+#\s*(\S+)\s*(.*))?$")

# The debug kernel's cases whose lockdep part is marked skipped when an
# earlier suite's expected lockdep report switched lockdep off
# ("lockdep was off (debug_locks=0)"): there they must pass, not skip.
LOCKDEP_PARTS = ("pvs_rtlock_in_rcu_reader", "pvs_rtlock_unlock_not_owner")
LOCKDEP_OFF = "lockdep was off"


def case_results(text):
    """{case: (ok, directive, reason)} from the KTAP result lines of a
    console log (a later line of the same name wins)."""
    found = {}
    for line in console.lines(text):
        m = RESULT.match(line)
        if m:
            found[m.group(2)] = (m.group(1) == "ok", (m.group(3) or "").upper(),
                                 m.group(4).strip() if m.group(4) else "")
    return found


def lockdep_parts_unchecked(text, names=LOCKDEP_PARTS):
    """What keeps the lockdep parts of NAMES from having been checked on a
    console log: a case of NAMES that did not run or did not pass (skipped
    included), and any case skipped because lockdep was off."""
    got = case_results(text)
    bad = []
    for name in names:
        if name not in got:
            bad.append(f"{name}: no result")
        elif not got[name][0] or got[name][1] == "SKIP":
            ok, directive, why = got[name]
            bad.append(f"{name}: {'ok' if ok else 'not ok'}"
                       + (f" # {directive} {why}".rstrip() if directive else ""))
    bad += [f"{name}: # SKIP {why}" for name, (_ok, d, why) in sorted(got.items())
            if d == "SKIP" and LOCKDEP_OFF in why and name not in names]
    return bad
