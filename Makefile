# SPDX-License-Identifier: GPL-2.0
# The project's two entry points; each does its own set-up (scripts/setup).
#
#   make validate   apply, build stock + project kernels, boot, compare latency
#   make check      every check (what .ci/run calls); last line "N passed, N failed"

.PHONY: all validate check setup export help
all: help

help:
	@sed -n '2,5p' Makefile | sed 's/^# \{0,1\}//'

setup:
	scripts/setup

# FULL=1: the full report; KERNEL_CONFIG=path: every kernel from that .config.
validate: setup
	scripts/validate $(if $(FULL),--full) $(if $(KERNEL_CONFIG),--kernel-config $(KERNEL_CONFIG)) $(VALIDATE_ARGS)

check: setup
	scripts/check $(CHECK_ARGS)

export:
	scripts/export
