# SPDX-License-Identifier: GPL-2.0
"""scripts/torture: the lock torture scenarios of torture/configs/lock.

kvm.sh-style runner for QEMU TCG (kvm.sh needs KVM, which this machine does
not have).  Each scenario of torture/configs/lock/CFLIST is a Kconfig
fragment, merged on top of CFcommon and the project kernel
(variants/project), and a .boot file of module parameters written as kernel
parameters (locktorture.torture_type=pv_mutex_lock ...).

Scenarios whose configuration is the same share one kernel and one boot, in
which the guest loads their torture modules one after the other
(guest/torture).  A configuration the project kernel already satisfies
boots build/out/project; one the debug kernel of 'make check' satisfies
(the project kernel with the debug and lock-statistics fragments,
build.debug_twin) boots build/out/project-debug; any other is built once in
build/out/torture-<hash>.  Boots of kernels with KUnit suites built in pass
kunit.enable=0.
The console is parsed into one verdict line per scenario: SUCCESS or FAILURE
as the test printed it, lock acquisitions (or football rounds), priority
inheritance violations, splats, and whether that is what the scenario
expects (CFLIST's expect=FAILURE marks the broken twins).

  scripts/torture                      every scenario, 60 s each
  scripts/torture --short              the short set 'make check' runs
  scripts/torture --duration 150 --debug   a soak on the debug fragment
  scripts/torture --scenarios PVLOCK06,PVLOCK08 --duration 30

Logs and torture.json go to build/results/torture-<time>/; the exit status
is 0 only when every scenario ended as expected.
"""

import argparse
import hashlib
import os
import re
import time

from pvrt import boot, build, console, experiment, junit, lock, logs, results, tools
from pvrt.errors import PvrtError, entry

CFG_DIR = os.path.join("torture", "configs", "lock")
DEBUG_FRAGMENT = os.path.join("variants", "fragments", "debug.config")
MODULES = ("locktorture", "pi_football")
BOOT_SECONDS = 240      # boot, module loads and power-off, generously, under TCG
# Wall seconds per guest second in icount mode at worst: 0.15-0.3x real time
# on this machine, less with the debug fragment and a loaded host.
ICOUNT_SLOWDOWN = 12
# Every boot that runs guest/torture: its markers in the kernel log are never
# rate-limited away.
DEVKMSG = "printk.devkmsg=on"


class TortureError(PvrtError):
    pass


class Scenario:
    def __init__(self, name, expect="SUCCESS", short=None):
        self.name, self.expect, self.short = name, expect, short
        self.icount = False         # boot -smp 1 -icount: guest time from instructions
        self.fragment = ""          # Kconfig text (includes resolved)
        self.module = None          # locktorture or pi_football
        self.params = []            # module parameters
        self.cmdline = []           # other kernel parameters


