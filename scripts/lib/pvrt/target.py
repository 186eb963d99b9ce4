# SPDX-License-Identifier: GPL-2.0
"""scripts/validate --target ssh://USER@HOST[:PORT]: the job on the user's own board.

Before anything is built, one SSH session checks the board: reachable, the key
accepted (ssh -o BatchMode=yes: no password prompt), root, kexec present and
the running kernel able to kexec (/sys/kernel/kexec_loaded, which
CONFIG_KEXEC gives it; kexec_load_disabled 0; no lockdown), or
--target-reboot CMD given, the guest scripts' programs present (cyclictest,
chrt and the load's), and room for a kernel and its modules in --target-dir.
Each failure is one clear error and nothing is built.

Once built, a kernel whose release (`uname -r`) is the board's own kernel's
is refused before the board is touched: its modules would replace the board's
/lib/modules/<release> (unless it is the board's own kernel: the same GNU
build-id), and so are modules that do not fit in the board's /lib/modules.
Then hwlatdetect runs on the board as it is (rt-tests'
hwlatdetect if the board has it, else the kernel's hwlat tracer through
tracefs), and for each kernel the job built: its modules replace
/lib/modules/<release>, the bzImage (and --target-initrd) is copied over,
`kexec -l` loads it with the variant's command line, the board's own root=,
console= (from its /proc/cmdline) and a nonce pvrt.job=..., `systemctl
kexec` where systemd runs, else sync and `kexec -e` (or --target-reboot
CMD) boots it, the job waits for SSH to come back and checks
that the board booted this kernel (a new boot_id, the nonce in /proc/cmdline,
`uname -r` and `uname -v` of the build, and the build's GNU build-id in the
board's /sys/kernel/notes: every build of one tree and config has the same
release and version), installs the modules again if the board's root came
back without them (an initramfs), copies guest/ and runs the same
guest/cyclictest-load over SSH.
Its output holds the sections the console parser reads (PVRT-BEGIN/END),
followed by the kernel log (dmesg) for the splat and KUnit checks.  Rows carry
the board's identity (CPU model name, DMI product name, uname -m) in their
provenance, results.json is saved after each run (an interrupted job keeps
what it measured) and the report is the validate report.
"""

import os
import re
import secrets
import shlex
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from urllib.parse import urlsplit

from pvrt import boot, build, console, experiment, logs, report
from pvrt.errors import PvrtError
from pvrt.kunit import kunit_counts
from pvrt.results import save

log = logs.logger("target")

# Room the board needs in --target-dir before anything is built: a kernel, its
# modules and an initramfs, one kernel at a time (the job removes the last
# kernel's files before copying the next).  Checked again with the real sizes
# once the kernels are built.
NEED_MB = 128
LOADS = {"hackbench": ["hackbench"], "stress": ["stress-ng"], "stress-set": ["stress-ng"],
         "compile-find": [], "none": []}
# Parameters of the board's own command line that say where its system lives
# and where its console is: the kernel under test needs them too.
KEEP_PARAMS = ("root", "rootfstype", "rootflags", "rootwait", "ro", "rw", "console",
               "earlycon", "ip", "nfsroot", "no_timer_check")


class TargetError(PvrtError):
    pass


class RemoteTimeout(TargetError):
    """A command on the board that did not finish: OUT and ERR, what it
    printed until then, go to the run's log."""

    def __init__(self, msg, out="", err=""):
        super().__init__(msg)
        self.out, self.err = out, err


def _text(b):
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


class Target:
    """ssh://[USER@]HOST[:PORT]."""

    def __init__(self, url):
        self.url = url
        try:
            u = urlsplit(url)
            port = u.port
        except ValueError as e:
            raise TargetError(f"--target {url!r}: {e}; want ssh://USER@HOST[:PORT]") from None
        if u.scheme != "ssh" or not u.hostname or u.path not in ("", "/") or u.query \
                or u.fragment or u.password is not None:
            raise TargetError(f"--target {url!r}: want ssh://USER@HOST[:PORT]")
        self.user, self.host, self.port = u.username, u.hostname, port or 22

    @property
    def dest(self):
        return f"{self.user}@{self.host}" if self.user else self.host


