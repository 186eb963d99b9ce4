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

    def measure(top, bdir, tree, variant, secs, load, run_no, results_dir, out=None):
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

    def measure(top, bdir, tree, variant, secs, load, run_no, results_dir, out=None):
        calls.append((variant, run_no))
        return _row(variant, load, run_no, 40 + run_no)

    monkeypatch.setattr(validate, "measure", measure)
    rdir = tmp_path / "kept"
    rdir.mkdir()
    kept = dict(_row("stock", "stress-set", 1, 99), key="latency/stock/stress-set/1")
    (rdir / "results.json").write_text(json.dumps([kept]))
    assert validate.main(["--variants", "stock,project", "--runs", "2", "--no-devices",
                          "--jobs", "1", "--resume", str(rdir)]) == 0
    assert calls == [("project", 1), ("stock", 2), ("project", 2)]
    saved = json.loads((rdir / "results.json").read_text())
    assert len(saved) == 4 and saved[0]["max"] == 99
    assert (rdir / "report.md").exists()


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
    text = ("ikt_bench: result hard threaded=0 prio=0 samples=1 min=1 avg=1 p50=1"
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
             "hist": {30: 9999, 900: 1}, "phases": [("memory", 0.0), ("fork", 1.2)]}
            for v in ("stock", "project")]
    rows.append({"variant": "rt", "run": 1, "max": None})     # a failed run: no panel
    path = report.plot_over_time(rows, str(tmp_path / "lot.png"), "stress-set")
    assert path and os.path.getsize(path) > 1000
    assert report.plot_over_time(rows[2:], str(tmp_path / "none.png"), "none") is None


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
