# SPDX-License-Identifier: GPL-2.0
"""pvrt.build: variants and the check that every fragment line took effect."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts", "lib"))
from pvrt import build  # noqa: E402
from pvrt.errors import PvrtError  # noqa: E402


def test_parse_fragment():
    vals = build.parse_fragment('CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C="x y"\n'
                                '# a comment\nCONFIG_D=50\n')
    assert vals == {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": "x y", "CONFIG_D": "50"}


def test_check_config_reports_dropped_options(tmp_path):
    cfg = tmp_path / ".config"
    cfg.write_text("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_D=50\n")
    want = "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_D=60\n"
    assert build.check_config(want, str(cfg)) == ["CONFIG_B: wanted y, got n",
                                                  "CONFIG_D: wanted 60, got 50"]


def test_every_variant_parses_and_names_existing_fragments():
    names = [n for n in os.listdir(os.path.join(REPO, "variants"))
             if os.path.isfile(os.path.join(REPO, "variants", n)) and not n.endswith(".config")]
    assert {"stock", "project", "rt", "threadirqs"} <= set(names)
    for name in names:
        var = build.Variant(name, REPO)
        if var.same_build:
            assert build.Variant(var.same_build, REPO).same_build is None
            continue
        for frag in var.fragments:
            if frag.startswith("variants/"):
                assert os.path.isfile(os.path.join(REPO, frag)), frag


def test_unknown_variant_and_directive(tmp_path):
    with pytest.raises(PvrtError, match="no variant"):
        build.Variant("no-such-variant", REPO)
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "bad").write_text("arch x86_64\nfrobnicate yes\n")
    with pytest.raises(PvrtError, match="unknown 'frobnicate'"):
        build.Variant("bad", str(tmp_path))


def test_kunitconfig_arch_restriction(tmp_path):
    anywhere = tmp_path / "a.kunitconfig"
    anywhere.write_text("# run with\n#   kunit.py run --arch=x86_64\nCONFIG_KUNIT=y\n")
    x86 = tmp_path / "b.kunitconfig"
    x86.write_text("# Interrupt kernel threads, x86_64 only (UML cannot\n"
                   "# force-thread interrupts)\nCONFIG_KUNIT=y\n")
    assert build.kunitconfig_arch(str(anywhere)) is None
    assert build.kunitconfig_arch(str(x86)) == "x86_64"
    assert build.kunitconfig_arch(str(tmp_path / "missing")) is None


def test_the_series_ikt_suite_is_left_out_of_uml():
    tree = os.path.join(REPO, "kunit-tests")
    um = build.series_kunitconfigs(REPO, tree, "um")
    x86 = build.series_kunitconfigs(REPO, tree, "x86_64")
    assert os.path.join(tree, "kernel/irq/tests/.kunitconfig") in x86
    assert os.path.join(tree, "kernel/irq/tests/.kunitconfig") not in um
    assert os.path.join(tree, "kernel/locking/tests/.kunitconfig") in um


def test_base_directive(tmp_path):
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "dev").write_text("base x86_64_defconfig\nfragment x.config\n")
    var = build.Variant("dev", str(tmp_path))
    assert var.base == "x86_64_defconfig" and var.fragments == ["x.config"]
    assert build.Variant("devices", REPO).base == "x86_64_defconfig"
    assert build.Variant("project", REPO).base is None
    (tmp_path / "variants" / "bad").write_text("base rm -rf /\n")
    with pytest.raises(PvrtError):
        build.Variant("bad", str(tmp_path))


def test_kernel_config_is_the_start_and_changes_are_listed(tmp_path, monkeypatch):
    """--kernel-config: the user's file replaces allnoconfig, the build goes
    to its own directory, and the options the fragments change are listed."""
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "v").write_text("fragment f.config\n")
    (tmp_path / "f.config").write_text("CONFIG_SERIAL_8250=y\nCONFIG_PREEMPT=y\n")
    user = tmp_path / "user.config"
    user.write_text("CONFIG_SERIAL_8250=y\n# CONFIG_PREEMPT is not set\nCONFIG_USB=m\n")
    var = build.Variant("v", str(tmp_path), base_config=str(user))
    assert var.out_name.startswith("v-kc-") and var.out_name != build.Variant(
        "v", str(tmp_path)).out_name
    out = tmp_path / "out"
    ran = []

    def fake_run(cmd, cwd=None, **kw):
        ran.append(cmd)
        cfg = out / ".config"
        if "allnoconfig" in cmd:
            pytest.fail("allnoconfig with a user's config")
        if cmd[0] == "scripts/kconfig/merge_config.sh":
            cfg.write_text(cfg.read_text().replace("# CONFIG_PREEMPT is not set",
                                                   "CONFIG_PREEMPT=y"))

    monkeypatch.setattr(build.subprocess, "run", fake_run)
    added = build.configure(str(tmp_path), str(tmp_path), var, str(out))
    assert added == ["CONFIG_PREEMPT=y (was n)"]
    assert "CONFIG_USB=m" in (out / ".config").read_text()
    assert any(c[0] == "scripts/kconfig/merge_config.sh" for c in ran)


def test_a_commit_in_the_middle_of_the_series_leaves_out_fragments_it_lacks(tmp_path):
    """Bisect (strict=False): a tree without the series' pv_rt.config still
    configures from the rest; the strict form refuses it."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    var = build.Variant("project", top)
    with pytest.raises(PvrtError, match="pv_rt.config not found"):
        build.fragment_text(top, str(tmp_path), var)
    text = build.fragment_text(top, str(tmp_path), var, strict=False)
    assert "CONFIG_SERIAL_8250_CONSOLE=y" in text and "pv_rt.config" not in text


