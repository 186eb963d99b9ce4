# SPDX-License-Identifier: GPL-2.0
"""scripts/build: build a kernel variant from config fragments.

A variant is a file in variants/ with one directive a line:

  arch x86_64                    the kernel architecture
  base x86_64_defconfig          start from this make target, not allnoconfig
  fragment variants/f.config     a fragment from the repository
  fragment tree:kernel/configs/pv_rt.config   a fragment from the kernel tree
  fragment series-kunitconfigs   every .kunitconfig the series adds
  fragment without-series        every option the series adds, off (a tuned stock
                                 kernel: the project's fragments without its code)
  tree base                      configure and build from the series' base commit
                                 (refs/pvrt/base, the pristine 6.12.y), not from the
                                 series tree: a stock baseline is stock code
  same-build stock               no build of its own: boots another variant's kernel
  cmdline threadirqs             kernel parameters the boot adds

The configuration is allnoconfig plus the fragments (KCONFIG_ALLCONFIG), or
the "base" target's configuration with the fragments merged into it
(scripts/kconfig/merge_config.sh), and every fragment line is checked against
the resulting .config: an option that Kconfig silently dropped (a missing
dependency, a typo) is an error.  With a user's .config (scripts/validate
--kernel-config) that file replaces allnoconfig or the base target, the build
goes to build/out/<variant>-kc-<digest of the file>, and the options the
fragments had to change in it are listed.

A "tree base" variant (stock, stock-tuned, stock-pcp0, board-stock, rt) runs
make in the base worktree: a detached git worktree of the series tree at
its refs/pvrt/base, beside it (build/linux-base for build/linux), which
scripts/apply and every configure of such a variant create, or bring back
to the base (only a worktree they made: anything else at that path is
refused); make writes nothing there (O=).  Its fragments still come
from the series tree and the repository, its build goes to
build/out/<variant>-base, and the build directory records the commit it
came from (pvrt-source.json).
"""

import argparse
import hashlib
import json
import os
import shutil
import re
import subprocess
import time

from pvrt import lock, logs, series
from pvrt.errors import PvrtError, entry

CONFIG_LINE = re.compile(r"^(CONFIG_\w+)=(.*)$|^# (CONFIG_\w+) is not set$")


# Added to a variant built from a base target (scripts/validate --base).
PRODUCT_FRAGMENT = "variants/fragments/product.config"
PRODUCT_THP_FRAGMENT = "variants/fragments/product-thp.config"
RT_FRAGMENT = "variants/fragments/preempt-rt.config"


class Variant:
    def __init__(self, name, top, base_config=None, base_target=None):
        """BASE_TARGET (e.g. x86_64_defconfig): start from that make target
        where the variant file names none (scripts/validate --base)."""
        self.name = name
        self.base_config = base_config
        self.base_target = base_target
        path = os.path.join(top, "variants", name)
        if not os.path.isfile(path):
            known = sorted(n for n in os.listdir(os.path.join(top, "variants"))
                           if os.path.isfile(os.path.join(top, "variants", n))
                           and not n.endswith(".config"))
            raise PvrtError(f"no variant '{name}' (known: {', '.join(known)})")
        self.arch, self.fragments, self.cmdline, self.same_build = "x86_64", [], [], None
        self.base = None
        self.tree, tree_line = "series", None
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                key, _, val = line.partition(" ")
                if key == "arch":
                    self.arch = val
                elif key == "fragment":
                    self.fragments.append(val)
                elif key == "cmdline":
                    self.cmdline.append(val)
                elif key == "same-build":
                    self.same_build = val
                elif key == "base":
                    if not re.fullmatch(r"[\w.-]+config", val):
                        raise PvrtError(f"variants/{name}:{lineno}: base '{val}'"
                                         " is not a *config make target")
                    self.base = val
                elif key == "tree":
                    if val not in TREES:
                        raise PvrtError(f"variants/{name}:{lineno}: tree '{val}': known"
                                         f" trees are {', '.join(TREES)}")
                    self.tree = val
                    tree_line = lineno
                else:
                    raise PvrtError(f"variants/{name}:{lineno}: unknown '{key}'")
        if self.same_build:
            # Its kernel is the other variant's: so is the tree it is built from.
            if tree_line:
                raise PvrtError(f"variants/{name}:{tree_line}: 'tree' with 'same-build':"
                                f" the kernel is {self.same_build}'s, built from its tree")
            built = Variant(self.same_build, top)
            if built.same_build:
                raise PvrtError(f"variants/{name}: same-build {self.same_build}, which boots"
                                f" {built.same_build}'s build: name {built.same_build}")
            self.tree = built.tree
        if base_target and not self.base:
            self.base = base_target
            self.fragments.append(PRODUCT_FRAGMENT)
            if RT_FRAGMENT not in self.fragments:
                self.fragments.append(PRODUCT_THP_FRAGMENT)
        else:
            self.base_target = None         # the variant's own base stands

    @property
    def build_name(self):
        return self.same_build or self.name

    @property
    def from_base(self):
        """Built from the series' base commit (directive "tree base")."""
        return self.tree == "base"

    @property
    def out_name(self):
        """The build directory's name under build/out: a kernel built from
        the base ends in -base, apart from one of the series tree."""
        if not self.base_config:
            name = self.name + (f"-{self.base_target}" if self.base_target else "")
        else:
            with open(self.base_config, "rb") as f:
                name = f"{self.name}-kc-{hashlib.sha256(f.read()).hexdigest()[:10]}"
        return name + ("-base" if self.from_base else "")


