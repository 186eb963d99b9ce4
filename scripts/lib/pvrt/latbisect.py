# SPDX-License-Identifier: GPL-2.0
"""scripts/latency-bisect: the commit that made a latency figure worse.

Bisects the commits GOOD..BAD of a kernel tree (default: the workspace
build/linux, the series applied on its base, one commit per patch) with the
rig's deterministic instruction-counted runs as the test of each step:

  1. GOOD and BAD are measured first: --runs cyclictest runs each, SECONDS
     under LOAD, on -smp CPUS, the variant's kernel built from the commit.
  2. A step is bad when its runs' FIGURE is worse than GOOD's: with
     --threshold US, when the median of the runs' figure exceeds it; by
     default by the statistical test of scripts/validate --baseline (a
     one-sided Mann-Whitney U over the runs, level 0.05), so 5 runs per
     step.  BAD must be bad and GOOD good, or the range holds no answer.
  3. A commit that does not build, or whose runs are invalid (a splat, no
     samples, a load that did less than --load-fraction (0.5) of its work
     at GOOD: the validity gates of validate), is skipped as `git bisect
     skip` skips; the search goes on around it.  Each step's load-work
     ratio to GOOD is logged; a step the load gate alone skipped shows its
     figure, as the commit sought may be that one.  One whose first run does not boot to
     its measurement is skipped after that run.

With --improvement the search is for the commit that made the figure
better (git bisect's --term-old/--term-new): GOOD is the older, slower
commit, BAD the newer, faster one, and a step is "new" when its figure is
better than GOOD's by the same test (below --threshold, or the one-sided
test the other way round).

Each step builds incrementally in one build directory (ccache), in a
separate checkout of the tree (build/bisect/linux), so the tree's own
checkout is not touched.  Output: the first bad commit with the figure
before and after it, and a log of every step (bisect.json and bisect.log
under build/results/bisect-<time>/, each step's consoles in a directory
named after its commit).

  scripts/latency-bisect HEAD~2 HEAD --improvement              # the series
  scripts/latency-bisect v6.12.1 v6.12.9 --tree ~/src/linux --variant stock
  scripts/latency-bisect A B --figure p99.99 --threshold 150 --runs 3
  scripts/latency-bisect A B --improvement --threshold 1000 --runs 3
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

from pvrt import baseline, build, experiment, lock, logs, report, validate
from pvrt.errors import PvrtError, entry

FIGURES = {"max": "max", "p99.99": "p9999", "p99.9": "p999", "p99": "p99"}
SKIP = "skip"


class BisectError(PvrtError):
    pass


def git(tree, *args):
    return subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def commits(tree, good, bad):
    """The first-parent commits after GOOD up to BAD, oldest first."""
    try:
        git(tree, "merge-base", "--is-ancestor", good, bad)
    except subprocess.CalledProcessError as e:
        raise BisectError(f"{good} is not an ancestor of {bad} in {tree}") from e
    out = git(tree, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    return out.split() if out else []


def checkout(tree, work, commit):
    """WORK: a detached worktree of TREE at COMMIT, for the steps' builds.
    One left by an earlier bisect of the same tree is reused (its build is
    incremental); one of another tree, or broken, is removed and made anew."""
    def common(d):
        return os.path.realpath(git(d, "rev-parse", "--path-format=absolute",
                                    "--git-common-dir"))
    if os.path.lexists(work):
        try:
            if common(work) == common(tree) and \
                    os.path.realpath(git(work, "rev-parse", "--show-toplevel")) \
                    == os.path.realpath(work):
                return work
        except subprocess.CalledProcessError:
            pass
        try:        # its own tree's bookkeeping, if it has one
            git(work, "worktree", "remove", "--force", work)
        except subprocess.CalledProcessError:
            pass
        if os.path.lexists(work):
            shutil.rmtree(work) if os.path.isdir(work) and not os.path.islink(work) \
                else os.unlink(work)
    os.makedirs(os.path.dirname(work), exist_ok=True)
    try:
        git(tree, "worktree", "prune")
        git(tree, "worktree", "add", "--force", "--detach", work, commit)
    except subprocess.CalledProcessError as e:
        raise BisectError(f"{tree}: cannot make the bisect checkout {work}"
                          f" ({e.stderr.strip()})") from e
    return work


def figure_of(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def judge_load(runs, good_runs=None, fraction=None):
    """Set each run's "load_problem" (report.judge_load's validity gate),
    with GOOD's runs GOOD_RUNS as the measure: every run of a bisect is of
    one variant, so report.judge_load, which compares a run's load work with
    the other kernels', finds only a load that did no work.  Each run's
    "load_ratio" is its work of each kind over the median of GOOD's runs
    (the same load for the same seconds), valid or not; a run with a ratio
    below FRACTION (default report.LOAD_WORK_FRACTION) is invalid, marked
    "load_gate".  Returns RUNS."""
    fraction = report.LOAD_WORK_FRACTION if fraction is None else fraction
    report.judge_load(runs)
    ref = [g["load_work"] for g in good_runs or () if g.get("load_work")]
    for r in runs:
        work = r.get("load_work")
        if r.get("load_problem") or not work or r.get("load") == "none" or not ref:
            continue
        short, ratio = [], {}
        for kind in sorted(set().union(*ref)):
            med = statistics.median(g.get(kind, 0) for g in ref)
            if not med:
                continue
            ratio[kind] = round(work.get(kind, 0) / med, 3)
            if work.get(kind, 0) < fraction * med:
                short.append(f"{kind} {work.get(kind, 0)}, GOOD's median {med:g}")
        r["load_ratio"] = ratio
        if short:
            r["load_gate"] = True
            r["load_problem"] = (f"the load did less than {fraction:.0%} of"
                                 " its work at GOOD: " + "; ".join(short))
    return runs


def load_ratio(runs):
    """The lowest load-work ratio to GOOD of RUNS (judge_load's), or None."""
    vals = [v for r in runs for v in (r.get("load_ratio") or {}).values()]
    return min(vals) if vals else None


def fraction(text):
    """--load-fraction: a number in (0, 1)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return v


# A run's problems that say its kernel did not boot to the measurement
# (a time-out only when the run has no samples either).
NO_BOOT = ("userspace never started", "timed out after", "no cyclictest section")


def boot_failure(row):
    """The problem of run ROW that says it did not boot, or None."""
    if row.get("samples"):
        return None
    return next((p for p in row.get("problems") or () if p.startswith(NO_BOOT)), None)


def verdict(runs, good_runs, key, threshold, load, improvement=False):
    """'good', 'bad' or SKIP for a step's runs (judged by judge_load)
    against GOOD's.  'bad' is the state BAD is in: worse than GOOD, or with
    IMPROVEMENT better."""
    valid = report.latency_rows(runs, load)
    if not valid or len(valid) < len(runs):
        return SKIP
    if threshold is not None:
        fig = figure_of(valid, key)
        return "bad" if (fig < threshold if improvement else fig > threshold) else "good"
    a = [r[key] for r in valid]
    b = [r[key] for r in good_runs]
    p = baseline._mwu_greater(b, a) if improvement else baseline._mwu_greater(a, b)
    return "bad" if p < baseline.ALPHA else "good"


def bisect(commits_, test, log, term=str):
    """The first bad commit of COMMITS_ (oldest first; the last is known
    bad, the one before the first known good) by TEST(commit) -> 'good',
    'bad' or SKIP.  Returns (first bad commit, [commits skipped between
    the last good and it]): with skips next to the answer, the answer is
    the first of a range, as git bisect says "only skipped commits left"."""
    lo, hi = -1, len(commits_) - 1          # lo: last known good index, hi: first known bad
    skipped = set()
    while hi - lo > 1:
        cands = [i for i in range(lo + 1, hi) if i not in skipped]
        if not cands:
            break
        mid = min(cands, key=lambda i: abs(i - (lo + hi) / 2))
        v = test(commits_[mid])
        log(f"step: {commits_[mid][:12]} {term(v)}")
        if v == SKIP:
            skipped.add(mid)
        elif v == "bad":
            hi = mid
        else:
            lo = mid
    return commits_[hi], [commits_[i] for i in range(lo + 1, hi) if i in skipped]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/latency-bisect", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("good", help="a commit whose latency is good")
    ap.add_argument("bad", help="a later commit whose latency is worse")
    ap.add_argument("--tree", help="kernel git tree (default: the workspace build/linux,"
                                   " the series applied)")
    ap.add_argument("--variant", default="project", help="variants/ file (default project)")
    ap.add_argument("--figure", choices=list(FIGURES), default="max")
    ap.add_argument("--threshold", type=float, metavar="US",
                    help="bad when the runs' median figure exceeds US, with"
                         " --improvement new when it is below US (default: the"
                         " statistical test against GOOD's runs)")
    ap.add_argument("--improvement", action="store_true",
                    help="find the commit that made the figure better: GOOD is the"
                         " older, slower commit, BAD the newer, faster one")
    ap.add_argument("--load", default=validate.DEFAULT_LOAD,
                    choices=["hackbench", "stress", "stress-set", "compile-find", "none"])
    ap.add_argument("--cpus", type=int, default=1, choices=range(1, 9), metavar="N")
    ap.add_argument("--seconds", type=validate.positive, default=20)
    ap.add_argument("--runs", type=validate.positive,
                    help="runs per step (default 5; 3 with --threshold)")
    ap.add_argument("--load-fraction", type=fraction, default=report.LOAD_WORK_FRACTION,
                    metavar="F",
                    help="a run whose load did less than F of its work at GOOD is invalid"
                         f" (default {report.LOAD_WORK_FRACTION:g}, the report's gate between"
                         " kernels, not measured for GOOD against GOOD)")
    args = ap.parse_args(argv)
    runs = args.runs or (3 if args.threshold is not None else 5)
    if args.threshold is None and runs < 4:
        ap.error("the statistical test needs 4 runs per step or more to reach its level"
                 " (or give --threshold)")
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    log = logs.logger("latency-bisect")
    # The kernel a step builds: the variant's build (its same-build's), from
    # the commit under test.  A "tree base" variant (a stock baseline) is
    # built from the commit too: with --tree that is a commit of the user's
    # tree; without, a commit of the series, where its base is the same
    # kernel at every step.
    bvar = build.Variant(build.Variant(args.variant, top).build_name, top)  # typo: fails early
    if bvar.from_base and not args.tree:
        raise BisectError(f"variant {args.variant} is built from the series' base (tree base),"
                          " the same kernel at every commit of the series: bisect a variant"
                          " built from the series tree (project, ...), or give --tree to"
                          " bisect another tree's commits")
    bvar.tree = "series"
    tree = os.path.abspath(args.tree) if args.tree else experiment.apply_tree(top, bdir, log)
    try:
        # ^{commit}: an annotated tag names its commit, not the tag object.
        good, bad = (git(tree, "rev-parse", "--verify", "--end-of-options", f"{r}^{{commit}}")
                     for r in (args.good, args.bad))
    except subprocess.CalledProcessError as e:
        raise BisectError(f"{tree}: unknown commit ({e.stderr.strip()})") from e
    todo = commits(tree, good, bad)
    if not todo:
        raise BisectError(f"no commits between {args.good} and {args.bad}")
    outdir = experiment.new_results_dir(bdir, "bisect-")
    work = checkout(tree, os.path.join(bdir, "bisect", "linux"), good)
    out = os.path.join(bdir, "bisect", "out")
    key = FIGURES[args.figure]
    steps = []
    # bisect.json: one schema from the first step on, rewritten after each.
    summary = {"good": good, "bad": bad, "first_bad": None, "before": None, "skipped": [],
               "steps": steps}

    def save():
        with open(os.path.join(outdir, "bisect.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)

    def measure(commit, good_runs=None):
        try:
            git(work, "checkout", "-q", "--detach", commit)
        except subprocess.CalledProcessError as e:
            raise BisectError(f"{work}: cannot check out {commit[:12]}"
                              f" ({e.stderr.strip()})") from e
        subject = git(work, "log", "-1", "--format=%s")
        step = {"commit": commit, "subject": subject, "runs": []}
        steps.append(step)
        try:
            build.build_variant(top, work, bvar, out, log=log)
        except (subprocess.CalledProcessError, PvrtError) as e:
            step["problem"] = f"does not build: {e}"
            save()
            return step
        sdir = os.path.join(outdir, commit[:12])     # each step's consoles kept
        os.makedirs(sdir, exist_ok=True)
        for n in range(1, runs + 1):
            row = validate.measure(top, bdir, work, args.variant, args.seconds, args.load, n,
                                   sdir, out, cpus=args.cpus)
            step["runs"].append(row)
            why = boot_failure(row)
            if why:
                # Its other runs would fail the same way, each after its time-out.
                step["problem"] = (f"does not boot: run {n}: {why}"
                                   + (f"; its other {runs - n} run(s) skipped" if n < runs
                                      else ""))
                save()
                return step
        judge_load(step["runs"], good_runs, args.load_fraction)
        step["load_ratio"] = load_ratio(step["runs"])
        step["figure"] = figure_of(report.latency_rows(step["runs"], args.load), key)
        bad_runs = report.invalid_runs(step["runs"])
        if bad_runs:
            # The reasons a step is skipped, in the log and bisect.json.
            step["problem"] = "invalid runs: " + "; ".join(
                f"run {r.get('run')}: {', '.join(why)}" for r, why in bad_runs)
            if all(r.get("load_gate") and not r.get("problems") and r.get("samples")
                   for r, _why in bad_runs):
                # The regression sought can cut the load's work too: the
                # figure of all its runs, for the warning.
                step["load_gate_only"] = True
                step["figure"] = figure_of([r for r in step["runs"] if r.get("samples")], key)
        save()
        return step

    good_step = measure(good)
    good_runs = report.latency_rows(good_step["runs"], args.load)
    if good_step.get("problem") or len(good_runs) < runs:
        raise BisectError(f"GOOD {args.good} does not give {runs} valid runs:"
                          f" {good_step.get('problem') or 'see ' + outdir}")
    names = {"good": "old", "bad": "new"} if args.improvement else {}

    def term(v):
        return names.get(v, v)

    if args.threshold is not None and verdict(good_step["runs"], good_runs, key, args.threshold,
                                              args.load, args.improvement) != "good":
        # Else every step is "bad" and the answer is the first commit, whatever it does.
        raise BisectError(f"GOOD {args.good} is not {term('good')} by the test:"
                          f" {figure_of(good_runs, key)} us is"
                          f" {'already below' if args.improvement else 'over'}"
                          f" --threshold {args.threshold:g}: nothing to bisect")
    good_step["verdict"] = "good"
    save()

    def test(commit):
        step = measure(commit, good_runs)
        step["verdict"] = SKIP if step.get("problem") else verdict(
            step["runs"], good_runs, key, args.threshold, args.load, args.improvement)
        log(f"{commit[:12]} {step['subject']}: {args.figure} {step.get('figure')} us,"
            f" {term(step['verdict'])}" + load_note(step)
            + (f" ({step['problem']})" if step.get("problem") else ""))
        if step.get("load_gate_only"):
            log(f"{commit[:12]}: {gate_warning(step)}")
        save()
        return step["verdict"]

    def load_note(step):
        r = step.get("load_ratio")
        return f", load work {r:.0%} of GOOD's" if r is not None else ""

    def gate_warning(step):
        return (f"skipped only by the load-work gate (load work {step['load_ratio']:.0%} of"
                f" GOOD's): {args.figure} "
                + (f"{step['figure']:g} us" if step.get("figure") is not None else "not measured")
                + ": the commit sought may be this one")

    if test(bad) == SKIP:
        raise BisectError(f"BAD {args.bad} cannot be tested: {steps[-1]['problem']}"
                          f" (see {outdir}): nothing to bisect"
                          + (f"; it was {gate_warning(steps[-1])}: lower --load-fraction"
                             if steps[-1].get("load_gate_only") else ""))
    if steps[-1]["verdict"] != "bad":
        raise BisectError(f"BAD {args.bad} is not {'better' if args.improvement else 'worse'}"
                          f" than GOOD by the test"
                          f" ({args.figure}: {figure_of(good_runs, key)} us at GOOD,"
                          f" {steps[-1].get('figure')} us at BAD): nothing to bisect")
    first, skipped = bisect(todo, test, log, term)
    by_commit = {s["commit"]: s for s in steps}
    idx = todo.index(first)
    # The last commit judged good before it: GOOD when all between were skipped.
    before = next((c for c in reversed(todo[:idx]) if c in by_commit
                   and by_commit[c].get("verdict") == "good"), good)
    what = "first improving commit" if args.improvement else "first bad commit"
    lines = [f"{what}: {first[:12]} {by_commit[first]['subject']}",
             f"  {args.figure} under {args.load}, -smp {args.cpus}, {runs} x {args.seconds} s"
             f" (median): {by_commit[before]['figure']} us at {before[:12]}"
             f" -> {by_commit[first]['figure']} us"]
    if skipped:
        lines.append("  commits before it that could not be tested (skipped): "
                     + ", ".join(c[:12] for c in skipped))
        lines += [f"  {c[:12]} {gate_warning(by_commit[c])}" for c in skipped
                  if by_commit[c].get("load_gate_only")]
    lines.append("steps:")
    lines += [f"  {s['commit'][:12]} {term(s.get('verdict')):5}"
              f" {args.figure} {s.get('figure')}{load_note(s)}  {s['subject']}" for s in steps]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(outdir, "bisect.log"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    summary.update(first_bad=first, before=before, skipped=skipped)
    save()
    print(f"results: {outdir}")
    return 0


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
