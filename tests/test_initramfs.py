# SPDX-License-Identifier: GPL-2.0
"""The guest's C programs: built static into the initramfs, or refused."""

import os
import subprocess

import pytest

from pvrt import initramfs
from pvrt.errors import PvrtError

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_guest_c_programs_build_static(tmp_path):
    srcs = [n for n in os.listdir(os.path.join(TOP, "guest")) if n.endswith(".c")]
    assert "futex-pi-timeout.c" in srcs
    for name in srcs:
        dest = tmp_path / name[:-2]
        initramfs.compile_guest(os.path.join(TOP, "guest", name), str(dest))
        assert os.access(dest, os.X_OK)
        # the guest has no shared libraries but busybox's
        res = subprocess.run(["ldd", str(dest)], capture_output=True, text=True)
        assert res.returncode != 0 or "not a dynamic executable" in res.stdout + res.stderr


def test_a_guest_program_that_does_not_compile_is_refused(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int main(void) { int unused; return 0; }\n")   # -Wall -Werror
    with pytest.raises(PvrtError, match="does not compile"):
        initramfs.compile_guest(str(src), str(tmp_path / "bad"))
    assert not (tmp_path / "bad").exists()


def test_the_digest_follows_the_compiler_and_its_static_libc(tmp_path, monkeypatch):
    """The guest programs are built with gcc against its static libc: a new
    gcc or libc.a gives a new initramfs."""
    libc = tmp_path / "libc.a"
    libc.write_text("glibc 2.36\n")
    gcc = tmp_path / "bin" / "gcc"
    gcc.parent.mkdir()
    gcc.write_text('#!/bin/sh\ncase "$1" in -print-file-name=libc.a) echo "$FAKE_LIBC";;'
                   ' *) echo "gcc (Debian) $FAKE_GCC";; esac\n')
    gcc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{gcc.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LIBC", str(libc))
    monkeypatch.setenv("FAKE_GCC", "12.2.0")
    first = initramfs.inputs_digest(TOP)
    assert initramfs.inputs_digest(TOP) == first
    monkeypatch.setenv("FAKE_GCC", "13.1.0")
    second = initramfs.inputs_digest(TOP)
    assert second != first
    libc.write_text("glibc 2.37\n")
    assert initramfs.inputs_digest(TOP) not in (first, second)