def test_the_debug_twin_is_the_project_kernel_with_the_debug_fragments():
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    twin = build.debug_twin(top)
    project = build.Variant("project", top)
    assert twin.name == "project-debug" and twin.cmdline == project.cmdline
    assert twin.fragments == [f for f in project.fragments if f != build.BENCH_FRAGMENT] + \
        list(build.DEBUG_FRAGMENTS)
    assert "series-kunitconfigs" in twin.fragments      # the debug KUnit run boots it


def test_a_base_target_for_variants_without_their_own(tmp_path):
    """scripts/validate --base defconfig: every latency variant starts from
    x86_64_defconfig (its own build directory); a variant with its own
    base keeps it."""
    top = os.path.join(os.path.dirname(__file__), "..")
    v = build.Variant("stock", top, base_target="x86_64_defconfig")
    # stock is built from the series' base (tree base): -base, apart.
    assert v.base == "x86_64_defconfig" and v.out_name == "stock-x86_64_defconfig-base"
    assert build.Variant("stock", top).base is None
    assert build.Variant("stock", top).out_name == "stock-base"
    assert build.Variant("project", top, base_target="x86_64_defconfig").out_name == \
        "project-x86_64_defconfig"
    dev = build.Variant("devices", top, base_target="x86_64_defconfig")
    assert dev.base == "x86_64_defconfig" and dev.out_name == "devices"
    assert build.PRODUCT_FRAGMENT not in dev.fragments
    # The product paths on top; THP everywhere but on PREEMPT_RT, which
    # cannot have it.
    assert v.fragments[-2:] == [build.PRODUCT_FRAGMENT, build.PRODUCT_THP_FRAGMENT]
    rt = build.Variant("rt", top, base_target="x86_64_defconfig")
    assert rt.fragments[-1] == build.PRODUCT_FRAGMENT


