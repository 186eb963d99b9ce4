# SPDX-License-Identifier: GPL-2.0
"""The one error path of the tools.

Library code raises PvrtError with a message for the user (one line, or a
first line and details).  Every entry point runs its main through entry(),
which turns PvrtError, a failed command, OSError and Ctrl-C into one clear
"error: ..." line and exit status 1, or 130 for Ctrl-C; argparse's own
usage errors keep their exit status 2.
"""

import subprocess
import sys


class PvrtError(Exception):
    """A tool cannot do what it was asked; str() is the message for the user."""


def describe(exc):
    """The user's line for EXC, or None for an exception that is a bug."""
    if isinstance(exc, PvrtError):
        return str(exc)
    if isinstance(exc, subprocess.CalledProcessError):
        cmd = exc.cmd if isinstance(exc.cmd, str) else " ".join(map(str, exc.cmd))
        return f"{cmd} exited with {exc.returncode}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return None


def entry(main, argv=None):
    """Run MAIN(ARGV) as a command: exit with its status, one line on error."""
    try:
        rc = main(argv)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr, flush=True)
        sys.exit(130)
    except (PvrtError, subprocess.CalledProcessError, OSError) as e:
        print(f"error: {describe(e)}", file=sys.stderr, flush=True)
        sys.exit(1)
    sys.exit(rc or 0)
