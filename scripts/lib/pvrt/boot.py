# SPDX-License-Identifier: GPL-2.0
"""scripts/boot: boot any kernel + initramfs + command under QEMU TCG.

The command becomes /pvrt/cmd in an extra cpio member appended to the
initramfs, next to the kernel's modules; the guest's /init runs it, prints
PVRT-EXIT rc=N and powers off.  The console goes to a log file and is parsed
with pvrt.console.

Two clock modes:
  default    -smp 2 (or --smp N), plain TCG: for correctness, never for latency
  --icount   -smp 1 -icount shift=2,sleep=off: guest time follows executed
             instructions (4 ns each), so latency figures are
             instruction-counted latency, comparable between kernels booted
             the same way (memory, cache, atomics and device time cost
             nothing; see README)
"""

import argparse
import functools
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

from pvrt import console, initramfs, logs, tools
from pvrt.errors import PvrtError, entry

QEMU = "qemu-system-x86_64"
# The userspace of the initramfs, by Debian package: its versions go into the
# record of every measurement.
GUEST_PACKAGES = ("rt-tests", "stress-ng", "busybox-static")


def _first_line(cmd):
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown ({e})"
    out = (res.stdout or res.stderr).strip().splitlines()
    return out[0] if res.returncode == 0 and out else f"unknown (exit {res.returncode})"


@functools.lru_cache(maxsize=1)
def host_provenance():
    """What a measurement ran on besides the kernel: the QEMU version (icount
    figures depend on it), the guest userspace packages, the host."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f
                        if ln.startswith("model name")), cpu)
    except OSError:
        pass
    out = {"qemu": _first_line([QEMU, "--version"])}
    for pkg in GUEST_PACKAGES:
        out[pkg] = _first_line(["dpkg-query", "-W", "-f", "${Version}\n", pkg])
    out.update(host=platform.node(), host_kernel=platform.release(), host_cpu=cpu,
               host_cpus=os.cpu_count())
    return out

# The QEMUs running now, for kill_all(): boots may run in several threads.
_live = set()
_live_lock = threading.Lock()


def kill_all():
    """Kill every QEMU a boot() of this process is waiting for (on Ctrl-C in
    a caller that runs boots in threads: only the main thread gets it)."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class BootResult:
    def __init__(self, log_path, text, timed_out, seconds):
        self.log_path, self.text = log_path, text
        self.timed_out, self.seconds = timed_out, seconds
        self.rc = console.exit_status(text)
        self.booted = console.booted(text)

    def splats(self, allow=()):
        return console.splats(self.text, allow)

    def sections(self):
        return console.sections(self.text)

    def problems(self, allow=()):
        """What went wrong, as a list of strings; empty when the boot was clean."""
        out = []
        if self.timed_out:
            out.append(f"timed out after {self.seconds:.0f}s")
        if not self.booted:
            out.append("userspace never started (no PVRT-BOOTED)")
        elif self.rc is None:
            out.append("the command did not finish (no PVRT-EXIT)")
        elif self.rc:
            out.append(f"the command exited with {self.rc}")
        for n, line in self.splats(allow):
            out.append(f"console line {n}: {line}")
        return out


