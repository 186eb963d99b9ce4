# SPDX-License-Identifier: GPL-2.0
"""The tools' one logging setup: "<tool>: <message>" lines on stderr.

stdout carries a command's result (a path, a table); progress and notes go
to stderr, one whole line at a time even when boots run in threads.
"""

import sys
import threading

_lock = threading.Lock()


def logger(name):
    """A log(msg) function whose lines start with NAME."""
    def log(msg):
        with _lock:
            print(f"{name}: {msg}", file=sys.stderr, flush=True)
    return log
