# SPDX-License-Identifier: GPL-2.0
"""Small helpers shared by the verbs."""

import shutil


def cc():
    """The C compiler to hand to kbuild: gcc behind ccache when it is installed."""
    return "ccache gcc" if shutil.which("ccache") else "gcc"