def extra_cpio(cmd_text, modroot, tmp):
    """A cpio with /pvrt/cmd and the modules under MODROOT/lib/modules."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "pvrt"))
    cmd = os.path.join(root, "pvrt", "cmd")
    with open(cmd, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n" + cmd_text + "\n")
    os.chmod(cmd, 0o755)
    if modroot and os.path.isdir(os.path.join(modroot, "lib", "modules")):
        subprocess.run(["cp", "-a", os.path.join(modroot, "lib"), root], check=True)
    out = os.path.join(tmp, "extra.cpio.gz")
    initramfs.cpio_dir(root, out)
    return out


def qemu_args(kernel, initrd, append, smp, icount, memory, extra=(), icount_cpus=1):
    args = [QEMU, "-M", "pc", "-cpu", "max", "-m", str(memory), "-bios", "qboot.rom",
            "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
            "-kernel", kernel, "-initrd", initrd, "-append", append]
    if icount:
        # With -icount, TCG runs every vCPU in one host thread, round-robin:
        # guest time stays instruction-counted and deterministic for any
        # number of vCPUs.
        args += ["-smp", str(icount_cpus), "-icount", "shift=2,sleep=off"]
    else:
        args += ["-smp", str(smp)]
    return args + list(extra)


def boot(kernel, cmd, log_path, initrd=None, modroot=None, smp=2, icount=False,
         append="", timeout=600, memory=1024, top=None, build_dir=None, qemu_extra=(),
         icount_cpus=1):
    top = top or os.environ["PVRT_TOP"]
    build_dir = build_dir or os.environ["PVRT_BUILD"]
    if not os.path.isfile(kernel):
        raise PvrtError(f"kernel {kernel} not found")
    initrd = initrd or initramfs.ensure(top, build_dir)
    cmdline = "console=ttyS0 panic=-1 loglevel=7 " + append
    if not icount:
        # Plain TCG's time is the host's: on a loaded host the IO-APIC timer
        # check can miss the timer's ticks and panic ("IO-APIC + timer
        # doesn't work!"), a failure of the host, not of the kernel.
        # no_timer_check skips the check, as paravirt_ops_setup() in
        # arch/x86/kernel/kvm.c does for KVM guests.  Plain-TCG boots therefore
        # no longer test the kernel's IO-APIC timer routing; icount boots,
        # whose timer ticks in instruction time, keep the check and their
        # command line (their /proc/cmdline is their record).
        cmdline += " no_timer_check"
    with tempfile.TemporaryDirectory(prefix="pvrt-boot-") as tmp:
        extra = extra_cpio(cmd, modroot, tmp)
        combined = os.path.join(tmp, "initrd.cpio.gz")
        with open(combined, "wb") as out:
            for part in (initrd, extra):
                with open(part, "rb") as f:
                    out.write(f.read())
        args = qemu_args(kernel, combined, cmdline.strip(), smp, icount, memory, qemu_extra,
                         icount_cpus)
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
        t0, timed_out = time.time(), False
        with open(log_path, "wb") as log:
            log.write(("# " + " ".join(shlex.quote(a) for a in args) + "\n").encode())
            log.flush()
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            with _live_lock:
                _live.add(proc)
            # QEMU runs in a session of its own, so a Ctrl-C at the terminal
            # does not reach it: kill it on every way out, not only on timeout.
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                with _live_lock:
                    _live.discard(proc)
    with open(log_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return BootResult(log_path, text, timed_out, time.time() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/boot", description=__doc__,
        epilog="examples:\n"
               "  scripts/boot --variant stock --cmd 'cyclictest-load 10'\n"
               "  scripts/boot --kernel bzImage --modules build/out/stock-base/modroot"
               " --icount --cmd 'uname -a'",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", help="boot build/out/<variant> (<variant>-base for a"
                    " 'tree base' variant; a same-build's variant's) and its cmdline")
    ap.add_argument("--kernel", help="a bzImage")
    ap.add_argument("--modules", help="directory holding lib/modules/ (INSTALL_MOD_PATH)")
    ap.add_argument("--initrd", help="base initramfs (default: scripts/initramfs)")
    ap.add_argument("--cmd", required=True, help="shell command run in the guest")
    ap.add_argument("--append", default="", help="extra kernel parameters")
    ap.add_argument("--smp", type=int,
                    help="vCPUs (default 2; with --icount 1, round-robin if more)")
    ap.add_argument("--icount", action="store_true", help="deterministic virtual time")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--log", help="console log (default: build/logs/boot-<time>.log)")
    args = ap.parse_args(argv)
    tools.require(("cpio", "gzip", QEMU))
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    append = args.append
    kernel, modroot = args.kernel, args.modules
    if args.variant:
        from pvrt.build import Variant, kernel_image, out_dir
        var = Variant(args.variant, top)
        out = out_dir(top, args.variant, bdir)
        kernel = kernel or kernel_image(out)
        modroot = modroot or os.path.join(out, "modroot")
        append = " ".join(var.cmdline + [append]).strip()
    if not kernel:
        ap.error("--kernel or --variant is required")
    log = args.log or os.path.join(bdir, "logs", f"boot-{time.strftime('%H%M%S')}.log")
    if args.smp is not None and not 1 <= args.smp <= 8:
        ap.error("--smp must be 1..8")
    res = boot(kernel, args.cmd, log, args.initrd, modroot, args.smp or 2, args.icount, append,
               args.timeout, top=top, build_dir=bdir, icount_cpus=args.smp or 1)
    problems = res.problems()
    logs.logger("boot")(f"console log {log} ({res.seconds:.0f}s)")
    for p in problems:
        logs.logger("boot")(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    entry(main)
