# SPDX-License-Identifier: GPL-2.0
#
# dmsc top-level build.
#   make            kernel/dmsc.ko (KDIR/KVER selectable) and the agent
#   make deps       install the Debian packages everything needs (root)
#   make check      unit tests, then the VM selftests on every test kernel
#   make demo       the demo, in a VM
#   make modules-all  dmsc.ko for every installed test kernel, in build/
#   make check-deep  make check with the slow scale and soak cases too
#   make check-debug  every selftest on a KASAN/lockdep/kmemleak kernel
#   make modules-debug  that kernel (built once, cached) and dmsc.ko for it
#   make install    dmsc, dmsc-agent, man pages, the systemd unit and the
#                   module source for DKMS (DESTDIR, PREFIX); make uninstall

KVER ?= $(shell uname -r)
# The running kernel's build dir if it has one, else the newest Debian
# headers installed (a container's kernel usually has none).
KDIR ?= $(or $(wildcard /lib/modules/$(KVER)/build), \
	$(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V)))

# Kernels the selftests run on: each installed Debian image with headers.
TEST_KVERS ?= $(shell tools/vm/kernels.sh 2>/dev/null)

SUBDIRS_USER := agent tools/roce-gen

.PHONY: all module ebpf agent tools modules-all deps check unit selftests \
	demo checkpatch dkms-install clean modules-debug deps-debug check-debug \
	check-deep \
	install install-bin install-man install-unit install-dkms install-tc \
	uninstall uninstall-tc

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
	$(MAKE) -C tools/tc

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

# The cases a selftest lists in DEEP_CASES (selftests/lib.sh) as well.
check-deep: deps
	$(MAKE) all modules-all
	DMSC_DEEP=1 tools/check.sh

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
	tools/dkms-install.sh $(if $(filter command line,$(origin KVER)),$(KVER))

# make install [DESTDIR=STAGE] [PREFIX=/usr]. dmsc and dmsc-agent go to
# sbin: administration tools, documented in section 8, and a change to the
# module's state needs CAP_NET_ADMIN. The module source goes where DKMS looks
# for it, /usr/src/dmsc-VERSION, whatever PREFIX; the unit where systemd
# looks on Debian. With DESTDIR the files are only staged (a package build);
# without it, dkms (if installed) builds dmsc.ko for the running kernel and
# systemd (if running) reloads its units.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= /lib/systemd/system
DKMS_SRCDIR := /usr/src/dmsc-$(VERSION)
INSTALL ?= install
# The tc plugin of the cbfc qdisc (tools/tc/): install-tc/uninstall-tc
# put it where Debian's tc looks (its TC_LIB_DIR).
TC_PLUGIN := tools/tc/q_cbfc.so
TCLIBDIR ?= /usr/lib/x86_64-linux-gnu/tc
systemd_running = [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]

install: install-bin install-man install-unit install-dkms install-tc

install-bin: agent
	$(INSTALL) -d $(DESTDIR)$(SBINDIR)
	$(INSTALL) -m 0755 agent/dmsc agent/dmsc-agent agent/dmsc-rsvp $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0755 tools/pki/dmsc-pki $(DESTDIR)$(SBINDIR)/

install-man:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 0644 Documentation/man/dmsc.8 Documentation/man/dmsc-agent.8 \
		$(DESTDIR)$(MANDIR)/man8/

install-unit:
	$(INSTALL) -d $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' tools/systemd/dmsc-agent.service.in \
		>$(DESTDIR)$(UNITDIR)/dmsc-agent.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/dmsc-agent.service
	if $(systemd_running); then systemctl daemon-reload; fi

install-dkms:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		echo "tools/dkms-install.sh"; tools/dkms-install.sh; \
	else \
		echo "tools/dkms-src.sh $(DESTDIR)$(DKMS_SRCDIR)"; \
		tools/dkms-src.sh $(DESTDIR)$(DKMS_SRCDIR); \
	fi

install-tc: tools
	$(if $(TC_PLUGIN),$(INSTALL) -D -m 0755 $(TC_PLUGIN) \
		$(DESTDIR)$(TCLIBDIR)/$(notdir $(TC_PLUGIN)))

# What install put, and nothing else: no directory it may share, no other
# DKMS module or version. A unit an operator enabled is disabled first.
uninstall: uninstall-tc
	rm -f $(DESTDIR)$(SBINDIR)/dmsc $(DESTDIR)$(SBINDIR)/dmsc-agent $(DESTDIR)$(SBINDIR)/dmsc-rsvp \
		$(DESTDIR)$(SBINDIR)/dmsc-pki
	rm -f $(DESTDIR)$(MANDIR)/man8/dmsc.8 $(DESTDIR)$(MANDIR)/man8/dmsc-agent.8
	if $(systemd_running); then systemctl disable --now dmsc-agent.service || true; fi
	rm -f $(DESTDIR)$(UNITDIR)/dmsc-agent.service
	if $(systemd_running); then systemctl daemon-reload; fi
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		echo "tools/dkms-install.sh -r"; tools/dkms-install.sh -r; \
	else \
		echo "rm -rf $(DESTDIR)$(DKMS_SRCDIR)"; rm -rf $(DESTDIR)$(DKMS_SRCDIR); \
	fi

uninstall-tc:
	$(if $(TC_PLUGIN),rm -f $(DESTDIR)$(TCLIBDIR)/$(notdir $(TC_PLUGIN)))

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C agent clean
	$(MAKE) -C ebpf clean
	-$(MAKE) -C tools/roce-gen clean
	$(MAKE) -C tools/tc clean
	rm -rf build
