# SPDX-License-Identifier: GPL-2.0
"""What make check judges in the series' own lines: checkpatch.pl output and
W=1/sparse diagnostics, as functions of recorded text."""

import os
import re

from pvrt import base, gitutil
from pvrt.errors import PvrtError

_CP_LINE = re.compile(r"^.*?: (ERROR|WARNING|CHECK):(\w+):")
_CP_TOTAL = re.compile(r"total: (\d+) errors, (\d+) warnings, (\d+) checks")
_DIAG = re.compile(r"^(\S+?):(\d+):(?:\d+:)? (warning|error): (.*)$")


def checkpatch_allow(top):
    """{"<queue name>:<TYPE>": reason} from queue/checkpatch-checks."""
    allow = {}
    path = os.path.join(top, "queue", "checkpatch-checks")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, reason = line.partition(" ")
                    if not reason.strip():
                        raise PvrtError(f"queue/checkpatch-checks: '{key}' has no reason")
                    allow[key] = reason
    return allow


def checkpatch_verdict(stdout, stderr, returncode, qname, allow):
    """(problems, allow keys used) of one checkpatch.pl --strict --terse
    --show-types run on patch QNAME: every report not listed is a problem,
    and so are a summary whose count differs from the listed ones, a
    non-zero exit without a summary, and anything on stderr."""
    bad, used = [], []
    for line in stdout.splitlines():
        m = _CP_LINE.match(line)
        if not m:
            continue
        key = f"{qname}:{m.group(2)}"
        if key in allow:
            used.append(key)
        else:
            bad.append(line)
    total = _CP_TOTAL.search(stdout)
    if not total:                       # --terse prints no summary when all is clean
        if returncode:
            bad.append(f"checkpatch exited {returncode}: "
                       + "\n".join((stdout + stderr).rstrip().splitlines()[-25:]))
    elif sum(int(g) for g in total.groups()) != len(used) or bad:
        bad.append(total.group(0))
    if stderr.strip():
        bad.append(stderr.strip())
    return bad, used


def changed_lines(tree):
    """{path: None (new file) or set of changed line numbers} for C files."""
    out = {}
    diff = gitutil.run(["git", "-C", tree, "diff", "-U0", "--no-color",
                        base.BASE_REF, "HEAD", "--", "*.c", "*.h"]).stdout
    path = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
            if path:
                out.setdefault(path, set())
        elif line.startswith("@@") and path:
            m = re.match(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            out[path].update(range(start, start + count))
    added = gitutil.out(["git", "-C", tree, "diff", "--name-only", "--diff-filter=A",
                         base.BASE_REF, "HEAD"]).split()
    for f in added:
        if f in out:
            out[f] = None
    return out


def lint_objects(tree, out, cfiles):
    """({object: [C files]}, [C files not built]): the object each changed C
    file is compiled in (a .c may be #included by another)."""
    objs, skipped = {}, []
    for f in cfiles:
        obj = f[:-2] + ".o"
        if os.path.exists(os.path.join(out, obj)):
            objs.setdefault(obj, []).append(f)
            continue
        d, name = os.path.dirname(f), os.path.basename(f)
        for cand in sorted(os.listdir(os.path.join(tree, d))):
            cpath = os.path.join(d, cand)
            if not cand.endswith(".c") or cpath == f:
                continue
            with open(os.path.join(tree, cpath), encoding="utf-8", errors="replace") as fh:
                if f'#include "{name}"' not in fh.read():
                    continue
            if os.path.exists(os.path.join(out, cpath[:-2] + ".o")):
                objs.setdefault(cpath[:-2] + ".o", []).append(f)
                break
        else:
            skipped.append(f)
    return objs, skipped


def diagnostics_on_changed_lines(output, tree, changed):
    """The compiler and sparse diagnostics of OUTPUT that fall on the lines
    the series adds or changes (CHANGED from changed_lines).  What sparse
    calls an error (e.g. the __rcu address-space checks the base tree fails)
    counts, like a warning, only on the series' lines."""
    bad = []
    for line in output.splitlines():
        m = _DIAG.match(line.strip())
        if not m:
            continue
        path = os.path.relpath(os.path.abspath(os.path.join(tree, m.group(1))), tree)
        lines = changed.get(path, set())
        if path in changed and (lines is None or int(m.group(2)) in lines):
            bad.append(line.strip())
    return bad
