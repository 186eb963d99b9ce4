# SPDX-License-Identifier: GPL-2.0
# The project's entry points; each does its own set-up (scripts/setup).
#
#   make validate   apply, build stock + project kernels, boot, compare latency
#   make check      every check (what .ci/run calls); last line "N passed, N failed"
#   make conversions  the lock conversions' evidence: advisor, latency, tracer, throughput

.PHONY: all validate check setup export help conversions latency-bisect
all: help

help:
	@sed -n '2,6p' Makefile | sed 's/^# \{0,1\}//'

setup:
	scripts/setup

# FULL=1: the full report; KERNEL_CONFIG=path: every kernel from that .config.
validate: setup
	scripts/validate $(if $(FULL),--full) $(if $(KERNEL_CONFIG),--kernel-config $(KERNEL_CONFIG)) $(VALIDATE_ARGS)

check: setup
	scripts/check $(CHECK_ARGS)

# The evidence of the lock conversions (README, "Lock conversions"): the
# advisor's table, latency of the kernels with and without them (3 x 60 s),
# the tracer's worst sections, throughput.  Measured here with a make check
# alongside: advisor 2 min, validate (6 kernels) 43 min, tracer 16, throughput 2.
CONVERSION_KERNELS = stock,stock-pcp0,rt,project,project-noconv,project-before
conversions: setup
	scripts/lock-advisor
	scripts/validate --variants $(CONVERSION_KERNELS) --runs 3 --seconds 60 --no-devices
	scripts/trace-latency --variants project,project-noconv,stock --load stress-set
	scripts/throughput --variants stock,rt,project,project-noconv --runs 5

# GOOD=<commit> BAD=<commit>: the commit between them that made latency worse
# (scripts/latency-bisect --help; BISECT_ARGS for the figure, load, threshold).
latency-bisect: setup
	scripts/latency-bisect $(GOOD) $(BAD) $(BISECT_ARGS)

export:
	scripts/export
