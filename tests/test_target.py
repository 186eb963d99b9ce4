# SPDX-License-Identifier: GPL-2.0
"""scripts/validate --target ssh://...: the job on a board, ssh stubbed.

A fake board answers the commands the job sends over ssh (pvrt.target.Remote
runs them through a replaceable subprocess.run): the checks before anything
is built, the kexec boot, the run of guest/cyclictest-load.  The job against
a real SSH server is the loopback board's (scripts/board, README)."""

import json
import os
import shlex
import struct
import subprocess
import uuid

import pytest

from pvrt import build, experiment, report, target, validate

SECTION = """PVRT-BEGIN cyclictest
# /dev/cpu_dma_latency set to 0us
# Histogram
000003 000010
000004 000980
000009 000009
000250 000001
# Total: 000001000
# Min Latencies: 00003
# Avg Latencies: 00004
# Max Latencies: 00250
# Histogram Overflows: 00000
# Histogram Overflow at cycle number:
# Thread 0:
# load work: hackbench=3
PVRT-END cyclictest rc=0
"""

RELEASE, VERSION = "6.12.9-pvrt", "#1 SMP PREEMPT_DYNAMIC 2026-01-01"
BUILD_ID = "a198d3d7f887f1b1374da9516353622bd2cf37f4"


def notes(build_id, endian="<"):
    """ELF notes as a kernel's .notes holds them: Xen's and Linux's around
    the GNU build-id (/sys/kernel/notes is these bytes)."""
    def note(name, ntype, desc):
        name = name.encode() + b"\0"
        return (struct.pack(endian + "3I", len(name), len(desc), ntype)
                + name.ljust((len(name) + 3) // 4 * 4, b"\0")
                + desc.ljust((len(desc) + 3) // 4 * 4, b"\0"))
    return (note("Xen", 6, b"linux") + note("GNU", 3, bytes.fromhex(build_id))
            + note("Linux", 0x100, b"\0"))


def elf(build_id, wide=True, endian="<"):
    """A minimal ELF file whose one SHT_NOTE (7) section holds BUILD_ID."""
    data = notes(build_id, endian)
    if wide:
        hdr, shdr, ehsize, shentsize = "HHIQQQIHHHHHH", "IIQQQQIIQQ", 64, 64
    else:
        hdr, shdr, ehsize, shentsize = "HHIIIIIHHHHHH", "IIIIIIIIII", 52, 40
    shoff = ehsize + len(data)
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1 if endian == "<" else 2, 1]) + bytes(9)
    head = ident + struct.pack(endian + hdr, 2, 62, 1, 0, 0, shoff, 0, ehsize, 0, 0,
                               shentsize, 2, 0)
    return (head + data + struct.pack(endian + shdr, *[0] * 10)
            + struct.pack(endian + shdr, 0, 7, 2, 0, ehsize, len(data),
                          0, 0, 4, 0))


class Board:
    """A board over ssh: each call of run() is one ssh command."""

    def __init__(self, **facts):
        self.facts = {"uid": "0", "kexec": "/usr/sbin/kexec", "tar": "/bin/tar", "od": "/bin/od",
                      "dir": "ok", "free_kb": str(4 << 20), "kexec_core": "yes",
                      "kexec_load_disabled": "0", "lockdown": "[none] integrity confidentiality",
                      **facts}
        self.modules_room = {"free_kb": str(4 << 20), "old_kb": ""}
        self.kexec_load_rc = 0
        self.state = {"boot_id": str(uuid.uuid4()), "release": "6.1.0-board",
                      "version": "#1 SMP Debian", "cmdline": "root=/dev/sda1 console=ttyS0 quiet",
                      "notes": notes("0123" * 10).hex()}
        self.boots_into = (RELEASE, VERSION, notes(BUILD_ID).hex())
        self.loaded = None
        self.ssh_rc, self.ssh_err = 0, ""
        self.commands, self.files = [], {}
        self.on_run = None
        self.no_modules = False     # a root in an initramfs: /lib/modules gone at each boot

    def __call__(self, argv, stdin=None, capture_output=True, timeout=None):
        assert argv[0] == "ssh" and "BatchMode=yes" in argv
        cmd = argv[-1]
        self.commands.append(cmd)
        if self.ssh_rc:
            return subprocess.CompletedProcess(argv, 255, b"", self.ssh_err.encode())
        out = ""
        if "echo uid=" in cmd:
            out = "".join(f"{k}={v}\n" for k, v in self.facts.items()
                          if not k.startswith("prog:"))
            for p in ("cyclictest", "chrt", "hackbench", "stress-ng"):
                out += f"prog:{p}={self.facts.get('prog:' + p, '/usr/bin/' + p)}\n"
        elif cmd == target.IDENTITY:
            out = (f"machine=x86_64\nhostname=bench1\nkernel={self.state['release']}\n"
                   f"notes={self.state['notes']}\n"
                   "cpu_model=Intel(R) Core(TM) i5-8365U\ncpus=4\ndmi_product=Latitude 7400\n"
                   "dmi_vendor=Dell Inc.\nrt_tests=2.5\n")
        elif cmd == target.STATE:
            out = "".join(f"{k}={v}\n" for k, v in self.state.items())
        elif cmd.startswith("test -d /lib/modules/") and self.no_modules:
            return subprocess.CompletedProcess(argv, 1, b"", b"")
        elif cmd.startswith("cat > "):
            self.files[cmd[6:]] = stdin.read()
        elif cmd.startswith("kexec -l"):
            if self.kexec_load_rc:
                return subprocess.CompletedProcess(argv, self.kexec_load_rc, b"",
                                                   b"kexec_load failed: Operation not permitted")
            self.loaded = cmd.split("--append=", 1)[1].strip("'")
        elif cmd.startswith("m=/lib/modules; [ -d $m ] || m=/lib; echo free_kb="):
            out = "".join(f"{k}={v}\n" for k, v in self.modules_room.items())
        elif "PVRT_CMDLINE=" in cmd:
            # --target-reboot's command: the board boots the kernel it names.
            env = dict(w.split("=", 1) for w in shlex.split(cmd) if w.startswith("PVRT_"))
            self.loaded = env["PVRT_CMDLINE"]
            cmd = "kexec -e"
        if "kexec -e" in cmd:
            self.state = {"boot_id": str(uuid.uuid4()), "release": self.boots_into[0],
                          "version": self.boots_into[1], "cmdline": self.loaded,
                          "notes": self.boots_into[2]}
        elif "PVRT-BEGIN hwlat" in cmd:
            out = ("PVRT-BEGIN hwlat\n# tool hwlat-tracer\n# max 14\n"
                   "<...>-12 [000] d... 10.1: #1 inner/outer(us): 14/12 ts:1.2 count:1\n"
                   "PVRT-END hwlat rc=0\n")
        elif "cyclictest-load" in cmd:
            if self.on_run:
                self.on_run()
            out = (f"PVRT-BOOTED {self.state['release']} cpus=4\n"
                   f"PVRT-KERNEL {self.state['version']}\n"
                   f"PVRT-CMDLINE {self.state['cmdline']}\n" + SECTION + "PVRT-EXIT rc=0\n")
        return subprocess.CompletedProcess(argv, 0, out.encode(), b"")


def _kernel(tmp_path, name):
    out = tmp_path / "out" / name
    for d in ("include/config", "include/generated", "arch/x86/boot",
              f"modroot/lib/modules/{RELEASE}"):
        (out / d).mkdir(parents=True, exist_ok=True)
    (out / "include/config/kernel.release").write_text(RELEASE + "\n")
    (out / "include/generated/utsversion.h").write_text(f'#define UTS_VERSION "{VERSION}"\n')
    (out / "arch/x86/boot/bzImage").write_bytes(b"kernel")
    (out / "vmlinux").write_bytes(elf(BUILD_ID))
    (out / f"modroot/lib/modules/{RELEASE}/modules.dep").write_text("")
    return str(out)


@pytest.fixture
def job(tmp_path, monkeypatch):
    """validate --target with the builds stubbed; returns (board, built, run)."""
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path / "cache"))
    built = []

    def build_variant(top, tree, var, *a, **k):
        built.append(var.name)
        return _kernel(tmp_path, var.name)

    monkeypatch.setattr(experiment, "apply_tree", lambda *a, **k: "tree")
    monkeypatch.setattr(build, "build_variant", build_variant)
    monkeypatch.setattr(experiment, "tree_ids", lambda tree: {"base": "b", "tip": "t"})
    monkeypatch.setattr(target, "kunit_counts", lambda tree, path: None)
    monkeypatch.setattr(target.time, "sleep", lambda s: None)
    # The plots are report.py's (tested there): not drawn here.
    for plot in ("plot_histograms", "plot_survival", "plot_over_time", "plot_chain"):
        monkeypatch.setattr(report, plot, lambda *a, **k: None)
    board = Board()
    real = target.Remote.__init__

    def remote_init(self, tgt, ssh_config=None, run=None, connect_timeout=10):
        real(self, tgt, ssh_config, run=board, connect_timeout=connect_timeout)

    monkeypatch.setattr(target.Remote, "__init__", remote_init)

    def run(*args):
        return validate.main(["--target", "ssh://root@board.example:2222", "--hwlat-seconds",
                              "5", "--seconds", "5", *args])
    return board, built, run