def _kconfig_tree(tmp_path):
    """A git tree whose base commit (refs/pvrt/base) defines A and HIDDEN,
    and whose work tree adds B (selecting HIDDEN) and B_LEVEL (an int)."""
    import subprocess
    t = tmp_path / "tree"
    (t / "k").mkdir(parents=True)
    git = ["git", "-C", str(t), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(t)], check=True)
    (t / "k" / "Kconfig").write_text("config A\n\tbool \"a\"\n\nconfig HIDDEN\n\tbool\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    subprocess.run(git + ["update-ref", "refs/pvrt/base", "HEAD"], check=True)
    (t / "k" / "Kconfig").write_text(
        "config A\n\tbool \"a\"\n\nconfig HIDDEN\n\tbool\n\n"
        "menuconfig B\n\ttristate \"b\"\n\tselect HIDDEN\n\nif B\nconfig B_LEVEL\n"
        "\tint \"level\"\n\tdefault 5\nendif\n")
    subprocess.run(git + ["commit", "-qam", "series"], check=True)
    return str(t)


def test_series_symbols_and_the_fragment_without_them(tmp_path):
    tree = _kconfig_tree(tmp_path)
    assert build.series_entries(tree) == {"B": ("tristate", ["HIDDEN"]),
                                          "B_LEVEL": ("int", [])}
    assert build.series_symbols(tree) == {"CONFIG_B", "CONFIG_B_LEVEL"}
    # Only bool/tristate options are turned off: an int has no "not set".
    assert build.without_series_text(tree) == "# CONFIG_B is not set\n"
    with pytest.raises(PvrtError):
        build.series_entries(str(tmp_path))          # not a workspace


def test_not_series_difference(tmp_path):
    """Two .configs may differ in the series' options and in base options
    only they select; anything else is listed."""
    tree = _kconfig_tree(tmp_path)
    a, b = tmp_path / "a.config", tmp_path / "b.config"
    a.write_text("CONFIG_A=y\nCONFIG_B=y\nCONFIG_B_LEVEL=5\nCONFIG_HIDDEN=y\n")
    b.write_text("CONFIG_A=y\n# CONFIG_B is not set\n")
    assert build.not_series_difference(str(a), str(b), tree) == []
    b.write_text("# CONFIG_A is not set\n")
    assert build.not_series_difference(str(a), str(b), tree) == ["CONFIG_A: y / n"]


# --- "tree base": the stock baselines are built from the series' base --------

def _git(*args):
    import subprocess
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _series_tree(tmp_path):
    """_kconfig_tree() whose series commit also adds the fragment
    kernel/configs/pv_rt.config (A and the series' B on), a mark file and
    a Makefile; a
    repository top with a variant built from the base (st, "tree base") and
    one from the series tree (pt)."""
    tree = _kconfig_tree(tmp_path)
    (tmp_path / "tree" / "kernel" / "configs").mkdir(parents=True)
    (tmp_path / "tree" / "kernel" / "configs" / "pv_rt.config").write_text(
        "CONFIG_A=y\nCONFIG_B=y\n")
    (tmp_path / "tree" / "SERIES").write_text("the series' code\n")
    (tmp_path / "tree" / "Makefile").write_text("# a kernel tree\n")
    _git("-C", tree, "add", ".")
    _git("-C", tree, "commit", "-qm", "series fragment")
    top = tmp_path / "top"
    (top / "variants" / "fragments").mkdir(parents=True)
    (top / "variants" / "fragments" / "q.config").write_text("CONFIG_A=y\n")
    (top / "variants" / "st").write_text(
        "arch x86_64\ntree base\nfragment variants/fragments/q.config\n"
        "fragment tree:kernel/configs/pv_rt.config\nfragment without-series\n")
    (top / "variants" / "pt").write_text(
        "arch x86_64\nfragment variants/fragments/q.config\n"
        "fragment tree:kernel/configs/pv_rt.config\n")
    return str(top), tree


def _stub_make(monkeypatch, config):
    """build.subprocess.run with make (and merge_config.sh) stubbed: each
    writes CONFIG into O= and is recorded as (cwd, command, the fragment
    text it was given); git runs for real."""
    import subprocess
    real = subprocess.run
    made = []

    def run(cmd, cwd=None, **kw):
        if cmd[0] not in ("make", "scripts/kconfig/merge_config.sh"):
            return real(cmd, cwd=cwd, **kw)         # git, rm
        out = next(a[2:] for a in cmd if a.startswith("O="))
        frag = next((a.split("=", 1)[1] for a in cmd if a.startswith("KCONFIG_ALLCONFIG=")),
                    None)
        made.append((cwd, cmd, open(frag, encoding="utf-8").read() if frag else None))
        with open(os.path.join(out, ".config"), "w", encoding="utf-8") as f:
            f.write(config)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(build.subprocess, "run", run)
    return made


def _check_configured_in_base(tmp_path, monkeypatch):
    """The checks of a "tree base" variant's configure: make runs in the
    base worktree beside the series tree, detached at refs/pvrt/base (none
    of the series' files in it), with the fragments read from the series
    tree and the repository; the series' option B, absent from the base,
    is skipped by the check as without-series says."""
    top, tree = _series_tree(tmp_path)
    made = _stub_make(monkeypatch, "CONFIG_A=y\n")       # what the base's Kconfig gives
    var = build.Variant("st", top)
    assert var.from_base and var.out_name == "st-base"
    out = str(tmp_path / "out")
    assert build.configure(top, tree, var, out) == []
    base = build.base_tree(tree)
    assert base == tree + "-base"
    assert [m[0] for m in made] == [base]
    frag = made[0][2]
    assert "CONFIG_B=y" in frag and "# CONFIG_B is not set" in frag    # the series' fragment
    assert _git("-C", base, "rev-parse", "HEAD") == _git("-C", tree, "rev-parse",
                                                         "refs/pvrt/base")
    assert _git("-C", base, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"   # detached
    assert not os.path.exists(os.path.join(base, "SERIES"))
    assert not os.path.exists(os.path.join(base, "kernel/configs/pv_rt.config"))
    # An option that is not the series' and did not take effect still fails.
    made = _stub_make(monkeypatch, "# CONFIG_A is not set\n")
    with pytest.raises(PvrtError, match="CONFIG_A: wanted y, got n"):
        build.configure(top, tree, var, out)


def _check_built_in_base(tmp_path, monkeypatch):
    """The checks of a "tree base" variant's build: configure, compile and
    modules_install all run in the base worktree, into
    build/out/<variant>-base; the build directory records the base commit
    (results' provenance reads it)."""
    top, tree = _series_tree(tmp_path)
    made = _stub_make(monkeypatch, "CONFIG_A=y\nCONFIG_MODULES=y\n")
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    out = build.build(top, tree, "st", log=lambda m: None)
    assert out == str(tmp_path / "build" / "out" / "st-base")
    cmds = [(m[0], m[1][-1]) for m in made if m[1][0] == "make"]
    base = build.base_tree(tree)
    assert [c for c, _t in cmds] == [base] * len(cmds)
    assert {t for _c, t in cmds} >= {"allnoconfig", "modules", "modules_install"}
    commit = _git("-C", tree, "rev-parse", "refs/pvrt/base")
    assert build.built_from(out) == {"tree": "base", "commit": commit, "dirty": False}
    assert build.source_text(out) == f"base {commit[:12]}"


def test_a_tree_base_variant_is_configured_in_the_base_with_the_series_fragments(
        tmp_path, monkeypatch):
    _check_configured_in_base(tmp_path, monkeypatch)


def test_a_variant_without_tree_base_is_built_in_the_series_tree(tmp_path, monkeypatch):
    top, tree = _series_tree(tmp_path)
    made = _stub_make(monkeypatch, "CONFIG_A=y\nCONFIG_B=y\n")
    var = build.Variant("pt", top)
    assert not var.from_base and var.out_name == "pt"
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path / "build"))
    out = build.build_variant(top, tree, var, log=lambda m: None)
    assert out == str(tmp_path / "build" / "out" / "pt")
    assert {m[0] for m in made} == {tree}
    assert not os.path.exists(build.base_tree(tree))     # no base worktree needed
    head = _git("-C", tree, "rev-parse", "HEAD")
    assert build.built_from(out) == {"tree": "series", "commit": head, "dirty": False}
    assert build.source_text(out) == f"series {head[:12]}"
    # A change to a tracked file that HEAD lacks is in the kernel: said so.
    with open(os.path.join(tree, "k", "Kconfig"), "a", encoding="utf-8") as f:
        f.write("# an edit\n")
    out = build.build_variant(top, tree, var, log=lambda m: None)
    assert build.built_from(out) == {"tree": "series", "commit": head, "dirty": True}
    assert build.source_text(out) == f"series {head[:12]}+dirty"


