# SPDX-License-Identifier: GPL-2.0
"""scripts/validate --baseline: regression verdicts against a saved run."""

import json

import pytest

from pvrt import baseline, validate

PROV = {"qemu": "QEMU emulator version 7.2.15", "rt-tests": "2.5-1", "stress-ng": "0.15.06-2",
        "busybox-static": "1:1.35.0-4+b3"}


def run(variant, n, mx, p999=None, p99=None, prov=PROV):
    hist = {10: 990, (p99 or 20): 9, (p999 or 30): 1}
    return {"kind": "latency", "variant": variant, "load": "stress-set", "run": n,
            "samples": 1000, "min": 10, "avg": 10.5, "max": mx, "p99": p99 or 20,
            "p999": p999 or 30, "hist": hist, "problems": [], "provenance": dict(prov),
            "load_work": {"stress-set-fork": 10}}


# Five runs' maxima of one kernel, as icount runs of one tree vary (+-30 %).
SAME_A = [310, 402, 288, 350, 371]
SAME_B = [335, 298, 390, 412, 305]
META = {"load": "stress-set", "seconds": 60}


def test_two_runs_of_the_same_tree_are_no_regression():
    base = [run("project", i, m) for i, m in enumerate(SAME_A, 1)]
    new = [run("project", i, m) for i, m in enumerate(SAME_B, 1)]
    assert baseline.refusal(base, META, new, META) == []
    (v,) = baseline.compare(base, new, "stress-set")
    assert v["verdict"] == "no regression"
    assert 0.05 < v["stats"]["max"][2] < 0.95


def test_project_against_project_before_says_which_got_worse():
    before = [run("project-before", i, m, p999=40) for i, m in enumerate([900, 1100, 950,
                                                                          1020, 980], 1)]
    proj = [run("project", i, m, p999=30) for i, m in enumerate(SAME_A, 1)]
    (v,) = baseline.compare(before, proj, "stress-set", {"project": "project-before"})
    assert v["verdict"] == "no regression; better: max, p99.9 smaller"
    # The other way round: project-before measured against project.
    (v,) = baseline.compare(proj, before, "stress-set", {"project-before": "project"})
    assert v["verdict"] == "regression: max, p99.9 larger"
    assert "regression" in baseline.table([v])


def test_three_runs_a_side_cannot_reach_the_level():
    base = [run("project", i, m) for i, m in enumerate(SAME_A[:3], 1)]
    new = [run("project", i, m * 3) for i, m in enumerate(SAME_A[:3], 1)]
    (v,) = baseline.compare(base, new, "stress-set")
    assert v["verdict"].startswith("too few runs for a verdict (3 and 3: the test cannot go"
                                   " below p = 0.050")


def test_invalid_runs_do_not_count():
    base = [run("project", i, m) for i, m in enumerate(SAME_A, 1)]
    new = [run("project", i, m) for i, m in enumerate(SAME_B, 1)]
    new[0]["max"], new[0]["problems"] = 99999, ["console line 3: BUG: x"]
    (v,) = baseline.compare(base, new, "stress-set")
    assert v["runs"] == 4 and v["stats"]["max"][0] < 1000


@pytest.mark.parametrize("edit, why", [
    (lambda rows, meta: [r["provenance"].update(qemu="QEMU emulator version 8.0")
                         for r in rows], "qemu: QEMU emulator version 7.2.15 in the baseline,"
                                         " QEMU emulator version 8.0 here"),
    (lambda rows, meta: meta.update(seconds=20), "seconds: 60 in the baseline, 20 here"),
    (lambda rows, meta: [r.pop("provenance") for r in rows], "qemu: not recorded on this run")])
def test_runs_measured_otherwise_are_refused(edit, why):
    base = [run("project", i, m) for i, m in enumerate(SAME_A, 1)]
    new = [run("project", i, m) for i, m in enumerate(SAME_B, 1)]
    meta = dict(META)
    edit(new, meta)
    assert why in baseline.refusal(base, META, new, meta)


def test_validate_report_with_baseline(tmp_path, capsys):
    """scripts/validate --report NEW --baseline OLD: the table, baseline.json,
    exit 1 on a regression; a refusal is an error that names the reason."""
    for name, rows in (("old", [run("project", i, m) for i, m in enumerate(SAME_A, 1)]),
                       ("new", [run("project", i, 3 * m, p999=90)
                                for i, m in enumerate(SAME_B, 1)])):
        d = tmp_path / name
        d.mkdir()
        (d / "results.json").write_text(json.dumps(rows))
        (d / "meta.json").write_text(json.dumps(dict(META, runs=5, variants=["project"])))
    rc = validate.main(["--report", str(tmp_path / "new"), "--baseline", str(tmp_path / "old")])
    out = capsys.readouterr().out
    assert rc == 1 and "regression: max, p99.9 larger" in out
    saved = json.loads((tmp_path / "new" / "baseline.json").read_text())
    assert saved[0]["verdict"] == "regression: max, p99.9 larger"
    meta = json.loads((tmp_path / "old" / "meta.json").read_text())
    (tmp_path / "old" / "meta.json").write_text(json.dumps(dict(meta, load="hackbench")))
    with pytest.raises(validate.ValidateError, match="load: 'hackbench' in the baseline"):
        validate.main(["--report", str(tmp_path / "new"), "--baseline", str(tmp_path / "old")])