def _results(tmp_path):
    (rdir,) = (tmp_path / "report").iterdir()
    return rdir, json.loads((rdir / "results.json").read_text())


@pytest.mark.parametrize("url", ["http://root@host", "root@host", "ssh://root@host:99999",
                                 "ssh://root@host:22/path", "ssh://", "ssh://root:pw@host"])
def test_a_bad_url_is_refused_before_anything(job, url):
    board, built, _run = job
    with pytest.raises(target.TargetError, match="--target"):
        validate.main(["--target", url])
    assert not board.commands and not built


def test_the_url_gives_user_host_and_port():
    t = target.Target("ssh://pi@10.0.0.7:2200")
    assert (t.user, t.host, t.port, t.dest) == ("pi", "10.0.0.7", 2200, "pi@10.0.0.7")
    assert target.Target("ssh://root@[::1]").port == 22


def test_a_target_option_without_target_is_refused(job, capsys):
    with pytest.raises(SystemExit):
        validate.main(["--target-reboot", "reboot"])
    assert "--target-reboot needs --target" in capsys.readouterr().err


@pytest.mark.parametrize("err, says", [
    ("ssh: connect to host board.example port 2222: Connection refused", "not reachable"),
    ("ssh: Could not resolve hostname board.example: Name or service not known",
     "not reachable"),
    ("root@board.example: Permission denied (publickey).", "refused the key"),
    ("Host key verification failed.", "host key")])