def out_dir(top, name, bdir=None, base_target=None):
    """The build directory of the kernel variant NAME boots (its same-build's),
    built from BASE_TARGET (scripts/validate --base defconfig) if given."""
    var = Variant(Variant(name, top).build_name, top, base_target=base_target)
    return os.path.join(bdir or os.environ["PVRT_BUILD"], "out", var.out_name)


def parse_fragment(text):
    """{CONFIG_X: value} for the assignments in a fragment ('n' for 'is not set')."""
    vals = {}
    for line in text.splitlines():
        m = CONFIG_LINE.match(line.strip())
        if m:
            if m.group(1):
                vals[m.group(1)] = m.group(2).strip('"') if m.group(2).startswith('"') \
                    else m.group(2)
            else:
                vals[m.group(3)] = "n"
    return vals


# A .kunitconfig whose comments say "x86_64 only" (e.g. the IKT suite: UML
# cannot force-thread interrupts) is left out of UML builds.
ONLY_ARCH = re.compile(r"^#.*\b(x86_64) only\b", re.M)


def kunitconfig_arch(path):
    """The one architecture a .kunitconfig is restricted to, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            m = ONLY_ARCH.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def series_kunitconfigs(top, tree, arch=None):
    """Every .kunitconfig the series adds; for ARCH, those that run there."""
    paths = []
    for patch in series.load(top):
        for _repo, kpath in patch.files:
            if os.path.basename(kpath) == ".kunitconfig":
                path = os.path.join(tree, kpath)
                only = kunitconfig_arch(path)
                if arch is None or only is None or only == arch:
                    paths.append(path)
    return paths


# The trees a variant can be built from ("tree" directive): the series tree
# (the default) or its base commit.
TREES = ("series", "base")
BASE_SUFFIX = "-base"


def base_tree(tree):
    """The base worktree beside series tree TREE: build/linux-base for build/linux."""
    return os.path.normpath(tree) + BASE_SUFFIX


def _git(*args, check=True):
    res = subprocess.run(["git", *args], capture_output=True, text=True)
    if check and res.returncode:
        raise PvrtError(f"git {' '.join(args)}:\n{(res.stderr or res.stdout).strip()}")
    return res


# In the git admin directory of a base worktree ensure_base_tree() made:
# only such a worktree is ever checked out again or removed.
BASE_MARK = "pvrt-base-worktree"


def _own_base_tree(tree, path):
    """Whether PATH is the base worktree of TREE that ensure_base_tree()
    made: a git worktree of TREE's repository whose admin directory carries
    BASE_MARK.  A clone, a user's own worktree, anything else is not."""
    if not os.path.isfile(os.path.join(path, ".git")) or os.path.islink(path):
        return False
    admin = _git("-C", path, "rev-parse", "--absolute-git-dir", check=False)
    common = _git("-C", path, "rev-parse", "--path-format=absolute", "--git-common-dir",
                  check=False)
    mine = _git("-C", tree, "rev-parse", "--path-format=absolute", "--git-common-dir"
                ).stdout.strip()
    if admin.returncode or common.returncode:
        return False
    return os.path.realpath(common.stdout.strip()) == os.path.realpath(mine) and \
        os.path.isfile(os.path.join(admin.stdout.strip(), BASE_MARK))


