# SPDX-License-Identifier: GPL-2.0
# The project's entry points; each does its own set-up (scripts/setup).
#
#   make validate   apply, build stock + project kernels, boot, compare latency
#   make check      every check (what .ci/run calls); last line "N passed, N failed"
#   make conversions  issue 21's evidence: advisor, latency, attribution, throughput

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

# The evidence of issue 21 in one command (README, "Lock conversions"), each
# tool's output also in build/conversions/NN-*.txt; every step runs, and the
# target fails at the end if one did:
#  1. scripts/lock-advisor: which spinlock classes pay as pv_mutexes (eq. 5);
#  2. scripts/validate, stock, stock-tuned, PREEMPT_RT and project from
#     x86_64_defconfig (+ variants/fragments/product*.config), 5 interleaved
#     60 s runs per kernel on -smp 1 and -smp 2, under the stress set, then
#     again under hackbench: the latency table with all kernels and ratios;
#  3. scripts/attribute-latency, stock-tuned ("before": the configuration
#     without the series' code) and project ("after"), same kernels, each
#     load and CPU count, thresholds from step 2's p99.9: the attribution
#     tables;
#  4. scripts/throughput, the same four kernels, 5 runs: the throughput
#     table and the price table (project vs stock-tuned <= half rt vs stock).
# stock-pcp0 (stock-tuned has its option and the rest of pv_rt.config),
# project-noconv (this version converts no lock: the project kernel but for
# CONFIG_PV_SPINLOCK) and project-before are no longer measured here; the
# tracer's worst sections gave way to the attribution tables.
# Wall time, estimated (not measured as a whole) on the 2-core machine from
# per-boot times: a 60 s icount boot takes 80-140 s of wall time on -smp 1
# and twice that on -smp 2 (one host thread runs both vCPUs), two boots side
# by side: each validate load 20 x 110 s + 20 x 220 s over 2 = 55 min (40-70),
# both 110 min (80-140); attribution 8 boots of 60 s, one at a time (4 on
# -smp 2), 20-40 min; throughput 4 boots of 5 runs (a run took 5.9 guest s
# on the project kernel; its 1-run boot, 16 guest s, took 4 min 53 s and
# 9 min 1 s of wall time on the loaded machine), two at a time, 10-20 min;
# the advisor 2 min (its last measured run).
# Total about 2.5-3.5 h, plus the builds of the four defconfig kernels
# where build/out lacks them (not measured here).
CONVERSION_KERNELS = stock,stock-tuned,rt,project
CONVERSION_RUN = --variants $(CONVERSION_KERNELS) --base defconfig
CONVERSION_OUT = $(or $(PVRT_BUILD),build)/conversions
conversions: SHELL := /bin/bash
conversions: setup
	rm -rf $(CONVERSION_OUT) && mkdir -p $(CONVERSION_OUT)
	set -o pipefail; scripts/lock-advisor | tee $(CONVERSION_OUT)/1-lock-advisor.txt \
	    || echo lock-advisor >> $(CONVERSION_OUT)/failed
	set -o pipefail; for load in stress-set hackbench; do \
	    scripts/validate $(CONVERSION_RUN) --cpus 1,2 --runs 5 --seconds 60 --load $$load \
	        --no-devices | tee $(CONVERSION_OUT)/2-validate-$$load.txt \
	        || echo validate-$$load >> $(CONVERSION_OUT)/failed; \
	done
	set -o pipefail; for load in stress-set hackbench; do \
	    from=$$(sed -n 's|^report: \(.*\)/report\.md$$|\1|p' \
	            $(CONVERSION_OUT)/2-validate-$$load.txt); \
	    for cpus in 1 2; do \
	        scripts/attribute-latency --variants stock-tuned,project --base defconfig \
	            --load $$load --cpus $$cpus --seconds 60 --from "$$from" \
	            | tee $(CONVERSION_OUT)/3-attribution-$$load-smp$$cpus.txt \
	            || echo attribute-latency-$$load-smp$$cpus >> $(CONVERSION_OUT)/failed; \
	    done; \
	done
	set -o pipefail; scripts/throughput $(CONVERSION_RUN) --runs 5 \
	    | tee $(CONVERSION_OUT)/4-throughput.txt || echo throughput >> $(CONVERSION_OUT)/failed
	@if [ -s $(CONVERSION_OUT)/failed ]; then \
	    echo "conversions: failed: $$(paste -sd ' ' $(CONVERSION_OUT)/failed)"; exit 1; fi
	@echo "conversions: every step ran; outputs in $(CONVERSION_OUT)/"

# GOOD=<commit> BAD=<commit>: the commit between them that made latency worse
# (scripts/latency-bisect --help; BISECT_ARGS for the figure, load, threshold).
latency-bisect: setup
	scripts/latency-bisect $(GOOD) $(BAD) $(BISECT_ARGS)

export:
	scripts/export
