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