def remove_base_tree(tree, log=print):
    """Remove the base worktree of TREE (before TREE itself is removed),
    when it is the one ensure_base_tree() made; anything else at its path
    is left alone."""
    path = base_tree(tree)
    if os.path.lexists(path) and _own_base_tree(tree, path):
        log(f"removing the base worktree {path}")
        _git("-C", tree, "worktree", "remove", "--force", path)


def ensure_base_tree(tree, log=print):
    """Put the base worktree of series tree TREE (base_tree()) at TREE's
    refs/pvrt/base: created (a detached git worktree of TREE, marked as
    ours in its admin directory) when missing, moved when the base changed,
    checked out again when a file in it was changed.  Anything else at that
    path (a clone, a user's own worktree, a worktree of a removed TREE) is
    refused and left as it is.  Returns its path.  make runs in it with O=."""
    path = base_tree(tree)
    want = _git("-C", tree, "rev-parse", "-q", "--verify", BASE_REF + "^{commit}",
                check=False).stdout.strip()
    if not want:
        raise PvrtError(f"{tree} has no {BASE_REF}: is it a tree of scripts/apply?"
                        " (run scripts/apply)")
    if os.path.lexists(path):
        if not _own_base_tree(tree, path):
            raise PvrtError(f"{path} exists and is not the base worktree scripts/apply made"
                            f" for {tree}; move it away (the stock baselines are built there)")
        head = _git("-C", path, "rev-parse", "-q", "--verify", "HEAD", check=False)
        dirty = _git("-C", path, "status", "--porcelain", "--untracked-files=no").stdout
        if head.stdout.strip() == want and not dirty:
            return path
        log(f"{path}: moving to the base {want[:12]}"
            + (" (its changed files are checked out again)" if dirty else ""))
        _git("-C", path, "checkout", "-q", "-f", "--detach", want)
        return path
    log(f"creating the base worktree {path} at {want[:12]}")
    # -f: PATH may still be registered (its directory deleted); no other
    # worktree entry of TREE is touched.
    _git("-C", tree, "worktree", "add", "-q", "-f", "--detach", path, want)
    admin = _git("-C", path, "rev-parse", "--absolute-git-dir").stdout.strip()
    with open(os.path.join(admin, BASE_MARK), "w", encoding="utf-8") as f:
        f.write("the base worktree scripts/apply and scripts/build made\n")
    return path


def make_tree(tree, variant, ensure=True):
    """The tree make runs in for VARIANT: TREE, or its base worktree
    (brought to refs/pvrt/base when ENSURE)."""
    if not variant.from_base:
        return tree
    return ensure_base_tree(tree) if ensure else base_tree(tree)


def source_record(tree, variant):
    """{"tree": "series" or "base", "commit": ..., "dirty": ...}: what
    VARIANT's kernel is built from in series tree TREE (the base commit for
    a "tree base" variant, the tree's HEAD otherwise), and whether the tree
    make runs in has changes to tracked files that commit lacks (None: not
    a git tree)."""
    ref = BASE_REF if variant.from_base else "HEAD"
    res = _git("-C", tree, "rev-parse", "-q", "--verify", ref + "^{commit}", check=False)
    status = _git("-C", make_tree(tree, variant, ensure=False), "status", "--porcelain",
                  "--untracked-files=no", check=False)
    return {"tree": variant.tree, "commit": res.stdout.strip() or None,
            "dirty": bool(status.stdout.strip()) if not status.returncode else None}


SOURCE_FILE = "pvrt-source.json"