class Remote:
    """Commands on the board over ssh (BatchMode: a refused key is an error,
    never a prompt).  RUN is subprocess.run, replaced in the tool tests."""

    def __init__(self, target, ssh_config=None, run=subprocess.run, connect_timeout=10):
        self.target, self.ssh_config, self._run = target, ssh_config, run
        self.connect_timeout = connect_timeout

    def argv(self, command):
        args = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={self.connect_timeout}",
                "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4",
                "-p", str(self.target.port)]
        if self.ssh_config:
            args += ["-F", self.ssh_config]
        return args + [self.target.dest, command]

    def run(self, command, stdin=None, timeout=600, check=True):
        """(rc, stdout, stderr) of COMMAND (a shell command line on the board)."""
        try:
            res = self._run(self.argv(command), stdin=stdin if stdin is not None
                            else subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise RemoteTimeout(f"{self.target.url}: `{command[:60]}` did not finish in"
                                f" {timeout}s", _text(e.stdout), _text(e.stderr)) from None
        out, err = _text(res.stdout), _text(res.stderr)
        if check and res.returncode == 255:
            raise TargetError(ssh_failure(self.target, err))
        if check and res.returncode:
            raise TargetError(f"{self.target.url}: `{command[:60]}` exited with"
                              f" {res.returncode}: {err.strip()[-300:]}")
        return res.returncode, out, err

    def put(self, path, dest):
        """Copy the local file PATH to DEST on the board (through `cat`: the
        board needs no scp or sftp server)."""
        with open(path, "rb") as f:
            self.run(f"cat > {shlex.quote(dest)}", stdin=f, timeout=900)


def ssh_failure(target, err):
    """The user's line for ssh's exit status 255 with stderr ERR."""
    e = err.strip()
    last = e.splitlines()[-1] if e else "no message"
    if "Permission denied" in e or "Too many authentication failures" in e:
        return (f"{target.url}: the board refused the key ({last}): add your public key to"
                f" {target.dest}'s ~/.ssh/authorized_keys (the job never types a password)")
    if "Host key verification failed" in e or "REMOTE HOST IDENTIFICATION" in e:
        return (f"{target.url}: the board's host key is unknown or not the one known"
                f" ({last}): check ~/.ssh/known_hosts (or the --target-ssh-config file)")
    return f"{target.url}: the board is not reachable ({last})"


# --- the checks before anything is built -------------------------------------------------

def probe_script(tdir, progs):
    """One shell session's worth of facts, as KEY=VALUE lines."""
    q = shlex.quote(tdir)
    lines = ["echo uid=$(id -u)",
             "echo kexec=$(command -v kexec || true)",
             "echo tar=$(command -v tar || true)",
             "echo od=$(command -v od || true)"]
    lines += [f"echo prog:{p}=$(command -v {p} || true)" for p in progs]
    # Can the running kernel kexec_load() at all: CONFIG_KEXEC_CORE gives it
    # /sys/kernel/kexec_loaded, but only CONFIG_KEXEC gives it kexec_load()
    # (KEXEC_FILE alone selects KEXEC_CORE too), read from its config where
    # it shows it; the sysctls can have turned it off for good or limit the
    # loads left; lockdown refuses kexec_load().
    lines += ["echo kexec_core=$(test -e /sys/kernel/kexec_loaded && echo yes || echo no)",
              "if [ -r /proc/config.gz ]; then kc='gzip -dc /proc/config.gz';"
              " elif [ -r /boot/config-$(uname -r) ]; then kc=\"cat /boot/config-$(uname -r)\";"
              " else kc=; fi",
              # A config that cannot be read (no gzip, a broken file) is
              # "unknown", not "n".
              "cfg=; [ -z \"$kc\" ] || cfg=$($kc 2>/dev/null) || cfg=",
              "echo kexec_config=$(if [ -z \"$cfg\" ]; then echo unknown;"
              " elif printf '%s\\n' \"$cfg\" | grep -q '^CONFIG_KEXEC=y$'; then echo y;"
              " else echo n; fi)",
              "echo kexec_load_disabled=$(cat /proc/sys/kernel/kexec_load_disabled"
              " 2>/dev/null)",
              "echo kexec_load_limit_reboot=$(cat /proc/sys/kernel/kexec_load_limit_reboot"
              " 2>/dev/null)",
              # securityfs may not be mounted: mounted for the look.
              "{ test -e /sys/kernel/security/lockdown || mount -t securityfs none"
              " /sys/kernel/security 2>/dev/null; true; }",
              "echo lockdown=$(cat /sys/kernel/security/lockdown 2>/dev/null)"]
    lines += [f"mkdir -p {q} 2>/dev/null && echo dir=ok || echo dir=fail",
              # busybox df finds no mount point for an initramfs's rootfs.
              f"echo free_kb=$(df -Pk {q} 2>/dev/null | awk 'NR == 2 {{ print $4 }}'"
              f" | grep . || stat -f -c '%a %S' {q} | awk '{{ print int($1 * $2 / 1024) }}')",
              "echo boot_id=$(cat /proc/sys/kernel/random/boot_id)"]
    return "; ".join(lines)


def facts(text):
    return dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln)


def precheck(remote, tdir, load, reboot_cmd=None, need_mb=NEED_MB):
    """Refuse a board the job cannot use, with one clear error; else its
    facts."""
    url = remote.target.url
    progs = ["cyclictest", "chrt"] + LOADS[load]
    _rc, out, _err = remote.run(probe_script(tdir, progs), timeout=60)
    f = facts(out)
    if f.get("uid") != "0":
        raise TargetError(f"{url}: the job logs in as uid {f.get('uid', '?')}: it needs root"
                          " on the board (kexec, /lib/modules, SCHED_FIFO)")
    if not f.get("kexec") and not reboot_cmd:
        raise TargetError(f"{url}: the board has no kexec (install kexec-tools there), or give"
                          " --target-reboot CMD for a board that boots its default kernel")
    if not reboot_cmd:
        kexec_usable(url, f)
    if not f.get("tar"):
        raise TargetError(f"{url}: the board has no tar (needed to install the modules)")
    if not f.get("od"):
        raise TargetError(f"{url}: the board has no od (coreutils or busybox): the job reads"
                          " the booted kernel's build-id from /sys/kernel/notes with it")
    missing = [p for p in progs if not f.get(f"prog:{p}")]
    if missing:
        raise TargetError(f"{url}: the board lacks {', '.join(missing)} (guest/cyclictest-load"
                          f" under {load} runs them: install rt-tests"
                          + (", stress-ng" if "stress-ng" in missing else "") + " there)")
    if f.get("dir") != "ok":
        raise TargetError(f"{url}: cannot create --target-dir {tdir} on the board")
    try:
        free_mb = int(f.get("free_kb", "")) // 1024
    except ValueError:
        raise TargetError(f"{url}: cannot read the free space of {tdir} (df -Pk)") from None
    if free_mb < need_mb:
        raise TargetError(f"{url}: {tdir} has {free_mb} MiB free, a kernel with its modules"
                          f" needs {need_mb} MiB: free some or give another --target-dir")
    return f


