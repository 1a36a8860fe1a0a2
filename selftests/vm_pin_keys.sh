#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the test VM only (run_tests.sh runs this when DMSC_VM=1): hold on, for
# the whole run, the kernel's static keys that the selftests would
# otherwise flip while another vCPU sends traffic through the code they
# patch. A flip rewrites kernel text with int3 (text_poke_bp); QEMU's
# multi-threaded TCG has executed that int3 after the kernel was done with
# it, and the guest died of "Oops: int3" in tc_run in interrupt context
# (6.12, telemetry.sh's detach under traffic; CI of 5e7c9a8, 2026-11-30).
# On real CPUs the kernel's protocol is sound; this is the emulator's.
#
# A key held at one or more never flips. What holds each, all in the
# root namespace, where no selftest runs traffic:
#   ingress_needed_key, egress_needed_key: a clsact on lo (tcx_needed_key
#	is taken by tcx links only, and dmsc attaches through cls_bpf);
#   tcf_sw_enabled_key (on while any tc block has a filter that runs in
#	software): a flower filter on lo ingress for an EtherType nothing
#	sends (0x88b5, IEEE 802 local experimental), so it never matches;
#   nf_hooks_needed of IPv4 and IPv6 (the steering and credit hooks
#	register lazily, per namespace): an nftables inet table with an
#	empty accepting chain on each hook;
#   netstamp_needed_key (tshark and the sinks ask for time stamps): a
#	sleeping process holding a socket with SO_TIMESTAMP.
# Exit 0 when all are held, 1 naming the first that is not: a run whose
# keys can flip is one that can die of the emulator, so the caller stops.
set -u

fail() {
	echo "vm_pin_keys: $*" >&2
	exit 1
}

tc qdisc replace dev lo clsact || fail "no clsact on lo"
if ! tc filter show dev lo ingress | grep -q 'eth_type 88b5'; then
	tc filter add dev lo ingress pref 1 protocol 0x88b5 flower ||
		fail "no flower filter on lo ingress"
fi
tc filter show dev lo ingress | grep -q 'eth_type 88b5' ||
	fail "the flower filter on lo ingress is not there"

nft -f - <<'EOF' || fail "no nftables inet table dmsc_vm_pin"
table inet dmsc_vm_pin
delete table inet dmsc_vm_pin
table inet dmsc_vm_pin {
	chain prerouting { type filter hook prerouting priority 0; policy accept; }
	chain input { type filter hook input priority 0; policy accept; }
	chain forward { type filter hook forward priority 0; policy accept; }
	chain output { type filter hook output priority 0; policy accept; }
	chain postrouting { type filter hook postrouting priority 0; policy accept; }
}
EOF

# setsid: its own session, so that a test's ^C does not reach it; its
# output goes to a file, so it holds no pipe of the caller open. It lives
# until the VM powers off. The wait is long: it is the VM's first python,
# started over 9p on a busy host (about a second when quiet).
if ! [ -e /run/dmsc-vm-pin.pid ]; then
	setsid python3 -c '
import os, signal, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 29, 1)  # SO_TIMESTAMP: not in the module
with open("/run/dmsc-vm-pin.pid", "w") as f:
	f.write("%d\n" % os.getpid())
signal.pause()' </dev/null >/run/dmsc-vm-pin.err 2>&1 &
	for _ in $(seq 300); do
		[ -s /run/dmsc-vm-pin.pid ] && break
		sleep 0.1
	done
fi
if ! [ -s /run/dmsc-vm-pin.pid ] || ! kill -0 "$(cat /run/dmsc-vm-pin.pid)" 2>/dev/null; then
	fail "no process holding SO_TIMESTAMP: $(cat /run/dmsc-vm-pin.err 2>/dev/null)"
fi
exit 0
