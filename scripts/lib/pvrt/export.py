# SPDX-License-Identifier: GPL-2.0
"""scripts/export: regenerate kernel-patches/ from the sources.

  scripts/export                 write kernel-patches/ from queue/ and the component folders
  scripts/export --from [TREE]   first take the workspace's commits back into the sources
  scripts/export --check         fail if kernel-patches/ is not what the sources generate
  scripts/export --reroll N      write postings/vN/, a posting marked [PATCH vN] whose cover
                                 letter carries the range-diff against postings/v(N-1)/

base-commit: when KERNEL_SRC is a git tree (a linux-stable checkout), its
HEAD is the base and the cover letter's base-commit line names it, so b4 and
the kernel test robot find it.  Debian's tarball (the default) is imported
into a local commit that no public tree has: the cover letter then names the
upstream release it corresponds to (v6.12.N, from the tree's Makefile) and
says how to get a base-commit line.
"""

import argparse
import difflib
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from pvrt import base, gitutil, logs, series
from pvrt.apply import APPLIED_REF
from pvrt.errors import PvrtError, entry

OUT_DIR = "kernel-patches"
COVER = "0000-cover-letter.txt"


log = logs.logger("export")


# --- workspace -> sources -------------------------------------------------------

def pull_from_tree(top, tree):
    """Copy the workspace's commits back into queue/ and the component folders."""
    gitdir = os.path.join(tree, ".git")
    if not gitutil.has_ref(gitdir, base.BASE_REF):
        raise PvrtError(f"{tree} was not made by scripts/apply (no {base.BASE_REF})")
    if gitutil.out(["git", "-C", tree, "status", "--porcelain", "--untracked-files=no"]):
        raise PvrtError(f"{tree} has uncommitted changes: commit (or amend) them first")
    commits = gitutil.out(["git", "-C", tree, "rev-list", "--reverse",
                           f"{base.BASE_REF}..HEAD"]).split()
    patches = series.load(top)
    if len(commits) != len(patches):
        raise PvrtError(f"{tree} has {len(commits)} commits on the base, queue/series"
                         f" {len(patches)} patches; add or drop the patch in queue/ first")
    changed = 0
    for patch, commit in zip(patches, commits):
        git = ["git", "-C", tree]
        msg = gitutil.run(git + ["log", "-1", "--format=%B", commit]).stdout.rstrip("\n") + "\n"
        qdir = os.path.join(top, "queue", patch.name)
        if msg != patch.message:
            with open(os.path.join(qdir, "message"), "w", encoding="utf-8") as f:
                f.write(msg)
            log(f"{patch.name}: message updated")
            changed += 1
        new_files = {kpath: rpath for rpath, kpath in patch.files}
        hook_paths = []
        status = gitutil.out(git + ["diff-tree", "-r", "--no-commit-id", "--name-status",
                                    f"{commit}^", commit])
        for line in status.splitlines():
            st, path = line.split("\t", 1)
            if path in new_files:
                data = subprocess.run(git + ["cat-file", "blob", f"{commit}:{path}"],
                                      capture_output=True, check=True).stdout
                dest = os.path.join(top, new_files[path])
                with open(dest, "rb") as f:
                    same = f.read() == data
                if not same:
                    with open(dest, "wb") as f:
                        f.write(data)
                    log(f"{patch.name}: {new_files[path]} updated")
                    changed += 1
            elif path == "MAINTAINERS":
                continue    # generated from the repository's MAINTAINERS
            elif st.startswith("A"):
                raise PvrtError(f"{patch.name} adds {path}, which queue/{patch.name}/files"
                                 " does not list: put it in its component folder and list it")
            else:
                hook_paths.append(path)
        hook_file = os.path.join(qdir, "hook.diff")
        hook = ""
        if hook_paths:
            hook = gitutil.run(git + ["diff", "--no-color", "--no-ext-diff", f"{commit}^", commit,
                                      "--"] + hook_paths).stdout
        if hook != patch.hook:
            if hook:
                with open(hook_file, "w", encoding="utf-8") as f:
                    f.write(hook)
            elif os.path.exists(hook_file):
                os.unlink(hook_file)
            log(f"{patch.name}: hook.diff updated")
            changed += 1
    # Round trip: the sources must now make exactly the workspace's tree.
    b = series.Builder(top, gitdir, gitutil.out(["git", "-C", tree, "rev-parse",
                                                 base.BASE_REF]))
    try:
        tip = b.build()[-1][1]
    finally:
        b.close()
    # MAINTAINERS is generated from ./MAINTAINERS, which may have changed since.
    differ = gitutil.out(["git", "-C", tree, "diff", "--name-only", tip, "HEAD", "--", ".",
                          ":(exclude)MAINTAINERS"])
    if differ:
        raise PvrtError("the sources do not reproduce the workspace in: "
                         + " ".join(differ.split()))
    # The workspace now matches the sources: let scripts/apply refresh it again.
    gitutil.run(["git", "-C", tree, "reset", "-q", "--soft", tip])
    gitutil.run(["git", "-C", tree, "update-ref", APPLIED_REF, tip])
    log(f"{changed} source file(s) updated from {tree}")


