# SPDX-License-Identifier: GPL-2.0
"""scripts/board: the loopback board's ssh set-up and the command it prints."""

import shlex

from pvrt import board, target


def test_ssh_config_pins_the_key_and_the_board_host_key(tmp_path, monkeypatch):
    monkeypatch.setattr(board, "keys", lambda bdir: (str(tmp_path / "id"), str(tmp_path / "hk"),
                                                     "ssh-ed25519 AAAAhost"))
    cfg = board.ssh_config(str(tmp_path), 40022)
    text = open(cfg, encoding="utf-8").read()
    assert f"IdentityFile {tmp_path / 'id'}" in text and "StrictHostKeyChecking yes" in text
    known = (tmp_path / "board" / "known_hosts").read_text()
    assert known == "[127.0.0.1]:40022 ssh-ed25519 AAAAhost\n"


def test_the_printed_command_is_one_validate_takes(tmp_path):
    argv = shlex.split(board.validate_command(str(tmp_path), 40022))
    assert argv[0] == "scripts/validate"
    opts = dict(zip(argv[1::2], argv[2::2]))
    assert target.Target(opts["--target"]).port == 40022
    assert opts["--target-ssh-config"].endswith("board/ssh_config")
    assert opts["--target-initrd"].endswith("board/initramfs.cpio.gz")
    assert set(opts) == {"--variants", "--target", "--target-ssh-config", "--target-initrd"}


def test_stop_waits_until_the_boards_qemu_is_gone(tmp_path, monkeypatch):
    """make check's board stage stops the board whatever happens and checks
    that no QEMU is left: stop() returns once the process group is gone."""
    import os
    import subprocess
    monkeypatch.setattr(board.boot, "QEMU", "sleep")
    # A "QEMU" that ignores SIGTERM, as a wedged one would: SIGKILL follows.
    proc = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 600"],
                            start_new_session=True)
    d = tmp_path / "board"
    d.mkdir()
    (d / "qemu.pid").write_text(f"{proc.pid}\n")
    import time
    for _ in range(100):            # until sh has exec'd sleep
        if b"sleep" in open(f"/proc/{proc.pid}/cmdline", "rb").read():
            break
        time.sleep(0.01)
    assert board.qemu_pid(str(tmp_path)) == proc.pid
    assert board.stop(str(tmp_path), wait=1) == proc.pid
    assert board.gone(proc.pid)
    assert not (d / "qemu.pid").exists() and board.stop(str(tmp_path)) is None
    assert not os.path.exists(f"/proc/{proc.pid}")


def test_the_boards_qemu_dies_with_the_process_that_started_it(tmp_path):
    """PR_SET_PDEATHSIG: a check killed with SIGKILL leaves no QEMU."""
    import os
    import subprocess
    import sys
    import time
    lib = os.path.join(os.path.dirname(__file__), "..", "scripts", "lib")
    res = subprocess.run([sys.executable, "-c",
                          "import os, subprocess; from pvrt import board;"
                          " p = subprocess.Popen(['sleep', '600'], start_new_session=True,"
                          " preexec_fn=board.die_with_parent(os.getpid()));"
                          " print(p.pid, flush=True)"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": lib},
                         check=True)
    pid = int(res.stdout)
    for _ in range(200):
        if board.gone(pid):
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        raise AssertionError("the child outlived its parent")


def test_start_runs_qemu_to_die_with_its_parent(tmp_path, monkeypatch):
    import pytest
    from pvrt.errors import PvrtError
    (tmp_path / "bzImage").write_bytes(b"k")
    (tmp_path / "board").mkdir()
    monkeypatch.setattr(board, "build_initramfs", lambda top, bdir: "initrd")
    monkeypatch.setattr(board, "ssh_config", lambda bdir, port: "cfg")
    seen = {}

    class Proc:
        pid, returncode = 99999999, 1

        def poll(self):
            return 1

    def popen(args, **k):
        seen.update(k)
        return Proc()
    monkeypatch.setattr(board.subprocess, "Popen", popen)
    with pytest.raises(PvrtError, match="exited with 1"):
        board.start(str(tmp_path), str(tmp_path), str(tmp_path / "bzImage"), 40022,
                    die_with_caller=True)
    assert callable(seen["preexec_fn"])
    # `scripts/board start` exits once the board is up: its QEMU must not die
    # with it (the README's start, validate, stop).
    seen.clear()
    monkeypatch.setenv("PVRT_TOP", str(tmp_path))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    with pytest.raises(PvrtError, match="exited with 1"):
        board.main(["start", "--port", "40022", "--kernel", str(tmp_path / "bzImage")])
    assert seen["preexec_fn"] is None
