# SPDX-License-Identifier: GPL-2.0
"""scripts/check: every check of the project, stage by stage.

Each stage prints what it runs and counts test cases (KUnit cases, one per
patch for checkpatch and bisect builds, one per boot check, one per tool test).
The last line is "N passed, N failed".  Exit status 0 only when nothing failed.
"""

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from pvrt import (advisor, base, bench_ikt, board, boot, build, console, errors, gitutil, junit,
                  kunit, lint, lock, report, series, target, torture, validate)
from pvrt.tools import cc
from pvrt.errors import PvrtError, entry

# Boot parameter the KUnit runs add to the project kernel's own (which has
# ikt.prio=ikt-kunit-boot:61): the ikt suite checks that the first ikt.prio=
# rule reaches the thread of the action it names and that a second one is
# refused while the first stays.
KUNIT_SECOND_RULE = "ikt.prio=ikt-kunit-boot:62"

# The board stage on a brand-new machine: its two kernels (board-stock
# 1274 objects, board 1292, against the project kernel's 1147 in 3.6 min
# cold: 4 min each, 480 s), the board's start (11 s measured) and the
# slowest short job measured (289 s wall_seconds of the --load none job in
# the check tree's reports; others took 31, 58 and 136 s), +20 %:
# (480 + 11 + 289) * 1.2 = 936 s.  Not measured on a brand-new machine yet.
BOARD_COLD = 940

# The stages' times (s) on a brand-new 2-core machine (no ccache, no base
# cache), measured by 'CI=true bash .ci/run' from a fresh clone, rounded up
# by at least 20 %: what the time budget expects of a stage this machine has
# not run yet.  A stage it has run is expected to take what it took last
# time (check-timings.json in the cache directory, next to ccache's: both
# go together).  Not measured cold yet: boot's share for variants/project-dynamic
# (its 40 s plus a project-sized build, 3.6 min cold, and a 40 s boot, +20 %),
# kunit-debug's for the noconv-debug kernel.  boot's KUnit module loads
# (guest/kunit-module, both modules): 2.2 s of guest time measured
# (scripts/check --only boot, 2026-11-24), 3 s with the module copies, +20 %.
# series: 180 s, plus the checkout of the base worktree build/check/linux-base
# (the stock baselines' tree) that scripts/apply now makes: `git worktree
# add --detach` of the 6.12 base took 17.4 s on this 2-core machine with the
# objects warm (the workspace was just checked out from them, so in the
# page cache), +20 %: 21 s.  Niced to 19 under two QEMU runs and a kernel
# build it took 9 min 26 s (I/O-bound, 16 s of CPU): the cold figure holds
# only on an idle machine.  `--only x86_64` on a check tree made before the
# base worktree existed pays that checkout in the x86_64 stage instead (its
# first configure of a "tree base" variant makes it).
COLD_SECONDS = {"tools": 20, "series": 201, "checkpatch": 30, "bisect": 820, "x86_64": 80,
                "boot": 364, "allnoconfig": 160, "kunit-uml": 160, "torture": 470,
                "lockdep": 50, "kunit-debug": 100, "kunit-rt": 60, "board": BOARD_COLD}
# A kernel a stage boots but an earlier stage, not run, should have built:
# the project kernel (3.6 min cold), the debug kernel (4.2 min cold) and the
# PREEMPT_RT kernel (11.3 min measured: a first build in a new build
# directory with the shared ccache, while other builds loaded the machine).
KERNEL_BUILD_SECONDS = {"project": 260, "project-debug": 300, "project-rt": 820,
                        "incremental": 60}
# CI gives a run 90 minutes, set-up and clone included: the stages get 80.
DEFAULT_BUDGET = 80 * 60

class Results:
    def __init__(self):
        self.passed, self.failed, self.stages = 0, 0, []
        self.failures = []
        self.junit = []             # (stage, name, ok, detail) for check.xml

    def case(self, stage, name, ok, detail=""):
        self.junit.append((stage, name, ok, detail))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(f"{stage}: {name}" + (f": {detail}" if detail else ""))
        print(f"  {'ok' if ok else 'FAIL'}  {name}" + ("" if ok or not detail else
                                                       "\n        " + detail.replace(
                                                           "\n", "\n        ")), flush=True)

    def count(self, stage, name, passed, failed, detail=""):
        """Record PASSED + FAILED cases reported by a runner (KUnit, pytest)."""
        self.junit.append((stage, f"{name}: {passed} passed, {failed} failed", not failed,
                           detail))
        self.passed += passed
        self.failed += failed
        if failed:
            self.failures.append(f"{stage}: {name}: {failed} failed" +
                                 (f": {detail}" if detail else ""))
        print(f"  {'ok' if not failed else 'FAIL'}  {name}: {passed} passed, {failed} failed"
              + (f"\n        {detail}" if failed and detail else ""), flush=True)


class Built:
    """A build step's outcome, shaped like Check.run()'s result."""

    def __init__(self, returncode, output):
        self.returncode, self.output = returncode, output


def kconfig_defines(tree, option):
    """Does some Kconfig file of TREE's checked-out commit define OPTION (CONFIG_X)?"""
    sym = option.removeprefix("CONFIG_")
    res = subprocess.run(["git", "-C", tree, "grep", "-qE",
                          rf"^[[:space:]]*(menu)?config[[:space:]]+{sym}[[:space:]]*(#.*)?$",
                          "--", "*Kconfig*"], capture_output=True, text=True)
    return res.returncode == 0


def docs_only(paths):
    """Does a commit that changes PATHS change nothing a kernel build reads?"""
    return bool(paths) and all(
        p == "MAINTAINERS" or (p.startswith("Documentation/") and not
                               os.path.basename(p).startswith(("Kconfig", "Makefile")))
        for p in paths)


