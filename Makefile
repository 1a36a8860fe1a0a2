# SPDX-License-Identifier: GPL-2.0
#
# dmsc top-level build.
#   make            kernel/dmsc.ko (KDIR/KVER selectable) and the agent
#   make deps       install the Debian packages everything needs (root)
#   make check      unit tests, then the VM selftests on every test kernel
#   make demo       the demo, in a VM
#   make modules-all  dmsc.ko for every installed test kernel, in build/
#   make check-debug  every selftest on a KASAN/lockdep/kmemleak kernel
#   make modules-debug  that kernel (built once, cached) and dmsc.ko for it

KVER ?= $(shell uname -r)
# The running kernel's build dir if it has one, else the newest Debian
# headers installed (a container's kernel usually has none).
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build), \
	$(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V)))

# Kernels the selftests run on: each installed Debian image with headers.
TEST_KVERS ?= $(shell tools/vm/kernels.sh 2>/dev/null)

SUBDIRS_USER := agent tools/roce-gen

.PHONY: all module ebpf agent tools modules-all deps check unit selftests \
	demo checkpatch dkms-install clean modules-debug deps-debug check-debug

all: module ebpf agent tools

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# The RoCEv2 telemetry tc program and its skeleton (agent/ links it).
ebpf:
	$(MAKE) -C ebpf

agent: ebpf
	$(MAKE) -C agent

tools:
	$(MAKE) -C tools/roce-gen

# One copy of the sources per kernel, so builds for 6.1 and 6.12 can sit
# side by side (Kbuild writes its objects next to the sources).
modules-all:
	@set -e; for v in $(TEST_KVERS); do \
		d=build/kmod/$$v; mkdir -p $$d; \
		cp -a Kbuild uapi kernel $$d/; \
		$(MAKE) -s -C /usr/src/linux-headers-$$v M=$(CURDIR)/$$d modules; \
		echo "built $$d/kernel/dmsc.ko"; \
	done

# dmsc.ko for the debug kernel, in build/kmod/ like modules-all: the
# selftests load build/kmod/$(uname -r)/kernel/dmsc.ko. debug-kernel.sh
# prints the kernel tree, building it first (~20 min) unless it is cached.
modules-debug:
	@set -e; kdir=$$(tools/vm/debug-kernel.sh); \
		v=$$(cat $$kdir/include/config/kernel.release); \
		d=build/kmod/$$v; mkdir -p $$d; \
		cp -a Kbuild uapi kernel $$d/; \
		$(MAKE) -s -C $$kdir M=$(CURDIR)/$$d modules; \
		echo "built $$d/kernel/dmsc.ko"

deps:
	tools/install-deps.sh

# What building a kernel takes, on top of deps: only check-debug needs it.
deps-debug: deps
	tools/install-deps.sh --debug

check: deps
	$(MAKE) all modules-all
	tools/check.sh

check-debug: deps-debug
	$(MAKE) all modules-debug
	tools/check-debug.sh

demo: deps
	$(MAKE) all modules-all
	tools/demo.sh

checkpatch:
	/usr/src/linux-source-6.1/scripts/checkpatch.pl --no-tree -q \
		--ignore LINUX_VERSION_CODE -f $$(git ls-files 'kernel/*.[ch]')

dkms-install:
	tools/dkms-install.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C agent clean
	$(MAKE) -C ebpf clean
	-$(MAKE) -C tools/roce-gen clean
	rm -rf build
