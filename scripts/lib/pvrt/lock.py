# SPDX-License-Identifier: GPL-2.0
"""Locks between concurrent runs: one build directory, one cache entry.

Two runs in one clone share build/ (the workspace, kernel builds, the
initramfs); two clones share the caches under ~/.cache/pvrt.  A run takes
an exclusive flock(2) on <path>.lock before it touches PATH; a second run
says who holds it and waits.  The kernel drops the lock when its holder
exits, however it exits.
"""

import contextlib
import fcntl
import os
import sys


@contextlib.contextmanager
def held(path, what, log=None):
    """Hold the lock of PATH (the file PATH.lock) for the body of the with."""
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            log(f"waiting: {what} {path} is in use by another run (pid {holder})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def with_build_lock(main):
    """MAIN run holding build/run.lock: for the commands that build and boot
    in build/ (validate, torture, trace-latency, the benchmarks)."""
    def locked(argv=None):
        with held(os.path.join(os.environ["PVRT_BUILD"], "run"), "build directory"):
            return main(argv)
    return locked
