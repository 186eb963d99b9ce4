# SPDX-License-Identifier: GPL-2.0
"""The patch series: its sources in the repository and the commits they make.

Sources (all in the repository):

  queue/config            author, date and base package of the series
  queue/series            patch names in order; '#' lines are banners
  queue/<name>/message    the commit message (subject, blank line, body, tags)
  queue/<name>/files      new files the patch adds, as repository paths
  queue/<name>/hook.diff  optional: the patch's edits to files it does not add
  MAINTAINERS             lines the series adds to existing MAINTAINERS entries

A repository path maps to its kernel path by dropping the component folder
(pv-mutex/, ikt/, ...); Documentation/ sits at its kernel path already.  Each
patch also brings MAINTAINERS up to date: the existing entries named in
./MAINTAINERS get the F: lines whose patterns match a file present after
that patch, so a patch that adds such files also adds them to MAINTAINERS
and no entry names a file that does not exist yet.

Commits are made with git plumbing on a temporary index, never touching a
work tree, with the identity and date from queue/config: the same sources on
the same base always give the same commit hashes.
"""

import fnmatch
import os
import re
import subprocess
import tempfile

from pvrt import gitutil

COMPONENTS = ("pv-mutex", "ikt", "kunit-tests", "rt-config")
MAINTAINERS_HEADER = "Maintainers List"


class SeriesError(SystemExit):
    pass


class Patch:
    def __init__(self, name, message, files, hook, banner):
        self.name = name
        self.message = message
        self.files = files          # [(repo path, kernel path)]
        self.hook = hook            # hook.diff text or ""
        self.banner = banner        # comment lines that precede it in queue/series

    @property
    def subject(self):
        return self.message.splitlines()[0]


def kernel_path(repo_path):
    first, _, rest = repo_path.partition("/")
    if first in COMPONENTS:
        if not rest:
            raise SeriesError(f"error: {repo_path}: a component folder is not a file")
        return rest
    return repo_path


