# SPDX-License-Identifier: GPL-2.0
"""Thin wrappers around the git command line."""

import os
import shutil
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


def ensure_worktree(repo, wt, commit):
    """WT as a worktree of REPO checked out at COMMIT, repairing a stale one.

    A worktree whose repository was re-created (scripts/apply makes a new
    build/linux) keeps a .git file pointing at a gitdir that no longer
    exists: every git command in it fails.  Such a directory, or one that
    belongs to another repository, is removed and added again.
    """
    res = subprocess.run(["git", "-C", wt, "rev-parse", "--path-format=absolute",
                          "--git-common-dir"], capture_output=True, text=True)
    mine = os.path.realpath(os.path.join(repo, ".git"))
    if res.returncode or os.path.realpath(res.stdout.strip()) != mine:
        shutil.rmtree(wt, ignore_errors=True)
        run(["git", "-C", repo, "worktree", "prune"])
        run(["git", "-C", repo, "worktree", "add", "-q", "--detach", wt, commit])
    else:
        run(["git", "-C", wt, "checkout", "-q", "--detach", commit])
