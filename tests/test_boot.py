# SPDX-License-Identifier: GPL-2.0
"""pvrt.boot: QEMU does not outlive the runner, however the wait ends."""

import os
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts", "lib"))
from pvrt import boot  # noqa: E402

STUB = """#!/bin/sh
echo $$ > "{pidfile}"
echo "stub qemu: $*"
exec sleep 60
"""


@pytest.fixture
def stub_qemu(tmp_path, monkeypatch):
    """A qemu-system-x86_64 on PATH that records its pid and hangs."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    pidfile = tmp_path / "qemu.pid"
    qemu = bindir / boot.QEMU
    qemu.write_text(STUB.format(pidfile=pidfile))
    qemu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    kernel, initrd = tmp_path / "bzImage", tmp_path / "initrd.cpio.gz"
    kernel.write_bytes(b"kernel")
    initrd.write_bytes(b"")
    return dict(kernel=str(kernel), initrd=str(initrd), pidfile=pidfile,
                log=str(tmp_path / "console.log"), top=str(tmp_path),
                build_dir=str(tmp_path / "build"))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return f.read().split(") ", 1)[1][0] != "Z"


def wait_for(pred, secs=10):
    end = time.time() + secs
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_qemu_and_says_so(stub_qemu):
    s = stub_qemu
    res = boot.boot(s["kernel"], "true", s["log"], initrd=s["initrd"], timeout=1,
                    top=s["top"], build_dir=s["build_dir"])
    assert res.timed_out
    pid = int(s["pidfile"].read_text())
    assert not alive(pid)
    assert "stub qemu:" in res.text


def test_interrupt_kills_qemu(stub_qemu, monkeypatch):
    s = stub_qemu
    real_wait = subprocess.Popen.wait

    def interrupted_wait(self, timeout=None):
        if timeout is not None:         # the runner's wait for the guest
            assert wait_for(s["pidfile"].exists)
            raise KeyboardInterrupt
        return real_wait(self)

    monkeypatch.setattr(subprocess.Popen, "wait", interrupted_wait)
    with pytest.raises(KeyboardInterrupt):
        boot.boot(s["kernel"], "true", s["log"], initrd=s["initrd"], timeout=600,
                  top=s["top"], build_dir=s["build_dir"])
    pid = int(s["pidfile"].read_text())
    assert wait_for(lambda: not alive(pid), 5), "QEMU outlived an interrupted boot"


def test_a_variant_boots_its_builds_kernel_from_the_base_build(tmp_path, monkeypatch):
    """scripts/boot --variant threadirqs boots stock's kernel, built from
    the series' base in out/stock-base, with threadirqs on its command line."""
    top = os.path.join(os.path.dirname(__file__), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setattr(boot.tools, "require", lambda *a: None)
    seen = []

    class Booted(Exception):
        pass

    def fake_boot(kernel, cmd, log, initrd, modroot, *a, **k):
        seen.append((kernel, modroot, a[2]))
        raise Booted
    monkeypatch.setattr(boot, "boot", fake_boot)
    with pytest.raises(Booted):
        boot.main(["--variant", "threadirqs", "--cmd", "true"])
    out = str(tmp_path / "out" / "stock-base")
    assert seen == [(os.path.join(out, "arch/x86/boot/bzImage"), os.path.join(out, "modroot"),
                     "threadirqs")]


def test_the_help_example_names_the_stock_kernels_build_dir(capsys):
    from pvrt import build
    top = os.path.join(os.path.dirname(__file__), "..")
    with pytest.raises(SystemExit):
        boot.main(["--help"])
    assert f"--modules {build.out_dir(top, 'stock', 'build')}/modroot" in capsys.readouterr().out


def test_plain_tcg_boots_skip_the_io_apic_timer_check(stub_qemu):
    """A plain-TCG boot at a host load of 12 panicked "IO-APIC + timer
    doesn't work!": its command line carries no_timer_check; an icount
    boot's is left as it was."""
    s = stub_qemu
    res = boot.boot(s["kernel"], "true", s["log"], initrd=s["initrd"], timeout=1,
                    top=s["top"], build_dir=s["build_dir"])
    assert " no_timer_check" in res.text
    res = boot.boot(s["kernel"], "true", s["log"], initrd=s["initrd"], timeout=1,
                    top=s["top"], build_dir=s["build_dir"], icount=True)
    assert "-icount" in res.text and "no_timer_check" not in res.text
