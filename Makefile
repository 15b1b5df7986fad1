# twigfs: `make test` runs every test layer, `make bench` the main benchmark.
# Variables (see README.md): KERNEL=6.1|6.12, KERNEL_SRC, SERIES,
# FLAVOUR=default|debug, VCPUS, MEM, ACCEL=tcg|kvm, GUEST_CMDLINE,
# TIMEOUT, DISK, KEEP, SCRIPT, TWIG_CACHE, CLASSES (make crafted), N and SEED
# (make fuzz), ROUNDS, SEED and FLAVOURS (make crash), OPS, SEED, JOBS,
# NODESIZE and MOUNT_OPTS (make fsx), and the bench variables
# (docs/benchmarks.md; switchback runs: SWITCHBACK, SB_SECS, WINDOW, SETTLE,
# SAMPLE, CROSSCHECK, and TOGGLE=/path:off,on for make compare,
# docs/switchback.md).

SHELL := /bin/bash
export FLAVOUR ?= default
export TWIG_CACHE ?= $(HOME)/.cache/twigfs
export VCPUS MEM ACCEL TIMEOUT DISK DISK_SIZE KEEP OUT MOUNT_OPTS KERNEL KERNEL_SRC SERIES GUEST_CMDLINE

.PHONY: all deps kernel module tools run shell test test-tools test-guest \
	crafted fuzz crash crashpoints fsx bench aa profile compare calibrate clean

all: tools module

deps:
	@scripts/deps.sh

kernel: deps
	@qemu/build-kernel.sh $(if $(filter debug,$(FLAVOUR)),debug) >/dev/null

module: kernel
	@tree=$$(qemu/build-kernel.sh $(if $(filter debug,$(FLAVOUR)),debug) 2>/dev/null | tail -n 1); \
	$(MAKE) -s -C $$tree M=$(CURDIR)/fs modules

tools: deps
	@$(MAKE) -s -C mkfs

run: deps
	@test -n "$(SCRIPT)" || { echo "usage: make run SCRIPT=path/to/script.sh" >&2; exit 2; }
	@qemu/guest.sh $(abspath $(SCRIPT))

shell: deps
	@qemu/guest.sh --shell

test: deps
	@scripts/test.sh

# Damaged images against the module (scripts/test-crafted.sh): the corpus,
# or CLASSES="a b" of it; N seeded random mutations from SEED on.
crafted: deps
	@CLASSES="$(CLASSES)" scripts/test-crafted.sh

fuzz: deps
	@FUZZ=$(or $(N),200) SEED=$(or $(SEED),0) scripts/test-crafted.sh

# Power cuts at random moments of fsync-heavy work, replayed and checked
# (scripts/test-crash.sh): ROUNDS boots from SEED on each of FLAVOURS.
crash: deps
	@rc=0; for f in $(or $(FLAVOURS),default debug); do \
		echo "== crash, $$f flavour"; \
		FLAVOUR=$$f ROUNDS=$(or $(ROUNDS),12) SEED=$(or $(SEED),1) \
			scripts/test-crash.sh || rc=1; \
	done; exit $$rc

# Every flush of a logged fsync-heavy workload rebuilt, fsck'd, a sample
# mounted and checked (scripts/test-crashpoints.sh): SEED, OPS, SAMPLE,
# WRITERS; BREAK=1 must fail (superblocks without flush).
crashpoints: deps
	@SEED=$(or $(SEED),1) OPS=$(or $(OPS),40) SAMPLE=$(or $(SAMPLE),200) \
		WRITERS=$(or $(WRITERS),4) BREAK=$(or $(BREAK),0) scripts/test-crashpoints.sh

# Random file operations checked against a model (scripts/test-fsx.sh):
# JOBS files at once, OPS operations each, seeds from SEED, NODESIZE nodes.
fsx: deps
	@OPS=$(or $(OPS),50000) SEED=$(or $(SEED),1) JOBS=$(or $(JOBS),4) \
		NODESIZE=$(or $(NODESIZE),4K) MOUNT_OPTS="$(MOUNT_OPTS)" scripts/test-fsx.sh

bench: deps
	@workloads/bench.sh

# The switchback analysis on seeded synthetic runs at the bench's defaults
# (coverage, bias, false stars; make test runs the same with 300 a cell).
calibrate: deps
	@CALIB_N=$(or $(N),1000) /usr/bin/python3 workloads/tests/test_switchback.py

aa: deps
	@workloads/bench.sh --aa

# One profiled run: make profile WORKLOAD=dbench LOCK=spin512
profile: deps
	@test -n "$(WORKLOAD)" -a -n "$(LOCK)" || \
		{ echo "usage: make profile WORKLOAD=<workload> LOCK=<configuration>" >&2; exit 2; }
	@PROFILE=1 REPEAT=0 AA=0 BOOTS=1 WORKLOADS="$(WORKLOAD)" CONFIGS="$(LOCK)" workloads/bench.sh

compare: deps
	@test -n "$(PATCH)" || { echo "usage: make compare PATCH=my.patch [TOGGLE=/proc/sys/...:off,on]" >&2; exit 2; }
	@workloads/bench.sh --compare $(abspath $(PATCH))

clean:
	$(MAKE) -s -C mkfs clean
	rm -rf fs/*.o fs/*.ko fs/*.mod* fs/.*.cmd fs/Module.symvers fs/modules.order
