# SPDX-License-Identifier: GPL-2.0
"""Regression verdicts against a saved validation run (scripts/validate --baseline).

A run is compared with a saved one kernel by kernel and load: the valid
cyclictest runs of each side give per-run statistics (the maximum, p99.9,
p99) and a one-sided Mann-Whitney U test per statistic asks whether the new
runs are larger (a regression) or smaller (an improvement) than the saved
ones.  The test works on runs, not on samples: samples of one run are not
independent (a load phase moves many at once), runs are.  With three tests
per kernel the level is split (Bonferroni): alpha / 3 each.  The exact test
on n and m runs cannot go below 1 / C(n + m, n): with fewer runs than that
needs, the verdict says so instead of "no regression".

Two runs are comparable only with the same QEMU and guest userspace (the
provenance every run records), the same load and the same seconds per run:
otherwise the comparison is refused.
"""

import math

from pvrt import report
from pvrt.errors import PvrtError

ALPHA = 0.05
STATS = (("max", "max"), ("p999", "p99.9"), ("p99", "p99"))
# What must be the same on both sides for icount figures to compare.
SAME = ("qemu", "rt-tests", "stress-ng", "busybox-static")


class BaselineError(PvrtError):
    pass


def _provenance(rows, key):
    return {r["provenance"].get(key) for r in report.runs_of(rows) if r.get("provenance")}


def refusal(base_rows, base_meta, new_rows, new_meta):
    """Why the two runs cannot be compared, [str] (empty: they can)."""
    why = []
    for key in ("load", "seconds"):
        if base_meta.get(key) != new_meta.get(key):
            why.append(f"{key}: {base_meta.get(key)!r} in the baseline,"
                       f" {new_meta.get(key)!r} here")
    for key in SAME:
        old, new = _provenance(base_rows, key), _provenance(new_rows, key)
        if not old or not new:
            why.append(f"{key}: not recorded on {'both sides' if not old and not new else ('the baseline' if not old else 'this run')}")
        elif old != new:
            why.append(f"{key}: {', '.join(sorted(map(str, old)))} in the baseline,"
                       f" {', '.join(sorted(map(str, new)))} here")
    return why


def _mwu_greater(xs, ys):
    """One-sided exact p-value that XS tend to be larger than YS."""
    from scipy import stats
    return float(stats.mannwhitneyu(xs, ys, alternative="greater", method="exact").pvalue)


def compare(base_rows, new_rows, load, mapping=None):
    """[{variant, baseline, runs, base_runs, stats: {name: (new median, base
    median, p regression, p improvement)}, verdict}] for each kernel of
    NEW_ROWS under LOAD that the baseline has (MAPPING: {variant here:
    variant in the baseline}, default the same name)."""
    mapping = mapping or {}
    new = report.latency_rows(report.judge_load(new_rows), load)
    base = report.latency_rows(report.judge_load(base_rows), load)
    out = []
    for variant, rig in dict.fromkeys((r["variant"], report.rig_of(r)) for r in new):
        bvar = mapping.get(variant, variant)
        xs = [r for r in new if r["variant"] == variant and report.rig_of(r) == rig]
        ys = [r for r in base if r["variant"] == bvar and report.rig_of(r) == rig]
        if not ys:
            continue
        row = {"variant": variant + report._rig_label(rig), "baseline": bvar, "rig": rig,
               "runs": len(xs), "base_runs": len(ys), "stats": {}}
        level = ALPHA / len(STATS)
        worse, better = [], []
        for key, name in STATS:
            a = [r[key] for r in xs if r.get(key) is not None]
            b = [r[key] for r in ys if r.get(key) is not None]
            if not a or not b:
                continue
            p_up, p_down = _mwu_greater(a, b), _mwu_greater(b, a)
            row["stats"][name] = (_median(a), _median(b), p_up, p_down)
            if p_up < level:
                worse.append(name)
            elif p_down < level:
                better.append(name)
        floor = 1 / math.comb(len(xs) + len(ys), len(xs))
        if worse:
            row["verdict"] = "regression: " + ", ".join(worse) + " larger"
        elif floor >= level:
            row["verdict"] = (f"too few runs for a verdict ({len(xs)} and {len(ys)}: the"
                              f" test cannot go below p = {floor:.3f}, the level is"
                              f" {level:.3f}; 5 runs per side can)")
        elif better:
            row["verdict"] = "no regression; better: " + ", ".join(better) + " smaller"
        else:
            row["verdict"] = "no regression"
        out.append(row)
    return out


def _median(vals):
    vals = sorted(vals)
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def table(rows):
    """Text table of compare()'s rows."""
    head = ("kernel", "baseline", "runs", "statistic", "here (median)", "baseline (median)",
            "p larger", "p smaller")
    body = []
    for r in rows:
        for name, (a, b, p_up, p_down) in r["stats"].items():
            body.append((r["variant"], r["baseline"], f"{r['runs']}/{r['base_runs']}", name,
                         f"{a:g}", f"{b:g}", f"{p_up:.3f}", f"{p_down:.3f}"))
        body.append((r["variant"], r["baseline"], "", "verdict", r["verdict"], "", "", ""))
    return report.text_table(head, body)