def test_a_tree_base_build_runs_every_make_in_the_base_and_records_it(tmp_path, monkeypatch):
    _check_built_in_base(tmp_path, monkeypatch)


def test_a_broken_twin_that_ignores_the_directive_is_caught(tmp_path, monkeypatch):
    """The positive controls: a build.py that parses "tree base" but runs
    make in the series tree (the directive ignored), or configures in the
    base but compiles in the series tree, fails the checks above."""
    real = build.make_tree
    monkeypatch.setattr(build, "make_tree", lambda tree, variant, ensure=True: tree)
    with pytest.raises(AssertionError):
        _check_configured_in_base(tmp_path / "a", monkeypatch)
    with pytest.raises(AssertionError):
        _check_built_in_base(tmp_path / "b", monkeypatch)
    # Configure in the base (ensure=True), compile and install in the tree.
    monkeypatch.setattr(build, "make_tree", lambda tree, variant, ensure=True:
                        real(tree, variant, ensure) if ensure else tree)
    _check_configured_in_base(tmp_path / "c", monkeypatch)       # configure alone is right
    with pytest.raises(AssertionError):
        _check_built_in_base(tmp_path / "d", monkeypatch)
    monkeypatch.setattr(build, "make_tree", real)
    _check_configured_in_base(tmp_path / "e", monkeypatch)
    _check_built_in_base(tmp_path / "f", monkeypatch)
    # Nor may the parser drop it: an unknown tree is refused, not ignored.
    top, _tree = _series_tree(tmp_path / "g")
    with open(os.path.join(top, "variants", "bad"), "w", encoding="utf-8") as f:
        f.write("tree linus\n")
    with pytest.raises(PvrtError, match="tree 'linus'"):
        build.Variant("bad", top)