def lockdown_mode(text):
    """The active mode of /sys/kernel/security/lockdown ("none [integrity]
    confidentiality": integrity), or None when the board did not show it."""
    m = re.search(r"\[(\w+)\]", text or "")
    return m.group(1) if m else None


def kexec_usable(url, f):
    """Refuse, with one error naming the cause, a board whose running kernel
    cannot kexec_load() (facts F of probe_script)."""
    if f.get("kexec_core") == "no":
        raise TargetError(f"{url}: the board's running kernel cannot kexec: it has no"
                          " /sys/kernel/kexec_loaded (built without CONFIG_KEXEC_CORE): boot"
                          " a kernel with CONFIG_KEXEC=y on it, or give --target-reboot CMD")
    if f.get("kexec_config") == "n":
        raise TargetError(f"{url}: the board's running kernel has no kexec_load(), which"
                          " `kexec -l -c` uses: CONFIG_KEXEC is not set in its config"
                          " (/proc/config.gz or /boot/config-$(uname -r)): boot a kernel"
                          " with CONFIG_KEXEC=y on it, or give --target-reboot CMD")
    # The counter is the running kernel's own (kernel/kexec_core.c: a static
    # starting at -1, counted down by each load): every kernel the job kexecs
    # starts afresh, so only a board kernel that allows no load at all is
    # refused here; one whose boot scripts set 0 fails at its `kexec -l`.
    limit = f.get("kexec_load_limit_reboot", "")
    if limit == "0":
        raise TargetError(f"{url}: /proc/sys/kernel/kexec_load_limit_reboot is 0: the"
                          " board's running kernel allows no kexec_load() before a reboot:"
                          " reboot it without setting that sysctl, or give --target-reboot CMD")
    if f.get("kexec_load_disabled") == "1":
        raise TargetError(f"{url}: kexec is disabled on the board"
                          " (/proc/sys/kernel/kexec_load_disabled is 1, which only a reboot"
                          " undoes): reboot it without setting that sysctl, or give"
                          " --target-reboot CMD")
    mode = lockdown_mode(f.get("lockdown"))
    if mode and mode != "none":
        raise TargetError(f"{url}: the board's kernel is locked down ({mode}:"
                          " /sys/kernel/security/lockdown), which refuses kexec_load() of any"
                          " kernel, signed or not: boot it without lockdown (e.g."
                          " Secure Boot off), or give --target-reboot CMD")


# --- what the board is -----------------------------------------------------------------

IDENTITY = ("echo machine=$(uname -m); echo hostname=$(uname -n);"
            " echo kernel=$(uname -r);"
            " echo cpu_model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-"
            " | sed 's/^ *//');"
            " echo cpus=$(grep -c ^processor /proc/cpuinfo);"
            " echo dmi_product=$(cat /sys/class/dmi/id/product_name 2>/dev/null);"
            " echo dmi_vendor=$(cat /sys/class/dmi/id/sys_vendor 2>/dev/null);"
            " echo rt_tests=$(cyclictest --help 2>&1 | sed -n 's/^cyclictest V *//p' | head -1);"
            " echo stress_ng=$(stress-ng --version 2>/dev/null | head -1);"
            " echo busybox=$(busybox 2>&1 | head -1);"
            " echo notes=$(od -An -v -tx1 /sys/kernel/notes 2>/dev/null | tr -d ' \\n')")


def identity(remote):
    """The hardware's identity, as provenance keys (the report's host lines
    name the board, not the machine running the job)."""
    f = facts(remote.run(IDENTITY, timeout=60)[1])
    cpu = f.get("cpu_model") or "unknown"
    out = {"target": remote.target.url, "machine": f.get("machine", "?"), "cpu_model": cpu,
           "dmi_product": f.get("dmi_product") or "none", "dmi_vendor": f.get("dmi_vendor")
           or "none", "qemu": "none (the board over SSH)",
           "rt-tests": f.get("rt_tests") or "unknown",
           "stress-ng": f.get("stress_ng") or "none", "busybox-static": f.get("busybox") or "none",
           "host": f.get("hostname", "?"),
           "host_kernel": f.get("kernel", "?"), "host_cpu": cpu, "host_cpus": f.get("cpus"),
           "host_build_id": state_build_id(f)}
    return out


def refuse_own_release(url, outs, hw):
    """Refuse a kernel under test whose release is the board's own kernel's:
    its modules would replace the board's /lib/modules/<release>.  The board's
    own kernel itself (the same build-id) may be under test."""
    for name, out in outs.items():
        rel = built_identity(out)[0]
        if rel == hw.get("host_kernel") and built_build_id(out)[0] != hw.get("host_build_id"):
            raise TargetError(
                f"{url}: {name} is built as release {rel}, the release of the board's own"
                f" kernel: installing its modules would replace the board's /lib/modules/{rel}."
                " Give the kernels under test a release of their own: CONFIG_LOCALVERSION"
                ' (e.g. "-test") in a --kernel-config file or the variant\'s fragments')


# --- hwlatdetect -----------------------------------------------------------------------

