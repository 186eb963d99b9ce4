# SPDX-License-Identifier: GPL-2.0
"""A second run waits for the first, with a message, instead of clobbering."""

import subprocess
import sys
import time

from pvrt import lock


def test_second_holder_waits_and_says_who_holds(tmp_path):
    path = str(tmp_path / "build")
    child = ("import sys, time; sys.path.insert(0, sys.argv[1]);"
             "from pvrt import lock\n"
             "with lock.held(sys.argv[2], 'build directory'):\n"
             "    print('got it', flush=True)\n")
    with lock.held(path, "build directory"):
        proc = subprocess.Popen([sys.executable, "-c", child, sys.path[0], path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert proc.poll() is None              # still waiting for us
    out, err = proc.communicate(timeout=30)
    assert out.strip() == "got it"
    assert "is in use by another run (pid " in err


def test_lock_is_released_when_the_body_raises(tmp_path):
    path = str(tmp_path / "cache")
    try:
        with lock.held(path, "cache"):
            raise RuntimeError
    except RuntimeError:
        pass
    with lock.held(path, "cache", log=lambda m: (_ for _ in ()).throw(AssertionError(m))):
        pass