class Check:
    def __init__(self, args):
        self.args = args
        self.top = os.environ["PVRT_TOP"]
        self.bdir = os.environ["PVRT_BUILD"]
        self.res = Results()
        self.times = []
        self.tree = os.path.join(self.bdir, "linux")
        self.project_built = None       # by the x86_64 stage or its prepare step
        self.built = set()              # kernels built in this run: "project", "project-debug"
        self.lint_left = None           # series' C files the project kernel does not build
        self.logs = os.path.join(self.bdir, "logs")
        os.makedirs(self.logs, exist_ok=True)

    # --- helpers -------------------------------------------------------------

    def run(self, cmd, log_name=None, **kw):
        """Run CMD; its output goes to build/check/logs/LOG_NAME when given."""
        print(f"  $ {' '.join(cmd)}", flush=True)
        if log_name:
            path = os.path.join(self.logs, log_name)
            with open(path, "w", encoding="utf-8") as log:
                res = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, **kw)
            with open(path, encoding="utf-8", errors="replace") as log:
                res.output = log.read()
            return res
        return subprocess.run(cmd, capture_output=True, text=True, **kw)

    def tail(self, text, n=25):
        return "\n".join(text.rstrip().splitlines()[-n:])

    def stage(self, name, fn):
        """Run stage FN; True when it ran to its end without a failed case."""
        print(f"\n=== {name}", flush=True)
        t0 = time.time()
        failed = self.res.failed
        try:
            fn()
        except PvrtError as e:          # a tool refused: a failed case of this stage
            self.res.case(name, "stage", False, str(e))
        except Terminated:              # SIGTERM/SIGHUP end the whole check
            raise
        except SystemExit as e:
            self.res.case(name, "stage", False, str(e.code))
        except subprocess.CalledProcessError as e:
            self.res.case(name, "stage", False, f"{e.cmd} exited with {e.returncode}")
        except Exception as e:          # noqa: BLE001 -- a crash fails the stage, not the run
            self.res.case(name, "stage crashed", False,
                          f"{type(e).__name__}: {e}\n" + self.tail(traceback.format_exc()))
        dt = time.time() - t0
        self.times.append((name, dt))
        print(f"--- {name}: {dt:.0f}s", flush=True)
        return self.res.failed == failed

    def commits(self):
        return gitutil.out(["git", "-C", self.tree, "rev-list", "--reverse",
                            f"{base.BASE_REF}..HEAD"]).split()

    # Known reports on the console that are not ours, with the reason.
    KUNIT_ALLOW = [
        # kunit.py's UML configuration enables PCI over virtio without a
        # device id, and arch/um/drivers/virt-pci.c warns about it at boot.
        r"WARNING: .* at \S*arch/um/drivers/virt-pci\.c",
    ]

    def kunit(self, stage, name, args, build_dir, log_name):
        kunit_py = os.path.join(self.tree, "tools/testing/kunit/kunit.py")
        cmd = [sys.executable, kunit_py] + args + [f"--build_dir={build_dir}"]
        if args[0] != "exec":           # exec neither builds nor takes make options
            cmd += [f"--jobs={build.jobs()}", f"--make_options=CC={cc()}"]
        res = self.run(cmd, log_name, cwd=self.tree)
        raw = kunit.run_summary(res.output)
        console_log = os.path.join(build_dir, "test.log")
        if raw is None or not os.path.exists(console_log):
            self.res.case(stage, name, False, f"no KUnit summary (see build/check/logs/{log_name}):\n"
                          + self.tail(res.output))
            return
        # Counted again from the KTAP lines alone: kernel messages printed
        # in between can make kunit.py misparse a suite it ran fine.
        summary = kunit.kunit_summary(self.tree, console_log)
        if not summary:
            self.res.case(stage, name, False, f"kunit.py parse found no results in {console_log}")
            return
        ran, passed, failed, skipped, parsed = summary
        v = kunit.verdict(res.returncode, raw, summary[:4], kunit.run_parse_errors(res.output))
        if v.note:
            print(f"  note: {v.note}", flush=True)
        self.res.count(stage, f"{name} ({ran} ran, {skipped} skipped)", v.passed, v.failed,
                       "" if not v.failed else f"{v.why}; see build/check/logs/{log_name}"
                       + "\n" + self.tail(parsed, 15))
        # What lockdep, KASAN, UBSAN and WARN_ON() said while the tests ran.
        if os.path.exists(console_log):
            with open(console_log, encoding="utf-8", errors="replace") as f:
                self.console_cases(stage, name, f.read(), console_log, self.KUNIT_ALLOW)
        else:
            self.res.case(stage, f"{name}: console log", False, f"{console_log} missing")

    # --- stages --------------------------------------------------------------

    def st_tools(self):
        junit = os.path.join(self.logs, "pytest.xml")
        res = self.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={junit}", os.path.join(self.top, "tests")],
                       "pytest.log", cwd=self.top)
        m = re.search(r"(\d+) passed", res.output)
        f = re.search(r"(\d+) (?:failed|error)", res.output)
        passed, failed = int(m.group(1)) if m else 0, int(f.group(1)) if f else 0
        if res.returncode and not failed:
            failed = 1
        self.res.count("tools", "pytest tests/", passed, failed,
                       self.tail(res.output) if failed else "")

    def st_series(self):
        res = self.run([os.path.join(self.top, "scripts/export"), "--check"])
        self.res.case("series", "export --check: kernel-patches/ matches the sources",
                      res.returncode == 0, (res.stderr or res.stdout).strip())
        res = self.run([os.path.join(self.top, "scripts/apply"), "--force"])
        self.res.case("series", "apply: the check tree build/check/linux", res.returncode == 0,
                      self.tail(res.stderr))
        if res.returncode:
            raise PvrtError("no workspace: later stages cannot run")
        # git am onto a pristine base must give the tree apply made.
        gitdir = base.base_repo(os.environ.get("KERNEL_SRC"))
        with tempfile.TemporaryDirectory(prefix="pvrt-am-", dir=self.bdir) as tmp:
            wt = os.path.join(tmp, "am")
            gitutil.run(["git", "clone", "-q", "--shared", "--no-checkout", gitdir, wt])
            gitutil.run(["git", "-C", wt, "checkout", "-q", "--detach",
                         gitutil.out(["git", "--git-dir", gitdir, "rev-parse", base.BASE_REF])])
            patches = sorted(os.path.join(self.top, "kernel-patches", n)
                             for n in os.listdir(os.path.join(self.top, "kernel-patches"))
                             if n.endswith(".patch"))
            res = self.run(["git", "-C", wt, "-c", "user.name=pvrt", "-c",
                            "user.email=pvrt@example.org", "am", "-q"] + patches)
            ok = res.returncode == 0
            detail = self.tail(res.stdout + res.stderr)
            if ok:
                am_tree = gitutil.out(["git", "-C", wt, "rev-parse", "HEAD^{tree}"])
                ws_tree = gitutil.out(["git", "-C", self.tree, "rev-parse", "HEAD^{tree}"])
                ok, detail = am_tree == ws_tree, f"git am tree {am_tree} != apply tree {ws_tree}"
            self.res.case("series", f"git am kernel-patches/*.patch ({len(patches)} patches)"
                          " gives the tree apply gives", ok, detail)

    def st_checkpatch(self):
        """checkpatch.pl --strict from the top of the workspace, as maintainers run it."""
        allow = lint.checkpatch_allow(self.top)
        pdir = os.path.join(self.top, "kernel-patches")
        files = sorted(n for n in os.listdir(pdir) if n.endswith(".patch"))
        qnames = [p.name for p in series.load(self.top)]
        if len(files) != len(qnames):
            raise PvrtError(f"kernel-patches/ has {len(files)} patches, queue/series"
                             f" {len(qnames)}: run scripts/export")
        unused = set(allow)
        for name, qname in zip(files, qnames):
            res = subprocess.run(["scripts/checkpatch.pl", "--strict", "--show-types", "--terse",
                                  os.path.join(pdir, name)],
                                 capture_output=True, text=True, cwd=self.tree)
            bad, used = lint.checkpatch_verdict(res.stdout, res.stderr, res.returncode, qname,
                                                allow)
            for key in used:
                print(f"        listed {key}: {allow[key]}")
            unused -= set(used)
            self.res.case("checkpatch", f"checkpatch --strict {name}", not bad, "\n".join(bad))
        self.res.case("checkpatch", "every entry of queue/checkpatch-checks still occurs",
                      not unused, "stale: " + ", ".join(sorted(unused)))

    def st_bisect(self):
        """Every patch builds: the project kernel's configuration, commit by
        commit, in the check tree itself.  Each commit's build is an
        incremental make, so make decides what a change reaches (every
        object that includes a changed header is compiled again, every
        Kconfig change reconfigures), and the last commit's build is the
        project kernel that the x86_64, boot and torture stages use."""
        out = os.path.join(self.bdir, "out", "project")
        variant = build.Variant("project", self.top)

        commits = self.commits()

        def build_one(i, commit, log_name):
            try:
                dropped = build.configure(self.top, self.tree, variant, out,
                                          strict=i == len(commits))
            except (subprocess.CalledProcessError, PvrtError) as e:
                return Built(1, f"configuration failed: {errors.describe(e)}")
            # A fragment line may name an option a later commit adds; one
            # that this commit's Kconfig has and still did not take (a
            # wrong dependency) fails the commit.
            known = [d for d in dropped if kconfig_defines(self.tree, d.split(":")[0])]
            if known:
                return Built(1, "Kconfig did not take these fragment lines although this"
                             " commit defines their options:\n  " + "\n  ".join(known))
            if dropped:
                print(f"        (left out: {len(dropped)} fragment lines whose options a later"
                      " commit adds)", flush=True)
            res = self.run(build.make_cmd(out, variant.arch, "bzImage", "modules"), log_name,
                           cwd=self.tree)
            if i == len(commits) and res.returncode == 0:
                self.built.add("project")
            return res

        bisect_builds(self.tree, commits, build_one, self.res, self.run_ok)

    def run_ok(self, res):
        return res.returncode == 0, self.tail(res.output)

    def kunitconfigs(self, tree, arch):
        """The project's KUnit configuration: variants/kunit.config + the series' own."""
        return [os.path.join(self.top, "variants", "kunit.config")] + [
            p for p in build.series_kunitconfigs(self.top, tree, arch) if os.path.exists(p)]

    def st_uml_kunit(self):
        """The suites on a uniprocessor UML kernel (kunit.py's own configuration)."""
        self.kunit("kunit-uml", "KUnit on UML",
                   ["run", "--timeout=600"] +
                   [f"--kunitconfig={k}" for k in self.kunitconfigs(self.tree, "um")],
                   self.uml_build, "kunit-uml.log")

    def changed_lines(self):
        return lint.changed_lines(self.tree)

    def build_case(self, stage, name, variant):
        """Build VARIANT as one case; returns its output directory or None."""
        try:
            out = build.build(self.top, self.tree, variant,
                              log=lambda m: print("  " + m, flush=True))
        except (subprocess.CalledProcessError, PvrtError) as e:
            self.res.case(stage, name, False, errors.describe(e))
            return None
        self.res.case(stage, name, True)
        return out

    def st_x86_build(self):
        self.project_built = False
        out = self.build_case("x86_64", "project kernel builds (x86_64)", "project")
        self.project_built = out is not None
        if out:
            self.built.add("project")
        self.kunitconfigs_stand_alone()
        self.tuned_stock_config(out)
        self.kunit_module_modpost(out)
        changed = self.changed_lines()
        cfiles = sorted(f for f in changed if f.endswith(".c"))
        if not cfiles:
            print("  (the series adds or touches no C file yet: no W=1/sparse targets)")
            return
        if out is None:
            # No build, no lint: every file the lint would cover fails, so
            # that the totals of a broken run stay those of a good one.
            for f in cfiles:
                self.res.case("x86_64", f"W=1 and sparse clean on the series' lines: {f}",
                              False, "not linted: the project kernel did not build")
            return
        self.lint_left = self.lint("x86_64", out, cfiles, changed, "")
        for f in self.lint_left:
            print(f"  (not built in the project config: linted on the debug kernel: {f})")

    def lint(self, stage, out, cfiles, changed, where):
        """W=1 and sparse on the objects of CFILES built in OUT, one case each;
        returns the files OUT's configuration does not build."""
        objs, skipped = lint.lint_objects(self.tree, out, cfiles)
        for obj, files in sorted(objs.items()):
            res = self.run(["make", f"O={out}", f"CC={cc()}", "W=1", "C=2", obj],
                           cwd=self.tree)
            bad = lint.diagnostics_on_changed_lines(res.stdout + res.stderr, self.tree, changed)
            self.res.case(stage, f"W=1 and sparse clean on the series' lines: {obj}"
                          f" ({', '.join(files)}){where}", res.returncode == 0 and not bad,
                          "\n".join(bad[:30]) or self.tail(res.stdout + res.stderr))
        return skipped

    # The series' KUnit suites that are tristate: each must also build as a
    # module (Documentation/dev-tools/kunit/style.rst).
    KUNIT_MODULES = ("pv_mutex_kunit", "pv_spinlock_kunit")

    def kunit_module_modpost(self, out, stage="x86_64", kernel="project"):
        """The KUnit suites, built in here, also build as modules: each
        source compiled as an external module against the KERNEL kernel's
        Module.symvers in OUT, so that modpost rejects a symbol the kernel
        does not export (as max_lock_depth is not); a modpost warning fails
        it too.  One object and modpost each.  The debug kernel's run builds the suites' lockdep parts."""
        for mod in self.KUNIT_MODULES:
            src = os.path.join(self.tree, "kernel", "locking", "tests", f"{mod}.c")
            name = f"{mod} builds as a module (modpost against the {kernel} kernel)"
            if not os.path.exists(src):
                continue
            if out is None:
                self.res.case(stage, name, False,
                              f"not built: the {kernel} kernel did not build")
                continue
            mdir = os.path.join(self.bdir, "out", f"{mod}-module"
                                + ("" if kernel == "project" else f"-{kernel}"))
            shutil.rmtree(mdir, ignore_errors=True)
            os.makedirs(mdir)
            shutil.copy(src, mdir)
            with open(os.path.join(mdir, "Makefile"), "w", encoding="utf-8") as f:
                f.write(f"obj-m += {mod}.o\n")
            res = self.run(["make", f"O={out}", f"CC={cc()}", f"M={mdir}", "modules"],
                           cwd=self.tree)
            # modpost warns (a section mismatch, no MODULE_DESCRIPTION())
            # and still exits 0: a warning fails the case too.
            warned = [ln for ln in (res.stdout + res.stderr).splitlines()
                      if "WARNING: modpost:" in ln]
            self.res.case(stage, name, res.returncode == 0 and not warned and
                          os.path.exists(os.path.join(mdir, f"{mod}.ko")),
                          "\n".join(warned) or self.tail(res.stdout + res.stderr))

    def tuned_stock_config(self, out):
        """variants/stock-tuned, configured (not built) from the check
        tree's base (tree base: build/check/linux-base, with the fragments
        of the check tree), differs from the project kernel's .config only
        in options the series adds: the baseline credits the configuration
        to the configuration, and the project's figures over it to the
        series."""
        name = "stock-tuned differs from project only in options the series adds"
        if out is None:
            self.res.case("x86_64", name, False, "not checked: the project kernel did not build")
            return
        tout = os.path.join(self.bdir, "out", "stock-tuned-config")
        try:
            build.configure(self.top, self.tree, build.Variant("stock-tuned", self.top), tout)
            bad = build.not_series_difference(os.path.join(out, ".config"),
                                              os.path.join(tout, ".config"), self.tree)
        except (subprocess.CalledProcessError, PvrtError) as e:
            self.res.case("x86_64", name, False, errors.describe(e))
            return
        self.res.case("x86_64", name, not bad, "project / stock-tuned:\n  " + "\n  ".join(bad))

    def kunitconfigs_stand_alone(self):
        """Each x86_64 .kunitconfig of the series is complete on its own: kunit.py
        config (olddefconfig, no build) keeps every line, as its users run it."""
        for kcfg in build.series_kunitconfigs(self.top, self.tree, "x86_64"):
            rel = os.path.relpath(kcfg, self.tree)
            res = self.run([sys.executable, "tools/testing/kunit/kunit.py", "config",
                            "--arch=x86_64", f"--kunitconfig={kcfg}",
                            "--build_dir=" + os.path.join(self.bdir, "out", "kunitconfig-x86_64"),
                            f"--make_options=CC={cc()}"], cwd=self.tree)
            self.res.case("x86_64", f"kunit.py config --arch=x86_64 --kunitconfig={rel}"
                          " keeps every line", res.returncode == 0,
                          self.tail(res.stdout + res.stderr))

    def st_allnoconfig(self):
        self.build_case("allnoconfig", "allnoconfig (every feature off) builds", "allnoconfig")
        self.build_case("allnoconfig", "PREEMPT_RT + DEBUG_SPINLOCK (allnoconfig, every"
                        " pv_spinlock operation) builds", "rt-debug-spinlock")

    def debug_kernel(self):
        """The debug twin (build.debug_twin), brought up to date: one kernel
        for the torture scenarios on the debug fragment, the lockdep boot and
        the debug KUnit run."""
        twin = build.debug_twin(self.top)
        out = os.path.join(self.bdir, "out", twin.name)
        build.build_variant(self.top, self.tree, twin, out,
                            log=lambda m: print("  " + m, flush=True))
        self.built.add("project-debug")
        return twin, out

    def st_debug_kunit(self):
        """The series' KUnit suites on the debug twin, QEMU -smp 2."""
        try:
            twin, out = self.debug_kernel()
        except Exception:
            # No kernel, no lint: the cases it would have had fail.
            for f in self.lint_left or ():
                self.res.case("kunit-debug", f"W=1 and sparse clean on the series' lines: {f}"
                              " (debug kernel)", False, "not linted: the debug kernel did not build")
            raise
        res = self.suite_boot("kunit-debug", twin, out, "kunit-debug.log", 1500,
                              twin.cmdline + [KUNIT_SECOND_RULE],
                              "debug kernel boots, runs its suites and powers off",
                              "KUnit on x86_64 with lockdep, KASAN, UBSAN")
        # The one kernel of make check where these cases can check lockdep:
        # an earlier suite's expected lockdep report (pv_mutex_kunit's
        # deadlocks) would make them skip that part.
        bad = kunit.lockdep_parts_unchecked(res.text)
        self.res.case("kunit-debug", "the pv_spinlock rtlock cases' lockdep parts ran with"
                      " lockdep on (passed, not skipped)", not bad,
                      "; ".join(bad) + f" (console: {res.log_path})")
        # The series' C files the project configuration does not build (the
        # lockdep ones), linted here, after the last boot of this kernel:
        # W=1 objects would otherwise be rebuilt before the next boot.
        if self.lint_left:
            for f in self.lint("kunit-debug", out, self.lint_left, self.changed_lines(),
                               " (debug kernel)"):
                print(f"  (built in neither the project nor the debug kernel, not linted: {f})")
        self.kunit_module_modpost(out, "kunit-debug", "debug")
        self.noconv_debug_kunit()

    def noconv_debug_kunit(self):
        """The rules of a converted lock where it is a spinlock_t
        (variants/noconv-debug: CONFIG_PV_SPINLOCK off, lockdep with raw lock
        nesting, DEBUG_ATOMIC_SLEEP): the pv_spinlock KUnit suites and
        lockdep's boot selftests, whose wait-context table has a pv_spinlock
        column.  A small allnoconfig kernel, booted -smp 2."""
        var = build.Variant("noconv-debug", self.top)
        out = os.path.join(self.bdir, "out", var.name)
        build.build_variant(self.top, self.tree, var, out,
                            log=lambda m: print("  " + m, flush=True))
        res = self.suite_boot("kunit-debug", var, out, "kunit-noconv-debug.log", 900,
                              var.cmdline, "unconverted debug kernel boots, runs its suites"
                              " and powers off",
                              "KUnit on x86_64 without PV_SPINLOCK, with lockdep")
        good = re.search(r"Good, all +\d+ testcases passed", res.text)
        self.res.case("kunit-debug", "lockdep's selftests pass without PV_SPINLOCK"
                      " (wait contexts with the pv_spinlock column)", bool(good),
                      f"no 'Good, all N testcases passed' line (console: {res.log_path})")

    def st_rt_kunit(self):
        """The series' KUnit suites on PREEMPT_RT (variants/project-rt), where
        forced threading is always on: built incrementally, booted -smp 2."""
        var = build.Variant("project-rt", self.top)
        out = os.path.join(self.bdir, "out", var.name)
        build.build_variant(self.top, self.tree, var, out,
                            log=lambda m: print("  " + m, flush=True))
        self.built.add("project-rt")
        self.suite_boot("kunit-rt", var, out, "kunit-rt.log", 1500,
                        var.cmdline + [KUNIT_SECOND_RULE],
                        "PREEMPT_RT kernel boots, runs its suites and powers off",
                        "KUnit on x86_64 PREEMPT_RT")

    def suite_boot(self, stage, var, out, log_name, timeout, cmdline, boots, name):
        """Boot VAR's kernel in OUT (-smp 2) so that its built-in KUnit suites
        run: a case that it booted and powered off (BOOTS), the suites'
        counts and the console cases under NAME.  Returns the boot result."""
        log_path = os.path.join(self.logs, log_name)
        print(f"  $ scripts/boot (-smp 2, {var.name}, the suites built in run at boot)",
              flush=True)
        res = boot.boot(build.kernel_image(out), "true", log_path,
                        modroot=os.path.join(out, "modroot"), smp=2, timeout=timeout,
                        append=" ".join(cmdline))
        self.res.case(stage, boots, res.booted and res.rc == 0 and not res.timed_out,
                      "; ".join(res.problems()) or f"rc={res.rc}")
        self.kunit_counted(stage, name, log_path)
        self.console_cases(stage, name, res.text, log_path)
        return res

    def kunit_counted(self, stage, name, log_path):
        """KUnit's results on a boot's console, counted from the KTAP lines."""
        counts = kunit.kunit_counts(self.tree, log_path)
        if counts:
            self.res.count(stage, name, *counts)
        else:
            self.res.case(stage, name, False, f"no KUnit results on the console ({log_path})")

    def console_cases(self, stage, name, text, log_path, allow=()):
        """A console free of WARNING/BUG/lockdep/KASAN/UBSAN reports, and
        every warning a test announced as expected there."""
        found = console.splats(text, allow=allow)
        self.res.case(stage, f"{name}: console free of WARNING/BUG/lockdep/KASAN/UBSAN",
                      not found, "\n".join(f"line {n}: {ln}" for n, ln in found[:20])
                      + f"\n(console: {log_path})")
        missing = console.missing_expected(text)
        self.res.case(stage, f"{name}: every expected warning came", not missing,
                      "; ".join(f"line {n}: {what}" for n, what in missing))

    def st_boot(self):
        if self.project_built is False:
            self.res.case("boot", "not run: the project kernel did not build", False)
            return
        out = os.path.join(self.bdir, "out", "project")
        modroot, kos = self.kunit_modroot(out)
        # futex-pi-timeout and kunit-module run whatever failed before them
        # (their cases would say "no ... section"); the command fails if any
        # step did.
        cmd = ("ikt-check && torture rtmutex_lock 15 locktorture torture_type=rtmutex_lock"
               " nwriters_stress=4"
               " && cyclictest-load 10 hackbench && bench-loader-check; rc=$?;"
               " futex-pi-timeout || rc=1; kunit-module"
               + "".join(f" {m}" for m, missing in kos.items() if not missing)
               + " || rc=1; exit $rc")
        print(f"  $ scripts/boot --variant project --smp 2 --cmd '{cmd}'", flush=True)
        res = boot.boot(build.kernel_image(out), cmd, os.path.join(self.logs, "boot-smoke.log"),
                        modroot=modroot, smp=2, timeout=900,
                        append=" ".join(build.Variant("project", self.top).cmdline
                                        + [KUNIT_SECOND_RULE, torture.DEVKMSG]))
        self.res.case("boot", "validation kernel boots to userspace (QEMU -smp 2)", res.booted,
                      f"see {res.log_path}")
        secs = res.sections()
        # Judged as scripts/torture judges a scenario: its window of the
        # console, its verdict, its progress, no splat.
        scen = torture.Scenario("rtmutex_lock")
        scen.module = "locktorture"
        scen.params = ["torture_type=rtmutex_lock", "nwriters_stress=4"]
        (row,) = torture.verdicts([scen], res, {"rtmutex_lock": 15}, "project/smp2")
        self.res.case("boot", "locktorture rtmutex_lock: End of test: SUCCESS", row["ok"],
                      "; ".join([f"verdict {row['verdict']}"] + ([row["problem"]]
                                                                 if row["problem"] else [])
                                + row["splats"][:3]))
        self.boot_ikt(secs)
        self.boot_preempt_none()
        ct = secs.get("cyclictest")
        lat, detail = None, "no cyclictest section"
        if ct:
            try:
                lat = console.cyclictest(ct[1])
                detail = json.dumps(lat.row())
            except ValueError as e:
                detail = str(e)
        self.res.case("boot", "cyclictest under hackbench ran and parsed",
                      bool(ct) and ct[0] == 0 and lat is not None and lat.samples > 0, detail)
        if lat:
            print(f"        {detail}  (plain TCG: emulator noise, not a latency figure)")
        bl = secs.get("bench-loader")
        self.res.case("boot", "insmod pv_mutex_bench leaves the loader's policy and affinity"
                      " alone", bool(bl) and bl[0] == 0,
                      (bl[1][-600:] if bl else "no bench-loader section"))
        self.boot_futex_pi(secs)
        self.boot_kunit_modules(res, kos)
        self.console_cases("boot", "validation boot", res.text, res.log_path)
        self.res.case("boot", "guest command finished and powered off",
                      res.rc == 0 and not res.timed_out,
                      "; ".join(res.problems()) or f"rc={res.rc}")
        # In-kernel tests built into the validation kernel (the series' suites).
        if build.series_kunitconfigs(self.top, self.tree):
            self.kunit_counted("boot", "KUnit suites built into the validation kernel",
                               res.log_path)
            # A case array two suites share (lib/kunit/test.c does not run
            # a case already KUNIT_SKIPPED) shows a skip without its reason.
            bad = kunit.skips_without_reason(kunit.suites(res.text))
            self.res.case("boot", "KUnit suites built into the validation kernel: every skip"
                          " says why", not bad, "; ".join(bad))

    def kunit_modroot(self, out):
        """The project kernel's modules plus the KUnit modules the x86_64
        stage built against it (kunit_module_modpost), in lib/modules/<release>/kunit
        of a copy: (that directory, {module: None, or why it is not there})
        for each of KUNIT_MODULES whose source the tree has."""
        root = os.path.join(self.bdir, "out", "project-kunit-modroot")
        shutil.rmtree(root, ignore_errors=True)
        if os.path.isdir(os.path.join(out, "modroot", "lib")):
            shutil.copytree(os.path.join(out, "modroot", "lib"), os.path.join(root, "lib"),
                            symlinks=True)
        try:
            with open(os.path.join(out, "include", "config", "kernel.release"),
                      encoding="utf-8") as f:
                release = f.read().strip()
        except OSError:
            release = "unknown"
        kdir = os.path.join(root, "lib", "modules", release, "kunit")
        os.makedirs(kdir)
        image = build.kernel_image(out)
        built = os.path.getmtime(image) if os.path.exists(image) else 0
        kos = {}
        for mod in self.KUNIT_MODULES:
            if not os.path.exists(os.path.join(self.tree, "kernel", "locking", "tests",
                                               f"{mod}.c")):
                continue
            ko = os.path.join(self.bdir, "out", f"{mod}-module", f"{mod}.ko")
            rel = os.path.relpath(ko, self.top)
            if not os.path.exists(ko):
                kos[mod] = f"not loaded: the x86_64 stage did not build {rel}"
            elif os.path.getmtime(ko) < built:
                kos[mod] = (f"not loaded: {rel} is older than the project kernel (the x86_64"
                            " stage did not build it against this kernel)")
            else:
                shutil.copy(ko, kdir)
                kos[mod] = None
        return root, kos

    def boot_kunit_modules(self, res, kos):
        """guest/kunit-module's section of each KUnit module: insmod exited
        0, the suites it ran are those the boot ran built in from it, case
        by case and parameter by parameter the same names, results and
        skip reasons (kunit.module_run_problems), rmmod exited 0, no kernel
        thread of its run left, no splat and every expected warning in the
        section.  A module the x86_64 stage did not build fails."""
        secs = res.sections()
        builtin = kunit.suites(res.text)
        for mod, missing in kos.items():
            name = (f"{mod} as a module: insmod runs its suites as built in (case by case:"
                    " same names, results, skip reasons), rmmod, clean console")
            if missing:
                self.res.case("boot", name, False, missing)
                continue
            sec = secs.get(console.KUNIT_MODULE_SECTION + mod)
            if not sec:
                self.res.case("boot", name, False, f"no {console.KUNIT_MODULE_SECTION}{mod}"
                              f" section (console: {res.log_path})")
                continue
            bad, loaded = kunit.module_section(sec, builtin, mod)
            cases = [c for suite in loaded.values() for c in suite["cases"]]
            print(f"        {mod}: {len(loaded)} suites, {len(cases)} cases:"
                  f" {sum(1 for c in cases if c[1] and c[2] != 'SKIP')} ok,"
                  f" {sum(1 for c in cases if c[2] == 'SKIP')} skipped,"
                  f" {sum(1 for c in cases if not c[1])} not ok", flush=True)
            self.res.case("boot", name, not bad, "\n".join(bad[:20])
                          + f"\n(console: {res.log_path})")

    def boot_futex_pi(self, secs):
        """guest/futex-pi-timeout.c: a FUTEX_LOCK_PI2 waiter's 100 ms timeout
        against an owner running on the other CPU, three runs, each within
        the program's bound (its header says why 500 ms) and each shown to
        have waited on the owner while it ran (queued for the timeout, the
        owner never switched out meanwhile); a guest the program refuses
        (rc 2) fails."""
        sec = secs.get("futex-pi")
        runs = [ln for ln in sec[1] if ": run " in ln] if sec else []
        for ln in runs:
            print("        " + ln)
        self.res.case("boot", "FUTEX_LOCK_PI2 with a 100 ms timeout returns -ETIMEDOUT within"
                      " 500 ms while the owner runs on the other CPU, never switched out"
                      " (3 runs)",
                      bool(sec) and sec[0] == 0 and len(runs) == 3,
                      "\n".join(sec[1][-12:]) if sec else "no futex-pi section")

    def st_lockdep(self):
        """The converted kernel under lockdep: the debug twin (the project's
        with LOCK_STAT, PROVE_LOCKING, PROVE_RAW_LOCK_NESTING,
        DEBUG_ATOMIC_SLEEP, KASAN, UBSAN) through a short stress set, the
        lock advisor's guest command, its KUnit suites off."""
        # scripts/lock-advisor's own kernel (no KASAN, whose cost would be in
        # every hold time) is not booted here: its configuration must still hold.
        adv = advisor.lockstat_twin(self.top, "project")
        try:
            build.configure(self.top, self.tree, adv, os.path.join(self.bdir, "out", adv.name))
            ok, detail = True, ""
        except (subprocess.CalledProcessError, PvrtError) as e:
            ok, detail = False, errors.describe(e)
        self.res.case("lockdep", f"the lock advisor's kernel ({adv.name}) configures: every"
                      " fragment line takes effect", ok, detail)
        twin, out = self.debug_kernel()
        cmd = "lock-advisor 8 stress-set"
        print(f"  $ scripts/lock-advisor --secs 8   (boot only; -smp 2, {twin.name})", flush=True)
        res = boot.boot(build.kernel_image(out), cmd, os.path.join(self.logs, "lockdep.log"),
                        modroot=os.path.join(out, "modroot"), smp=2, timeout=1200,
                        append=" ".join(twin.cmdline + [build.NO_KUNIT]))
        self.res.case("lockdep", "lockdep kernel runs the stress set and powers off",
                      res.booted and res.rc == 0 and not res.timed_out,
                      "; ".join(res.problems()) or f"rc={res.rc}")
        splats = res.splats()
        self.res.case("lockdep", "lockdep, raw lock nesting and atomic-sleep checks silent"
                      " with the converted spinlocks", not splats,
                      "\n".join(f"line {n}: {ln}" for n, ln in splats[:20]))
        try:
            rows, _o, t_sched, warnings = advisor.analyse_text(res.text, [], 0)
            ok, detail = not warnings and bool(rows), "; ".join(warnings) or (
                f"{len(rows)} spinlock_t classes, T_sched mean {t_sched[0]} ns")
        except PvrtError as e:
            ok, detail = False, str(e)
        self.res.case("lockdep", "lock advisor reads the boot's lock_stat, lockdep and T_sched",
                      ok, detail)

    def st_torture(self):
        """The short lock torture: CFLIST's short=N scenarios, N seconds each."""
        scens = torture.select(torture.load(self.top), short=True)
        print(f"  $ scripts/torture --short   ({', '.join(s.name for s in scens)})", flush=True)
        outdir = os.path.join(self.logs, "torture")
        shutil.rmtree(outdir, ignore_errors=True)
        os.makedirs(outdir)
        rows, _ = torture.run(self.top, self.tree, scens, outdir=outdir,
                              log=lambda m: print("  " + m, flush=True))
        self.built.add("project")      # torture.kernel_for brings it up to date first
        if any(r["kernel"].startswith(build.debug_twin(self.top).name + "/") for r in rows):
            self.built.add("project-debug")
        for line in (torture.table(rows).splitlines() + torture.figures(rows)
                     + [torture.summary(rows)]):
            print("        " + line)
        for r in rows:
            what = "must fail: broken or without PI" if r["expect"] == "FAILURE" else "must pass"
            detail = (f"verdict {r['verdict']}, expected {r['expect']}; PI violations"
                      f" {r['pi_violations']}; see {r['log']}")
            if r["problem"]:
                detail = f"{r['problem']}; {detail}"
            if r["splats"]:
                detail += "\n" + "\n".join(r["splats"][:10])
            self.res.case("torture", f"{r['scenario']} on the {r['kernel']} kernel"
                          f" ({r['module']}, {what}): End of test: {r['expect']}",
                          r["ok"], detail)

    # What the preempt=none boot of variants/project-dynamic must show.
    PREEMPT_NONE_WARNING = "ikt: off: the kernel is not preemptible"
    # /proc/irq/ikt's first line says why IKT is off.
    PREEMPT_NONE_HEADING = "# IKT off (preempt=none);"

    def boot_preempt_none(self):
        """variants/project-dynamic booted preempt=none: IKT stays off (its
        boot warning, "# IKT off (preempt=none)" heading /proc/irq/ikt), and ikt_bench
        (hrtimer and timer_list on its stack) runs to its end under the
        debug-objects checks with a clean console."""
        out = self.build_case("boot", "project-dynamic (PREEMPT_DYNAMIC, debug objects) builds",
                              "project-dynamic")
        names = ("preempt=none: IKT off, with its boot warning and '# IKT off (preempt=none)' in"
                 " /proc/irq/ikt",
                 "preempt=none: ikt_bench runs to its end, debug objects silent")
        if out is None:
            for n in names:
                self.res.case("boot", n, False, "not booted: project-dynamic did not build")
            return
        cmd = "head -n 1 /proc/irq/ikt && ikt-bench none samples=20"
        print(f"  $ scripts/boot --variant project-dynamic --cmd '{cmd}'", flush=True)
        res = boot.boot(build.kernel_image(out), cmd,
                        os.path.join(self.logs, "boot-preempt-none.log"),
                        modroot=os.path.join(out, "modroot"), timeout=600,
                        append=" ".join(build.Variant("project-dynamic", self.top).cmdline))
        self.judge_preempt_none(res, names)

    def judge_preempt_none(self, res, names):
        text = res.text
        heading = next((ln.strip() for ln in text.splitlines()
                        if ln.strip().startswith("# IKT ")), "")
        # The behaviour, not only the flag: ikt_bench's plain request ran in
        # hard interrupt context for every sample (no forced threading).
        found, _done = bench_ikt.parse(text)
        thread = found.get("thread")
        hard = thread is not None and thread["threaded"] is False
        off = (self.PREEMPT_NONE_WARNING in text
               and heading.startswith(self.PREEMPT_NONE_HEADING) and hard)
        self.res.case("boot", names[0], res.booted and off,
                      f"warning {'seen' if self.PREEMPT_NONE_WARNING in text else 'missing'};"
                      f" /proc/irq/ikt heading: {heading or '(none)'}; ikt_bench's plain"
                      " handler: " + ("no result" if thread is None else
                                      f"{thread['threaded_n']} of {thread['samples']} samples"
                                      " in a thread") + f"; see {res.log_path}")
        problems = res.problems()
        done = "ikt_bench: done" in text
        self.res.case("boot", names[1], res.booted and done and not problems,
                      "; ".join(problems[:3] + ([] if done else ["no 'ikt_bench: done'"]))
                      + f"; see {res.log_path}")

    def boot_ikt(self, secs):
        """/proc/irq/ikt: only timer-type and justified handlers hard; priority file."""
        rep = secs.get("ikt-report")
        rows, detail = [], "no ikt-report section"
        if rep and rep[0] == 0:
            try:
                rows = console.ikt_report(rep[1])
                detail = ""
            except ValueError as e:
                detail = str(e)
        for r in rows:
            print(f"        irq {r['irq']:>4} {r['action']:20} {r['mode']:8}"
                  f" prio {r['prio'] if r['prio'] is not None else '-':>2}"
                  f" {r['reason'] or ''}")
        bad = console.ikt_unjustified(rows)
        self.res.case("boot", "/proc/irq/ikt: every handler threaded but timer-type and"
                      " justified ones", bool(rows) and not bad and
                      any(r["mode"] == "threaded" for r in rows),
                      detail or "; ".join(f"irq {r['irq']} {r['action']}: hard, reason"
                                          f" {r['reason']}" for r in bad)
                      or "no threaded handler listed")
        pr = secs.get("ikt-prio")
        self.res.case("boot", "/proc/irq/<N>/thread_priority: 70 taken by the thread,"
                      " bad input refused and nothing changed", bool(pr) and pr[0] == 0,
                      "\n".join(pr[1][-20:]) if pr else "no ikt-prio section")
        for name, what in (("ikt-cap", "thread_priority: a write by a task without"
                            " CAP_SYS_NICE through root's descriptor refused by the"
                            " writer's CAP_SYS_NICE check, nothing changed"),
                           ("ikt-hidepid", "/proc/irq/ikt: hidepid=ptraceable hides thread"
                            " pids from the gid= group, hidepid=invisible shows them")):
            sec = secs.get(name)
            self.res.case("boot", what, bool(sec) and sec[0] == 0,
                          "\n".join(sec[1][-20:]) if sec else f"no {name} section")

    # --- the loopback board ---------------------------------------------------------

    # Seconds the board has to answer on SSH after each boot.
    BOARD_TIMEOUT = 180
    # The two kernels of the board stage, in the order the job boots them: the
    # board starts on `board`, boots board-stock by kexec, then board again.
    BOARD_VARIANTS = ("board-stock", "board")
    # The path, not a latency figure: no load, whose work in 5 s (a phase or
    # two of the stress set) is too coarse for the load-work gate between
    # two kernels (a run with 0 of a phase against 1 fails it).
    # A broken board is given up in minutes, not the job's 600 s per kernel.
    BOARD_ARGS = ["--seconds", "5", "--hwlat-seconds", "3", "--load", "none",
                  "--target-boot-timeout", str(BOARD_TIMEOUT)]

    def st_board(self):
        """scripts/validate --target against the loopback board (scripts/board):
        the board starts on variant board's kernel, the short job boots
        board-stock and board by kexec over SSH, and its rows are judged: each
        kernel identified by its build-id, samples, a clean console.  The
        board is stopped whatever happens, and its QEMU must be gone."""
        outs = {v: self.build_case("board", f"{v} kernel builds", v)
                for v in self.BOARD_VARIANTS}
        rows, job = [], "not run: a kernel did not build"
        if board.qemu_pid(self.bdir):           # one left by a run that was killed
            board.stop(self.bdir)
        reports = os.path.join(self.bdir, "report")
        before = set(os.listdir(reports)) if os.path.isdir(reports) else set()
        pid = None
        try:
            if all(outs.values()):
                job = "not run: the board did not start"
                port = board.start(self.top, self.bdir, build.kernel_image(outs["board"]), None,
                                   timeout=self.BOARD_TIMEOUT, die_with_caller=True)
                pid = board.qemu_pid(self.bdir)
                d = board.board_dir(self.bdir)
                argv = ["--variants", ",".join(self.BOARD_VARIANTS),
                        "--target", f"ssh://root@127.0.0.1:{port}",
                        "--target-ssh-config", os.path.join(d, "ssh_config"),
                        "--target-initrd", os.path.join(d, "initramfs.cpio.gz")] + self.BOARD_ARGS
                print(f"  $ scripts/validate {' '.join(argv)}", flush=True)
                # The job stops waiting for a board whose QEMU is gone.
                target.ALIVE = lambda: board.qemu_pid(self.bdir) is not None
                try:
                    rc = validate.main(argv)
                    job = "" if rc == 0 else f"exit status {rc}"
                except Terminated:
                    raise
                except (PvrtError, subprocess.SubprocessError, SystemExit) as e:
                    job = board_error(e)
        except Terminated:
            raise
        except (PvrtError, subprocess.SubprocessError, SystemExit) as e:
            job = f"the board did not start: {board_error(e)}"
        finally:
            target.ALIVE = None
            pid = board.stop(self.bdir) or pid
            new = sorted(set(os.listdir(reports)) - before) if os.path.isdir(reports) else []
            if new:
                try:
                    with open(os.path.join(reports, new[-1], "results.json"),
                              encoding="utf-8") as f:
                        rows = json.load(f)
                except (OSError, ValueError):
                    rows = []
            self.res.case("board", "the board's QEMU is stopped",
                          pid is None or board.gone(pid), f"pid {pid} still runs")
        self.res.case("board", "validate --target ran to its end and exited 0", not job, job)
        self.judge_board(rows, outs)

    def judge_board(self, rows, outs):
        """The board job's rows: hwlatdetect first, then for each kernel one
        run whose build-id (reported by the board) is the build's own, with
        samples and no problem (splat, guest exit status, validity gate)."""
        hw = [r for r in rows if r.get("kind") == "hwlat"]
        self.res.case("board", "hwlatdetect ran on the board and gave a maximum",
                      bool(hw) and "max_us" in hw[0] and not hw[0].get("problems"),
                      "; ".join(hw[0].get("problems") or ()) if hw else "no hwlat row")
        for v in self.BOARD_VARIANTS:
            runs = [r for r in rows if r.get("kind") == "latency" and r.get("variant") == v]
            try:
                want = target.built_build_id(outs[v])[0] if outs.get(v) else None
            except (OSError, PvrtError) as e:
                want, why = None, str(e)
            else:
                why = "not built" if want is None else ""
            got = sorted({str(r.get("build_id")) for r in runs})
            self.res.case("board", f"{v}: the board ran the kernel built, by its build-id",
                          bool(runs) and want is not None and got == [want],
                          why or f"built {want}, the board ran {', '.join(got) or 'nothing'}")
            self.res.case("board", f"{v}: cyclictest samples came back over SSH",
                          bool(runs) and all(r.get("samples") for r in runs),
                          f"samples {[r.get('samples') for r in runs] or 'no run'}")
            problems = [p for r in runs for p in r.get("problems") or []]
            self.res.case("board", f"{v}: a clean console and guest run, valid runs",
                          bool(runs) and not problems and not report.invalid_runs(runs),
                          ("; ".join(problems) or ("no run" if not runs else "invalid runs"))
                          + ("; see " + ", ".join(str(r.get("log")) for r in runs) if runs
                             else ""))

    STAGES = [
        ("tools", "tool self-tests (pytest)", "st_tools"),
        ("series", "series: export --check, apply, git am", "st_series"),
        ("checkpatch", "checkpatch.pl --strict on every patch", "st_checkpatch"),
        ("bisect", "every patch builds (x86_64, the project configuration)", "st_bisect"),
        ("x86_64", "x86_64 project kernel, W=1 and sparse", "st_x86_build"),
        ("boot", "validation boot: KUnit suites, locktorture and cyclictest smoke", "st_boot"),
        ("allnoconfig", "x86_64 allnoconfig builds", "st_allnoconfig"),
        ("kunit-uml", "KUnit on UML", "st_uml_kunit"),
        ("torture", "short lock torture (torture/configs/lock, short=N)", "st_torture"),
        ("lockdep", "converted spinlocks under lockdep: stress-set boot", "st_lockdep"),
        ("kunit-debug", "KUnit on the debug kernel (lockdep, KASAN, UBSAN)", "st_debug_kunit"),
        ("kunit-rt", "KUnit on the PREEMPT_RT kernel (variants/project-rt)", "st_rt_kunit"),
        ("board", "validate --target against the loopback board (kexec over SSH)", "st_board"),
    ]

    # What a stage needs that an earlier stage makes: with --only, what the
    # selection lacks is made first (each maker is incremental: it builds
    # only what is stale).
    NEEDS = {"checkpatch": ["workspace"], "bisect": ["workspace"],
             "kunit-uml": ["workspace"], "x86_64": ["workspace"],
             "allnoconfig": ["workspace"], "boot": ["workspace", "project", "kunit-modules"],
             "torture": ["workspace"], "kunit-debug": ["workspace"], "lockdep": ["workspace"],
             "kunit-rt": ["workspace"], "board": ["workspace"]}
    MAKERS = {"workspace": ("series",), "project": ("x86_64",), "kunit-modules": ("x86_64",)}

    def prepare(self, need):
        """Make NEED, which no selected stage makes."""
        if need == "workspace":
            res = self.run([os.path.join(self.top, "scripts/apply"), "--force"])
            if res.returncode:
                raise PvrtError("no workspace: " + self.tail(res.stderr, 5))
        elif need == "project":
            self.project_built = False
            build.build(self.top, self.tree, "project", log=lambda m: print("  " + m, flush=True))
            self.project_built = True
            self.built.add("project")
        elif need == "kunit-modules":
            # The boot loads them: built against the kernel just made (one
            # built before a kernel change is stale), as the boot's cases.
            self.kunit_module_modpost(os.path.join(self.bdir, "out", "project")
                                      if self.project_built else None, stage="boot")

    # --- the time budget ---------------------------------------------------------

    def timings_path(self):
        return os.path.join(base.cache_dir(), "check-timings.json")

    def load_timings(self):
        try:
            with open(self.timings_path(), encoding="utf-8") as f:
                got = json.load(f)
            return {k: float(v) for k, v in got.items() if isinstance(v, (int, float))}
        except (OSError, ValueError, AttributeError):
            return {}

    def save_timing(self, key, seconds):
        """Record stage KEY's time for the next run's budget.  Two runs (two
        clones) may share the cache: each writes a file of its own and
        renames it; a failure to write is a note, never the end of the run."""
        path = self.timings_path()
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            saved = self.load_timings()
            saved[key] = seconds
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".check-timings.")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({k: round(v) for k, v in saved.items()}, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError as e:
            print(f"  note: stage times not saved ({path}: {e.strerror or e})", flush=True)

    # The kernel each stage boots or lints, which an earlier stage of a whole
    # run builds (the bisect and x86_64 the project kernel, torture the
    # debug kernel).
    BUILT_BY = {"x86_64": "project", "boot": "project", "torture": "project",
                "lockdep": "project-debug", "kunit-debug": "project-debug",
                "kunit-rt": "project-rt"}

    def build_cost(self, key):
        """The build of the kernel stage KEY needs when no stage of this run
        has built it: its cold cost, or an incremental one if an image is there."""
        kernel = self.BUILT_BY.get(key)
        if not kernel or kernel in self.built:
            return 0
        image = build.kernel_image(os.path.join(self.bdir, "out", kernel))
        return KERNEL_BUILD_SECONDS["incremental" if os.path.exists(image) else kernel]

    def expected(self, key, timings):
        """What stage KEY is expected to take: its last time here, else its
        cold time; plus the build of a kernel this run has not built yet."""
        return timings.get(key, self.COLD_SECONDS.get(key, 0)) + self.build_cost(key)

    COLD_SECONDS = COLD_SECONDS

    # What earlier layouts of make check left in build/check and nothing uses.
    # out/board-stock: board-stock is built from the series' base, in
    # out/board-stock-base, since it became a "tree base" variant.
    OBSOLETE = ("bisect", "out/kunit-x86_64", "out/kunit-debug", "out/board-stock")

    def main(self):
        t0 = time.time()
        for d in self.OBSOLETE:
            shutil.rmtree(os.path.join(self.bdir, d), ignore_errors=True)
        budget = self.args.budget if getattr(self.args, "budget", None) is not None \
            else DEFAULT_BUDGET
        timings = self.load_timings()
        only = set(self.args.only.split(",")) if self.args.only else None
        self.uml_build = os.path.join(self.bdir, "out", "uml")
        selected = [k for k, _t, _f in self.STAGES if not only or k in only]
        if budget:
            print(f"time budget: {budget:.0f} s for the stages; a stage that cannot end"
                  " within it is not run", flush=True)
        made, ran = set(), set()
        for key, title, fn in self.STAGES:
            if key not in selected:
                continue
            left = budget - (time.time() - t0)
            extra = self.build_cost(key)
            want = self.expected(key, timings)
            if budget and want > left:
                print(f"\n=== {title}", flush=True)
                self.res.case(key, "not run: time budget", False,
                              f"expected {want:.0f} s, {max(left, 0):.0f} s left of"
                              f" {budget:.0f} s (scripts/check --budget)")
                self.times.append((title + " (not run: time budget)", 0))
                continue
            for need in self.NEEDS.get(key, []):
                if need not in made and not any(m in ran for m in self.MAKERS[need]):
                    self.stage(f"prepare: {need} (for {key})",
                               lambda need=need: self.prepare(need))
                made.add(need)
            t1 = time.time()
            ok = self.stage(title, getattr(self, fn))
            ran.add(key)
            # A whole run's times of stages that ran to their end, for the
            # next run's budget (a stage cut short by a failure is no
            # measure, nor one that had to build another stage's kernel).
            if ok and not only and not extra:
                self.save_timing(key, time.time() - t1)
        print("\n=== stage wall times")
        for name, dt in self.times:
            print(f"  {dt:6.0f}s  {name}")
        print(f"  {time.time() - t0:6.0f}s  total")
        if self.res.failures:
            print("\n=== failures")
            for f in self.res.failures:
                print("  " + f.splitlines()[0])
        # For CI dashboards: every case, as JUnit XML (pytest's own cases
        # are in pytest.xml next to it).
        xml = junit.write(os.path.join(self.logs, "check.xml"), "make check", self.res.junit)
        print(f"JUnit XML: {os.path.relpath(xml, self.top)}")
        print(f"\n{self.res.passed} passed, {self.res.failed} failed")
        return 1 if self.res.failed else 0


def bisect_builds(tree, commits, build_one, res, judge):
    """Check out each of COMMITS in TREE in turn and build it with
    BUILD_ONE(i, commit, log_name); JUDGE(result) gives (ok, detail), recorded
    as one case a commit in RES.  A commit that changes nothing a build reads
    (docs_only) keeps the previous verdict.  TREE is left at the commit or
    branch it was at, whatever happens."""
    branch = subprocess.run(["git", "-C", tree, "symbolic-ref", "-q", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    head = gitutil.out(["git", "-C", tree, "rev-parse", "HEAD"])
    built = False
    try:
        for i, commit in enumerate(commits, 1):
            subject = gitutil.out(["git", "-C", tree, "log", "-1", "--format=%s", commit])
            name = f"[{i}/{len(commits)}] builds: {subject}"
            paths = gitutil.out(["git", "-C", tree, "diff-tree", "-r", "--no-commit-id",
                                 "--name-only", commit]).split()
            if built and docs_only(paths):
                res.case("bisect", name + " (documentation only, previous build stands)", True)
                continue
            gitutil.run(["git", "-C", tree, "checkout", "-q", "--detach", commit])
            ok, detail = judge(build_one(i, commit, f"bisect-{i:02d}.log"))
            res.case("bisect", name, ok, detail)
            built = ok
    finally:
        gitutil.run(["git", "-C", tree, "checkout", "-q"] + ([branch] if branch
                                                              else ["--detach", head]))


class Terminated(SystemExit):
    """SIGTERM or SIGHUP, raised where the check was, so that its finally
    clauses (the board's stop) run."""


def board_error(e):
    """What the board stage says of an exception that ended its job."""
    if isinstance(e, SystemExit):
        return f"exit status {e.code}"
    return str(e) or type(e).__name__


@contextlib.contextmanager
def exit_on_signals(sigs=(signal.SIGTERM, signal.SIGHUP)):
    """SIGS raise Terminated(128 + signal) instead of killing the process
    without running finally clauses; the old handlers back at the end."""
    def handler(signum, _frame):
        raise Terminated(128 + signum)
    # A signal ignored by whoever started the check (nohup, a CI runner's
    # SIGHUP) stays ignored.
    old = {s: signal.signal(s, handler) for s in sigs
           if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/check", description=__doc__,
                                 epilog="example:\n  scripts/check --only series,checkpatch",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated stages: " +
                    ",".join(k for k, _t, _f in Check.STAGES))
    ap.add_argument("--budget", type=float, default=None,
                    help=f"seconds the stages may take (default {DEFAULT_BUDGET}, or"
                    " $PVRT_CHECK_BUDGET; 0: no budget): a stage expected to end past it"
                    " is a failed case 'not run: time budget'")
    args = ap.parse_args(argv)
    if args.budget is None and os.environ.get("PVRT_CHECK_BUDGET"):
        try:
            args.budget = float(os.environ["PVRT_CHECK_BUDGET"])
        except ValueError:
            ap.error(f"PVRT_CHECK_BUDGET={os.environ['PVRT_CHECK_BUDGET']!r} is not a number")
    if args.budget is not None and args.budget < 0:
        ap.error("--budget must be 0 (none) or a number of seconds")
    if args.only is not None:
        known = [k for k, _t, _f in Check.STAGES]
        unknown = [k for k in args.only.split(",") if k not in known]
        if unknown or not args.only:
            ap.error(f"--only: unknown stage(s) {', '.join(unknown) or repr(args.only)};"
                     f" stages: {','.join(known)}")
    # make check works in a tree of its own, build/check/linux, with its own
    # kernel builds and logs: it never resets the developer's workspace
    # build/linux, and a validate run in build/ does not wait for it.
    os.environ["PVRT_BUILD"] = os.path.join(os.environ["PVRT_BUILD"], "check")
    with exit_on_signals(), \
            lock.held(os.path.join(os.environ["PVRT_BUILD"], "run"), "check directory"):
        return Check(args).main()


if __name__ == "__main__":
    entry(main)