def test_an_unusable_connection_is_one_error_before_building(job, err, says):
    board, built, run = job
    board.ssh_rc, board.ssh_err = 255, err
    with pytest.raises(target.TargetError, match=says):
        run()
    assert not built


@pytest.mark.parametrize("facts, says", [
    ({"kexec": ""}, "no kexec"),
    ({"uid": "1000"}, "needs root"),
    ({"od": ""}, "no od"),
    ({"free_kb": "10240"}, "has 10 MiB free"),
    ({"dir": "fail"}, "cannot create"),
    ({"prog:cyclictest": ""}, "lacks cyclictest"),
    ({"prog:stress-ng": ""}, "lacks stress-ng")])
def test_a_board_that_cannot_run_the_job_is_refused_before_building(job, facts, says):
    board, built, run = job
    board.facts.update(facts)
    with pytest.raises(target.TargetError, match=says):
        run()
    assert not built
    assert not any("kexec -l" in c for c in board.commands)


def test_kernels_larger_than_the_room_are_refused_before_booting(job, monkeypatch):
    board, built, run = job
    board.facts["free_kb"] = str(200 << 10)
    monkeypatch.setattr(target, "kernel_bytes", lambda out: 300 << 20)
    with pytest.raises(target.TargetError, match="has 200 MiB free.* needs 301 MiB"):
        run("--variants", "project")
    assert built == ["project"]
    assert not any(c.startswith(("kexec", "cat >")) for c in board.commands)


def test_no_kexec_is_fine_with_a_reboot_command(job):
    board, built, run = job
    board.facts["kexec"] = ""
    assert run("--variants", "project", "--target-reboot", "install-and-reboot") == 0
    assert built == ["project"]
    assert not any(c.startswith("kexec") for c in board.commands)
    assert "pvrt.job=" in board.state["cmdline"]


def test_a_board_that_boots_another_kernel_is_a_clear_error(job, tmp_path):
    board, _built, run = job
    board.boots_into = ("6.1.0-board", "#1 SMP Debian", board.state["notes"])
    with pytest.raises(target.TargetError, match="not the kernel just built"):
        run("--variants", "project")
    _rdir, rows = _results(tmp_path)
    assert [r["kind"] for r in rows] == ["hwlat"]


@pytest.mark.parametrize("notes_hex", [notes("feed" * 10).hex(), ""])
def test_another_build_of_the_same_release_and_version_is_caught(job, tmp_path, notes_hex):
    """Every build of one tree and config says the same `uname -r` and
    `uname -v`: the build-id tells the kernel just built from another (or
    from a board that shows no /sys/kernel/notes)."""
    board, _built, run = job
    board.boots_into = (RELEASE, VERSION, notes_hex)
    with pytest.raises(target.TargetError,
                       match="not the kernel just built.* build-id " + BUILD_ID):
        run("--variants", "project")
    _rdir, rows = _results(tmp_path)
    assert [r["kind"] for r in rows] == ["hwlat"]


