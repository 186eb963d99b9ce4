# SPDX-License-Identifier: GPL-2.0
"""scripts/throughput: the guest's figures and the comparison table."""

import pytest

from pvrt import throughput
from pvrt.errors import PvrtError

SECTION = """\
hackbench 0 1.104
write 0 10.00 11.00
read 0 11.02 11.66
opens 0 11.70 12.55
hackbench 1 1.210
write 1 20.00 21.28
read 1 21.30 21.94
opens 1 22.00 22.80
""".splitlines()


def test_figures_per_run():
    f = throughput.parse(SECTION)
    assert f["hackbench"] == [1.104, 1.21]
    assert f["write"] == [128.0, 100.0]          # 128 MB in 1.00 s and in 1.28 s
    assert f["read"] == [200.0, 200.0]
    assert f["opens"] == [0.85, 0.8]


def test_missing_or_broken_figures_are_errors_not_zeros():
    with pytest.raises(PvrtError, match="hackbench printed no time"):
        throughput.parse(["hackbench 0 "])
    with pytest.raises(PvrtError, match="two uptimes"):
        throughput.parse(["write 0 12.00"])
    with pytest.raises(PvrtError, match="no measurable time"):
        throughput.parse(["write 0 12.00 12.00"])


def test_table_gives_medians_ranges_and_ratios_to_the_first_kernel():
    stock = {"variant": "stock", "summary": throughput.summary(throughput.parse(SECTION))}
    slow = {"variant": "project", "summary": {"hackbench": (2.314, 2.2, 2.4)}}
    text = throughput.table([stock, slow])
    lines = text.splitlines()
    assert lines[2].split()[0] == "stock" and "x1.00" in lines[2]
    assert "1.16 [1.10..1.21]" in lines[2]
    assert "x2.00" in lines[3]                   # 2.314 / median(1.104, 1.21) = 2.0
    # a figure the kernel's runs did not give is "-", not a number
    assert lines[3].split()[-3:] == ["-", "-", "-"]


def _tree_base_env(tmp_path, monkeypatch):
    import os
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(throughput.tools, "require", lambda *a: None)


def test_no_build_looks_for_a_stock_boot_in_the_base_build(tmp_path, monkeypatch):
    """--no-build --variants threadirqs boots stock's build, which is built
    from the series' base: out/stock-base, not out/threadirqs or out/stock."""
    _tree_base_env(tmp_path, monkeypatch)
    for d in ("threadirqs", "stock"):
        img = tmp_path / "out" / d / "arch/x86/boot"
        img.mkdir(parents=True)
        (img / "bzImage").write_bytes(b"k")
    with pytest.raises(PvrtError, match=f"no kernel in {tmp_path}/out/stock-base;"):
        throughput.main(["--no-build", "--variants", "threadirqs"])
    img = tmp_path / "out" / "stock-base" / "arch/x86/boot"
    img.mkdir(parents=True)
    (img / "bzImage").write_bytes(b"k")
    booted = []

    class Booted(Exception):
        pass

    def boot(image, cmd, log_path, **k):
        booted.append((image, k.get("append")))
        raise Booted
    monkeypatch.setattr(throughput.boot, "boot", boot)
    monkeypatch.setattr(throughput.validate, "run_jobs",
                        lambda jobs, *a, **k: [r for j in jobs for r in j.fn()])
    with pytest.raises(Booted):
        throughput.main(["--no-build", "--variants", "threadirqs"])
    assert booted == [(str(img / "bzImage"), "threadirqs")]