def hwlat_script(secs, threshold=10, tracefs="/sys/kernel/tracing"):
    """rt-tests' hwlatdetect if the board has it, else the hwlat tracer
    (tracefs at TRACEFS) for SECS seconds, its settings restored after;
    section "hwlat" with the tool named on its first line."""
    return f"""echo "PVRT-BEGIN hwlat"
if command -v hwlatdetect >/dev/null 2>&1; then
	echo "# tool hwlatdetect"
	hwlatdetect --duration={secs} --threshold={threshold} 2>&1
	rc=$?
else
	echo "# tool hwlat-tracer"
	T={tracefs}
	# What it mounts, it unmounts at the end.
	mounted=
	if [ ! -e $T/available_tracers ] && mount -t tracefs nodev $T 2>/dev/null; then
		mounted=$T
	fi
	if [ ! -e $T/available_tracers ]; then
		T=/sys/kernel/debug/tracing
		if [ ! -e $T/available_tracers ] && mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
		then
			mounted=/sys/kernel/debug
		fi
	fi
	if grep -qw hwlat $T/available_tracers 2>/dev/null; then
		# The tracer, tracing_on, the threshold and the maximum as the board
		# had them, after, or when the job is killed (SIGHUP: its SSH session
		# gone) in the middle.
		old=$(cat $T/tracing_thresh)
		old_tracer=$(cat $T/current_tracer)
		old_on=$(cat $T/tracing_on)
		old_max=$(cat $T/tracing_max_latency)
		restore() {{
			echo "$old_tracer" > $T/current_tracer
			echo "$old_on" > $T/tracing_on
			echo "$old" > $T/tracing_thresh
			echo "$old_max" > $T/tracing_max_latency
		}}
		# PIPE: the job's ssh killed (its timeout) closes our output; the
		# next echo raises SIGPIPE, which must restore too.
		trap 'kill $sleeper 2>/dev/null; restore; [ -z "$mounted" ] || umount $mounted; exit 143' \
			TERM HUP INT PIPE
		echo {threshold} > $T/tracing_thresh
		echo 0 > $T/tracing_max_latency
		echo hwlat > $T/current_tracer
		echo 1 > $T/tracing_on
		# In the background, so that the trap runs at once.
		sleep {secs} &
		sleeper=$!
		wait $sleeper
		echo "# max $(cat $T/tracing_max_latency)"
		grep -v '^#' $T/trace
		trap - TERM HUP INT PIPE
		restore
		rc=0
	else
		echo "# no hwlatdetect and no hwlat tracer (CONFIG_HWLAT_TRACER) on the board"
		rc=2
	fi
	[ -z "$mounted" ] || umount $mounted 2>/dev/null
fi
echo "PVRT-END hwlat rc=$rc"
"""


def parse_hwlat(section, secs, threshold=10):
    """A row of kind "hwlat" from section (rc, lines)."""
    rc, lines = section
    row = {"kind": "hwlat", "seconds": secs, "threshold_us": threshold, "problems": []}
    tool = next((ln.split(None, 2)[2] for ln in lines if ln.startswith("# tool ")), None)
    row["tool"] = tool
    if rc is None:
        row["problems"].append("hwlat section not finished")
    elif rc:
        why = next((ln[2:] for ln in lines if ln.startswith("# no hwlat")), f"rc={rc}")
        row["problems"].append(f"hwlatdetect: {why}")
    if tool == "hwlatdetect":
        for ln in lines:
            m = re.match(r"^\s*Max Latency:\s*(\d+|Below threshold)", ln)
            if m:
                row["max_us"] = 0 if m.group(1).startswith("Below") else int(m.group(1))
            m = re.match(r"^\s*Samples exceeding threshold:\s*(\d+)", ln)
            if m:
                row["over_threshold"] = int(m.group(1))
    elif tool == "hwlat-tracer" and rc == 0:
        samples = [ln for ln in lines if "inner/outer(us)" in ln]
        worst = 0
        for ln in samples:
            m = re.search(r"inner/outer\(us\):\s*(\d+)/(\d+)", ln)
            if m:
                worst = max(worst, int(m.group(1)), int(m.group(2)))
        mx = next((ln.split()[2] for ln in lines if ln.startswith("# max ")), None)
        row["max_us"] = max(worst, int(mx)) if mx and mx.isdigit() else worst
        row["over_threshold"] = len(samples)
    if not row["problems"] and "max_us" not in row:
        row["problems"].append("hwlatdetect printed no maximum")
    return row


# --- one kernel on the board -------------------------------------------------------------

def built_identity(out):
    """(uname -r, uname -v) of the kernel built in OUT."""
    with open(os.path.join(out, "include", "config", "kernel.release"), encoding="utf-8") as f:
        release = f.read().strip()
    with open(os.path.join(out, "include", "generated", "utsversion.h"), encoding="utf-8") as f:
        m = re.search(r'UTS_VERSION\s+"([^"]*)"', f.read())
    return release, m.group(1) if m else None


NT_GNU_BUILD_ID = 3
SHT_NOTE = 7


def gnu_build_id(notes, endian="<"):
    """The hex GNU build-id in NOTES, the bytes of ELF notes (a .notes
    section, or the board's /sys/kernel/notes, which is the running kernel's
    .notes), or None.  Each note: namesz, descsz, type, then the name and the
    descriptor, each padded to 4 bytes."""
    off = 0
    while off + 12 <= len(notes):
        namesz, descsz, ntype = struct.unpack_from(endian + "3I", notes, off)
        name_at = off + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        end = desc_at + (descsz + 3) // 4 * 4
        if end > len(notes) + 3:
            break
        if ntype == NT_GNU_BUILD_ID and notes[name_at:name_at + namesz] == b"GNU\0":
            return notes[desc_at:desc_at + descsz].hex()
        off = end
    return None


