# SPDX-License-Identifier: GPL-2.0
"""scripts/board: a loopback board for scripts/validate --target.

A QEMU x86_64 guest (TCG) that stands in for a user's board: the board
kernel (variant `board`: the project kernel with kexec and virtio-net), an
initramfs that is the test initramfs (scripts/initramfs) plus Debian's
dropbear and kexec with their shared libraries, a host key and the job's
public key, and QEMU's user-mode networking with one forwarded port,
127.0.0.1:PORT to the guest's 22 (restrict=on: the guest reaches nothing
else).  Keys, ssh_config, console log and QEMU's pid are in build/board/.

  scripts/build board && scripts/board start
  scripts/validate --variants board --target ssh://root@127.0.0.1:PORT \\
      --target-ssh-config build/board/ssh_config --target-initrd build/board/initramfs.cpio.gz
  scripts/board stop
"""

import argparse
import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from pvrt import boot, build, initramfs, logs
from pvrt.errors import PvrtError, entry

log = logs.logger("board")
# Program: the Debian package that has it (scripts/setup installs them).
PROGRAMS = {"/usr/sbin/dropbear": "dropbear-bin", "/usr/sbin/kexec": "kexec-tools"}


def board_dir(bdir):
    return os.path.join(bdir, "board")


def keys(bdir):
    """The job's key pair and the board's host key, made once."""
    d = board_dir(bdir)
    os.makedirs(d, exist_ok=True)
    ident, host = os.path.join(d, "id_ed25519"), os.path.join(d, "host_key")
    if not os.path.exists(ident):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pvrt-board-job",
                        "-f", ident], check=True)
    if not os.path.exists(host):
        subprocess.run(["dropbearkey", "-t", "ed25519", "-f", host], check=True,
                       capture_output=True)
    pub = subprocess.run(["dropbearkey", "-y", "-f", host], check=True, capture_output=True,
                         text=True).stdout
    host_pub = next(ln for ln in pub.splitlines() if ln.startswith("ssh-"))
    return ident, host, " ".join(host_pub.split()[:2])


def build_initramfs(top, bdir):
    """build/board/initramfs.cpio.gz: the test initramfs and the board's
    member (a later cpio member replaces an earlier file: /init)."""
    for path, pkg in PROGRAMS.items():
        initramfs.need(path, pkg)
    ident, host, _pub = keys(bdir)
    base = initramfs.ensure(top, bdir)
    out = os.path.join(board_dir(bdir), "initramfs.cpio.gz")
    with tempfile.TemporaryDirectory(prefix="pvrt-board-") as tmp:
        root = os.path.join(tmp, "root")
        for d in ("etc/dropbear", "run", "var/tmp", "var/log", "dev/pts", ".ssh"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        src = os.path.join(top, "board")
        shutil.copy2(os.path.join(src, "init"), os.path.join(root, "init"))
        shutil.copy2(os.path.join(src, "board-rc"), os.path.join(root, "etc/board-rc"))
        shutil.copy2(os.path.join(src, "inittab"), os.path.join(root, "etc/inittab"))
        for prog in PROGRAMS:
            initramfs.copy_into(root, prog)
            for lib in initramfs.shared_libs(prog):
                initramfs.copy_into(root, lib)
        shutil.copy2(host, os.path.join(root, "etc/dropbear/host_key"))
        shutil.copy2(ident + ".pub", os.path.join(root, ".ssh/authorized_keys"))
        with open(os.path.join(root, "etc/shells"), "w", encoding="utf-8") as f:
            f.write("/bin/sh\n")
        with open(os.path.join(root, "etc/group"), "w", encoding="utf-8") as f:
            f.write("root:x:0:\n")
        # dropbear refuses keys that others could have written.
        os.chmod(os.path.join(root, ".ssh"), 0o700)
        os.chmod(os.path.join(root, ".ssh/authorized_keys"), 0o600)
        os.chmod(os.path.join(root, "etc/dropbear/host_key"), 0o600)
        os.chmod(os.path.join(root, "var/tmp"), 0o1777)
        extra = os.path.join(tmp, "board.cpio.gz")
        initramfs.cpio_dir(root, extra)
        with open(out + ".tmp", "wb") as f:
            for part in (base, extra):
                with open(part, "rb") as p:
                    shutil.copyfileobj(p, f)
    os.replace(out + ".tmp", out)
    return out


def ssh_config(bdir, port):
    """build/board/ssh_config: the job's key and the board's host key."""
    ident, _host, pub = keys(bdir)
    d = board_dir(bdir)
    os.makedirs(d, exist_ok=True)
    known = os.path.join(d, "known_hosts")
    with open(known, "w", encoding="utf-8") as f:
        f.write(f"[127.0.0.1]:{port} {pub}\n")
    path = os.path.join(d, "ssh_config")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"Host 127.0.0.1\n  IdentityFile {ident}\n  IdentitiesOnly yes\n"
                f"  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n"
                "  LogLevel ERROR\n")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def qemu_pid(bdir):
    """The pid of the running board's QEMU, or None."""
    try:
        with open(os.path.join(board_dir(bdir), "qemu.pid"), encoding="utf-8") as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if boot.QEMU.encode() not in f.read():
                return None
    except (OSError, ValueError):
        return None
    return pid