# --- sources -> kernel-patches/ -------------------------------------------------

def read_cover(top):
    with open(os.path.join(top, "queue", "cover-letter"), encoding="utf-8") as f:
        text = f.read().strip("\n")
    subject, _, blurb = text.partition("\n")
    return subject.strip(), blurb.strip("\n")


def base_note(top, gitdir, base_commit, upstream):
    """The cover letter's paragraph on the base when it is a local import."""
    if upstream:
        return ""
    ver = gitutil.out(["git", "--git-dir", gitdir, "log", "-1", "--format=%s", base_commit])
    ver = ver.replace("Linux ", "v", 1)
    pinned = series.read_config(top).get("debian_package", "")
    src = os.environ.get("KERNEL_SRC") or (f"Debian's {pinned.replace('=', ' ')}" if pinned
                                           else base.DEFAULT_TARBALL)
    return "\n\n" + textwrap.fill(
        f"Base: {ver} (linux-stable tag {ver}).  This posting was generated from {src},"
        " a tarball with no public commit, so it carries no base-commit line; regenerate"
        f" it with KERNEL_SRC=<a linux-stable checkout at {ver}> for one.", width=72)


def upstream_base(src=None):
    """True when the base is a git tree's HEAD (a commit upstream can have)."""
    src = src or os.environ.get("KERNEL_SRC") or base.DEFAULT_TARBALL
    return os.path.isdir(src) and (os.path.exists(os.path.join(src, ".git")))


def previous_tip(top, gitdir, base_commit, prev_dir, env):
    """Re-create the series of an earlier posting (its patches applied to the
    base) in GITDIR; returns its tip, for git range-diff."""
    patches = sorted(os.path.join(prev_dir, n) for n in os.listdir(prev_dir)
                     if n.endswith(".patch") and not n.endswith("0000-cover-letter.patch"))
    if not patches:
        raise PvrtError(f"{prev_dir}: no patches of an earlier posting")
    with tempfile.TemporaryDirectory(prefix="pvrt-prev-") as tmp:
        wt = os.path.join(tmp, "wt")
        gitutil.run(["git", "clone", "-q", "--shared", "--no-checkout", gitdir, wt])
        gitutil.run(["git", "-C", wt, "checkout", "-q", "--detach", base_commit])
        gitutil.run(["git", "-C", wt, "am", "-q", "--keep-cr"] + patches, env=env)
        tip = gitutil.out(["git", "-C", wt, "rev-parse", "HEAD"])
        gitutil.run(["git", "--git-dir", gitdir, "fetch", "-q", wt,
                     f"{tip}:refs/pvrt/previous"])
    return tip