def test_the_base_worktree_follows_the_base(tmp_path):
    """Created at refs/pvrt/base; moved when the base changes; a changed
    file checked out again; a directory left over from a remade tree (its
    worktree entry gone) replaced."""
    top, tree = _series_tree(tmp_path)
    logs = []
    base = build.ensure_base_tree(tree, log=logs.append)
    assert logs and "creating" in logs[0]
    first = _git("-C", tree, "rev-parse", "refs/pvrt/base")
    assert _git("-C", base, "rev-parse", "HEAD") == first
    logs.clear()
    assert build.ensure_base_tree(tree, log=logs.append) == base and logs == []   # in place
    # A new base (scripts/apply onto another 6.12.y).
    (tmp_path / "tree" / "k" / "Kconfig2").write_text("config C\n\tbool \"c\"\n")
    _git("-C", tree, "add", ".")
    _git("-C", tree, "commit", "-qm", "another base")
    _git("-C", tree, "update-ref", "refs/pvrt/base", "HEAD")
    build.ensure_base_tree(tree, log=logs.append)
    assert _git("-C", base, "rev-parse", "HEAD") == _git("-C", tree, "rev-parse", "HEAD")
    assert os.path.exists(os.path.join(base, "k", "Kconfig2"))
    # Nothing edits it: a change is undone.
    with open(os.path.join(base, "k", "Kconfig"), "a", encoding="utf-8") as f:
        f.write("config EDIT\n\tbool\n")
    build.ensure_base_tree(tree, log=logs.append)
    assert "EDIT" not in open(os.path.join(base, "k", "Kconfig"), encoding="utf-8").read()
    # The series tree made again from scratch (scripts/apply on a new base
    # removes the base worktree, then the tree): a new worktree is made.
    import shutil
    build.remove_base_tree(tree, log=logs.append)
    assert not os.path.exists(base)
    shutil.rmtree(tree)
    tree = _kconfig_tree(tmp_path)
    build.ensure_base_tree(tree, log=logs.append)
    assert _git("-C", base, "rev-parse", "HEAD") == _git("-C", tree, "rev-parse",
                                                         "refs/pvrt/base")
    assert _git("-C", base, "rev-parse", "--path-format=absolute", "--git-common-dir") == \
        os.path.join(tree, ".git")
    with pytest.raises(PvrtError, match="no refs/pvrt/base"):
        build.ensure_base_tree(str(tmp_path / "top"))


