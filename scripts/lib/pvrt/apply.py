# SPDX-License-Identifier: GPL-2.0
"""scripts/apply: put the series onto a 6.12.y tree as one commit per patch.

The commits are made first on a private index (the dry run); the tree, its
index and its refs are touched only when every patch applied.
"""

import argparse
import os
import shutil

from pvrt import base, build, gitutil, logs, series
from pvrt.errors import PvrtError, entry

APPLIED_REF = "refs/pvrt/applied"


log = logs.logger("apply")


def build_commits(top, gitdir, base_commit):
    builder = series.Builder(top, gitdir, base_commit)
    try:
        made = builder.build()
    finally:
        builder.close()
    for i, (patch, commit) in enumerate(made, 1):
        log(f"  [{i}/{len(made)}] {patch.subject}")
    return made


def is_git_tree(tree):
    return os.path.exists(os.path.join(tree, ".git"))


def apply_git_tree(top, tree):
    if gitutil.out(["git", "-C", tree, "status", "--porcelain", "--untracked-files=no"]):
        raise PvrtError(f"{tree} has uncommitted changes; nothing was applied")
    base.check_612(tree)
    gitdir = gitutil.out(["git", "-C", tree, "rev-parse", "--absolute-git-dir"])
    head = gitutil.out(["git", "-C", tree, "rev-parse", "HEAD"])
    log(f"dry run on a private index, base {head[:12]}")
    made = build_commits(top, gitdir, head)
    tip = made[-1][1]
    gitutil.run(["git", "-C", tree, "merge", "-q", "--ff-only", tip])
    gitutil.run(["git", "-C", tree, "update-ref", base.BASE_REF, head])
    gitutil.run(["git", "-C", tree, "update-ref", APPLIED_REF, tip])
    return tip


def apply_plain_tree(top, tree):
    """A plain directory: import it (in the cache) and dry-run there first."""
    cache_git = base.base_from_dir(tree)
    base_commit = gitutil.out(["git", "--git-dir", cache_git, "rev-parse", base.BASE_REF])
    log(f"dry run on a private index, base {base_commit[:12]}")
    made = build_commits(top, cache_git, base_commit)
    tip = made[-1][1]
    gitutil.run(["git", "-C", tree, "init", "-q"])
    gitutil.run(["git", "-C", tree, "fetch", "-q", cache_git,
                 f"{tip}:refs/heads/pvrt", f"{base.BASE_REF}:{base.BASE_REF}"])
    gitutil.run(["git", "-C", tree, "update-ref", APPLIED_REF, tip])
    gitutil.run(["git", "-C", tree, "checkout", "-q", "-f", "pvrt"])
    return tip


def refresh_workspace(top, ws, src, force):
    """build/linux: a clone of the base with the series applied from the
    sources, and build/linux-base beside it: a detached worktree at the base
    (refs/pvrt/base), where the "tree base" variants are built."""
    cache_git = base.base_repo(src)
    base_commit = gitutil.out(["git", "--git-dir", cache_git, "rev-parse", base.BASE_REF])
    if is_git_tree(ws):
        ws_base = gitutil.out(["git", "-C", ws, "rev-parse", "-q", "--verify", base.BASE_REF],
                              ) if gitutil.has_ref(os.path.join(ws, ".git"), base.BASE_REF) else ""
        if ws_base != base_commit:
            log(f"{ws} was made from another base; recreating it")
            build.remove_base_tree(ws, log=log)
            shutil.rmtree(ws)
    if not is_git_tree(ws):
        log(f"creating workspace {ws}")
        os.makedirs(os.path.dirname(ws), exist_ok=True)
        gitutil.run(["git", "init", "-q", ws])
        gitutil.run(["git", "-C", ws, "fetch", "-q", cache_git,
                     f"{base.BASE_REF}:{base.BASE_REF}"])
        gitutil.run(["git", "-C", ws, "checkout", "-q", "-B", "pvrt", base.BASE_REF])
        gitutil.run(["git", "-C", ws, "update-ref", APPLIED_REF, base.BASE_REF])
    else:
        head = gitutil.out(["git", "-C", ws, "rev-parse", "HEAD"])
        applied = gitutil.out(["git", "-C", ws, "rev-parse", APPLIED_REF])
        dirty = gitutil.out(["git", "-C", ws, "status", "--porcelain", "--untracked-files=no"])
        if (dirty or head != applied) and not force:
            raise PvrtError(
                f"{ws} has edits that are not in the repository"
                f" ({'uncommitted changes' if dirty else 'new commits'}).\n"
                "  Commit them in the workspace and run 'scripts/export --from', or rerun"
                " with --force to drop them.")
    gitdir = os.path.join(ws, ".git")
    log(f"dry run on a private index, base {base_commit[:12]}")
    made = build_commits(top, gitdir, base_commit)
    tip = made[-1][1]
    # reset rewrites only the files that differ, so make keeps its work for the rest.
    gitutil.run(["git", "-C", ws, "reset", "-q", "--hard" if force else "--keep", tip])
    gitutil.run(["git", "-C", ws, "update-ref", APPLIED_REF, tip])
    # The stock baselines ("tree base" variants) are built from the base
    # itself, in a detached worktree beside the workspace.
    build.ensure_base_tree(ws, log=log)
    return tip


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/apply",
        description="Apply the PV-RT series to a Linux 6.12.y tree, one git commit per patch.",
        epilog="examples:\n  scripts/apply                 # refresh the workspace build/linux\n"
               "  scripts/apply ~/src/linux-6.12  # a git checkout or a plain directory\n"
               "  KERNEL_SRC=/tmp/linux-6.12.9.tar.xz scripts/apply  # workspace from a tarball",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", nargs="?", help="tree to apply to (default: the workspace)")
    ap.add_argument("--force", action="store_true",
                    help="workspace only: drop workspace edits that were not exported")
    args = ap.parse_args(argv)
    top = os.environ["PVRT_TOP"]
    if args.tree:
        tree = os.path.abspath(args.tree)
        if not os.path.isdir(tree):
            raise PvrtError(f"{tree}: not a directory")
        tip = apply_git_tree(top, tree) if is_git_tree(tree) else apply_plain_tree(top, tree)
    else:
        tree = os.path.join(os.environ["PVRT_BUILD"], "linux")
        tip = refresh_workspace(top, tree, os.environ.get("KERNEL_SRC"), args.force)
    log(f"{tree} is at {tip[:12]}")
    print(tree)


if __name__ == "__main__":
    entry(main)