@pytest.mark.parametrize("wide, endian", [(True, "<"), (False, "<"), (True, ">"), (False, ">")])
def test_the_build_id_is_read_from_vmlinux_and_from_the_notes(tmp_path, wide, endian):
    path = tmp_path / "vmlinux"
    path.write_bytes(elf(BUILD_ID, wide, endian))
    assert target.elf_build_id(str(path)) == (BUILD_ID, endian)
    assert target.gnu_build_id(notes(BUILD_ID, endian), endian) == BUILD_ID
    assert target.state_build_id({"notes": notes(BUILD_ID).hex()}) == BUILD_ID
    assert target.state_build_id({"notes": "zz"}) is None
    path.write_bytes(elf(BUILD_ID, wide, endian).replace(b"GNU\0", b"GNX\0"))
    with pytest.raises(target.TargetError, match="no GNU build-id"):
        target.built_build_id(str(tmp_path))


def test_the_job_boots_each_kernel_and_writes_the_report(job, tmp_path, capsys):
    board, built, run = job
    assert run("--variants", "stock,project") == 0
    assert built == ["stock", "project"]
    rdir, rows = _results(tmp_path)
    assert [(r["kind"], r.get("variant")) for r in rows] == [
        ("hwlat", None), ("latency", "stock"), ("latency", "project")]
    hw, lat = rows[0], rows[1]
    assert (hw["tool"], hw["max_us"], hw["over_threshold"]) == ("hwlat-tracer", 14, 1)
    assert (lat["samples"], lat["max"], lat["problems"]) == (1000, 250, [])
    prov = lat["provenance"]
    assert prov["cpu_model"] == "Intel(R) Core(TM) i5-8365U"
    assert (prov["dmi_product"], prov["machine"]) == ("Latitude 7400", "x86_64")
    assert prov["uname_v"] == VERSION
    # The kernel under test keeps the board's root= and console=, gets the
    # variant's parameters and the job's nonce.
    assert board.loaded.startswith("root=/dev/sda1 console=ttyS0 ikt.prio=")
    assert "quiet" not in board.loaded and "pvrt.job=" in board.loaded
    assert "/var/tmp/pvrt/k/bzImage" in board.files
    md = (rdir / "report.md").read_text()
    assert "## The board" in md and "Latitude 7400" in md
    assert "hwlat-tracer, 5 s" in md and "max 14 us" in md
    assert f"/sys/kernel/notes: stock {BUILD_ID}, project {BUILD_ID}" in md
    assert lat["build_id"] == BUILD_ID
    assert "- clock: QEMU TCG" not in md
    assert "on ssh://root@board.example:2222" in capsys.readouterr().out


def test_a_board_runs_meta_and_rows_say_which_tree_each_kernel_came_from(job, tmp_path,
                                                                        monkeypatch):
    """meta.json's kernel_trees and each row's provenance (kernel_tree), as
    a validation run under QEMU records them; threadirqs boots stock's."""
    monkeypatch.setattr(build, "source_text", lambda out: "tree-of " + os.path.basename(out))
    board, built, run = job
    assert run("--variants", "stock,threadirqs,project") == 0
    rdir, rows = _results(tmp_path)
    meta = json.loads((rdir / "meta.json").read_text())
    assert meta["kernel_trees"] == {"stock": "tree-of stock", "threadirqs": "tree-of stock",
                                    "project": "tree-of project"}
    assert {(r["variant"], r["provenance"].get("kernel_tree")) for r in rows
            if r["kind"] == "latency"} == {("stock", "tree-of stock"),
                                           ("threadirqs", "tree-of stock"),
                                           ("project", "tree-of project")}


def test_an_interrupted_job_keeps_what_it_measured(job, tmp_path):
    board, _built, run = job
    runs = []

    def on_run():
        runs.append(1)
        if len(runs) == 2:
            raise KeyboardInterrupt
    board.on_run = on_run
    with pytest.raises(KeyboardInterrupt):
        run("--variants", "stock,project")
    rdir, rows = _results(tmp_path)
    assert [(r["kind"], r.get("variant")) for r in rows] == [("hwlat", None),
                                                             ("latency", "stock")]
    assert (rdir / "report.md").exists()