def built_from(out):
    """The record source_record() left in build directory OUT, or None."""
    try:
        with open(os.path.join(out, SOURCE_FILE), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def source_text(out):
    """What the kernel in OUT was built from, as results record it ("base
    <commit>" or "series <commit>", "+dirty" after it when the tree had
    changes the commit lacks), or None (built by an older version)."""
    rec = built_from(out)
    if not rec or not rec.get("commit"):
        return None
    return f"{rec.get('tree', 'series')} {rec['commit'][:12]}" + \
        ("+dirty" if rec.get("dirty") else "")


# A Kconfig entry: "config FOO" or "menuconfig FOO" at the start of a line.
KCONFIG_ENTRY = re.compile(r"^(?:menu)?config\s+(\w+)\s*$")
KCONFIG_END = re.compile(r"^(?:(?:menu)?config|menu|endmenu|choice|endchoice|if|endif|source"
                         r"|comment)\b")
KCONFIG_TYPE = re.compile(r"^\s+(bool|tristate|int|hex|string|def_bool|def_tristate)\b")
KCONFIG_SELECT = re.compile(r"^\s+select\s+(\w+)")
BASE_REF = "refs/pvrt/base"


def kconfig_entries(text):
    """{symbol: (type, [selected symbols])} for the entries of a Kconfig text."""
    out, cur = {}, None
    for line in text.splitlines():
        m = KCONFIG_ENTRY.match(line)
        if m:
            cur = out.setdefault(m.group(1), [None, []])
            continue
        if KCONFIG_END.match(line):
            cur = None
        elif cur is not None:
            t, sel = KCONFIG_TYPE.match(line), KCONFIG_SELECT.match(line)
            if t and cur[0] is None:
                cur[0] = {"def_bool": "bool", "def_tristate": "tristate"}.get(t.group(1),
                                                                             t.group(1))
            if sel:
                cur[1].append(sel.group(1))
    return {k: (v[0], v[1]) for k, v in out.items()}


def kconfig_symbols(text):
    """The symbols a Kconfig text defines."""
    return {m.group(1) for m in map(KCONFIG_ENTRY.match, text.splitlines()) if m}


def _git_kconfig(tree, *ref, files_only=False):
    res = subprocess.run(["git", "-C", tree, "grep", "-l" if files_only else "-h", "-E",
                          r"^(menu)?config\s", *ref, "--", "*Kconfig*"],
                         capture_output=True, text=True, errors="replace")
    if res.returncode not in (0, 1):
        raise PvrtError(f"{tree}: cannot list the series' Kconfig symbols against"
                        f" {ref[0] if ref else 'its work tree'} (is it a workspace of"
                        f" scripts/apply?): {res.stderr.strip()}")
    return res.stdout


def series_entries(tree, base=BASE_REF):
    """{symbol: (type, selects)} of the Kconfig symbols the series adds: defined
    by a Kconfig file of TREE's work tree and by none of BASE's (scripts/apply
    keeps the base's commit as refs/pvrt/base)."""
    ours = kconfig_symbols(_git_kconfig(tree)) - kconfig_symbols(_git_kconfig(tree, base))
    entries = {}
    for name in _git_kconfig(tree, files_only=True).split():
        with open(os.path.join(tree, name), encoding="utf-8", errors="replace") as f:
            entries.update({k: v for k, v in kconfig_entries(f.read()).items() if k in ours})
    return entries


def series_symbols(tree, base=BASE_REF):
    """CONFIG_ names the series adds (series_entries())."""
    return {f"CONFIG_{x}" for x in series_entries(tree, base)}


def without_series_text(tree):
    """A fragment turning off every bool or tristate option the series adds
    (the others depend on them)."""
    return "".join(f"# CONFIG_{x} is not set\n" for x, (t, _) in
                   sorted(series_entries(tree).items()) if t in ("bool", "tristate"))


def config_difference(a_text, b_text):
    """{CONFIG_X: (value in A, value in B)} for every option two .config
    texts resolve differently ('n' for unset)."""
    a, b = parse_fragment(a_text), parse_fragment(b_text)
    return {k: (a.get(k, "n"), b.get(k, "n")) for k in sorted(set(a) | set(b))
            if a.get(k, "n") != b.get(k, "n")}


def not_series_difference(a_config, b_config, tree):
    """The options two .config files (paths) resolve differently that the
    series does not add, as "CONFIG_X: a / b" lines: for a variant that
    claims to differ from the project only by the project's own code,
    the list must be empty."""
    with open(a_config, encoding="utf-8") as f, open(b_config, encoding="utf-8") as g:
        diff = config_difference(f.read(), g.read())
    entries = series_entries(tree)
    # An option the series adds, or one that only such an option selects.
    ours = {f"CONFIG_{x}" for x in entries}
    ours |= {f"CONFIG_{y}" for _t, sel in entries.values() for y in sel}
    return [f"{k}: {a} / {b}" for k, (a, b) in diff.items() if k not in ours]


def fragment_text(top, tree, variant, strict=True):
    """The variant's fragments as one text.  STRICT=False (a commit in the
    middle of the series) leaves out the fragments the tree has no file for."""
    parts = []
    for frag in variant.fragments:
        if frag == "without-series":
            parts.append(f"# --- {frag}\n" + without_series_text(tree))
            continue
        if frag == "series-kunitconfigs":
            files = series_kunitconfigs(top, tree)
        elif frag.startswith("tree:"):
            files = [os.path.join(tree, frag[5:])]
        else:
            files = [os.path.join(top, frag)]
        for path in files:
            if not os.path.isfile(path):
                if not strict:
                    continue
                raise PvrtError(f"variant {variant.name}: fragment {path} not found"
                                 " (is the series applied? run scripts/apply)")
            with open(path, encoding="utf-8") as f:
                parts.append(f"# --- {frag}: {os.path.basename(path)}\n" + f.read())
    return "\n".join(parts)


BENCH_FRAGMENT = "variants/fragments/bench.config"
DEBUG_FRAGMENTS = ("variants/fragments/debug.config", "variants/fragments/lockstat.config")
# Boots of a kernel with the KUnit suites built in that do not count their
# results: the suites do not run (kunit.enable is KUnit's own switch).
NO_KUNIT = "kunit.enable=0"


def debug_twin(top):
    """The one debug kernel of 'make check': the project kernel with lockdep,
    raw lock nesting, atomic-sleep checks, rt_mutex debugging, KASAN, UBSAN
    and lock statistics.  Torture's debug scenarios, the lockdep boot and the
    debug KUnit run all boot it.  Its KUnit suites stay built in: the boots
    that do not count them pass NO_KUNIT, so that no intended deadlock of a
    suite switches lockdep off before the boot's own work.  The benchmark
    modules are left out (they refuse lockdep)."""
    return twin(top, "project", "debug", add=DEBUG_FRAGMENTS, drop=(BENCH_FRAGMENT,))


def twin(top, name, suffix, add=(), drop=(), base_config=None, base_target=None):
    """Variant NAME's kernel with the fragments ADD and without DROP, built
    apart as <build name>-<SUFFIX> and booted with NAME's kernel parameters:
    the traced and the lock-statistics kernels of an experiment.  BASE_CONFIG
    and BASE_TARGET as for Variant: a twin of a kernel measured from
    x86_64_defconfig starts from it too (its out_name says so)."""
    var = Variant(name, top)
    t = Variant(var.build_name, top, base_config=base_config, base_target=base_target)
    t.name = f"{var.build_name}-{suffix}"
    t.fragments = [f for f in t.fragments if f not in drop] + list(add)
    t.cmdline = var.cmdline
    return t


def check_config(want_text, config_path, skip=()):
    """Return the fragment lines that did not take effect in CONFIG_PATH,
    but for the options in SKIP."""
    with open(config_path, encoding="utf-8") as f:
        have = parse_fragment(f.read())
    bad = []
    for key, val in parse_fragment(want_text).items():
        if key in skip:
            continue
        got = have.get(key, "n")
        if got != val:
            bad.append(f"{key}: wanted {val}, got {got}")
    return bad


def make_cmd(out, arch, *targets, extra=()):
    from pvrt.tools import cc
    return ["make", "-s", f"O={out}", f"ARCH={arch}", f"CC={cc()}", f"-j{jobs()}",
            *extra, *targets]


def jobs():
    return os.environ.get("PVRT_JOBS") or str(os.cpu_count() or 2)


def configure(top, tree, variant, out, strict=True):
    """Write OUT/.config for VARIANT; returns the options the fragments changed
    in a user's .config.  STRICT=False, for a commit in the middle of the
    series: fragments the tree has no file for are left out, and lines that
    did not take effect (options a later commit adds) are returned, not an
    error.  A "tree base" variant is configured in TREE's base worktree
    (ensure_base_tree()) from the fragments of TREE."""
    os.makedirs(out, exist_ok=True)
    mtree = make_tree(tree, variant)
    text = fragment_text(top, tree, variant, strict)
    frag = os.path.join(out, "pvrt-fragment.config")
    with open(frag, "w", encoding="utf-8") as f:
        f.write(text)
    added = []
    if variant.base_config:
        shutil.copyfile(variant.base_config, os.path.join(out, ".config"))
        subprocess.run(make_cmd(out, variant.arch, "olddefconfig"), cwd=mtree, check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(out, ".config"), encoding="utf-8") as f:
            have = parse_fragment(f.read())
        added = [f"{k}={v} (was {have.get(k, 'n')})"
                 for k, v in parse_fragment(text).items() if have.get(k, "n") != v]
    if variant.base or variant.base_config:
        if variant.base and not variant.base_config:
            subprocess.run(make_cmd(out, variant.arch, variant.base), cwd=mtree, check=True,
                           stdout=subprocess.DEVNULL)
        subprocess.run(["scripts/kconfig/merge_config.sh", "-m", "-O", out,
                        os.path.join(out, ".config"), frag], cwd=mtree, check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, ARCH=variant.arch))
        subprocess.run(make_cmd(out, variant.arch, "olddefconfig"), cwd=mtree, check=True,
                       stdout=subprocess.DEVNULL)
    else:
        subprocess.run(make_cmd(out, variant.arch, "allnoconfig",
                                extra=[f"KCONFIG_ALLCONFIG={frag}"]),
                       cwd=mtree, check=True, stdout=subprocess.DEVNULL)
    # Without the series, its options' other values (pv_rt.config's
    # IKT_DEFAULT_PRIO) cannot take effect: they depend on what is off.  In
    # the base, where those options do not exist, the same ones are skipped:
    # TREE (the series) says which they are.
    skip = series_symbols(tree) if "without-series" in variant.fragments else ()
    bad = check_config(text, os.path.join(out, ".config"), skip)
    if not strict:
        return bad
    if bad:
        raise PvrtError(f"variant {variant.name}: Kconfig dropped fragment lines:\n  "
                         + "\n  ".join(bad))
    return added


