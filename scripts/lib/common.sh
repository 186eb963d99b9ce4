# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers for the one-verb scripts in scripts/.  Source it, do not run it.

PVRT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PVRT_BUILD=${PVRT_BUILD:-$PVRT_TOP/build}
PVRT_CACHE=${PVRT_CACHE:-$HOME/.cache/pvrt}
export PVRT_TOP PVRT_BUILD PVRT_CACHE

# ccache lives outside the clone so that a fresh clone on the same machine reuses it.
export CCACHE_DIR=${CCACHE_DIR:-$PVRT_CACHE/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# Kernel builds embed no build-path or time stamps we care about; let ccache hit across clones.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/}
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2026-01-01}
export KBUILD_BUILD_USER=pvrt KBUILD_BUILD_HOST=pvrt
PVRT_JOBS=${PVRT_JOBS:-$(nproc)}

# Debian's python3 and the modules scripts/setup installs for it (pytest, ply for the
# kernel's spdxcheck.py, matplotlib) come first, ahead of any other python3 on PATH.
export PATH="/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}"
PYTHON=${PYTHON:-/usr/bin/python3}
export PYTHONPATH="$PVRT_TOP/scripts/lib${PYTHONPATH:+:$PYTHONPATH}"

pvrt_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
pvrt_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# pvrt_cc: the compiler to hand to kbuild.
pvrt_cc() {
	if command -v ccache >/dev/null 2>&1; then echo "ccache gcc"; else echo gcc; fi
}

# pvrt_base_repo [SRC]: print the path of a git repository whose commit
# refs/pvrt/base is the base tree imported from SRC (default: Debian's
# linux-source-6.12 tarball).  Cached under $PVRT_CACHE.
pvrt_base_repo() {
	"$PYTHON" -m pvrt.base "${1:-${KERNEL_SRC:-}}"
}
