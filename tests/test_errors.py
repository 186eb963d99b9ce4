# SPDX-License-Identifier: GPL-2.0
"""One error path: every entry point ends with one line and exit 1 or 130."""

import os
import subprocess
import sys

import pytest

from pvrt import errors
from pvrt.errors import PvrtError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("exc, code, line", [
    (PvrtError("no variant 'x'"), 1, "error: no variant 'x'"),
    (subprocess.CalledProcessError(2, ["make", "bzImage"]), 1,
     "error: make bzImage exited with 2"),
    (FileNotFoundError(2, "No such file or directory", "/nope"), 1,
     "error: /nope: No such file or directory"),
    (KeyboardInterrupt(), 130, "interrupted"),
])
def test_entry_turns_failures_into_one_line(exc, code, line, capsys):
    def main(argv):
        raise exc

    with pytest.raises(SystemExit) as e:
        errors.entry(main)
    assert e.value.code == code
    err = capsys.readouterr().err.strip()
    assert err == line and "Traceback" not in err


def test_a_bug_still_shows_its_traceback():
    with pytest.raises(ZeroDivisionError):
        errors.entry(lambda argv: 1 / 0)


def test_missing_qemu_is_one_line_before_any_build(tmp_path):
    """scripts/validate on a host without QEMU: one line, exit 1, nothing built."""
    env = dict(os.environ, PVRT_BUILD=str(tmp_path), PATH="/usr/bin:/bin")
    # A PATH with every program but QEMU: a directory of links to the real ones.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for prog in ("make", "gcc", "flex", "bison", "bc", "cpio", "gzip", "git", "python3"):
        real = subprocess.run(["sh", "-c", f"command -v {prog}"], capture_output=True,
                              text=True).stdout.strip()
        if real:
            (bindir / prog).symlink_to(real)
    env["PATH"] = str(bindir)
    res = subprocess.run([sys.executable, "-m", "pvrt.validate", "--no-devices"],
                         env=dict(env, PYTHONPATH=os.path.join(REPO, "scripts", "lib"),
                                  PVRT_TOP=REPO), capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        "error: qemu-system-x86_64 not found on PATH; scripts/setup installs what the project"
        " needs"]
    assert not (tmp_path / "linux").exists()
