# SPDX-License-Identifier: GPL-2.0
"""Missing host programs are named before any build starts."""

import os

import pytest

from pvrt import experiment, tools, validate
from pvrt.errors import PvrtError


def test_require_names_every_missing_program(tmp_path, monkeypatch):
    (tmp_path / "make").write_text("#!/bin/sh\n")
    (tmp_path / "make").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PvrtError, match=r"gcc, .*qemu-system-x86_64 not found on PATH"):
        tools.require()
    tools.require(("make",))


def test_validate_refuses_before_building(tmp_path, monkeypatch):
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))

    def no_build(*a, **k):
        raise AssertionError("built before checking the host")

    monkeypatch.setattr(experiment, "apply_and_build", no_build)
    with pytest.raises(PvrtError, match="qemu-system-x86_64 not found"):
        validate.main(["--variants", "stock", "--no-devices"])
