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


def test_the_guest_scripts_are_packed_executable(tmp_path, monkeypatch):
    """Each guest script, guest/kunit-module among them, is /pvrt/<name> in
    the initramfs, executable, as the boot commands call it."""
    bb = tmp_path / "busybox"
    bb.write_bytes(b"\0")
    monkeypatch.setattr(initramfs, "BUSYBOX", str(bb))
    monkeypatch.setattr(initramfs, "PROGRAMS", {})
    monkeypatch.setattr(initramfs, "rtla_path", lambda: None)
    monkeypatch.setattr(initramfs, "compile_guest", lambda src, dest: open(dest, "w").close())
    out = initramfs.build(TOP, str(tmp_path / "i.cpio.gz"))
    res = subprocess.run(f"gzip -dc {out} | cpio -itv --quiet", shell=True, check=True,
                         capture_output=True, text=True)
    modes = {ln.split()[-1]: ln.split()[0] for ln in res.stdout.splitlines()}
    scripts = [n for n in os.listdir(os.path.join(TOP, "guest"))
               if n != "init" and not n.endswith(".c")]
    assert "kunit-module" in scripts
    for name in scripts:
        assert modes[f"pvrt/{name}"].startswith("-rwx"), name
