# SPDX-License-Identifier: GPL-2.0
"""Results of the main job and the benchmarks, kept as they are measured."""

import json
import os


def save(rows, path):
    """Write ROWS to PATH as JSON, atomically: a reader or an interrupted run
    sees the previous complete file or the new one."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    os.replace(tmp, path)
