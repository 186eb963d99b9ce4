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


# A suite's lines in KTAP as the kernel prints it (lib/kunit/test.c): its
# header, plan and case results one level in, a parameterized case's
# header and its parameters' results two levels in (before the case's own
# result), the suite's result at the top.  A parameter's description may
# hold spaces.
_SUITE = re.compile(r"^    # Subtest: (\S+)$")
_SUITE_MODULE = re.compile(r"^    # module: (\S+)$")
_SUITE_PLAN = re.compile(r"^    1\.\.(\d+)$")
_CASE = re.compile(r"^    (not ok|ok) \d+ (\S+)(?:\s+#\s*(\S+)\s*(.*))?$")
_PARAM_CASE = re.compile(r"^        # Subtest: (\S+)$")
_PARAM = re.compile(r"^        (not ok|ok) \d+ (.+?)(?:\s+#\s*(\S+)\s*(.*))?$")
_SUITE_END = re.compile(r"^(not ok|ok) \d+ (\S+)(?:\s+#\s*(\S+)\s*(.*))?$")

# Skips a module's run may have where the same case built in ran: none.
# A test module and the kernel it is loaded into are built from one tree
# and configuration, so a case skips for the same reason either way (an
# unexported symbol would fail modpost in the x86_64 stage).  An entry is
# (suite, case, reason the module's run gives): why.
MODULE_ONLY_SKIPS = {}


def _result(m):
    return (m.group(2).strip(), m.group(1) == "ok", (m.group(3) or "").upper(),
            (m.group(4) or "").strip())


def suites(text):
    """The suites of one KUnit run on a console: {suite: {"module": name or
    None, "plan": cases announced or None, "cases": [(case, ok, directive,
    reason)], "results": the same for the cases and, before each
    parameterized case, its parameters as "case/parameter", in the order
    printed, "result": (ok, directive) or None}}, in the order they ran.
    Kernel messages printed in between are dropped (console.ktap_only)."""
    out, cur, param = {}, None, None
    for line in console.ktap_only(text).splitlines():
        m = _SUITE.match(line)
        if m:
            cur = out[m.group(1)] = {"module": None, "plan": None, "cases": [],
                                     "results": [], "result": None}
            param = None
            continue
        if cur is None:
            continue
        m = _SUITE_MODULE.match(line)
        if m:
            cur["module"] = m.group(1)
            continue
        m = _SUITE_PLAN.match(line)
        if m:
            cur["plan"] = int(m.group(1))
            continue
        m = _PARAM_CASE.match(line)
        if m:
            param = m.group(1)
            continue
        m = _PARAM.match(line)
        if m:
            name, ok, directive, reason = _result(m)
            cur["results"].append((f"{param or '?'}/{name}", ok, directive, reason))
            continue
        m = _CASE.match(line)
        if m:
            cur["cases"].append(_result(m))
            cur["results"].append(_result(m))
            param = None
            continue
        m = _SUITE_END.match(line)
        if m and m.group(2) in out and out[m.group(2)] is cur:
            cur["result"] = (m.group(1) == "ok", (m.group(3) or "").upper())
            cur = None
    return out


def _said(ok, directive, reason):
    return ("ok" if ok else "not ok") + (f" # {directive} {reason}".rstrip() if directive
                                         else "")


def skips_without_reason(runs):
    """Each case or parameter of RUNS (suites()) skipped without a reason:
    ["suite: case skipped without a reason"]."""
    return [f"{name}: {case} skipped without a reason" for name, s in runs.items()
            for case, _ok, directive, reason in s.get("results", s["cases"])
            if directive == "SKIP" and not reason]