def elf_build_id(path):
    """(GNU build-id, byte order) of the ELF file PATH (the built vmlinux),
    from its SHT_NOTE sections; the build-id None when it has none."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise TargetError(f"{path}: not an ELF file")
    wide, endian = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(endian + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x3a)
        sh = endian + "IIQQQQ"
    else:
        shoff, = struct.unpack_from(endian + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x2e)
        sh = endian + "IIIIII"
    for i in range(shnum):
        _name, stype, _flags, _addr, offset, size = struct.unpack_from(
            sh, data, shoff + i * shentsize)
        if stype == SHT_NOTE:
            bid = gnu_build_id(data[offset:offset + size], endian)
            if bid:
                return bid, endian
    return None, endian


def built_build_id(out):
    """(build-id, byte order) of the kernel built in OUT: its vmlinux's
    GNU build-id, which the bzImage made from it carries too."""
    vmlinux = os.path.join(out, "vmlinux")
    bid, endian = elf_build_id(vmlinux)
    if not bid:
        raise TargetError(f"{vmlinux} has no GNU build-id note: the job cannot tell it from"
                          " another kernel of the same release on the board (link it with"
                          " ld --build-id)")
    return bid, endian


def modules_tar(out, dest):
    """DEST: a tar.gz of OUT/modroot/lib/modules (lib/modules/<release>/...)."""
    modroot = os.path.join(out, "modroot")
    with tarfile.open(dest, "w:gz") as tar:
        if os.path.isdir(os.path.join(modroot, "lib", "modules")):
            tar.add(os.path.join(modroot, "lib"), arcname="lib")
    return dest


def kernel_bytes(out):
    """Bytes a kernel built in OUT takes on the board: bzImage and modules."""
    total = os.path.getsize(build.kernel_image(out))
    for d, _dirs, files in os.walk(os.path.join(out, "modroot")):
        total += sum(os.path.getsize(os.path.join(d, f)) for f in files)
    return total


def board_cmdline(board, variant_cmdline, nonce):
    """The kernel under test's command line: the parameters of the board's
    own that KEEP_PARAMS names, the variant's, and the nonce."""
    keep = [p for p in board.split()
            if p.split("=", 1)[0] in KEEP_PARAMS]
    return " ".join(keep + list(variant_cmdline) + [f"pvrt.job={nonce}"])


STATE = ("echo boot_id=$(cat /proc/sys/kernel/random/boot_id); echo release=$(uname -r);"
         " echo version=$(uname -v); echo cmdline=$(cat /proc/cmdline);"
         " echo notes=$(od -An -v -tx1 /sys/kernel/notes 2>/dev/null | tr -d ' \\n')")


def state_build_id(state, endian="<"):
    """The GNU build-id of the kernel the board runs, from STATE's notes
    (/sys/kernel/notes in hex), or None."""
    try:
        return gnu_build_id(bytes.fromhex(state.get("notes", "")), endian)
    except ValueError:
        return None


# Set by a caller that owns the board (make check's board stage, whose QEMU
# runs with -no-reboot): a callable, false once the board is gone for good.
ALIVE = None