def test_modules_are_installed_before_the_kernel_boots(job):
    board, _built, run = job
    assert run("--variants", "project") == 0
    cmds = board.commands
    rm = next(i for i, c in enumerate(cmds) if c.startswith(f"rm -rf /lib/modules/{RELEASE} "))
    assert "tar xzf /var/tmp/pvrt/modules.tar.gz -C /" in cmds[rm]
    assert rm < next(i for i, c in enumerate(cmds) if "kexec -e" in c)
    # Still there after the boot (the fake board keeps its root): not installed twice.
    assert sum(c.startswith("rm -rf /lib/modules/") for c in cmds) == 1
    assert any(c == f"test -d /lib/modules/{RELEASE}" for c in cmds[rm:])


def test_modules_are_installed_again_on_a_root_that_came_back_without_them(job):
    board, _built, run = job
    board.no_modules = True
    assert run("--variants", "project") == 0
    kexec = next(i for i, c in enumerate(board.commands) if "kexec -e" in c)
    assert [i < kexec for i, c in enumerate(board.commands)
            if c.startswith(f"rm -rf /lib/modules/{RELEASE} ")] == [True, False]


def test_a_kernel_of_the_boards_own_release_is_refused_before_touching_it(job, tmp_path):
    board, built, run = job
    board.state["release"] = RELEASE
    with pytest.raises(target.TargetError, match=f"release {RELEASE}, the release of the"
                       " board's own kernel.*CONFIG_LOCALVERSION"):
        run("--variants", "project")
    assert built == ["project"]
    assert not any(c.startswith(("kexec", "cat >", "rm -rf", "tar")) or "hwlat" in c
                   for c in board.commands)
    assert not (tmp_path / "report").exists()


def test_the_boards_own_kernel_may_be_under_test(job):
    """The same release and the same build-id: the board's own kernel, whose
    modules are its own."""
    board, _built, run = job
    board.state.update(release=RELEASE, notes=notes(BUILD_ID).hex())
    assert run("--variants", "project") == 0


def test_hwlatdetect_output_is_read():
    lines = ["# tool hwlatdetect", "hwlatdetect:  test duration 10 seconds",
             "   Max Latency: 23us", "   Samples recorded: 4",
             "   Samples exceeding threshold: 4"]
    row = target.parse_hwlat((0, lines), 10)
    assert (row["max_us"], row["over_threshold"], row["problems"]) == (23, 4, [])
    row = target.parse_hwlat((2, ["# tool hwlat-tracer", "# no hwlatdetect and no hwlat tracer"
                                  " (CONFIG_HWLAT_TRACER) on the board"]), 10)
    assert "max_us" not in row and "CONFIG_HWLAT_TRACER" in row["problems"][0]


def test_a_run_that_does_not_finish_keeps_its_output_in_the_log(job, tmp_path):
    board, _built, run = job

    def hang():
        raise subprocess.TimeoutExpired("ssh", 320, output=b"PVRT-BOOTED x\nhalfway",
                                        stderr=b"stuck")
    board.on_run = hang
    with pytest.raises(target.TargetError, match="did not finish.*what it printed: .*log"):
        run("--variants", "project")
    rdir, _rows = _results(tmp_path)
    (logf,) = rdir.glob("project-*-board.log")
    assert "halfway" in logf.read_text() and "stuck" in logf.read_text()


@pytest.mark.parametrize("facts, says", [
    ({"kexec_core": "no"}, "cannot kexec: .*built without CONFIG_KEXEC"),
    ({"kexec_load_disabled": "1"}, "kexec is disabled .*kexec_load_disabled is 1"),
    ({"lockdown": "none [integrity] confidentiality"}, "locked down \\(integrity"),
    ({"lockdown": "none integrity [confidentiality]"}, "locked down \\(confidentiality")])
def test_a_kernel_that_cannot_kexec_is_refused_before_building(job, facts, says):
    board, built, run = job
    board.facts.update(facts)
    with pytest.raises(target.TargetError, match=says + ".*--target-reboot"):
        run("--variants", "project")
    assert not built and not any("kexec -l" in c for c in board.commands)
    # A board that boots its kernels with its own command does not kexec.
    assert run("--variants", "project", "--target-reboot", "install-and-reboot") == 0


def test_kexec_load_refused_on_the_board_is_a_clear_error(job):
    board, _built, run = job
    board.kexec_load_rc = 1
    with pytest.raises(target.TargetError, match="kexec -l refused the kernel .*Operation not"
                       " permitted.*CONFIG_KEXEC"):
        run("--variants", "project")
    assert not any("kexec -e" in c for c in board.commands)