def generate(top, outdir, reroll=None, previous=None):
    """Write the series (patches, cover letter, quilt series file) into OUTDIR.

    REROLL N marks it as the Nth version; PREVIOUS, the directory of an
    earlier posting, puts the range-diff against it in the cover letter.
    """
    gitdir = base.base_repo(os.environ.get("KERNEL_SRC"))
    base_commit = gitutil.out(["git", "--git-dir", gitdir, "rev-parse", base.BASE_REF])
    upstream = upstream_base()
    builder = series.Builder(top, gitdir, base_commit)
    try:
        made = builder.build()
        env = builder.env
    finally:
        builder.close()
    tip = made[-1][1]
    cfg = series.read_config(top)
    os.makedirs(outdir, exist_ok=True)
    genv = {k: v for k, v in env.items() if k != "GIT_INDEX_FILE"}
    extra = ["--base", base_commit] if upstream else []
    if reroll:
        extra += ["--reroll-count", str(reroll)]
    if previous:
        old = previous_tip(top, gitdir, base_commit, previous, genv)
        extra += [f"--range-diff={base_commit}..{old}", "--creation-factor=80"]
    gitutil.run(["git", "--git-dir", gitdir, "-c", "core.abbrev=12", "-c",
                 "format.useAutoBase=false", "format-patch", "-q",
                 "--no-signature", "--cover-letter", *extra,
                 "--subject-prefix", cfg.get("subject_prefix", "PATCH"),
                 "-o", outdir, f"{base_commit}..{tip}"], env=genv)
    subject, blurb = read_cover(top)
    blurb += base_note(top, gitdir, base_commit, upstream)
    cover_in = [os.path.join(outdir, n) for n in os.listdir(outdir)
                if n.endswith("0000-cover-letter.patch")][0]
    with open(cover_in, encoding="utf-8") as f:
        text = f.read()
    if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
        raise PvrtError("git format-patch wrote an unexpected cover letter template")
    text = text.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
    with open(os.path.join(outdir, COVER), "w", encoding="utf-8") as f:
        f.write(text)
    os.unlink(cover_in)
    names = sorted(n for n in os.listdir(outdir) if n.endswith(".patch"))
    if reroll:
        # A posting is what gets mailed: patches and cover letter, no quilt file.
        os.replace(os.path.join(outdir, COVER),
                   os.path.join(outdir, f"v{reroll}-0000-cover-letter.patch"))
        return made
    if len(names) != len(made):
        raise PvrtError(f"format-patch wrote {len(names)} patches for {len(made)} commits")
    version = gitutil.out(["git", "--git-dir", gitdir, "log", "-1", "--format=%s", base_commit])
    lines = ["# PV-RT: the PV priority-inheritance mutex and interrupt kernel threads",
             "# for Linux 6.12.y.  Generated by scripts/export from queue/; do not edit.",
             f"# Base: {version}, " + (f"base-commit {base_commit}." if upstream else
                                      f"a local import ({base_commit[:12]})."),
             "# Apply with 'git am kernel-patches/*.patch' or 'quilt push -a'.",
             ""]
    for (patch, _commit), name in zip(made, names):
        lines.extend(patch.banner)
        lines.append(name)
    with open(os.path.join(outdir, "series"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return made


def compare(expected_dir, actual_dir):
    """Return a list of human-readable differences between two directories."""
    problems = []
    exp = set(os.listdir(expected_dir)) if os.path.isdir(expected_dir) else set()
    act = set(os.listdir(actual_dir))
    for name in sorted(act - exp):
        problems.append(f"missing from {OUT_DIR}/: {name}")
    for name in sorted(exp - act):
        problems.append(f"stale file in {OUT_DIR}/: {name}")
    for name in sorted(exp & act):
        a, b = os.path.join(expected_dir, name), os.path.join(actual_dir, name)
        if not filecmp.cmp(a, b, shallow=False):
            with open(a, encoding="utf-8", errors="replace") as fa, \
                    open(b, encoding="utf-8", errors="replace") as fb:
                diff = list(difflib.unified_diff(fa.readlines(), fb.readlines(),
                                                 f"{OUT_DIR}/{name}", "generated", n=1))
            problems.append(f"differs: {name}\n" + "".join(diff[:40]))
    return problems


def post(top, n):
    """postings/vN/: the series as mailed for version N."""
    dest = os.path.join(top, "postings", f"v{n}")
    if os.path.exists(dest):
        raise PvrtError(f"{dest} exists: a posting is a record, pick the next N")
    prev = os.path.join(top, "postings", f"v{n - 1}")
    prev = prev if n > 1 and os.path.isdir(prev) else None
    if n > 1 and not prev:
        log(f"no postings/v{n - 1}/: v{n} goes out without a range-diff")
    with tempfile.TemporaryDirectory(prefix="pvrt-post-") as tmp:
        made = generate(top, tmp, reroll=n, previous=prev)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copytree(tmp, dest)
    log(f"wrote {len(made)} patches and the cover letter to postings/v{n}/"
        + (f", range-diff against postings/v{n - 1}/" if prev else ""))
    print(dest)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/export", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from", dest="from_tree", nargs="?", const="", metavar="TREE",
                    help="take edits from TREE's commits first (default TREE: build/linux)")
    ap.add_argument("--check", action="store_true",
                    help="only compare: exit 1 when kernel-patches/ is stale")
    ap.add_argument("--reroll", type=int, metavar="N",
                    help="write postings/vN/ ([PATCH vN]) with the range-diff against"
                         " postings/v(N-1)/ when it exists")
    args = ap.parse_args(argv)
    top = os.environ["PVRT_TOP"]
    if args.reroll is not None:
        if args.reroll < 1 or args.check or args.from_tree is not None:
            raise PvrtError("--reroll takes N >= 1 and goes with neither --check nor --from")
        return post(top, args.reroll)
    if args.check and args.from_tree is not None:
        raise PvrtError("--check and --from do not go together")
    if args.from_tree is not None:
        tree = args.from_tree or os.path.join(os.environ["PVRT_BUILD"], "linux")
        pull_from_tree(top, os.path.abspath(tree))
    outdir = os.path.join(top, OUT_DIR)
    with tempfile.TemporaryDirectory(prefix="pvrt-export-") as tmp:
        made = generate(top, tmp)
        problems = compare(outdir, tmp)
        if args.check:
            if problems:
                print("\n".join(problems), file=sys.stderr)
                raise PvrtError(f"{OUT_DIR}/ is stale: run scripts/export and commit")
            stray = series.out_of_tree_text(top, series.load(top))
            if stray:
                print("\n".join(stray), file=sys.stderr)
                raise PvrtError(f"{len(stray)} line(s) of in-tree text refer to the series or"
                                " to the project's commands, which do not exist after merge")
            log(f"{OUT_DIR}/ matches the sources ({len(made)} patches)")
            return
        if os.path.isdir(outdir):
            shutil.rmtree(outdir)
        shutil.copytree(tmp, outdir)
    log(f"wrote {len(made)} patches to {OUT_DIR}/"
        + (f" ({len(problems)} file(s) changed)" if problems else " (unchanged)"))


if __name__ == "__main__":
    entry(main)