def wait_back(remote, old_boot_id, timeout, poll=5):
    """The board's state once SSH answers again with another boot_id."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(poll)
        if ALIVE is not None and not ALIVE():
            raise TargetError(f"{remote.target.url}: the board is gone (its QEMU exited)"
                              " while booting the kernel (its console says why)")
        try:
            rc, out, _ = remote.run(STATE, timeout=30, check=False)
        except TargetError:
            continue
        f = facts(out) if rc == 0 else {}
        if f.get("boot_id") and f["boot_id"] != old_boot_id:
            return f
    raise TargetError(f"{remote.target.url}: the board did not come back over SSH within"
                      f" {timeout}s of booting the kernel (its console says why)")


# Boot the kernel kexec -l loaded: with systemd running, `systemctl kexec`
# (services stopped and file systems unmounted first); else the file
# systems synced and kexec -e, which is also the way when systemctl kexec
# fails.
KEXEC_EXEC = ("if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then"
              " systemctl kexec || { sync; kexec -e; }; else sync; kexec -e; fi")


def boot_kernel(remote, tdir, out, var_cmdline, initrd=None, reboot_cmd=None,
                boot_timeout=600, poll=5):
    """Boot the kernel built in OUT on the board; returns the state after."""
    url = remote.target.url
    q = shlex.quote
    rel, ver = built_identity(out)
    bid, endian = built_build_id(out)
    before = facts(remote.run(STATE, timeout=60)[1])
    nonce = secrets.token_hex(4)
    cmdline = board_cmdline(before.get("cmdline", ""), var_cmdline, nonce)
    remote.run(f"rm -rf {q(tdir)}/k && mkdir -p {q(tdir)}/k", timeout=60)
    remote.put(build.kernel_image(out), f"{tdir}/k/bzImage")
    if initrd:
        remote.put(initrd, f"{tdir}/k/initrd")
    if reboot_cmd:
        # Its modules before it boots: the kernel finds them then.
        install_modules(remote, tdir, out, rel)
        env = (f"PVRT_KERNEL={q(tdir + '/k/bzImage')} PVRT_CMDLINE={q(cmdline)}"
               + (f" PVRT_INITRD={q(tdir + '/k/initrd')}" if initrd else ""))
        # The command installs the kernel as the board's default and reboots.
        remote.run(f"{env} setsid sh -c {q('sleep 1; ' + reboot_cmd)}"
                   " </dev/null >/dev/null 2>&1 &",
                   timeout=60)
    else:
        # kexec_load() (-c) named, not left to the kexec-tools version.
        rc, _out, err = remote.run(f"kexec -l -c {q(tdir + '/k/bzImage')}"
                                   + (f" --initrd={q(tdir + '/k/initrd')}" if initrd else "")
                                   + f" --append={q(cmdline)}", timeout=120, check=False)
        if rc == 255:
            raise TargetError(ssh_failure(remote.target, err))
        if rc:
            raise TargetError(f"{url}: kexec -l refused the kernel (exit status {rc}:"
                              f" {err.strip()[-300:] or 'no message'}): the board's running"
                              " kernel needs CONFIG_KEXEC and no lockdown; or give"
                              " --target-reboot CMD")
        # Its modules once the kernel is loaded, so that a refused kernel
        # leaves the board's /lib/modules alone, and before it boots.
        install_modules(remote, tdir, out, rel)
        # In a session of its own, so that this SSH session ends before the
        # board goes and its end does not take kexec -e with it.
        remote.run(f"setsid sh -c {q('sleep 1; ' + KEXEC_EXEC)} </dev/null >/dev/null 2>&1 &",
                   timeout=60)
    after = wait_back(remote, before.get("boot_id"), boot_timeout, poll=poll)
    # The nonce proves the command line, the build-id the image: every build
    # of one tree and config has the same `uname -r` and `uname -v`.
    running = state_build_id(after, endian)
    after["build_id"] = running
    if f"pvrt.job={nonce}" not in after.get("cmdline", "").split() \
            or after.get("release") != rel or (ver and after.get("version") != ver) \
            or running != bid:
        raise TargetError(
            f"{url}: the board booted `{after.get('release')}` `{after.get('version')}`"
            f" build-id {running or 'unknown (no /sys/kernel/notes)'}"
            f" (command line {after.get('cmdline')!r}), not the kernel just built"
            f" (`{rel}` `{ver}` build-id {bid}, pvrt.job={nonce})"
            + (": --target-reboot's command must make it the board's default" if reboot_cmd
               else ""))
    return after


def run_script(tdir, cmd):
    """The guest command over SSH, framed as guest/init frames it on a console."""
    q = shlex.quote
    return (f"export PATH={q(tdir + '/guest')}:$PATH TMPDIR=/tmp; cd /tmp;"
            ' echo "PVRT-BOOTED $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)";'
            ' echo "PVRT-KERNEL $(uname -v)"; echo "PVRT-CMDLINE $(cat /proc/cmdline)";'
            f" {cmd}; echo \"PVRT-EXIT rc=$?\"; echo '# dmesg'; dmesg")


def modules_bytes(out):
    """Bytes the modules of the kernel built in OUT take once unpacked under
    /lib/modules (files rounded up to 4 KiB blocks), 0 without modules."""
    total = 0
    for d, _dirs, files in os.walk(os.path.join(out, "modroot", "lib", "modules")):
        total += sum((os.path.getsize(os.path.join(d, f)) + 4095) // 4096 * 4096
                     for f in files)
    return total


def modules_room_script(rel):
    """Free KiB of the board's /lib/modules file system (/lib's while there
    is no /lib/modules: nothing is created before the job may go on), and
    the KiB that /lib/modules/REL (removed before the install) takes now."""
    q = shlex.quote("/lib/modules/" + rel)
    return ("m=/lib/modules; [ -d $m ] || m=/lib; echo free_kb=$(df -Pk $m 2>/dev/null"
            " | awk 'NR == 2 { print $4 }' | grep . || stat -f -c '%a %S' $m"
            " | awk '{ print int($1 * $2 / 1024) }');"
            f" echo old_kb=$(du -sk {q} 2>/dev/null | cut -f1)")


def check_modules_room(remote, outs):
    """Refuse, before the board is touched, kernels whose modules do not fit
    in the board's /lib/modules together: install_modules replaces the
    modules of one release, never removes another release's."""
    need, names = {}, {}
    for name, out in outs.items():
        size = modules_bytes(out)
        if not size:
            continue
        rel = built_identity(out)[0]
        need[rel] = max(need.get(rel, 0), size)
        names.setdefault(rel, []).append(name)
    if not need:
        return
    free_kb, old_kb = None, 0
    for rel in need:
        f = facts(remote.run(modules_room_script(rel), timeout=60)[1])
        try:
            free_kb = int(f.get("free_kb", ""))
        except ValueError:
            raise TargetError(f"{remote.target.url}: cannot read the free space of the"
                              " board's /lib/modules (df -Pk)") from None
        old_kb += int(f["old_kb"]) if f.get("old_kb", "").isdigit() else 0
    total = sum(need.values())
    if (free_kb + old_kb) << 10 < total:
        raise TargetError(f"{remote.target.url}: the board's /lib/modules has"
                          f" {(free_kb + old_kb) >> 10} MiB free (with"
                          f" {', '.join('/lib/modules/' + r for r in need)} replaced), the"
                          f" modules of {', '.join(n for ns in names.values() for n in ns)}"
                          f" need {(total >> 20) + 1} MiB unpacked: free some there")


def install_modules(remote, tdir, out, rel):
    """The modules of the kernel built in OUT (release REL) as the board's
    /lib/modules/REL, whatever was there before removed."""
    q = shlex.quote
    with tempfile.TemporaryDirectory(prefix="pvrt-target-") as tmp:
        mods = modules_tar(out, os.path.join(tmp, "modules.tar.gz"))
        remote.run(f"mkdir -p {q(tdir)}", timeout=60)
        remote.put(mods, f"{tdir}/modules.tar.gz")
    remote.run(f"rm -rf {q('/lib/modules/' + rel)} && tar xzf {q(tdir)}/modules.tar.gz -C /"
               f" && rm -f {q(tdir)}/modules.tar.gz", timeout=300)