def test_a_directory_the_tool_did_not_make_at_the_base_path_is_left_alone(tmp_path):
    """scripts/build --tree ~/src/linux stock wants ~/src/linux-base: a
    separate clone there, or the user's own worktree of the same repository
    (with edits, on a branch), is refused with a clear error and not
    touched; nor is another worktree entry of the tree pruned."""
    top, tree = _series_tree(tmp_path)
    base = build.base_tree(tree)
    _git("clone", "-q", tree, base)
    with open(os.path.join(base, "MYNOTES"), "w", encoding="utf-8") as f:
        f.write("mine\n")
    with pytest.raises(PvrtError, match="is not the base worktree scripts/apply made"):
        build.ensure_base_tree(tree, log=lambda m: None)
    assert os.path.exists(os.path.join(base, "MYNOTES"))
    build.remove_base_tree(tree, log=lambda m: None)
    assert os.path.exists(os.path.join(base, "MYNOTES"))
    import shutil
    shutil.rmtree(base)
    # The user's own worktree of TREE at that path, with an edit, on a branch;
    # and a stale entry of another of the user's worktrees.
    _git("-C", tree, "worktree", "add", "-q", "-b", "mine", base, "refs/pvrt/base")
    other = str(tmp_path / "elsewhere")
    _git("-C", tree, "worktree", "add", "-q", "--detach", other)
    shutil.rmtree(other)
    with open(os.path.join(base, "k", "Kconfig"), "a", encoding="utf-8") as f:
        f.write("config EDIT\n\tbool\n")
    with pytest.raises(PvrtError, match="move it away"):
        build.ensure_base_tree(tree, log=lambda m: None)
    assert "EDIT" in open(os.path.join(base, "k", "Kconfig"), encoding="utf-8").read()
    assert _git("-C", base, "rev-parse", "--abbrev-ref", "HEAD") == "mine"
    build.remove_base_tree(tree, log=lambda m: None)
    assert os.path.exists(base)
    _git("-C", base, "checkout", "-q", "--", ".")
    _git("-C", tree, "worktree", "remove", base)
    # Our own worktree is made beside the user's stale entry, which stays.
    assert build.ensure_base_tree(tree, log=lambda m: None) == base
    assert other in _git("-C", tree, "worktree", "list", "--porcelain")


def test_every_stock_baseline_is_built_from_the_base():
    """The baselines the report divides by are stock code; the project's
    kernels are built from the series."""
    for name in ("stock", "stock-tuned", "stock-pcp0", "board-stock", "rt"):
        assert build.Variant(name, REPO).from_base, name
    for name in ("threadirqs", "stock-tuned-threadirqs"):
        assert build.Variant(build.Variant(name, REPO).build_name, REPO).from_base, name
        assert build.out_dir(REPO, name, "/b") == \
            f"/b/out/{build.Variant(name, REPO).same_build}-base"
    for name in ("project", "project-before", "project-noconv", "project-rt", "board",
                 "devices"):
        assert not build.Variant(name, REPO).from_base, name


def test_the_docs_name_every_tree_base_variant():
    """scripts/build's --help (build.py's docstring) and the README list the
    variants built from the base; scripts/validate's says which kernels are."""
    import re
    from pvrt import validate
    names = sorted(n for n in os.listdir(os.path.join(REPO, "variants"))
                   if os.path.isfile(os.path.join(REPO, "variants", n))
                   and not n.endswith(".config") and build.Variant(n, REPO).from_base
                   and not build.Variant(n, REPO).same_build)
    listed = re.search(r'A "tree base" variant \(([^)]*)\)', build.__doc__).group(1)
    assert sorted(listed.replace(",", " ").split()) == names
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    para = readme[readme.index("The baselines are stock code."):]
    para = para[:para.index("\n\n")]
    for n in names:
        assert f"`{n}`" in para, n
    assert "PREEMPT_RT kernel from the series tree" not in readme
    assert "from the same\ntree" not in validate.__doc__ and "series' base" in validate.__doc__


def test_a_same_build_variant_is_built_from_its_builds_tree(tmp_path):
    """threadirqs boots stock's kernel: it is built from the base as stock
    is; a "tree" directive beside "same-build" would say otherwise and is
    refused, as is a same-build of a same-build."""
    for name in ("threadirqs", "stock-tuned-threadirqs"):
        assert build.Variant(name, REPO).from_base, name
    top, _tree = _series_tree(tmp_path)
    vdir = os.path.join(top, "variants")
    for fname, text in (("sb", "same-build st\ncmdline x\n"), ("ps", "same-build pt\n"),
                        ("bad", "same-build st\ntree series\n"), ("chain", "same-build sb\n")):
        with open(os.path.join(vdir, fname), "w", encoding="utf-8") as f:
            f.write(text)
    assert build.Variant("sb", top).from_base and not build.Variant("ps", top).from_base
    with pytest.raises(PvrtError, match="variants/bad:2: 'tree' with 'same-build'"):
        build.Variant("bad", top)
    with pytest.raises(PvrtError, match="same-build sb, which boots st's build"):
        build.Variant("chain", top)
