# SPDX-License-Identifier: GPL-2.0
"""Thin wrappers around the git command line."""

import subprocess
from pvrt.errors import PvrtError


def run(cmd, **kw):
    """Run CMD, raising SystemExit with git's own message on failure."""
    res = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if res.returncode:
        raise PvrtError(f"{' '.join(cmd)}:\n{res.stderr.strip() or res.stdout.strip()}")
    return res


def out(cmd, **kw):
    return run(cmd, **kw).stdout.strip()


def has_ref(gitdir, ref):
    res = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "-q", "--verify", ref],
                         capture_output=True, text=True)
    return res.returncode == 0