def install(remote, tdir, out, top):
    """guest/ in TDIR/guest on the booted board, and the modules again if
    its root came back without them (a root in an initramfs, --target-initrd)."""
    q = shlex.quote
    rel = built_identity(out)[0]
    if os.path.isdir(os.path.join(out, "modroot", "lib", "modules", rel)) \
            and remote.run(f"test -d {q('/lib/modules/' + rel)}", timeout=60, check=False)[0]:
        install_modules(remote, tdir, out, rel)
    with tempfile.TemporaryDirectory(prefix="pvrt-target-") as tmp:
        guest = os.path.join(tmp, "guest.tar.gz")
        with tarfile.open(guest, "w:gz") as tar:
            tar.add(os.path.join(top, "guest"), arcname="guest")
        remote.run(f"mkdir -p {q(tdir)}", timeout=60)
        remote.put(guest, f"{tdir}/guest.tar.gz")
    remote.run(f"cd {q(tdir)} && rm -rf guest && tar xzf guest.tar.gz && rm -f guest.tar.gz",
               timeout=300)


def measure(remote, tree, variant, secs, load, run_no, results_dir, hw, tdir):
    """One cyclictest run over SSH: a latency row as validate.measure makes."""
    from pvrt import validate
    log_path = os.path.join(results_dir, f"{variant}-{load}-{run_no}-board.log")
    t0 = time.time()
    head = f"# {remote.target.url}: cyclictest-load {secs} {load}\n"
    try:
        rc, out, err = remote.run(run_script(tdir, f"cyclictest-load {secs} {load}"),
                                  timeout=secs * 4 + 300, check=False)
    except RemoteTimeout as e:
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(head + e.out + e.err + f"\n# {e}\n")
        raise TargetError(f"{e} (what it printed: {log_path})") from None
    with open(log_path, "w", encoding="utf-8") as f:
        f.write(head + out + err)
    res = boot.BootResult(log_path, out, False, time.time() - t0)
    row = {"kind": "latency", "variant": variant, "load": load, "run": run_no,
           "seconds": secs, "log": log_path, "problems": res.problems(),
           "provenance": dict(console.provenance(out), **hw), "cpus": 1, "isolated": False,
           "rig": "smp1"}
    if rc == 255:
        row["problems"].append(ssh_failure(remote.target, err))
    validate.judge_cyclictest(row, res)
    row["kunit"] = kunit_counts(tree, log_path)
    return row


def run_hwlat(remote, secs, results_dir, hw):
    log_path = os.path.join(results_dir, "hwlat-board.log")
    try:
        rc, out, err = remote.run(hwlat_script(secs), timeout=secs * 3 + 120, check=False)
    except RemoteTimeout as e:
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(e.out + e.err + f"\n# {e}\n")
        raise TargetError(f"{e} (what it printed: {log_path})") from None
    with open(log_path, "w", encoding="utf-8") as f:
        f.write(out + err)
    sec = console.sections(out).get("hwlat", (None, []))
    row = dict(parse_hwlat(sec, secs), log=log_path, provenance=hw)
    if rc == 255:
        row["problems"].append(ssh_failure(remote.target, err))
    return row


# --- the report --------------------------------------------------------------------------

CLOCK = "- clock: QEMU TCG"


def board_lines(rows, meta):
    """The report's lines on the board: its identity and hwlatdetect."""
    hw = meta.get("board", {})
    md = ["## The board", "",
          f"- target: `{meta.get('target')}`; kernels booted with"
          f" {'`' + meta['reboot'] + '`' if meta.get('reboot') else 'kexec'}",
          f"- hardware: {hw.get('cpu_model', '?')}; DMI product {hw.get('dmi_product', '?')}"
          f" ({hw.get('dmi_vendor', '?')}); `uname -m` {hw.get('machine', '?')};"
          f" {hw.get('host_cpus', '?')} CPUs; the board's own kernel {hw.get('host_kernel')}"]
    booted = [f"{r['variant']} {r['build_id']}" for r in rows
              if r.get("kind") == "latency" and r.get("build_id")]
    if booted:
        md.append("- kernels the board ran, by the GNU build-id in its /sys/kernel/notes: "
                  + ", ".join(dict.fromkeys(booted)))
    for r in rows:
        if r.get("kind") == "hwlat":
            fig = (f"max {r['max_us']} us, {r.get('over_threshold', '?')} samples over"
                   f" {r['threshold_us']} us" if "max_us" in r else "no figure")
            md.append(f"- hwlatdetect ({r.get('tool') or 'none'}, {r['seconds']} s, first,"
                      f" on the board's own kernel): {fig}"
                      + ("; problems: " + "; ".join(r["problems"]) if r["problems"] else ""))
    return md + [""]


def write_report(rows, meta, results_dir):
    """report.write, with the clock line saying what clock measured and the
    board's section after the header."""
    paths = report.write([r for r in rows if r.get("kind") != "hwlat"], meta, results_dir)
    path = paths["report"]
    with open(path, encoding="utf-8") as f:
        md = f.read().split("\n")
    out = []
    for ln in md:
        if ln.startswith(CLOCK):
            ln = (f"- clock: the board's own ({meta.get('target')}): hardware latency over SSH,"
                  " not comparable with the QEMU -icount figures of a validate run")
        out.append(ln)
        if ln.startswith("## Headline"):
            out[-1:] = board_lines(rows, meta) + [ln]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    return paths


# --- the job -----------------------------------------------------------------------------

TARGET_OPTIONS = {"target_reboot": None, "target_initrd": None, "target_ssh_config": None,
                  "target_dir": "/var/tmp/pvrt", "target_boot_timeout": 600,
                  "hwlat_seconds": 30}


def hook(ap, args, argv, run=subprocess.run):
    """validate's one call: None without --target (after refusing a --target-*
    option given alone), else the exit status of the job on the board."""
    if not args.target:
        alone = [k for k, default in TARGET_OPTIONS.items() if getattr(args, k) != default]
        if alone:
            ap.error(f"--{alone[0].replace('_', '-')} needs --target ssh://USER@HOST[:PORT]")
        return None
    return main(args, argv, run=run)