def test_modules_that_do_not_fit_in_lib_modules_are_refused_before_touching_it(job, tmp_path,
                                                                                monkeypatch):
    board, built, run = job
    real = build.build_variant

    def big(*a, **k):
        out = real(*a, **k)
        with open(os.path.join(out, f"modroot/lib/modules/{RELEASE}/big.ko"), "wb") as f:
            f.truncate(3 << 20)
        return out
    monkeypatch.setattr(build, "build_variant", big)
    board.modules_room = {"free_kb": str(1 << 10), "old_kb": ""}
    with pytest.raises(target.TargetError, match="/lib/modules has 1 MiB free .* the modules of"
                       " project need 4 MiB unpacked"):
        run("--variants", "project")
    assert built == ["project"]
    assert not any(c.startswith(("kexec", "cat >", "rm -rf", "tar")) or "hwlat" in c
                   for c in board.commands)
    # The release's old modules, replaced, make the room.
    board.modules_room = {"free_kb": str(1 << 10), "old_kb": str(3 << 10)}
    assert run("--variants", "project") == 0


def _sh(script, path, env=None):
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                          env={"PATH": str(path), **(env or {})}, check=False)


@pytest.mark.parametrize("systemd", [False, True])
def test_kexec_boots_through_systemd_when_it_runs_else_after_a_sync(tmp_path, systemd):
    """The command the job leaves running on the board: `systemctl kexec`
    (a clean shutdown) with systemd, else sync and kexec -e."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "calls"
    for prog in ("systemctl", "kexec", "sync"):
        (bin_ / prog).write_text(f'#!/bin/sh\necho "{prog} $*" >> {calls}\n')
        (bin_ / prog).chmod(0o755)
    run_dir = tmp_path / "run-systemd-system"
    if systemd:
        run_dir.mkdir()
    cmd = target.KEXEC_EXEC.replace("/run/systemd/system", str(run_dir))
    assert cmd != target.KEXEC_EXEC
    res = _sh(cmd, f"{bin_}:/bin:/usr/bin")
    assert res.returncode == 0, res.stderr
    assert calls.read_text().split("\n")[:-1] == (["systemctl kexec"] if systemd
                                                  else ["sync ", "kexec -e"])


def test_the_job_boots_each_kernel_through_the_clean_kexec(job):
    board, _built, run = job
    assert run("--variants", "project") == 0
    (boot,) = [c for c in board.commands if "kexec -e" in c]
    assert "systemctl kexec" in boot and boot.startswith("setsid sh -c ")


def test_the_hwlat_tracer_fallback_restores_the_tracer_and_tracing_on(tmp_path):
    """No hwlatdetect on the board: the hwlat tracer through tracefs (here a
    directory of files), its tracer, tracing_on and threshold as before after."""
    t = tmp_path / "tracing"
    t.mkdir()
    for name, text in (("available_tracers", "hwlat function nop"), ("current_tracer", "function"),
                       ("tracing_on", "0"), ("tracing_thresh", "0"),
                       ("tracing_max_latency", "0"),
                       ("trace", "# tracer: hwlat\n<...>-12 [000] d... 10.1: #1 inner/outer(us):"
                                 " 14/12 ts:1.2 count:1\n")):
        (t / name).write_text(text + "\n")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for prog in ("cat", "grep", "sleep", "mount"):
        real = subprocess.run(["sh", "-c", f"command -v {prog}"], capture_output=True,
                              text=True).stdout.strip()
        (bin_ / prog).symlink_to(real)
    res = _sh(target.hwlat_script(0, tracefs=str(t)), bin_)
    assert "# tool hwlat-tracer" in res.stdout and "PVRT-END hwlat rc=0" in res.stdout
    assert (t / "current_tracer").read_text() == "function\n"
    assert (t / "tracing_on").read_text() == "0\n"
    assert (t / "tracing_thresh").read_text() == "0\n"


@pytest.mark.parametrize("facts, says", [
    ({"kexec_config": "n"}, "CONFIG_KEXEC is not set .*/proc/config.gz"),
    ({"kexec_load_limit_reboot": "0"}, "kexec_load_limit_reboot is 0: the board's running")])
def test_a_kernel_without_kexec_load_is_refused_before_building(job, facts, says):
    """KEXEC_FILE alone gives /sys/kernel/kexec_loaded but no kexec_load();
    kexec_load_limit_reboot 0 allows no load (the counter is each running
    kernel's own: a limit of 1 does for a job of two kernels)."""
    board, built, run = job
    board.facts.update(facts)
    boots = ["--variants", "project,stock"] if "boots 2" in says else ["--variants", "project"]
    with pytest.raises(target.TargetError, match=says + ".*--target-reboot"):
        run(*boots)
    assert not built and not any("kexec -l" in c for c in board.commands)


@pytest.mark.parametrize("facts", [{"kexec_config": "unknown"}, {"kexec_config": "y"},
                                   {"kexec_load_limit_reboot": "-1"},
                                   {"kexec_load_limit_reboot": "1"},
                                   {"kexec_load_limit_reboot": ""}])
def test_a_kernel_that_may_kexec_load_is_used(job, facts):
    board, _built, run = job
    board.facts.update(facts)
    assert run("--variants", "project,stock") == 0


def test_the_probe_reads_config_kexec_from_the_running_kernels_config(tmp_path):
    script = target.probe_script(str(tmp_path / "d"), [])
    line = next(p for p in script.split("; echo ") if p.startswith("kexec_config="))
    for where in ("/proc/config.gz", "/boot/config-$(uname -r)"):
        assert where in script
    assert "unknown" in line or "unknown" in script


def test_the_kernel_is_loaded_with_kexec_load_before_its_modules_replace_the_old(job):
    """kexec -l refusing the kernel leaves the board's /lib/modules alone."""
    board, _built, run = job
    assert run("--variants", "project") == 0
    cmds = board.commands
    load = next(i for i, c in enumerate(cmds) if c.startswith("kexec -l"))
    assert " -c " in cmds[load]
    assert load < next(i for i, c in enumerate(cmds) if c.startswith("rm -rf /lib/modules/"))
    board.kexec_load_rc, board.commands[:] = 1, []
    with pytest.raises(target.TargetError, match="kexec -l refused"):
        run("--variants", "project")
    assert not any(c.startswith("rm -rf /lib/modules/") for c in board.commands)


def test_modules_of_several_releases_must_fit_together(job, tmp_path, monkeypatch):
    """install_modules leaves an earlier kernel's /lib/modules/<rel>: two
    releases that each fit alone but not together are refused."""
    board, built, run = job
    real = build.build_variant

    def two(top, tree, var, *a, **k):
        out = real(top, tree, var, *a, **k)
        rel = RELEASE + ("-b" if var.name == "stock" else "")
        os.rename(os.path.join(out, f"modroot/lib/modules/{RELEASE}"),
                  os.path.join(out, f"modroot/lib/modules/{rel}"))
        with open(os.path.join(out, "include/config/kernel.release"), "w") as f:
            f.write(rel + "\n")
        with open(os.path.join(out, f"modroot/lib/modules/{rel}/big.ko"), "wb") as f:
            f.truncate(3 << 20)
        return out
    monkeypatch.setattr(build, "build_variant", two)
    board.modules_room = {"free_kb": str(5 << 10), "old_kb": ""}
    with pytest.raises(target.TargetError, match="/lib/modules has 5 MiB free .* the modules of"
                       " project, stock need 7 MiB unpacked"):
        run("--variants", "project,stock")
    assert not any(c.startswith(("kexec", "cat >", "rm -rf", "tar")) for c in board.commands)
    assert run("--variants", "project") == 0


def test_kexec_falls_back_to_kexec_e_when_systemctl_kexec_fails(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "calls"
    for prog, rc in (("systemctl", 1), ("kexec", 0), ("sync", 0)):
        (bin_ / prog).write_text(f'#!/bin/sh\necho "{prog} $*" >> {calls}\nexit {rc}\n')
        (bin_ / prog).chmod(0o755)
    run_dir = tmp_path / "run-systemd-system"
    run_dir.mkdir()
    res = _sh(target.KEXEC_EXEC.replace("/run/systemd/system", str(run_dir)),
              f"{bin_}:/bin:/usr/bin")
    assert res.returncode == 0, res.stderr
    assert calls.read_text().split("\n")[:-1] == ["systemctl kexec", "sync ", "kexec -e"]


def test_lockdown_is_read_with_securityfs_mounted_and_said_to_refuse_any_kexec_load(job):
    script = target.probe_script("/var/tmp/pvrt", [])
    mount = script.index("mount -t securityfs none /sys/kernel/security")
    assert mount < script.index("echo lockdown=")
    board, _built, run = job
    board.facts["lockdown"] = "none [integrity] confidentiality"
    with pytest.raises(target.TargetError, match="refuses kexec_load\\(\\) of any kernel,"
                       " signed or not"):
        run("--variants", "project")


def test_the_modules_room_is_read_without_changing_the_board(tmp_path):
    """No /lib/modules yet: its file system is /lib's, and nothing is created."""
    lib = tmp_path / "lib"
    lib.mkdir()
    script = target.modules_room_script(RELEASE).replace("/lib", str(lib))
    assert "mkdir" not in script
    res = _sh(script, "/bin:/usr/bin")
    f = target.facts(res.stdout)
    assert int(f["free_kb"]) > 0 and f["old_kb"] == "" and not (lib / "modules").exists()


def _tracefs(tmp_path):
    t = tmp_path / "tracing"
    t.mkdir()
    for name, text in (("available_tracers", "hwlat function nop"), ("current_tracer", "function"),
                       ("tracing_on", "0"), ("tracing_thresh", "0"),
                       ("tracing_max_latency", "7"), ("trace", "# tracer: hwlat")):
        (t / name).write_text(text + "\n")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for prog in ("cat", "grep", "sleep", "mount", "kill"):
        real = subprocess.run(["sh", "-c", f"command -v {prog}"], capture_output=True,
                              text=True).stdout.strip()
        if real.startswith("/"):
            (bin_ / prog).symlink_to(real)
    return t, bin_


@pytest.mark.parametrize("killed", [False, True])
def test_the_hwlat_tracer_fallback_restores_everything_even_when_killed(tmp_path, killed):
    """tracing_max_latency too, and a SIGTERM (or the SSH session's SIGHUP)
    in the middle of the sleep puts the board's tracing back as it was."""
    import signal
    import time
    t, bin_ = _tracefs(tmp_path)
    proc = subprocess.Popen(["/bin/sh", "-c", target.hwlat_script(3 if killed else 0,
                                                                   tracefs=str(t))],
                            env={"PATH": str(bin_)}, stdout=subprocess.PIPE, text=True)
    if killed:
        for _ in range(200):
            if (t / "current_tracer").read_text() == "hwlat\n":
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert (t / "current_tracer").read_text() == "function\n"
    assert (t / "tracing_on").read_text() == "0\n"
    assert (t / "tracing_thresh").read_text() == "0\n"
    assert (t / "tracing_max_latency").read_text() == "7\n"
    assert (proc.returncode != 0) == killed



def test_the_wait_for_the_board_ends_when_its_owner_says_it_is_gone(monkeypatch):
    """The loopback board's QEMU gone (-no-reboot and a panic): no wait
    for the rest of --target-boot-timeout."""
    class Down:
        target = target.Target("ssh://root@board.example")

        def run(self, cmd, **k):
            raise target.TargetError("ssh: connect to host board.example: Connection refused")
    monkeypatch.setattr(target.time, "sleep", lambda s: None)
    monkeypatch.setattr(target, "ALIVE", lambda: False)
    with pytest.raises(target.TargetError, match="the board is gone"):
        target.wait_back(Down(), "old", 600, poll=0)


@pytest.mark.parametrize("config, gzip, says", [
    ("CONFIG_KEXEC=y\n", True, "y"),
    ("# CONFIG_KEXEC is not set\nCONFIG_KEXEC_FILE=y\n", True, "n"),
    ("CONFIG_KEXEC=y\n", False, "unknown"),       # no gzip on the board
    (None, True, "unknown")])                     # no config to read
def test_the_kexec_config_probe_says_what_it_read(tmp_path, config, gzip, says):
    """The probe's own shell, run with /proc/config.gz pointed at a file
    here: y, n, and "unknown" (never "n") when it cannot read the config."""
    import gzip as gz
    import shutil
    import subprocess
    script = target.probe_script(str(tmp_path / "d"), [])
    snippet = script[script.index("if [ -r /proc/config.gz ]"):
                     script.index("echo kexec_load_disabled=")].rstrip("; \n")
    cfg = tmp_path / "config.gz"
    if config is not None:
        cfg.write_bytes(gz.compress(config.encode()))
    snippet = snippet.replace("/proc/config.gz", str(cfg)).replace(
        "/boot/config-$(uname -r)", str(tmp_path / "none"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for prog in ("grep", "printf", "cat", "uname") + (("gzip",) if gzip else ()):
        path = shutil.which(prog)
        if path:
            os.symlink(path, bindir / prog)
    res = subprocess.run(["/bin/sh", "-c", snippet], capture_output=True, text=True,
                         env={"PATH": str(bindir)}, check=True)
    assert res.stdout.strip() == f"kexec_config={says}"