def read_config(top):
    cfg = {}
    with open(os.path.join(top, "queue", "config"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, val = line.partition("=")
            cfg[key.strip()] = val.strip()
    for key in ("author", "date"):
        if key not in cfg:
            raise SeriesError(f"error: queue/config: no '{key} ='")
    return cfg


def ident_env(cfg):
    m = re.match(r"^(.*?)\s*<([^>]+)>$", cfg["author"])
    if not m:
        raise SeriesError(f"error: queue/config: author '{cfg['author']}' is not 'Name <email>'")
    name, email = m.groups()
    return {
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": cfg["date"],
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": cfg["date"],
    }


def load(top):
    """Read and validate the queue.  Returns [Patch]."""
    qdir = os.path.join(top, "queue")
    patches, banner, seen_files = [], [], {}
    with open(os.path.join(qdir, "series"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        if not line.strip():
            continue
        if line.startswith("#"):
            banner.append(line)
            continue
        name = line.strip()
        pdir = os.path.join(qdir, name)
        if not os.path.isdir(pdir):
            raise SeriesError(f"error: queue/series names '{name}' but queue/{name}/ is missing")
        with open(os.path.join(pdir, "message"), encoding="utf-8") as f:
            message = f.read()
        if not message.strip():
            raise SeriesError(f"error: queue/{name}/message is empty")
        files = []
        fpath = os.path.join(pdir, "files")
        if os.path.exists(fpath):
            with open(fpath, encoding="utf-8") as f:
                for entry in f.read().splitlines():
                    entry = entry.strip()
                    if not entry or entry.startswith("#"):
                        continue
                    if not os.path.isfile(os.path.join(top, entry)):
                        raise SeriesError(f"error: queue/{name}/files: {entry}: no such file")
                    if entry in seen_files:
                        raise SeriesError(f"error: {entry} is listed by both {seen_files[entry]}"
                                          f" and {name}; a new file belongs to one patch")
                    seen_files[entry] = name
                    files.append((entry, kernel_path(entry)))
        hook = ""
        hpath = os.path.join(pdir, "hook.diff")
        if os.path.exists(hpath):
            with open(hpath, encoding="utf-8") as f:
                hook = f.read()
        patches.append(Patch(name, message, files, hook, banner))
        banner = []
    if not patches:
        raise SeriesError("error: queue/series lists no patches")
    # Every file in a component folder must belong to a patch.
    for comp in COMPONENTS:
        cdir = os.path.join(top, comp)
        for root, _dirs, names in os.walk(cdir):
            for fname in names:
                rel = os.path.relpath(os.path.join(root, fname), top)
                if rel not in seen_files:
                    raise SeriesError(f"error: {rel} belongs to no patch: list it in one"
                                      " queue/<patch>/files")
    return patches


# --- text that must stand alone in the tree ---------------------------------

# In-tree text (the new files, the lines the hooks add) and the changelogs
# are read after merge, where no series, prep patch or project script exists,
# and by reviewers who have not read the paper the design started from: they
# say it in kernel terms (Documentation/locking/rt-mutex-design.rst's: PI
# chain, top waiter, boosting, deboost on unlock) and cite the paper at most as
# a reference, on a reference line (REFERENCE below).
# Words of a phrase may be split over lines, also in a comment (" * ") or a
# Kconfig help text.
_SP = r"(?:[ \t]|\n[ \t]*(?:\*|#|\+)?[ \t]*)+"


def _rx(pattern, flags=0):
    return re.compile(pattern.replace(" ", _SP), flags)


OUT_OF_TREE = [
    (_rx(r"\b(the|this|our|these) (PV-RT )?(patch )?series\b|\bPV-RT series\b", re.I),
     "names the series"),
    (_rx(r"\bprep(aratory)? patch\b", re.I), "names a patch of the series"),
    (re.compile(r"(?<![\w/.])scripts/(lock-advisor|bench-ikt|bench-pv-mutex|validate|torture|"
                r"check|trace-latency|throughput|devices-check|boot|build|apply|export|"
                r"latency-bisect|initramfs|setup)\b"), "names an out-of-tree command"),
    (_rx(r"\bmake (check|validate|conversions)\b"), "names an out-of-tree command"),
    (_rx(r"\bequations? \(?\d+\)?|\b(fig\.|figures?) \d+|\bYodaiken\b|"
         r"\b(the|protocol) paper\b|\bpaper's\b|\bHeursch\b", re.I),
     "argues from the paper (say it in kernel terms; cite it on a reference line)"),
]

# A line that only cites: a trailer (Link:) or a numbered reference, in a
# changelog, an rst page (".. [1]") or a C comment (" * [1]").
REFERENCE = re.compile(r"^\s*(\*\s*)?(Link:\s|(\.\.\s+)?\[\d+\]\s)")
# Changelog trailers name people and commits, not the series' text.
TRAILER = re.compile(r"^[A-Z][A-Za-z-]*-by:\s|^(Fixes|Cc|Link|Closes):\s")


def _scan(where, lines, skip, found):
    """Add "where:line: why: text" to FOUND for LINES [(lineno, text)],
    leaving out the lines SKIP matches; one report per line."""
    kept = [(n, "" if skip.match(t) else t) for n, t in lines]
    text = "\n".join(t for _n, t in kept)
    hits = {}
    for rx, why in OUT_OF_TREE:
        for m in rx.finditer(text):
            i = text.count("\n", 0, m.start())
            hits.setdefault(i, why)
    for i in sorted(hits):
        n, t = kept[i]
        found.append(f"{where}:{n}: {hits[i]}: {t.strip()}")


def out_of_tree_text(top, patches):
    """["path:line: why: text"] for in-tree text of PATCHES (new files'
    contents, hook lines added) and for their changelogs (queue/<patch>/message)
    that refer to the series or to the project's own commands, or argue from
    the paper instead of in kernel terms."""
    found = []
    for p in patches:
        for repo_path, kpath in p.files:
            with open(os.path.join(top, repo_path), encoding="utf-8",
                      errors="replace") as f:
                _scan(kpath, enumerate(f.read().splitlines(), 1), REFERENCE, found)
        added = [(n, line[1:]) for n, line in enumerate(p.hook.splitlines(), 1)
                 if line.startswith("+") and not line.startswith("+++")]
        _scan(f"queue/{p.name}/hook.diff", added, REFERENCE, found)
        msg = list(enumerate(p.message.splitlines(), 1))
        _scan(f"queue/{p.name}/message", msg,
              re.compile(f"{REFERENCE.pattern}|{TRAILER.pattern}"), found)
    return found


# --- MAINTAINERS ---------------------------------------------------------------

# ./MAINTAINERS lists, per existing entry of the kernel's MAINTAINERS (named by
# its title), the lines the series adds to it: files go to the entry that owns
# their subsystem (LOCKING PRIMITIVES, IRQ SUBSYSTEM), not to an entry of the
# series' own with its own M: and lists.
ADDABLE = ("R", "F", "X")
# The order of an entry's fields (MAINTAINERS' own preface).
FIELD_ORDER = "MRLSWQBCPTFXNK"


def read_entry(top):
    """[(title, [lines])] of ./MAINTAINERS: blocks separated by blank lines,
    '#' lines are comments."""
    blocks, cur = [], None
    with open(os.path.join(top, "MAINTAINERS"), encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = None
                continue
            if cur is None:
                if re.match(r"^[A-Z]:\t", line):
                    raise SeriesError(f"error: MAINTAINERS: '{line}' comes before the title"
                                      " of the entry it adds to")
                cur = (line.strip(), [])
                blocks.append(cur)
                continue
            tag, sep, _val = line.partition(":\t")
            if not sep or tag not in ADDABLE:
                raise SeriesError(
                    f"error: MAINTAINERS: {cur[0]}: '{line}': an addition to an existing"
                    f" entry carries only {', '.join(t + ':' for t in ADDABLE)} lines (the"
                    " entry keeps its maintainers and lists)")
            cur[1].append(line)
    return blocks


def pattern_matches(pattern, paths):
    if pattern.endswith("/"):
        return any(p.startswith(pattern) for p in paths)
    depth = pattern.count("/")
    return any(p.count("/") == depth and fnmatch.fnmatchcase(p, pattern) for p in paths)


def render_entry(entry, paths):
    """The additions with only the F:/X: lines that match a file in PATHS;
    a block without F: lines left is dropped."""
    out = []
    for title, lines in entry:
        kept, nfiles = [], 0
        for line in lines:
            tag, _, val = line.partition(":\t")
            if tag in ("F", "X"):
                if not pattern_matches(val.strip(), paths):
                    continue
                nfiles += tag == "F"
            kept.append(line)
        if nfiles:
            out.append((title, kept))
    return out


def _tag(line):
    m = re.match(r"^([A-Z]):\t", line)
    return m.group(1) if m else None


def update_maintainers(text, additions):
    """Add the lines of ADDITIONS [(title, [lines])] to the entries of
    MAINTAINERS TEXT with those titles, each in its field's place (F:/X:
    lines sorted among their kind).  Lines already there are kept once."""
    lines = text.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == MAINTAINERS_HEADER)
    except StopIteration:
        raise SeriesError("error: kernel MAINTAINERS has no 'Maintainers List' heading")
    for title, new in additions:
        head = next((i for i in range(start + 2, len(lines) - 1)
                     if lines[i] == title and not lines[i - 1] and _tag(lines[i + 1])), None)
        if head is None:
            raise SeriesError(f"error: MAINTAINERS: {title}: no such entry in the kernel's"
                              " MAINTAINERS; add the files to the entry that owns them")
        for line in new:
            end = head + 1
            while end < len(lines) and lines[end]:
                end += 1
            body = range(head + 1, end)
            if line in lines[head + 1:end]:
                continue
            tag = _tag(line)
            rank = FIELD_ORDER.index(tag)
            pos = end
            for i in body:
                t = _tag(lines[i])
                r = FIELD_ORDER.index(t) if t in FIELD_ORDER else len(FIELD_ORDER)
                if r > rank or (t == tag and tag in "FX" and lines[i] > line):
                    pos = i
                    break
            lines.insert(pos, line)
    return "\n".join(lines)


# --- building commits -------------------------------------------------------

class Builder:
    """Make the series' commits on top of BASE in GITDIR, on a private index."""

    def __init__(self, top, gitdir, base):
        self.top, self.gitdir, self.base = top, gitdir, base
        self.cfg = read_config(top)
        self.env = dict(os.environ, **ident_env(self.cfg))
        self.tmp = tempfile.TemporaryDirectory(prefix="pvrt-index-")
        self.env["GIT_INDEX_FILE"] = os.path.join(self.tmp.name, "index")
        self.git = ["git", "--git-dir", gitdir]

    def g(self, *args, **kw):
        return gitutil.out(self.git + list(args), env=self.env, **kw)

    def blob(self, data):
        res = subprocess.run(self.git + ["hash-object", "-w", "--stdin"], input=data,
                             capture_output=True, env=self.env, check=True)
        return res.stdout.decode().strip()

    def add(self, path, data, mode="100644"):
        self.g("update-index", "--add", "--cacheinfo", f"{mode},{self.blob(data)},{path}")

    def build(self):
        """Return [(Patch, commit)], raising SeriesError naming the patch that fails."""
        patches = load(self.top)
        entry = read_entry(self.top)
        self.g("read-tree", self.base)
        parent, made = self.base, []
        for patch in patches:
            for repo_path, kpath in patch.files:
                if self.g("ls-files", "--", kpath):
                    raise SeriesError(f"error: {patch.name}: {kpath} already exists in the tree")
                with open(os.path.join(self.top, repo_path), "rb") as f:
                    data = f.read()
                mode = "100755" if os.access(os.path.join(self.top, repo_path), os.X_OK) \
                    else "100644"
                self.add(kpath, data, mode)
            if patch.hook:
                res = subprocess.run(self.git + ["apply", "--cached", "--whitespace=nowarn", "-"],
                                     input=patch.hook, text=True, capture_output=True,
                                     env=self.env, cwd=self.tmp.name)
                if res.returncode:
                    raise SeriesError(f"error: {patch.name}: queue/{patch.name}/hook.diff does"
                                      f" not apply:\n{res.stderr.strip()}")
            paths = self.g("ls-files").split("\n")
            old = subprocess.run(self.git + ["cat-file", "blob", ":MAINTAINERS"],
                                 capture_output=True, env=self.env, check=True).stdout.decode()
            new = update_maintainers(old, render_entry(entry, paths))
            if new != old:
                self.add("MAINTAINERS", new.encode())
            tree = self.g("write-tree")
            if tree == self.g("rev-parse", parent + "^{tree}"):
                raise SeriesError(f"error: {patch.name}: the patch changes nothing")
            parent = self.g("commit-tree", tree, "-p", parent, input=patch.message)
            made.append((patch, parent))
        return made

    def close(self):
        self.tmp.cleanup()