def read_fragment(top, path, seen=()):
    """A scenario's Kconfig text with '#include <repo path>' lines expanded."""
    if path in seen:
        raise TortureError(f"{path}: #include loop")
    try:
        with open(os.path.join(top, path), encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TortureError(f"{path}: {e.strerror}") from None
    out = []
    for line in text.splitlines():
        m = re.match(r"^#include\s+(\S+)\s*$", line)
        out.append(read_fragment(top, m.group(1), seen + (path,)) if m else line)
    return "\n".join(out) + "\n"


def parse_boot(scen, text):
    for tok in text.split():
        mod, dot, rest = tok.partition(".")
        if dot and mod in MODULES and "=" in rest:
            if scen.module not in (None, mod):
                raise TortureError(f"{scen.name}.boot: parameters of both"
                                   f" {scen.module} and {mod}")
            scen.module = mod
            scen.params.append(rest)
        else:
            scen.cmdline.append(tok)
    if not scen.module:
        raise TortureError(f"{scen.name}.boot: no parameter of "
                           + " or ".join(MODULES))


def load(top, debug=False):
    """The scenarios of CFLIST, in order, with fragments and parameters."""
    cdir = os.path.join(top, CFG_DIR)
    try:
        with open(os.path.join(cdir, "CFLIST"), encoding="utf-8") as f:
            listing = f.read()
    except OSError as e:
        raise TortureError(f"{CFG_DIR}/CFLIST: {e.strerror}") from None
    common = read_fragment(top, os.path.join(CFG_DIR, "CFcommon"))
    if debug:
        common += read_fragment(top, DEBUG_FRAGMENT)
    out = []
    for lineno, line in enumerate(listing.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, *opts = line.split()
        scen = Scenario(name)
        for opt in opts:
            key, _, val = opt.partition("=")
            if key == "expect" and val in ("SUCCESS", "FAILURE"):
                scen.expect = val
            elif key == "short" and val.isdigit() and int(val) > 0:
                scen.short = int(val)
            elif opt == "icount":
                scen.icount = True
            else:
                raise TortureError(f"{CFG_DIR}/CFLIST:{lineno}: bad option '{opt}'")
        scen.fragment = common + read_fragment(top, os.path.join(CFG_DIR, name))
        try:
            with open(os.path.join(cdir, name + ".boot"), encoding="utf-8") as f:
                parse_boot(scen, f.read())
        except OSError as e:
            raise TortureError(f"{CFG_DIR}/{name}.boot: {e.strerror}") from None
        out.append(scen)
    return out


def select(scenarios, names=None, short=False):
    if names:
        known = {s.name: s for s in scenarios}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise TortureError(f"unknown scenario(s) {', '.join(unknown)};"
                               f" known: {', '.join(known)}")
        return [known[n] for n in names]
    if short:
        return [s for s in scenarios if s.short]
    return list(scenarios)


def fragment_key(text):
    """The configuration a fragment asks for, independent of comments and order."""
    vals = build.parse_fragment(text)
    return "\n".join(f"{k}={v}" for k, v in sorted(vals.items()))


def kernel_for(top, tree, fragment, log):
    """(name, output directory, kernel parameters) of a kernel with FRAGMENT.

    The project kernel, brought up to date (incremental), serves every
    scenario whose options it already has; the one debug kernel of 'make
    check' (build.debug_twin) every scenario it satisfies, booted with its
    KUnit suites off; any other configuration gets a kernel of its own."""
    project = os.path.join(os.environ["PVRT_BUILD"], "out", "project")
    key = fragment_key(fragment)
    build.build(top, tree, "project", log=log)
    if not build.check_config(fragment, os.path.join(project, ".config")):
        return "project", project, [build.NO_KUNIT]
    debug = build.debug_twin(top)
    dout = os.path.join(os.environ["PVRT_BUILD"], "out", debug.name)
    build.configure(top, tree, debug, dout)
    if not build.check_config(fragment, os.path.join(dout, ".config")):
        build.build_variant(top, tree, debug, dout, log=log)
        return debug.name, dout, [build.NO_KUNIT]
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    name = f"torture-{digest}"
    out = os.path.join(os.environ["PVRT_BUILD"], "out", name)
    os.makedirs(out, exist_ok=True)
    frag = os.path.join(out, "torture-scenario.config")
    with open(frag, "w", encoding="utf-8") as f:
        f.write(fragment)
    variant = build.Variant("project", top)
    variant.name = name
    # The project kernel without its benchmark modules (which refuse
    # lockdep) and without the KUnit suites it runs at boot.
    variant.fragments = [f for f in variant.fragments
                         if f not in (build.BENCH_FRAGMENT, "series-kunitconfigs")] + [frag]
    build.build_variant(top, tree, variant, out, log=log)
    return name, out, []


# --- console --------------------------------------------------------------------

_WRITES = re.compile(r"Writes:\s+Total: (\d+)")
_PI = re.compile(r"PI checks: (\d+) \(boost (\d+), deboost (\d+)\)\s+Inconclusive: (\d+)\s+"
                 r"Violations: (\d+)")
_VERDICT = re.compile(r"End of test: (SUCCESS|FAILURE|LOCK_HOTPLUG)")
_ROUNDS = re.compile(r"pi_football: \S+ lock=\S+ .*: (\d+) rounds, (\d+) with offense")
_BALL = re.compile(r"ball moves while the defense held: total (\d+) in (\d+) of \d+ games,"
                   r" worst game \d+; high's wait max (\d+) us")
_UNBOOSTED = re.compile(r"holder.s priority .*; (\d+) of \d+ games .*short of it")
# The chain's verdict line.  Its bound was T_cs + 2 T_sched; it is T_cs +
# T_handoff, the calibration rounds' own hand-off term, since pi_football
# judges the chain's time with others' time excluded.
_CHAIN = re.compile(r"high's wait with offense max (\d+) us, bound T_cs \+ (?:2 T_sched|T_handoff)"
                    r" (\d+) us,(?: .*,)? ratio [\d.]+ \(limit (\d+)\.(\d+)\)")
_HANDOFF = re.compile(r"chain time of calibration rounds (\d+)\.\.(\d+) us: T_handoff (\d+) us")
_OTHERS = re.compile(r"others' time in high's wait .*: max (\d+) us in calibration rounds,"
                     r" (\d+) us in games")
_TIMES = re.compile(r"T_sched max (\d+) us .*T_cs max (\d+) us")


def parse_section(lines):
    """What one torture run printed: verdict, counts, figures (None when absent)."""
    text = "\n".join(lines)
    r = {"verdict": None, "acquisitions": None, "pi_checks": None, "pi_boost_checks": None,
         "pi_inconclusive": None,
         "pi_violations": None, "rounds": None, "rounds_offense": None, "ball_moves": None,
         "unboosted": None,
         "wait_max_us": None, "bound_us": None, "over_bound": None,
         "t_sched_us": None, "t_cs_us": None, "handoff_us": None,
         "others_cal_us": None, "others_game_us": None}
    for m in _VERDICT.finditer(text):
        r["verdict"] = m.group(1)
    for m in _WRITES.finditer(text):
        r["acquisitions"] = int(m.group(1))
    for m in _PI.finditer(text):
        (r["pi_checks"], r["pi_boost_checks"], _deboost, r["pi_inconclusive"],
         r["pi_violations"]) = map(int, m.groups())
    m = _ROUNDS.search(text)
    if m:
        r["rounds"], r["rounds_offense"] = int(m.group(1)), int(m.group(2))
    m = _UNBOOSTED.search(text)
    if m:
        r["unboosted"] = int(m.group(1))
    m = _BALL.search(text)
    if m:
        r["ball_moves"], r["wait_max_us"] = int(m.group(1)), int(m.group(3))
        # Games (CPU x round) that went wrong: the ball moved, or the holder
        # was not boosted.
        r["pi_violations"] = int(m.group(2)) + (r["unboosted"] or 0)
    m = _CHAIN.search(text)
    if m:
        r["wait_max_us"], r["bound_us"] = int(m.group(1)), int(m.group(2))
        limit_pct = int(m.group(3)) * 100 + int(m.group(4))
        r["over_bound"] = r["wait_max_us"] * 100 > r["bound_us"] * limit_pct
        r["pi_violations"] = (r["unboosted"] or 0) + (1 if r["over_bound"] else 0)
    m = _TIMES.search(text)
    if m:
        r["t_sched_us"], r["t_cs_us"] = int(m.group(1)), int(m.group(2))
    m = _HANDOFF.search(text)
    if m:
        r["handoff_us"] = int(m.group(3))
    m = _OTHERS.search(text)
    if m:
        r["others_cal_us"], r["others_game_us"] = int(m.group(1)), int(m.group(2))
    return r


def pi_check_on(scen):
    """Whether locktorture checks priority inheritance in SCEN, as the module
    decides from its parameters: pi_check=1, or the default pi_check=-1
    with torture_type=pv_mutex_lock."""
    params = dict(p.split("=", 1) for p in scen.params)
    pi_check = int(params.get("pi_check", -1))
    return pi_check > 0 or (pi_check < 0 and params.get("torture_type") == "pv_mutex_lock")


def no_progress(scen, row):
    """Why a scenario that printed its section tested nothing, or None: a
    locktorture run without a write, or without a PI check where pi_check
    is on; a pi_football run without a round with the offense (mode=chain
    alternates calibration rounds, without it, and game rounds: a
    calibration alone tests no inversion)."""
    if scen.module == "pi_football":
        if not row["rounds"]:
            return "no progress: no rounds"
        if not row["rounds_offense"]:
            return f"no progress: {row['rounds']} rounds, none with offense"
        return None
    if not row["acquisitions"]:
        return "no progress: no writes"
    if pi_check_on(scen) and not row["pi_checks"]:
        return "no progress: no PI checks"
    return None


_START = re.compile(r"^PVRT-TORTURE-START (\S+)\s*$")
_STOP = re.compile(r"^PVRT-TORTURE-STOP (\S+) rc=(-?\d+)\s*$")
# What a broken twin prints when its check caught the broken lock: the
# statistics line that ends in "!!!" because of PI violations.  In a twin's
# run this line is its expected signature, not a splat.
_PI_SIGNATURE = re.compile(r"-torture: PI checks: .*Violations: [1-9]\d* .*!!!$")


def windows(text):
    """The console lines of each scenario's run: {name: (rc or None,
    first line number, [lines])}, between the PVRT-TORTURE-START and
    PVRT-TORTURE-STOP lines guest/torture writes to the kernel log.  Line
    numbers count as console.splats() counts them (from 1).  A run without
    its STOP line (the guest hung, the console was cut) ends where the next
    one starts, or at the end of the console, with rc None."""
    out, cur = {}, None
    for i, line in enumerate(console.lines(text), 1):
        m = _START.match(line)
        if m:
            if cur is not None:
                out[cur] = (None,) + out[cur][1:]
            cur = m.group(1)
            out[cur] = (None, i, [])
            continue
        m = _STOP.match(line)
        if m and m.group(1) == cur:
            out[cur] = (int(m.group(2)),) + out[cur][1:]
            cur = None
            continue
        if cur is not None:
            out[cur][2].append(line)
    return out


def signature_missing(scen, row):
    """Why an expected FAILURE is not the failure its twin exists to show,
    or None.  A broken twin passes only when the check it proves caught the
    broken lock: PI violations for the locktorture twins (pi_inject, or a
    lock without PI under pi_check), ball moves for a football game, high's
    wait above the bound for a chain; a FAILURE for another reason (a
    player's time-out, an aborted run) proves nothing."""
    if scen.expect != "FAILURE" or row["verdict"] != "FAILURE":
        return None
    if scen.module == "pi_football":
        if row["bound_us"] is not None:
            if row["over_bound"]:
                return None
            return "FAILURE without its signature: high's wait within the bound"
        if row["ball_moves"]:
            return None
        return "FAILURE without its signature: no ball moves"
    if row["pi_violations"]:
        return None
    return "FAILURE without its signature: no PI violation"


def verdicts(scenarios, res, durations, kernel):
    """One result row per scenario of a boot.

    A scenario passes when its run printed the verdict it expects, shows the
    work it did (no_progress()), a broken twin its own signature, and
    nothing went wrong in the boot: a splat inside the run's window is its
    own; a splat outside every window, a time-out or a guest that never
    finished fails every scenario of the boot, since it may be any one's.
    """
    wins = windows(res.text)
    owner = {}
    for name, (_rc, first, lines) in wins.items():
        for n in range(first + 1, first + 1 + len(lines)):
            owner[n] = name
    twins = {s.name for s in scenarios if s.expect == "FAILURE"}
    own, stray = {}, []
    for n, line in console.splats(res.text):
        name = owner.get(n)
        if name is None:
            stray.append(f"console line {n}: {line}")
        elif not (name in twins and _PI_SIGNATURE.search(line)):
            own.setdefault(name, []).append(line)
    boot_problems = [p for p in res.problems() if not p.startswith("console line ")] + stray
    rows = []
    for scen in scenarios:
        win = wins.get(scen.name)
        row = {"scenario": scen.name, "kernel": kernel, "seconds": durations[scen.name],
               "expect": scen.expect, "module": scen.module, "log": res.log_path}
        if win is None:
            row.update(parse_section([]))
            row["splats"] = []
            row["problem"] = ("no output: " + "; ".join(res.problems()[:3])) \
                if res.problems() else "no output"
        else:
            rc, _first, lines = win
            row.update(parse_section(lines))
            row["splats"] = own.get(scen.name, [])
            # A run cut before its verdict: that is the problem, not the
            # progress counts it did or did not get to print.
            if row["verdict"] is None:
                row["problem"] = "no End of test line"
            elif rc is None:
                row["problem"] = "no PVRT-TORTURE-STOP line: the run did not end"
            elif rc:
                row["problem"] = f"the module did not load or unload (rc={rc})"
            else:
                row["problem"] = no_progress(scen, row) or signature_missing(scen, row)
            if row["problem"] is None and boot_problems:
                row["problem"] = "boot: " + "; ".join(boot_problems[:3])
        row["ok"] = (row["problem"] is None and row["verdict"] == scen.expect
                     and not row["splats"])
        rows.append(row)
    return rows


def junit_cases(rows):
    """The rows as JUnit cases: (kernel, scenario, ok, why)."""
    out = []
    for r in rows:
        why = "; ".join(([r["problem"]] if r["problem"] else [])
                        + [f"verdict {r['verdict']}, expected {r['expect']}"]
                        + r["splats"][:5] + [f"log {r['log']}"])
        out.append((r["kernel"], r["scenario"], r["ok"], why))
    return out


def summary(rows):
    """The closing line, as kvm.sh ends with one: how many scenarios ran,
    passed and failed, and the splats seen."""
    bad = [r["scenario"] for r in rows if not r["ok"]]
    return (f"Summary: {len(rows)} scenarios, {len(rows) - len(bad)} ok, {len(bad)} NOT OK"
            + (f" ({', '.join(bad)})" if bad else "")
            + f"; splats {sum(len(r['splats']) for r in rows)}")


def guest_cmd(scenarios, durations):
    parts = []
    for scen in scenarios:
        parts.append(" ".join(["torture", scen.name, str(durations[scen.name]), scen.module]
                              + scen.params))
    # Every scenario runs even when one fails; the sections carry the verdicts.
    return "; ".join(parts) + "; true"


def fmt(val):
    return "-" if val is None else str(val)


def table(rows):
    head = ("scenario", "kernel", "secs", "verdict", "expected", "acq/rounds", "PI viol",
            "splats", "result")
    out = [head]
    for r in rows:
        work = r["acquisitions"] if r["acquisitions"] is not None else r["rounds"]
        out.append((r["scenario"], r["kernel"], str(r["seconds"]), fmt(r["verdict"]),
                    r["expect"], fmt(work), fmt(r["pi_violations"]), str(len(r["splats"])),
                    "ok" if r["ok"] else "NOT OK" + (f" ({r['problem']})" if r["problem"]
                                                     else "")))
    widths = [max(len(row[i]) for row in out) for i in range(len(head) - 1)]
    lines = []
    for row in out:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
    return "\n".join(lines)


def figures(rows):
    """The football and chain figures, a line each."""
    out = []
    for r in rows:
        if r["module"] != "pi_football" or r["verdict"] is None:
            continue
        if r["bound_us"] is not None:
            ratio = r["wait_max_us"] / r["bound_us"] if r["bound_us"] else float("inf")
            if r.get("handoff_us") is None:
                term = f"2 T_sched {2 * (r['t_sched_us'] or 0)} us"
            else:
                term = (f"T_handoff {r['handoff_us']} us (2 T_sched"
                        f" {2 * (r['t_sched_us'] or 0)} us; others' time excluded, max"
                        f" {r['others_cal_us']} us in calibration, {r['others_game_us']} us"
                        f" in games)")
            out.append(f"{r['scenario']}: chain: high's wait max {r['wait_max_us']} us,"
                       f" T_cs {r['t_cs_us']} us + {term}"
                       f" = {r['bound_us']} us, ratio {ratio:.2f}, rounds {r['rounds']}")
        else:
            out.append(f"{r['scenario']}: football: {r['rounds']} rounds, ball moves"
                       f" {r['ball_moves']}, unboosted holders {r['unboosted']},"
                       f" high's wait max {r['wait_max_us']} us")
    return out


def run(top, tree, scenarios, duration=None, smp=2, outdir=None, log=print):
    """Build, boot and judge SCENARIOS; returns the result rows."""
    durations = {s.name: duration or s.short or 60 for s in scenarios}
    groups = {}
    for scen in scenarios:
        key = (fragment_key(scen.fragment), tuple(scen.cmdline), scen.icount)
        groups.setdefault(key, []).append(scen)
    outdir = outdir or experiment.new_results_dir(os.environ["PVRT_BUILD"], "torture-")
    rows, kernels = [], {}
    for n, ((key, cmdline, icount), scens) in enumerate(groups.items(), 1):
        if key not in kernels:      # SMP and icount groups share a kernel
            kernels[key] = kernel_for(top, tree, scens[0].fragment, log)
        kname, kout, kargs = kernels[key]
        total = sum(durations[s.name] for s in scens)
        clock = "icount" if icount else f"smp{smp}"
        log(f"torture: boot {n}/{len(groups)}: {kname} kernel, {clock},"
            f" {', '.join(s.name for s in scens)} ({total} s of torture)")
        append = " ".join(build.Variant("project", top).cmdline + kargs + list(cmdline)
                          + [DEVKMSG])
        t0 = time.time()
        res = boot.boot(build.kernel_image(kout), guest_cmd(scens, durations),
                        os.path.join(outdir, f"boot-{n:02d}-{kname}.log"),
                        modroot=os.path.join(kout, "modroot"), smp=smp, icount=icount,
                        timeout=BOOT_SECONDS + (ICOUNT_SLOWDOWN if icount else 3) * total,
                        append=append)
        log(f"torture: boot {n}/{len(groups)} done in {time.time() - t0:.0f} s")
        rows += verdicts(scens, res, durations, f"{kname}/{clock}")
        results.save(rows, os.path.join(outdir, "torture.json"))
        junit.write(os.path.join(outdir, "torture.xml"), "torture", junit_cases(rows))
    return rows, outdir


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/torture", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", help="comma-separated scenario names (default: all)")
    ap.add_argument("--short", action="store_true",
                    help="the short set of CFLIST (short=N), for N seconds each")
    ap.add_argument("--duration", type=int, help="seconds per scenario (default 60,"
                    " or CFLIST's short=N with --short)")
    ap.add_argument("--debug", action="store_true",
                    help=f"merge {DEBUG_FRAGMENT} into every scenario")
    ap.add_argument("--smp", type=int, default=2, help="guest CPUs (default 2)")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = ap.parse_args(argv)
    if args.duration is not None and args.duration < 1:
        ap.error("--duration must be at least 1")
    top = os.environ["PVRT_TOP"]
    tree = os.path.join(os.environ["PVRT_BUILD"], "linux")
    scenarios = load(top, debug=args.debug)
    chosen = select(scenarios, args.scenarios.split(",") if args.scenarios else None,
                    args.short)
    if args.list:
        for s in chosen:
            print(f"{s.name:10} {s.module:12} expect {s.expect:8}"
                  f" {'short=' + str(s.short) if s.short else ''}  {' '.join(s.params)}")
        return 0
    if not chosen:
        raise TortureError("no scenario selected")
    tools.require()
    if not os.path.isfile(os.path.join(tree, "Makefile")):
        raise TortureError(f"{tree} is not a kernel tree (run scripts/apply first)")
    rows, outdir = run(top, tree, chosen, args.duration, args.smp,
                       log=logs.logger("torture"))
    print(table(rows))
    for line in figures(rows):
        print(line)
    print(summary(rows))
    print(f"results: {outdir}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