def module_run_problems(builtin, loaded, module):
    """What is wrong with MODULE's run when it was loaded (LOADED: suites()
    of its section), against the same suites built in (BUILTIN: suites() of
    the boot's run): its suites must be those the boot ran from MODULE, and
    each must report, case by case and parameter by parameter, the same
    names in the same order with the same result and directive as built
    in; a skip says why, and the same why as built in (or one of
    MODULE_ONLY_SKIPS); no case is not ok.  [] when nothing is wrong."""
    want = {s: v for s, v in builtin.items() if v["module"] == module}
    if not want:
        return [f"the boot's built-in run has no suite of {module} to compare with"]
    if not loaded:
        return ["no KUnit results in the module's run"]
    bad = []
    if sorted(loaded) != sorted(want):
        bad.append(f"suites {', '.join(sorted(loaded))}; built in: {', '.join(sorted(want))}")
    for name, s in loaded.items():
        n = len(s["cases"])
        if s["module"] != module:
            bad.append(f"{name}: from module {s['module']}")
        if name in want and n != len(want[name]["cases"]):
            bad.append(f"{name}: {n} cases, {len(want[name]['cases'])} built in")
        if s["plan"] != n or s["result"] is None:
            bad.append(f"{name}: {n} of {s['plan']} announced cases reported"
                       + ("" if s["result"] else ", no result line for the suite"))
        elif not s["result"][0]:
            bad.append(f"{name}: the suite reported not ok")
        for case, ok, _directive, _reason in s["results"]:
            if not ok:
                bad.append(f"{name}: not ok {case}")
        bad += skips_without_reason({name: s})
        if name not in want:
            continue
        got, exp = s["results"], want[name]["results"]
        gn, en = [r[0] for r in got], [r[0] for r in exp]
        if gn != en:
            i = next((i for i, (a, b) in enumerate(zip(gn, en)) if a != b), min(len(gn), len(en)))
            bad.append(f"{name}: result {i + 1} is "
                       + (gn[i] if i < len(gn) else "missing")
                       + ", built in " + (en[i] if i < len(en) else "none"))
            continue
        for (case, ok, directive, reason), (_c, bok, bdirective, breason) in zip(got, exp):
            if (ok, directive, reason) == (bok, bdirective, breason) or not ok:
                continue
            if (directive == "SKIP" and reason and bok and not bdirective
                    and (name, case, reason) in MODULE_ONLY_SKIPS):
                continue
            bad.append(f"{name}: {case}: {_said(ok, directive, reason)};"
                       f" built in: {_said(bok, bdirective, breason)}")
    return bad


# printk's note on the console for lines it could not print
# (kernel/printk/printk.c console_prepend_dropped()).
_DROPPED = re.compile(r"\*\* \d+ printk messages dropped \*\*")


def module_section(sec, builtin, module):
    """Judge guest/kunit-module's section SEC, (rc, lines), of MODULE
    against BUILTIN, suites() of the boot's built-in run: insmod and rmmod
    exited 0, no kernel thread of the run left, the section ended with rc 0,
    module_run_problems() of its KTAP, no splat and every expected warning
    within it.  Returns ([problem], suites() of the section)."""
    rc, body = sec
    # The guest found no .ko: its own line says which (nothing ran).
    bad = [ln for ln in body if ln.startswith("kunit-module: no ")]
    if bad:
        return bad, {}
    for step in ("insmod", "rmmod"):
        m = next((re.match(rf"^kunit-module: {step} \S+ rc=(\d+)\s*(.*)$", ln)
                  for ln in body if ln.startswith(f"kunit-module: {step} ")), None)
        if m is None:
            bad.append(f"no {step} status")
        elif m.group(1) != "0":
            bad.append(f"{step} exited with {m.group(1)}: {m.group(2)}".rstrip(": "))
        if m is None or m.group(1) != "0":
            break       # no rmmod after an insmod that did not load
    # What the console dropped in the module's window (a splat, a case's
    # result) cannot be judged.
    bad += [f"the console dropped lines: {ln.strip()}" for ln in body
            if _DROPPED.search(ln)]
    bad += [ln for ln in body if ln.startswith("kunit-module: left running")]
    if rc is None:
        bad.append("the section never ended")
    elif rc and not bad:
        bad.append(f"the section ended with rc={rc}")
    text = "\n".join(body) + "\n"
    loaded = suites(text)
    bad += module_run_problems(builtin, loaded, module)
    bad += [f"splat: {ln}" for _n, ln in console.splats(text)]
    bad += [f"expected warning missing: {what}" for _n, what in console.missing_expected(text)]
    return bad, loaded