def build(top, tree, variant_name, out=None, log=print):
    variant = Variant(variant_name, top)
    if variant.same_build:
        variant = Variant(variant.same_build, top)
    return build_variant(top, tree, variant, out, log)


def build_variant(top, tree, variant, out=None, log=print):
    """Build VARIANT (a Variant, possibly with extra fragments) in OUT."""
    out = out or os.path.join(os.environ["PVRT_BUILD"], "out", variant.out_name)
    if not os.path.isfile(os.path.join(tree, "Makefile")):
        raise PvrtError(f"{tree} is not a kernel tree (run scripts/apply first)")
    t0 = time.time()
    if os.path.exists(os.path.join(out, SOURCE_FILE)):
        os.remove(os.path.join(out, SOURCE_FILE))   # said again when this build is done
    added = configure(top, tree, variant, out)
    mtree = make_tree(tree, variant, ensure=False)
    if added:
        log(f"build: {variant.name}: {variant.base_config} changed by the variant's fragments"
            f" (QEMU guest, preemption model, tests):\n    " + "\n    ".join(added))
    source = source_record(tree, variant)
    log(f"build: {variant.name}: configured, compiling in {out}"
        + (f" from the base {source['commit'][:12]} ({mtree})" if variant.from_base else ""))
    with open(os.path.join(out, ".config"), encoding="utf-8") as f:
        modules = "CONFIG_MODULES=y" in f.read().split("\n")
    targets = (["bzImage"] + (["modules"] if modules else [])
               if variant.arch == "x86_64" else ["all"])
    subprocess.run(make_cmd(out, variant.arch, *targets), cwd=mtree, check=True)
    modroot = os.path.join(out, "modroot")
    subprocess.run(["rm", "-rf", modroot], check=True)
    if variant.arch == "x86_64" and modules:
        subprocess.run(make_cmd(out, variant.arch, "modules_install",
                                extra=[f"INSTALL_MOD_PATH={modroot}", "INSTALL_MOD_STRIP=1",
                                       "DEPMOD=true"]),
                       cwd=mtree, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, SOURCE_FILE), "w", encoding="utf-8") as f:
        json.dump(source, f)
    log(f"build: {variant.name}: done in {time.time() - t0:.0f}s")
    return out


def kernel_image(out, arch="x86_64"):
    return os.path.join(out, "arch/x86/boot/bzImage" if arch == "x86_64" else "linux")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/build", description=__doc__,
        epilog="example:\n  scripts/build project        # build/out/project/arch/x86/boot/bzImage",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variant", help="a file in variants/: stock, project, rt, ...")
    ap.add_argument("--tree", help="the series tree (default: build/linux); a 'tree base'"
                    " variant is built in TREE-base, at TREE's refs/pvrt/base")
    ap.add_argument("--out", help="build directory (default: build/out/VARIANT, or"
                    " build/out/VARIANT-base for a 'tree base' variant)")
    args = ap.parse_args(argv)
    top = os.environ["PVRT_TOP"]
    tree = os.path.abspath(args.tree or os.path.join(os.environ["PVRT_BUILD"], "linux"))
    out = build(top, tree, args.variant, args.out and os.path.abspath(args.out),
                log=logs.logger("build"))
    print(kernel_image(out))


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
