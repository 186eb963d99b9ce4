# SPDX-License-Identifier: GPL-2.0
"""scripts/initramfs: the guest userspace, a gzip'd newc cpio.

Holds a static busybox, rt-tests (cyclictest, hackbench), stress-ng, rtla
(built from the kernel tree's tools/tracing/rtla into build/tools/rtla by
scripts/validate, else Debian's) with the shared libraries they link against
(taken from the host, Debian 12), the guest scripts from guest/ (its C
programs built static) and guest/init as /init.  Kernel modules and the
command to run are appended by scripts/boot as further cpio members, so one
initramfs serves every kernel and every command.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import tempfile
from pvrt import lock
from pvrt.errors import PvrtError, entry

# Program: the Debian package that has it.
PROGRAMS = {"cyclictest": "rt-tests", "hackbench": "rt-tests", "stress-ng": "stress-ng",
            "chrt": "util-linux"}
BUSYBOX = "/bin/busybox"


def rtla_path():
    """The rtla to carry: the tree's (build/tools/rtla), else Debian's, else None."""
    built = os.path.join(os.environ.get("PVRT_BUILD", ""), "tools", "rtla")
    if os.environ.get("PVRT_BUILD") and os.path.isfile(built):
        return built
    return shutil.which("rtla")


def need(path, pkg):
    if not os.path.exists(path):
        raise PvrtError(f"{path} not found: run scripts/setup (Debian package {pkg})")


def shared_libs(binary):
    res = subprocess.run(["ldd", binary], capture_output=True, text=True)
    if res.returncode:
        return []                       # a static binary
    libs = []
    for line in res.stdout.splitlines():
        parts = line.split()
        if "=>" in parts:
            target = parts[parts.index("=>") + 1]
            if target.startswith("/"):
                libs.append(target)
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])        # the dynamic loader
    return libs


def copy_into(root, path):
    dest = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copy2(os.path.realpath(path), dest)


def cpio_dir(root, out):
    """Pack ROOT into OUT (gzip'd newc), with fixed owner and order."""
    names = subprocess.run(["find", ".", "-mindepth", "1"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split("\n")
    names = "\n".join(sorted(n for n in names if n)) + "\n"
    with open(out, "wb") as f:
        cpio = subprocess.Popen(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"],
                                cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        gz = subprocess.Popen(["gzip", "-n", "-1"], stdin=cpio.stdout, stdout=f)
        cpio.stdout.close()
        cpio.communicate(names.encode())
        gz.wait()
        if cpio.returncode or gz.returncode:
            raise PvrtError(f"cpio/gzip failed writing {out}")


def compile_guest(src, dest):
    """A guest program in C (guest/NAME.c), built static as /pvrt/NAME."""
    gcc = shutil.which("gcc")
    if not gcc:
        raise PvrtError(f"gcc not found, needed for {src}: run scripts/setup")
    res = subprocess.run([gcc, "-O2", "-Wall", "-Werror", "-static", "-pthread", "-o", dest, src],
                         capture_output=True, text=True)
    if res.returncode:
        raise PvrtError(f"{src} does not compile:\n{res.stderr.strip()}")


def build(top, out):
    need(BUSYBOX, "busybox-static")
    progs = []
    for prog in PROGRAMS:
        path = shutil.which(prog) or ""
        need(path or f"/usr/bin/{prog}", PROGRAMS[prog])
        progs.append(path)
    rtla = rtla_path()
    with tempfile.TemporaryDirectory(prefix="pvrt-initramfs-") as root:
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run",
                  "etc", "lib/modules", "pvrt"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        shutil.copy2(BUSYBOX, os.path.join(root, "bin/busybox"))
        for prog in progs:
            copy_into(root, prog)
            for lib in shared_libs(prog):
                copy_into(root, lib)
        if rtla:
            shutil.copy2(rtla, os.path.join(root, "usr/bin/rtla"))
            for lib in shared_libs(rtla):
                copy_into(root, lib)
        guest = os.path.join(top, "guest")
        shutil.copy2(os.path.join(guest, "init"), os.path.join(root, "init"))
        for name in os.listdir(guest):
            if name.endswith(".c"):
                compile_guest(os.path.join(guest, name),
                              os.path.join(root, "pvrt", name[:-2]))
            elif name != "init":
                shutil.copy2(os.path.join(guest, name), os.path.join(root, "pvrt", name))
        with open(os.path.join(root, "etc/passwd"), "w") as f:
            f.write("root:x:0:0:root:/:/bin/sh\n")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        cpio_dir(root, out)
    return out


def compiler_inputs():
    """What compile_guest() builds with besides the source: `gcc --version`
    and the path of the static libc it links (None for either it lacks)."""
    gcc = shutil.which("gcc")
    if not gcc:
        return None, None
    ver = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    libc = subprocess.run([gcc, "-print-file-name=libc.a"], capture_output=True,
                          text=True).stdout.strip()
    return ver, (libc if os.path.isabs(libc) else None)


def inputs_digest(top):
    """A digest of what goes into the initramfs, to reuse an up-to-date one:
    the programs copied in, the guest's files, the compiler of its C
    programs and their static libc."""
    h = hashlib.sha256()
    ver, libc = compiler_inputs()
    h.update((ver or "no gcc").encode())
    paths = [BUSYBOX] + [shutil.which(p) or p for p in PROGRAMS] + [rtla_path() or "no-rtla"]
    guest = os.path.join(top, "guest")
    paths += sorted(os.path.join(guest, n) for n in os.listdir(guest))
    paths += [__file__, libc or "no-libc.a"]
    for p in paths:
        h.update(p.encode())
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def ensure(top, build_dir):
    """Path of an up-to-date initramfs under BUILD_DIR, building it if needed."""
    out = os.path.join(build_dir, f"initramfs-{inputs_digest(top)}.cpio.gz")
    if os.path.exists(out):
        return out                      # complete: it is renamed into place
    with lock.held(out, "initramfs"):
        if not os.path.exists(out):
            build(top, out + ".tmp")
            os.replace(out + ".tmp", out)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/initramfs", description=__doc__,
                                 epilog="example:\n  scripts/initramfs   # prints the path",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write here instead of build/")
    args = ap.parse_args(argv)
    top = os.environ["PVRT_TOP"]
    if args.out:
        print(build(top, os.path.abspath(args.out)))
    else:
        print(ensure(top, os.environ["PVRT_BUILD"]))


if __name__ == "__main__":
    entry(main)
