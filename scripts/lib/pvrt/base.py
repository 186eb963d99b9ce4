# SPDX-License-Identifier: GPL-2.0
"""Import a Linux 6.12.y base tree into a cached git repository.

The base is imported once per source (tarball checksum or git commit) into
``$PVRT_CACHE/base/<key>.git`` as a single commit with a fixed identity and
date, so that its hash, and with it every generated patch, is reproducible.
``refs/pvrt/base`` names that commit.

Debian's linux-source tarball carries one addition to the top-level
.gitignore that ignores everything at the top level; the import drops exactly
that stanza so git sees the files the series adds.  Nothing else is changed.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pvrt import gitutil, lock, logs
from pvrt.errors import PvrtError

DEFAULT_TARBALL = "/usr/src/linux-source-6.12.tar.xz"
BASE_REF = "refs/pvrt/base"
DEBIAN_STANZA = re.compile(
    r"\n#\n# Debian packaging: ignore everything at the top level, since it isn't\n"
    r"# included in our repository\n#\n/\*\n!/debian/\n$")
IDENT = {
    "GIT_AUTHOR_NAME": "PV-RT base import",
    "GIT_AUTHOR_EMAIL": "base@pvrt.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "PV-RT base import",
    "GIT_COMMITTER_EMAIL": "base@pvrt.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
}


def cache_dir():
    return os.environ.get("PVRT_CACHE") or os.path.expanduser("~/.cache/pvrt")


log = logs.logger("base")


def kernel_version(tree):
    """Return "6.12.N" read from a tree's top-level Makefile."""
    fields = {}
    if not os.path.isfile(os.path.join(tree, "Makefile")):
        raise PvrtError(f"{tree} is not a kernel tree (no top-level Makefile)")
    with open(os.path.join(tree, "Makefile"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)", line)
            if m:
                fields[m.group(1)] = m.group(2)
            if len(fields) == 4:
                break
    return "{}.{}.{}{}".format(fields.get("VERSION", "?"), fields.get("PATCHLEVEL", "?"),
                                fields.get("SUBLEVEL", "?"), fields.get("EXTRAVERSION", ""))


def check_612(tree):
    ver = kernel_version(tree)
    if not ver.startswith("6.12."):
        raise PvrtError(f"{tree} is Linux {ver}; the series targets 6.12.y")
    return ver


def drop_debian_stanza(tree):
    path = os.path.join(tree, ".gitignore")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = DEBIAN_STANZA.sub("", text)
    if new == text:
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return True


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def import_dir(gitdir, tree, label):
    """Commit the plain directory TREE into GITDIR as the base commit."""
    ver = check_612(tree)
    dropped = drop_debian_stanza(tree)
    env = dict(os.environ, **IDENT)
    git = ["git", "--git-dir", gitdir, "--work-tree", tree]
    log(f"importing Linux {ver} from {label} (this takes a minute)")
    subprocess.run(git + ["add", "-f", "-A", "."], check=True, env=env)
    msg = f"Linux {ver}\n\nImported from {label}.\n"
    if dropped:
        msg += ("\nDebian's ignore-everything stanza at the end of the top-level\n"
                ".gitignore was dropped; nothing else differs from the source.\n")
    tree_id = gitutil.out(git + ["write-tree"], env=env)
    commit = gitutil.out(git + ["commit-tree", tree_id, "-m", msg], env=env)
    gitutil.run(["git", "--git-dir", gitdir, "update-ref", BASE_REF, commit])
    return commit


def base_from_tarball(tarball):
    key = sha256_file(tarball)[:16]
    gitdir = os.path.join(cache_dir(), "base", key + ".git")
    if gitutil.has_ref(gitdir, BASE_REF):
        return gitdir
    os.makedirs(os.path.dirname(gitdir), exist_ok=True)
    tmp_git = gitdir + ".tmp"
    shutil.rmtree(tmp_git, ignore_errors=True)
    gitutil.run(["git", "init", "-q", "--bare", tmp_git])
    with tempfile.TemporaryDirectory(dir=os.path.dirname(gitdir)) as tmp:
        log(f"extracting {tarball}")
        subprocess.run(["tar", "-xf", tarball, "-C", tmp], check=True)
        entries = os.listdir(tmp)
        if len(entries) != 1:
            raise PvrtError(f"{tarball}: expected one top-level directory, got {entries}")
        import_dir(tmp_git, os.path.join(tmp, entries[0]), os.path.basename(tarball))
    os.rename(tmp_git, gitdir)
    return gitdir


def base_from_dir(src):
    """A directory: a git checkout (HEAD is the base) or a plain tree (imported)."""
    src = os.path.abspath(src)
    if os.path.isdir(os.path.join(src, ".git")) or os.path.isfile(os.path.join(src, ".git")):
        if gitutil.out(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"]):
            raise PvrtError(f"{src} has uncommitted changes; commit or stash them first")
        check_612(src)
        head = gitutil.out(["git", "-C", src, "rev-parse", "HEAD"])
        gitdir = os.path.join(cache_dir(), "base", "git-" + head[:16] + ".git")
        if not gitutil.has_ref(gitdir, BASE_REF):
            if os.path.exists(gitdir):
                shutil.rmtree(gitdir)
            gitutil.run(["git", "clone", "-q", "--bare", "--no-tags", "--single-branch",
                         src, gitdir])
            gitutil.run(["git", "--git-dir", gitdir, "update-ref", BASE_REF, head])
        return gitdir
    # A plain directory: import a copy, so the user's directory is left alone;
    # but first make sure it is a 6.12 tree, before copying anything.
    check_612(src)
    key = hashlib.sha256(src.encode()).hexdigest()[:16]
    gitdir = os.path.join(cache_dir(), "base", "dir-" + key + ".git")
    stamp = gitdir + ".stamp"
    if gitutil.has_ref(gitdir, BASE_REF) and os.path.exists(stamp) and not subprocess.run(
            ["find", src, "-newer", stamp, "-print", "-quit"], capture_output=True,
            text=True).stdout.strip():
        return gitdir                   # nothing in SRC changed since it was imported
    shutil.rmtree(gitdir, ignore_errors=True)
    os.makedirs(os.path.dirname(gitdir), exist_ok=True)
    with open(stamp, "w", encoding="utf-8"):
        pass                            # before the copy: an edit during it re-imports
    gitutil.run(["git", "init", "-q", "--bare", gitdir])
    with tempfile.TemporaryDirectory(dir=os.path.dirname(gitdir)) as tmp:
        subprocess.run(["cp", "-a", src + "/.", tmp], check=True)
        import_dir(gitdir, tmp, src)
    return gitdir


def base_repo(src=None):
    src = src or os.environ.get("KERNEL_SRC") or DEFAULT_TARBALL
    # One import at a time per cache: two clones share ~/.cache/pvrt/base.
    with lock.held(os.path.join(cache_dir(), "base"), "base cache", log):
        if os.path.isdir(src):
            return base_from_dir(src)
        if os.path.isfile(src):
            return base_from_tarball(src)
    if src == DEFAULT_TARBALL:
        raise PvrtError(f"{src} not found: run scripts/setup (installs linux-source-6.12)"
                         " or set KERNEL_SRC=<dir|tarball>")
    raise PvrtError(f"KERNEL_SRC={src}: no such file or directory")


def main(argv):
    src = argv[1] if len(argv) > 1 and argv[1] else None
    print(base_repo(src))


if __name__ == "__main__":
    main(sys.argv)