PR_SET_PDEATHSIG = 1


_LIBC = ctypes.CDLL(None, use_errno=True)     # resolved here, not in a forked child


def die_with_parent(parent):
    """A preexec_fn: in the child before exec, SIGKILL when PARENT (the
    process that forked it) dies (prctl(PR_SET_PDEATHSIG)), so that a check
    killed outright leaves no QEMU (7.2 has no -run-with exit-with-parent).
    A parent already gone before the prctl: the child exits at once."""
    def fn():
        if _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0):
            os._exit(1)
        if os.getppid() != parent:
            os._exit(1)
    return fn


def start(top, bdir, kernel, port, memory=1024, timeout=600, die_with_caller=False):
    """Start the board; DIE_WITH_CALLER: its QEMU is killed when this process
    dies (make check's stage), not for `scripts/board start`, whose board
    must outlive the command."""
    if qemu_pid(bdir):
        raise PvrtError(f"a board runs already (pid {qemu_pid(bdir)}): scripts/board stop")
    if not os.path.isfile(kernel):
        raise PvrtError(f"{kernel}: no board kernel: scripts/build board")
    initrd = build_initramfs(top, bdir)
    port = port or free_port()
    cfg = ssh_config(bdir, port)
    d = board_dir(bdir)
    console_log = os.path.join(d, "console.log")
    args = [boot.QEMU, "-M", "pc", "-cpu", "max", "-m", str(memory), "-smp", "1",
            "-bios", "qboot.rom", "-display", "none", "-monitor", "none",
            "-serial", f"file:{console_log}", "-no-reboot",
            "-nic", f"user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
            "-kernel", kernel, "-initrd", initrd,
            "-append", "console=ttyS0 panic=-1 loglevel=7 kunit.enable=0"
            # no_timer_check: under a loaded host, TCG can miss the IO-APIC
            # timer check, which panics the boot.
            " no_timer_check"]
    with open(os.path.join(d, "qemu.log"), "wb") as qlog:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=qlog,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=(die_with_parent(os.getpid()) if die_with_caller
                                            else None))
    with open(os.path.join(d, "qemu.pid"), "w", encoding="utf-8") as f:
        f.write(f"{proc.pid}\n")
    with open(os.path.join(d, "port"), "w", encoding="utf-8") as f:
        f.write(f"{port}\n")
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise PvrtError(f"the board's QEMU exited with {proc.returncode}: {console_log}")
        res = subprocess.run(["ssh", "-F", cfg, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                              "-p", str(port), "root@127.0.0.1", "uname -r"],
                             capture_output=True, text=True, timeout=60)
        if res.returncode == 0:
            log(f"board up in {time.time() - t0:.0f}s: {res.stdout.strip()},"
                f" ssh://root@127.0.0.1:{port}; console {console_log}")
            return port
        time.sleep(3)
    stop(bdir)
    raise PvrtError(f"the board did not answer on ssh in {timeout}s: {console_log}")


def gone(pid):
    """Has process PID exited (and, if it is our child, been reaped)?"""
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
        return done == pid
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _killpg(pid, sig):
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def stop(bdir, wait=30):
    """Stop the running board's QEMU (its process group): SIGTERM, then
    SIGKILL after WAIT seconds.  Returns its pid, or None when none ran."""
    pid = qemu_pid(bdir)
    if pid:
        _killpg(pid, signal.SIGTERM)
        end = time.monotonic() + wait
        while not gone(pid) and time.monotonic() < end:
            time.sleep(0.2)
        if not gone(pid):
            _killpg(pid, signal.SIGKILL)
            end = time.monotonic() + 10
            while not gone(pid) and time.monotonic() < end:
                time.sleep(0.2)
        log(f"board stopped (pid {pid})")
    else:
        log("no board runs")
    try:
        os.remove(os.path.join(board_dir(bdir), "qemu.pid"))
    except OSError:
        pass
    return pid


def validate_command(bdir, port):
    d = board_dir(bdir)
    return ("scripts/validate --variants board --target "
            + shlex.quote(f"ssh://root@127.0.0.1:{port}")
            + f" --target-ssh-config {os.path.join(d, 'ssh_config')}"
            + f" --target-initrd {os.path.join(d, 'initramfs.cpio.gz')}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/board", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["start", "stop", "initramfs"])
    ap.add_argument("--port", type=int, help="127.0.0.1's port for the board's SSH"
                    " (default: a free one)")
    ap.add_argument("--kernel", help="the board's kernel (default: build/out/board's)")
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds for the board to answer on SSH (default 600)")
    args = ap.parse_args(argv)
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    if args.action == "stop":
        stop(bdir)
        return 0
    if args.action == "initramfs":
        print(build_initramfs(top, bdir))
        return 0
    if args.port is not None and not 1024 <= args.port <= 65535:
        ap.error("--port must be 1024..65535")
    kernel = args.kernel or build.kernel_image(os.path.join(bdir, "out", "board"))
    port = start(top, bdir, kernel, args.port, timeout=args.timeout)
    print(validate_command(bdir, port))
    return 0


if __name__ == "__main__":
    entry(main)
