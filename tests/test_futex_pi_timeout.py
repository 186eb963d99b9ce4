# SPDX-License-Identifier: GPL-2.0
"""guest/futex-pi-timeout.c against a fake kernel (tests/data/futex-fake.c):
its refusals and the proof that each run waited on a running owner."""

import os
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRAPPED = ("syscall", "getrusage", "fopen", "opendir", "sched_setaffinity",
           "sched_setscheduler", "sleep", "sysconf")


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("no gcc")
    exe = str(tmp_path_factory.mktemp("futex") / "futex-pi-timeout")
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-Wno-unused-parameter", "-pthread",
                    "-o", exe, os.path.join(TOP, "guest", "futex-pi-timeout.c"),
                    os.path.join(TOP, "tests", "data", "futex-fake.c"),
                    "-Wl," + ",".join(f"--wrap={w}" for w in WRAPPED)], check=True)
    return exe


def _root(tmp_path, rt=(950000, 1000000), fair=None):
    """A /proc/sys/kernel and, with FAIR {cpu: (runtime, period) or None}, a
    debugfs fair_server directory (None: that CPU's files are missing)."""
    kdir = tmp_path / "proc" / "sys" / "kernel"
    kdir.mkdir(parents=True)
    (kdir / "sched_rt_runtime_us").write_text(f"{rt[0]}\n")
    (kdir / "sched_rt_period_us").write_text(f"{rt[1]}\n")
    for cpu, vals in (fair or {}).items():
        d = tmp_path / "sys" / "kernel" / "debug" / "sched" / "fair_server" / f"cpu{cpu}"
        d.mkdir(parents=True)
        if vals:
            (d / "runtime").write_text(f"{vals[0]}\n")
            (d / "period").write_text(f"{vals[1]}\n")
    return str(tmp_path)


def _run(prog, root, scenario="spin"):
    r = subprocess.run([prog], capture_output=True, text=True, timeout=60,
                       env={"FAKE": scenario, "FAKE_ROOT": root})
    return r.returncode, r.stdout


def test_waiting_on_a_running_owner_passes(prog, tmp_path):
    rc, out = _run(prog, _root(tmp_path))
    assert rc == 0, out
    assert out.count(", owner switched out 0 times meanwhile: ok") == 3
    assert "fair server: default (not tunable" in out


@pytest.mark.parametrize("scenario", [
    "stall",        # the timeout expired before the waiter queued: it never spun
    "latequeue",    # queued 60 ms into its 100 ms timeout
    "preempted",    # the owner was switched out while the waiter was queued
])
def test_a_run_that_did_not_wait_on_a_running_owner_fails(prog, tmp_path, scenario):
    rc, out = _run(prog, _root(tmp_path), scenario)
    assert rc == 1, out
    assert out.count("NOT SHOWN (no wait on a running owner)") == 3


def test_a_waiter_that_got_the_lock_gives_it_back(prog, tmp_path):
    rc, out = _run(prog, _root(tmp_path), "locked")
    assert rc == 1, out
    assert out.count("returned 0 (locked)") == 3
    assert "EPERM" not in out


@pytest.mark.parametrize("rt, fair, why", [
    # CPU 0's fair server (the waiter's CPU) would end the spin at 450 ms.
    ((950000, 1000000), {0: (50000000, 500000000), 1: (50000000, 1000000000)},
     "cpu0's fair server: its period less its runtime must be at least 600 ms"),
    ((950000, 1000000), {0: (50000000, 1000000000), 1: None},
     "cpu1's fair server cannot be read"),
    # a rest of 3 s does not clear the RT time of a 5 s period
    ((950000 * 5, 5000000), None, "sched_rt_period_us must be at most 3000000"),
    ((500000, 1000000), None, "sched_rt_runtime_us must be -1 or at least 600000"),
])
def test_a_guest_whose_limits_could_end_the_spin_is_refused(prog, tmp_path, rt, fair, why):
    rc, out = _run(prog, _root(tmp_path, rt, fair))
    assert rc == 2, out
    assert why in out and ": run " not in out


def test_without_rt_throttling_the_period_does_not_matter(prog, tmp_path):
    rc, out = _run(prog, _root(tmp_path, (-1, 5000000),
                               {0: (50000000, 1000000000), 1: (50000000, 1000000000)}))
    assert rc == 0, out
    assert "fair server cpu1: runtime 50000000 ns, period 1000000000 ns" in out
