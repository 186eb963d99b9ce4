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
# Parallel make jobs of every kernel build (pvrt.build.jobs reads it).
export PVRT_JOBS=${PVRT_JOBS:-$(nproc)}

# Debian's python3 and the modules scripts/setup installs for it (pytest, ply for the
# kernel's spdxcheck.py, matplotlib) come first, ahead of any other python3 on PATH.
export PATH="/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}"
PYTHON=${PYTHON:-/usr/bin/python3}
export PYTHONPATH="$PVRT_TOP/scripts/lib${PYTHONPATH:+:$PYTHONPATH}"

pvrt_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
pvrt_die() { printf 'error: %s\n' "$*" >&2; exit 1; }
