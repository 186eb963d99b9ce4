# SPDX-License-Identifier: GPL-2.0
"""What the experiments (validate, the benchmarks, trace-latency, devices-check)
share before they boot: the series applied to the workspace, their kernels
built, a results directory.  scripts/build only builds; this orchestrates."""

import os
import shutil
import subprocess
import time

from pvrt import apply as apply_mod, build


def apply_tree(top, bdir, log):
    """Apply the series to the workspace build/linux (KERNEL_SRC or the
    pinned Debian base), with build/linux-base beside it at the base (the
    tree of the "tree base" variants); returns the series tree."""
    tree = os.path.join(bdir, "linux")
    tip = apply_mod.refresh_workspace(top, tree, os.environ.get("KERNEL_SRC"), False)
    log(f"series applied: {tree} at {tip[:12]}")
    return tree


def tree_ids(tree):
    """{"base": ..., "tip": ...}: the commits a report names."""
    ids = {}
    for key, ref in (("base", "refs/pvrt/base"), ("tip", "HEAD")):
        res = subprocess.run(["git", "-C", tree, "rev-parse", "--short=12", ref],
                             capture_output=True, text=True)
        ids[key] = res.stdout.strip() if res.returncode == 0 else None
    return ids


def build_rtla(tree, bdir):
    """tools/tracing/rtla of TREE, built out of tree into build/tools/rtla."""
    out = os.path.join(bdir, "tools", "rtla-build")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["make", "-s", "-C", os.path.join(tree, "tools/tracing/rtla"),
                    f"OUTPUT={out}/"], check=True, stdout=subprocess.DEVNULL)
    dest = os.path.join(bdir, "tools", "rtla")
    shutil.copy2(os.path.join(out, "rtla"), dest + ".tmp")
    os.replace(dest + ".tmp", dest)
    return dest


def apply_and_build(top, bdir, variants, log, base_target=None):
    """Apply the series to build/linux and build each variant's kernel once;
    BASE_TARGET (x86_64_defconfig) as scripts/validate --base gives it.

    Returns (tree, {variant: output directory}): what validate and the
    benchmarks start from.
    """
    tree = apply_tree(top, bdir, log)
    outs, built = {}, {}
    for v in variants:
        name = build.Variant(v, top).build_name
        if name not in built:
            built[name] = (build.build_variant(top, tree, build.Variant(
                name, top, base_target=base_target), log=log) if base_target
                           else build.build(top, tree, name, log=log))
        outs[v] = built[name]
    return tree, outs


def new_results_dir(bdir, prefix="", report_dir=False):
    """build/results/<prefix><time>/ (build/report/<time>/ with REPORT_DIR), created."""
    path = os.path.join(bdir, "report" if report_dir else "results",
                        prefix + time.strftime("%Y%m%d-%H%M%S"))
    # Two runs started in the same second get -2, -3...
    for n in range(1, 100):
        cand = path if n == 1 else f"{path}-{n}"
        try:
            os.makedirs(cand)
            return cand
        except FileExistsError:
            continue
    raise FileExistsError(path)
