# SPDX-License-Identifier: GPL-2.0
"""scripts/validate: every measured run is on disk before the next starts."""

import json
import os

import pytest

from pvrt import build, validate


def test_results_saved_after_each_run(tmp_path, monkeypatch):
    top = os.path.join(os.path.dirname(__file__), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(build, "apply_and_build", lambda *a, **k: ("tree", {}))
    calls = []

    def measure(top, bdir, tree, variant, secs, load, run_no, results_dir):
        calls.append(variant)
        if len(calls) == 2:
            raise KeyboardInterrupt     # the user stops the second run
        return {"variant": variant, "run": run_no, "problems": [], "max": 42}

    monkeypatch.setattr(validate, "measure", measure)
    with pytest.raises(KeyboardInterrupt):
        validate.main(["--variants", "stock,project", "--no-devices"])
    (results,) = (tmp_path / "results").iterdir()
    saved = json.loads((results / "results.json").read_text())
    assert saved == [{"variant": "stock", "run": 1, "problems": [], "max": 42}]
    assert not (results / "results.json.tmp").exists()


def test_bench_ikt_saves_after_each_boot(tmp_path, monkeypatch):
    from pvrt import bench_ikt, boot

    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(build, "apply_and_build",
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
             "phases": [("memory", 0.0), ("fork", 1.2)]} for v in ("stock", "project")]
    rows.append({"variant": "rt", "run": 1, "max": None})     # a failed run: no panel
    path = validate.plot_over_time(rows, str(tmp_path / "lot.png"), "stress-set")
    assert path and os.path.getsize(path) > 1000
    assert validate.plot_over_time(rows[2:], str(tmp_path / "none.png"), "none") is None
