# SPDX-License-Identifier: GPL-2.0
"""scripts/validate: every measured run is on disk before the next starts."""

import json
import os

import pytest

from pvrt import build, experiment, report, validate


def _no_build(monkeypatch, tmp_path):
    top = os.path.join(os.path.dirname(__file__), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(experiment, "apply_tree", lambda *a, **k: "tree")
    monkeypatch.setattr(build, "build_variant", lambda top, tree, var, *a, **k:
                        str(tmp_path / "out" / var.name))
    monkeypatch.setattr(experiment, "tree_ids", lambda tree: {"base": "b", "tip": "t"})
    monkeypatch.setattr(validate.tools, "require", lambda *a: None)
    monkeypatch.setattr(validate.initramfs, "ensure", lambda *a: "initrd")


def _row(variant, load, run_no, mx):
    return {"kind": "latency", "variant": variant, "load": load, "run": run_no, "problems": [],
            "samples": 100, "min": 1, "avg": 2.0, "max": mx, "hist": {1: 50, 2: 49, mx: 1}}


def test_results_saved_after_each_run(tmp_path, monkeypatch):
    _no_build(monkeypatch, tmp_path)
    calls = []

    def measure(top, bdir, tree, variant, secs, load, run_no, results_dir, out=None, **rig):
        calls.append(variant)
        if len(calls) == 2:
            raise KeyboardInterrupt     # the user stops the second run
        return _row(variant, load, run_no, 42)

    monkeypatch.setattr(validate, "measure", measure)
    with pytest.raises(KeyboardInterrupt):
        validate.main(["--variants", "stock,project", "--no-devices", "--jobs", "1"])
    (results,) = (tmp_path / "report").iterdir()
    saved = json.loads((results / "results.json").read_text())
    assert [(r["variant"], r["key"]) for r in saved] == [("stock", "latency/stock/stress-set/1")]
    assert not (results / "results.json.tmp").exists()


def test_resume_measures_only_what_is_missing(tmp_path, monkeypatch):
    _no_build(monkeypatch, tmp_path)
    calls = []

    def measure(top, bdir, tree, variant, secs, load, run_no, results_dir, out=None, **rig):
        calls.append((variant, run_no))
        return _row(variant, load, run_no, 40 + run_no)

    monkeypatch.setattr(validate, "measure", measure)
    rdir = tmp_path / "kept"
    rdir.mkdir()
    kept = dict(_row("stock", "stress-set", 1, 99), key="latency/stock/stress-set/1")
    (rdir / "results.json").write_text(json.dumps([kept]))
    (rdir / "meta.json").write_text(json.dumps({"load": "stress-set", "seconds": 20}))
    assert validate.main(["--variants", "stock,project", "--runs", "2", "--no-devices",
                          "--jobs", "1", "--resume", str(rdir)]) == 0
    assert calls == [("project", 1), ("stock", 2), ("project", 2)]
    saved = json.loads((rdir / "results.json").read_text())
    assert len(saved) == 4 and saved[0]["max"] == 99
    assert (rdir / "report.md").exists()


@pytest.mark.parametrize("trees", [None, {"stock": "series 0123456789ab"}])
def test_resume_refuses_to_pool_stock_runs_of_the_series_with_ones_of_the_base(
        tmp_path, monkeypatch, trees):
    """A run saved before stock was built from the base (no kernel_trees,
    or stock's "series") is not resumed with a base-built stock: its runs
    and the new ones would be pooled as one kernel's.  Nothing is measured
    and its meta.json is not rewritten."""
    _no_build(monkeypatch, tmp_path)
    monkeypatch.setattr(validate, "measure", lambda *a, **k: pytest.fail("measured"))
    rdir = tmp_path / "kept"
    rdir.mkdir()
    kept = dict(_row("stock", "stress-set", 1, 99), key="latency/stock/stress-set/1")
    (rdir / "results.json").write_text(json.dumps([kept]))
    meta = {"load": "stress-set", "seconds": 20, "variants": ["stock", "project"]}
    if trees:
        meta["kernel_trees"] = trees
    (rdir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(validate.ValidateError,
                       match="stock built from the series tree there, from the base now"):
        validate.main(["--variants", "stock,project", "--runs", "2", "--no-devices",
                       "--resume", str(rdir)])
    assert json.loads((rdir / "meta.json").read_text()) == meta


def test_a_resumed_run_keeps_each_variants_tree_and_adds_a_new_ones(tmp_path, monkeypatch):
    """meta.json's kernel_trees after a resume: the entries of the run
    resumed stand, a variant added on resume gets its own."""
    _no_build(monkeypatch, tmp_path)
    monkeypatch.setattr(build, "source_text", lambda out: "tree-of " + os.path.basename(out))
    monkeypatch.setattr(validate, "measure", lambda top, bdir, tree, variant, secs, load, n, *a,
                        **k: _row(variant, load, n, 40))
    rdir = tmp_path / "kept"
    rdir.mkdir()
    (rdir / "results.json").write_text("[]")
    (rdir / "meta.json").write_text(json.dumps({
        "load": "stress-set", "seconds": 20, "variants": ["stock"],
        "kernel_trees": {"stock": "base 0123456789ab"}}))
    assert validate.main(["--variants", "stock,project", "--runs", "1", "--no-devices",
                          "--jobs", "1", "--resume", str(rdir)]) == 0
    meta = json.loads((rdir / "meta.json").read_text())
    assert meta["kernel_trees"] == {"stock": "base 0123456789ab", "project": "tree-of project"}


def test_ctrl_c_kills_the_running_boots(tmp_path, monkeypatch):
    _no_build(monkeypatch, tmp_path)
    killed = []
    monkeypatch.setattr(validate.boot, "kill_all", lambda: killed.append(True))

    def measure(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "measure", measure)
    with pytest.raises(KeyboardInterrupt):
        validate.main(["--variants", "stock", "--no-devices"])
    assert killed


def test_unknown_kernel_config_refused_before_building(tmp_path, monkeypatch):
    _no_build(monkeypatch, tmp_path)
    monkeypatch.setattr(experiment, "apply_tree", lambda *a, **k: pytest.fail("applied"))
    with pytest.raises(SystemExit):
        validate.main(["--kernel-config", str(tmp_path / "nope"), "--no-devices"])


def test_bench_ikt_saves_after_each_boot(tmp_path, monkeypatch):
    from pvrt import bench_ikt, boot

    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(experiment, "apply_and_build",
                        lambda *a, **k: ("tree", {"project": str(tmp_path)}))
    text = ("ikt_bench: result hard threaded=0 prio=0 prio_max=0 samples=1 min=1 avg=1 p50=1"
            " p99=1 max=1\nikt_bench: done\n")
    boots = []

    class Res:
        def problems(self):
            return []

    def fake_boot(*a, **k):
        boots.append(k.get("append"))
        if len(boots) == 2:
            raise KeyboardInterrupt
        r = Res()
        r.text = text
        return r

    monkeypatch.setattr(boot, "boot", fake_boot)
    with pytest.raises(KeyboardInterrupt):
        bench_ikt.main(["--loads", "hackbench"])
    (results,) = (tmp_path / "results").iterdir()
    saved = json.loads((results / "bench.json").read_text())
    assert [r["handler"] for r in saved] == ["hard"]


def test_latency_over_time_plot_has_a_panel_per_variant(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [{"variant": v, "run": 1, "max": 900, "series": [(1.0, 30), (2.0, 900)],
             "samples": 10000, "hist": {30: 9999, 900: 1},
             "phases": [("memory", 0.0), ("fork", 1.2)]}
            for v in ("stock", "project")]
    rows.append({"variant": "rt", "run": 1, "max": None})     # a failed run: no panel
    path = report.plot_over_time(rows, str(tmp_path / "lot.png"), "stress-set")
    assert path and os.path.getsize(path) > 1000
    assert report.plot_over_time(rows[2:], str(tmp_path / "none.png"), "none") is None


def test_latency_over_time_plot_leaves_invalid_runs_out(tmp_path, monkeypatch):
    """A run with problems has no panel, even with a series: the first valid
    run of its kernel has it, and a kernel without one has none."""
    pytest.importorskip("matplotlib")
    titles = []

    def save(plt, fig, path, rect=(0, 0, 1, 1)):
        titles.extend(ax.get_title() for ax in fig.axes)
        plt.close(fig)
        return path

    monkeypatch.setattr(report, "_save", save)
    rows = [dict(_row(v, "stress-set", n, mx), series=[(1.0, 1), (2.0, mx)])
            for v, n, mx in (("stock", 1, 900), ("stock", 2, 700), ("project", 1, 90))]
    rows[0]["problems"] = ["console line 812: BUG: scheduling while atomic"]
    rows[2]["problems"] = ["timed out after 640s"]
    assert report.plot_over_time(rows, str(tmp_path / "lot.png"), "stress-set")
    assert titles == ["stock (run 2, max 700 us)"]
    assert report.plot_over_time(rows[2:], str(tmp_path / "none.png"), "stress-set") is None


def test_progress_expects_the_last_run_of_the_same_step(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path))
    p = validate.Progress(2)
    t = p.start("stock: cyclictest 60 s", "stock: cyclictest 60 s", 420)
    assert "[1/2] stock: cyclictest 60 s: started, expected ~7m00s" in capsys.readouterr().err
    p.end("stock: cyclictest 60 s", "stock: cyclictest 60 s", t - 150)
    assert "[1 of 2 done] stock: cyclictest 60 s: 2m30s" in capsys.readouterr().err
    q = validate.Progress(1)            # the next run expects what this one took
    assert q.expected("stock: cyclictest 60 s", 420) == 150
    assert q.expected("stock: cyclictest 20 s", 180) == 180


@pytest.mark.parametrize("args, says", [
    (["--seconds", "0"], "--seconds: 0 is not a positive number"),
    (["--runs", "0"], "--runs: 0 is not a positive number"),
    (["--variants", ""], "--variants: names no kernel"),
    (["--variants", ","], "--variants: names no kernel")])
def test_zero_seconds_runs_and_no_kernel_are_refused(tmp_path, monkeypatch, capsys, args, says):
    """--seconds 0 and --runs 0 are not the defaults, and --variants ""
    measures nothing: each is a usage error before anything is built."""
    _no_build(monkeypatch, tmp_path)
    monkeypatch.setattr(experiment, "apply_tree", lambda *a, **k: pytest.fail("applied"))
    with pytest.raises(SystemExit) as e:
        validate.main(args + ["--no-devices"])
    assert e.value.code == 2 and says in capsys.readouterr().err


def _ikt(handler, load="rt-hog", mx=9000, **kw):
    """A bench-ikt row as bench_ikt.boot_one gives it (ns; hist in us)."""
    return dict({"load": load, "handler": handler, "boot": "", "log": f"{handler}.log",
                 "threaded": handler != "hard", "prio": 50, "samples": 2, "min": 3000,
                 "avg": 6000, "p50": 3000, "p99": mx, "max": mx, "hist": {3: 1, mx // 1000: 1}},
                **kw)


# goal: the reference row it needs
IKT_GOALS = {f"interrupt response {f} under rt-hog: IKT thread / {ref}": ref
             for f in ("p99", "max") for ref in ("threadirqs + chrt", "threadirqs")}


def test_an_ikt_boot_without_results_keeps_its_problems(tmp_path, monkeypatch):
    """A bench-ikt boot that timed out before "ikt_bench: result" yields no
    row: a placeholder row per missing handler carries its problems, and the
    IKT goal says "not enough valid runs" instead of vanishing."""
    from pvrt import bench_ikt

    def boot_one(out, load, b, samples, log_path):
        if b.kernel.startswith("threadirqs"):
            return [], ["timed out after 3600s", f"no 'ikt_bench: done' (see {log_path})"]
        return [_ikt("hard", load), _ikt(b.label, load), _ikt("timer: ktimers", load)], []

    monkeypatch.setattr(bench_ikt, "boot_one", boot_one)
    rows = validate.measure_ikt("out", str(tmp_path), loads=("rt-hog",))
    by = {r["handler"]: r for r in rows}
    assert set(by) == {"hard", "IKT thread", "timer: ktimers", "threadirqs",
                       "timer: ksoftirqd", "threadirqs + chrt", "timer: ksoftirqd + chrt"}
    assert by["IKT thread"]["problems"] == [] and by["IKT thread"]["p99"] == 9000
    for h in ("threadirqs", "timer: ksoftirqd", "threadirqs + chrt", "timer: ksoftirqd + chrt"):
        assert by[h]["samples"] == 0 and by[h]["kind"] == "ikt" and by[h]["max"] is None
        assert by[h]["problems"][0] == "timed out after 3600s"
    head = {h[0]: h for h in report.headline(rows)}
    for goal, ref in IKT_GOALS.items():
        assert head[goal][1:] == ("-", "<= 1.0", f"not enough valid runs: {ref} 0 of 1")
    # The placeholders survive results.json and the report.
    (tmp_path / "results.json").write_text(json.dumps(rows))
    again = validate.load_rows(str(tmp_path / "results.json"))
    assert {h[0]: h for h in report.headline(again)} == head
    md = report.markdown(again, {"load": "stress-set"}, {})
    assert "| rt-hog | threadirqs | ikt=off threadirqs | - | - | 0 | - | - | - | - | - |" in md
    assert ("| rt-hog | threadirqs + chrt | ikt=off threadirqs + chrt -f 90 irq thread +"
            " chrt -f 70 ksoftirqd | - | - | 0 |") in md


def test_an_ikt_goal_with_one_handler_missing_fails_validate(tmp_path, monkeypatch, capsys):
    """Results without one handler of the pair (an older results.json, a
    boot lost): the goal says "not enough valid runs" and validate exits 1,
    as it does for a kernel without a valid latency run."""
    _no_build(monkeypatch, tmp_path)
    monkeypatch.setattr(validate, "measure", lambda *a, **k: pytest.fail("measured"))
    rdir = tmp_path / "kept"
    rdir.mkdir()
    kept = [dict(_row(v, "stress-set", 1, 99), key=f"latency/{v}/stress-set/1")
            for v in ("stock", "project")]
    kept += [dict(_ikt(h), kind="ikt", problems=[], key="seed/ikt")
             for h in ("hard", "IKT thread")]
    (rdir / "results.json").write_text(json.dumps(kept))
    (rdir / "meta.json").write_text(json.dumps({"load": "stress-set"}))
    assert validate.main(["--variants", "stock,project", "--no-devices",
                          "--resume", str(rdir)]) == 1
    out = capsys.readouterr().out
    for goal, ref in IKT_GOALS.items():
        assert f"{goal}: not enough valid runs: {ref} 0 of 1" in out


def test_validate_full_takes_no_ikt_row_that_was_not_threaded(tmp_path, monkeypatch):
    """validate --full's IKT rows are checked as bench-ikt checks them, over
    every sample: a threaded handler that ran hard for some samples, or a
    hard one that ran in a thread, is a problem of its row, and the goal it
    belongs to is not judged."""
    from pvrt import bench_ikt

    def boot_one(out, load, b, samples, log_path):
        rows = [_ikt("hard", load), _ikt(b.label, load), _ikt(b.timer, load)]
        if b.kernel == "ikt":
            rows[1].update(threaded=None, threaded_n=1)
        return rows, []

    monkeypatch.setattr(bench_ikt, "boot_one", boot_one)
    rows = validate.measure_ikt("out", str(tmp_path), loads=("hackbench",))
    by = {r["handler"]: r for r in rows}
    assert by["IKT thread"]["problems"] == [
        "hackbench/IKT thread: 1 of 2 samples ran in a thread, expected all"]
    assert by["threadirqs"]["problems"] == [] and by["hard"]["problems"] == []
    head = {h[0]: h for h in report.headline(rows)}
    assert head["interrupt response max under hackbench: IKT thread / threadirqs"][3] == \
        "not enough valid runs: IKT thread 0 of 1"


@pytest.mark.parametrize("argv,base", [(["--full"], "x86_64_defconfig"),
                                       (["--full", "--base", "allnoconfig"], None),
                                       ([], None), (["--base", "defconfig"], "x86_64_defconfig")])
def test_full_builds_from_defconfig(tmp_path, monkeypatch, argv, base):
    """--full measures product-like kernels (x86_64_defconfig plus the
    variant's fragments) unless --base or --kernel-config says otherwise."""
    _no_build(monkeypatch, tmp_path)
    seen = []

    class Built(Exception):
        pass

    def build_variant(top, tree, var, *a, **k):
        seen.append(var.base_target)
        raise Built

    monkeypatch.setattr(build, "build_variant", build_variant)
    with pytest.raises(Built):
        validate.main(argv + ["--variants", "stock", "--no-devices"])
    assert seen == [base]


def test_full_with_a_kernel_config_keeps_it(tmp_path, monkeypatch):
    _no_build(monkeypatch, tmp_path)
    cfg = tmp_path / "my.config"
    cfg.write_text("CONFIG_X=y\n")
    seen = []

    class Built(Exception):
        pass

    def build_variant(top, tree, var, *a, **k):
        seen.append((var.base_target, var.base_config))
        raise Built

    monkeypatch.setattr(build, "build_variant", build_variant)
    with pytest.raises(Built):
        validate.main(["--full", "--kernel-config", str(cfg), "--variants", "stock",
                       "--no-devices"])
    assert seen == [(None, str(cfg))]
    with pytest.raises(SystemExit):
        validate.main(["--base", "defconfig", "--kernel-config", str(cfg)])


def test_a_tuned_stock_kernel_that_differs_in_a_base_option_is_refused(tmp_path, monkeypatch):
    """project / stock-tuned is only what the series' code earns when the
    two kernels' .configs differ in the series' options alone."""
    _no_build(monkeypatch, tmp_path)
    for v in ("project", "stock-tuned"):
        (tmp_path / "out" / v).mkdir(parents=True)
        (tmp_path / "out" / v / ".config").write_text("CONFIG_HZ_1000=y\n")
    monkeypatch.setattr(build, "series_entries", lambda tree: {"PV_MUTEX": ("bool", [])})
    monkeypatch.setattr(validate, "measure", lambda *a, **k: pytest.fail("measured"))
    (tmp_path / "out" / "stock-tuned" / ".config").write_text("CONFIG_HZ_250=y\n")
    with pytest.raises(validate.ValidateError, match="stock-tuned differs from project"):
        validate.main(["--variants", "stock-tuned,project", "--no-devices"])
    outs = {v: str(tmp_path / "out" / v) for v in ("project", "stock-tuned")}
    with pytest.raises(validate.ValidateError, match="CONFIG_HZ_1000: y / n; CONFIG_HZ_250"):
        validate.tuned_check(outs, "tree")
    (tmp_path / "out" / "stock-tuned" / ".config").write_text(
        "CONFIG_HZ_1000=y\n# CONFIG_PV_MUTEX is not set\n")
    (tmp_path / "out" / "project" / ".config").write_text("CONFIG_HZ_1000=y\nCONFIG_PV_MUTEX=y\n")
    validate.tuned_check(outs, "tree")


def test_the_tuned_stock_kernel_is_built_from_the_base(tmp_path, monkeypatch):
    """project / stock-tuned is what the series' code earns only when
    stock-tuned has none of it: validate builds it from the series' base
    (its Variant says so) and the project kernel from the series tree,
    then compares their .configs."""
    _no_build(monkeypatch, tmp_path)
    seen = []

    def build_variant(top, tree, var, *a, **k):
        seen.append((var.name, var.from_base))
        out = tmp_path / "out" / var.out_name
        out.mkdir(parents=True, exist_ok=True)
        (out / ".config").write_text("CONFIG_HZ_1000=y\n")
        return str(out)

    class Planned(Exception):
        pass

    monkeypatch.setattr(build, "build_variant", build_variant)
    monkeypatch.setattr(build, "series_entries", lambda tree: {})
    checked = []
    real_check = validate.tuned_check
    monkeypatch.setattr(validate, "tuned_check",
                        lambda outs, tree: (checked.append(dict(outs)), real_check(outs, tree)))
    monkeypatch.setattr(validate, "plan", lambda *a: (_ for _ in ()).throw(Planned()))
    with pytest.raises(Planned):
        validate.main(["--variants", "stock-tuned,project", "--no-devices"])
    assert seen == [("stock-tuned", True), ("project", False)]
    assert checked[0]["stock-tuned"] == str(tmp_path / "out" / "stock-tuned-base")


@pytest.mark.parametrize("argv,out", [(["--full"], "stock-trace-x86_64_defconfig-base"),
                                      (["--full", "--base", "allnoconfig"], "stock-trace-base")])
def test_the_traced_twin_starts_from_the_measured_kernels_base(tmp_path, monkeypatch, argv, out):
    """The tracer names the sections of the kernel measured: under --full
    (x86_64_defconfig) its twin is built and booted from x86_64_defconfig
    too, not from the allnoconfig-based variant (the FULL run of stop 31
    traced 585-option kernels beside 1621-option measured ones)."""
    _no_build(monkeypatch, tmp_path)
    built, booted = [], []

    def build_variant(top, tree, var, out_dir=None, **k):
        built.append((var.name, var.base_target, os.path.basename(out_dir or "")))
        return str(tmp_path / "out" / var.out_name)

    class Booted(Exception):
        pass

    def boot(image, cmd, log_path, **k):
        booted.append(image)
        raise Booted

    monkeypatch.setattr(build, "build_variant", build_variant)
    monkeypatch.setattr(validate, "measure", lambda *a, **k: pytest.fail("measured"))
    monkeypatch.setattr(validate.experiment, "build_rtla", lambda *a: "rtla")
    monkeypatch.setattr(validate.tracelat.boot, "boot", boot)
    monkeypatch.setattr(validate, "plan", lambda args, *a: [
        j for j in validate_plan(args, *a) if j.key.startswith("trace/")])
    with pytest.raises((Booted, SystemExit, validate.ValidateError)):
        validate.main(argv + ["--variants", "stock", "--no-devices", "--runs", "1"])
    twins = [b for b in built if b[0] == "stock-trace"]
    assert twins and twins[0][2] == out
    assert booted and f"/out/{out}/" in booted[0]


validate_plan = validate.plan


def test_report_reads_an_older_two_cpu_runs_series_per_thread_from_its_log(tmp_path):
    """Results saved before the series named each window's thread: --report
    reads the series again from the run's log (when it is that run's), so
    that an older smp2 run is drawn one line per CPU too."""
    log = tmp_path / "run.log"
    log.write_text("PVRT-BEGIN cyclictest\n# cyclictest start uptime 3.50 interval 200"
                   " reduce 5000\n       0:    4000:      31\n       1:    4999:      40\n"
                   "       0:    6000:      33\nPVRT-END cyclictest rc=0\n")
    old = {"threads": [{}, {}], "log": str(log), "series": [[1.0, 31], [1.0, 40], [2.0, 33]]}
    assert validate.thread_series(dict(old))["series"] == [(1.0, 31, 0), (1.0, 40, 1),
                                                           (2.0, 33, 0)]
    other = dict(old, series=[[1.0, 31], [1.0, 41], [2.0, 33]])
    assert validate.thread_series(dict(other))["series"] == other["series"]
    one = dict(old, threads=[{}])
    assert validate.thread_series(dict(one))["series"] == old["series"]


def test_resume_traces_again_a_tracer_row_of_another_twin():
    """A --full run saved before the twin followed --base traced the
    allnoconfig-based twin: its row names no kernel (or another one) and is
    traced again when the defconfig run is resumed; a row of this twin stays."""
    top = os.path.join(os.path.dirname(__file__), "..")
    old = {"kind": "trace", "variant": "project"}
    mine = dict(old, kernel="project-trace-x86_64_defconfig")
    other = dict(old, kernel="project-trace")
    lat = _row("project", "stress-set", 1, 50)
    rows = [old, mine, other, lat]
    assert validate.stale_trace_rows(rows, top, None, "x86_64_defconfig") == [old, other]
    assert validate.stale_trace_rows(rows, top, None, None) == [old, mine]