UNSUPPORTED = ("full", "soak", "resume", "report", "baseline", "isolated", "base")


def main(args, argv, run=subprocess.run):
    """scripts/validate --target: ARGS of validate's parser."""
    tgt = Target(args.target)
    if run is subprocess.run and not shutil.which("ssh"):
        raise TargetError("--target needs ssh (Debian package openssh-client)")
    for opt in UNSUPPORTED:
        if getattr(args, opt, None):
            raise TargetError(f"--target runs the short form: not with --{opt}")
    if args.cpus != [1]:
        raise TargetError("--target runs cyclictest with one measuring thread: not with --cpus")
    if args.target_initrd and not os.path.isfile(args.target_initrd):
        raise TargetError(f"--target-initrd {args.target_initrd}: no such file")
    if args.target_ssh_config and not os.path.isfile(args.target_ssh_config):
        raise TargetError(f"--target-ssh-config {args.target_ssh_config}: no such file")
    if args.kernel_config and not os.path.isfile(args.kernel_config):
        raise TargetError(f"--kernel-config {args.kernel_config}: no such file")
    secs = args.seconds or 20
    runs = args.runs or 1
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    for v in args.variants:
        build.Variant(v, top)
    remote = Remote(tgt, args.target_ssh_config, run=run)
    tdir = args.target_dir
    log(f"checking {tgt.url}")
    precheck(remote, tdir, args.load, args.target_reboot)
    hw = identity(remote)
    log(f"board: {hw['cpu_model']}, DMI {hw['dmi_product']}, {hw['machine']},"
        f" kernel {hw['host_kernel']}")
    kc = os.path.abspath(args.kernel_config) if args.kernel_config else None
    tree = experiment.apply_tree(top, bdir, log=log)
    outs = {}
    for v in args.variants:
        name = build.Variant(v, top).build_name
        if name not in outs:
            log(f"build {name}")
            outs[name] = build.build_variant(top, tree, build.Variant(name, top,
                                                                       base_config=kc),
                                             log=log)
    # Each kernel is told from the others by its build-id, checked on the board.
    for name, out in outs.items():
        log(f"{name}: build-id {built_build_id(out)[0]}")
    refuse_own_release(tgt.url, outs, hw)
    # The room the built kernels need, which the first check could only guess.
    need = max(kernel_bytes(out) for out in outs.values()) + (
        os.path.getsize(args.target_initrd) if args.target_initrd else 0)
    if need > NEED_MB << 20:
        precheck(remote, tdir, args.load, args.target_reboot, need_mb=(need >> 20) + 1)
    check_modules_room(remote, outs)
    results_dir = experiment.new_results_dir(bdir, report_dir=True)
    meta = {"started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": "scripts/validate " + " ".join(shlex.quote(a) for a in
                                                      (argv if argv is not None
                                                       else sys.argv[1:])),
            "variants": args.variants, "load": args.load, "seconds": secs, "runs": runs,
            "kernel_config": kc, "base_config": "allnoconfig", "target": tgt.url,
            "reboot": args.target_reboot, "board": hw, "rigs": ["smp1"],
            "kernel_trees": {v: build.source_text(outs[build.Variant(v, top).build_name])
                             for v in args.variants},
            **experiment.tree_ids(tree)}
    save(meta, os.path.join(results_dir, "meta.json"))
    results = os.path.join(results_dir, "results.json")
    rows, paths = [], None
    t0 = time.time()
    try:
        log(f"hwlatdetect, {args.hwlat_seconds} s")
        rows.append(run_hwlat(remote, args.hwlat_seconds, results_dir, hw))
        save(rows, results)
        for run_no in range(1, runs + 1):
            for v in args.variants:
                out = outs[build.Variant(v, top).build_name]
                log(f"{v}: booting it on the board")
                state = boot_kernel(remote, tdir, out, build.Variant(v, top).cmdline,
                                    args.target_initrd, args.target_reboot,
                                    args.target_boot_timeout)
                log(f"{v}: the board runs it: {state['release']}, build-id {state['build_id']}")
                install(remote, tdir, out, top)
                log(f"{v}: cyclictest {secs} s under {args.load}, run {run_no}")
                row = measure(remote, tree, v, secs, args.load, run_no, results_dir, hw, tdir)
                row["key"] = f"latency/{v}/{args.load}/{run_no}"
                row["build_id"] = state["build_id"]
                tree_text = build.source_text(out)
                if tree_text:       # as validate's provenance() records it
                    row["provenance"]["kernel_tree"] = tree_text
                rows.append(row)
                save(rows, results)
                for p in row["problems"]:
                    log(f"  {v}: {p}")
    finally:
        # Whatever was measured stays, with a report of it.
        meta["wall_seconds"] = round(time.time() - t0)
        save(meta, os.path.join(results_dir, "meta.json"))
        if rows:
            report.judge_load([r for r in rows if r.get("kind") == "latency"])
            save(rows, results)
            paths = write_report(rows, meta, results_dir)
            log(f"results: {results}")
    print(f"\ncyclictest -m -p 99 -i 200 under {args.load}, {secs} s x {runs} run(s) per"
          f" kernel on {tgt.url} ({hw['cpu_model']}); latencies in us\n")
    lat = [r for r in rows if r.get("kind") == "latency"]
    print(report.text_table(report.LAT_HEAD, report.latency_table(lat)))
    print("\n" + "\n".join(board_lines(rows, meta)[2:]))
    print(f"report: {paths['report']}")
    # hwlatdetect's problems are in the report; the job judges the kernels.
    bad = [r for r in lat if r.get("problems")] + report.invalid_runs(lat)
    return 1 if bad else 0
