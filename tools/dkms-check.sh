#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CI check that dkms.conf is right: DKMS builds and installs dmsc.ko from
# the staged sources for the first test kernel. It all happens in a DKMS
# tree, source tree and module tree of its own (DMSC_DKMS_ROOT), so a dmsc
# the operator installed, and every other DKMS module, are left as they
# were; the second test checks that. KTAP.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
kver=$("$top/tools/vm/kernels.sh" -d)

echo "TAP version 13"
echo "1..2"
if ! command -v dkms >/dev/null; then
	echo "ok 1 dkms builds dmsc $ver for $kver # SKIP dkms not installed"
	echo "ok 2 the system's DKMS state is untouched # SKIP dkms not installed"
	exit 0
fi

# What an operator has: DKMS's view, the sources, the installed modules.
system_state() {
	dkms status 2>&1 | sort
	ls -la /usr/src/dmsc-* 2>&1
	# Not DKMS's signing key: the first dkms build on a machine creates
	# it, and keeps it; nor so the time of the directory it goes in (a
	# directory's entries show as paths of their own).
	find /var/lib/dkms /lib/modules/*/updates ! -name 'mok.*' \
		\( -type d -printf '%p\n' -o -printf '%p %s %T@\n' \) \
		2>/dev/null | sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
before=$(system_state)
rc=0
if DMSC_DKMS_ROOT=$tmp "$top/tools/dkms-install.sh" "$kver" >"$tmp/log" 2>&1; then
	ko=$(find "$tmp/modules/$kver/updates/dkms" -name 'dmsc.ko*' 2>/dev/null | head -1)
	got=$([ -n "$ko" ] && modinfo -F version "$ko")
	magic=$([ -n "$ko" ] && modinfo -F vermagic "$ko")
else
	ko="" got="" magic=""
fi
if [ "$got" = "$ver" ] && [ "${magic%% *}" = "$kver" ]; then
	echo "ok 1 dkms builds dmsc $ver for $kver"
else
	sed 's/^/# /' "$tmp/log" | tail -30
	find "$tmp/dkms" -name make.log -exec tail -20 {} \; 2>/dev/null | sed 's/^/# /'
	echo "# module '${ko:-none}': version '$got' (want $ver), vermagic '$magic'"
	echo "not ok 1 dkms builds dmsc $ver for $kver"
	rc=1
fi
after=$(system_state)
if [ "$before" = "$after" ]; then
	echo "ok 2 the system's DKMS state is untouched"
else
	diff <(echo "$before") <(echo "$after") | sed 's/^/# /'
	echo "not ok 2 the system's DKMS state is untouched"
	rc=1
fi
exit $rc
