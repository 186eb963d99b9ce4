# SPDX-License-Identifier: GPL-2.0
"""Small helpers shared by the verbs."""

import shutil
from pvrt.errors import PvrtError


def cc():
    """The C compiler to hand to kbuild: gcc behind ccache when it is installed."""
    return "ccache gcc" if shutil.which("ccache") else "gcc"


# What building and booting a kernel needs on the host (scripts/setup installs it).
BUILD_AND_BOOT = ("make", "gcc", "flex", "bison", "bc", "cpio", "gzip", "qemu-system-x86_64")


def require(programs=BUILD_AND_BOOT):
    """Refuse to start, before any build, when a program the run needs is missing."""
    missing = [p for p in programs if not shutil.which(p)]
    if missing:
        raise PvrtError(f"{', '.join(missing)} not found on PATH;"
                         " scripts/setup installs what the project needs")
