#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CI check that dkms.conf is right: DKMS builds dmsc.ko from a copy of the
# sources for the first test kernel; then it is removed again. KTAP.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
kver=$("$top/tools/vm/kernels.sh" -d)

echo "TAP version 13"
echo "1..1"
if ! command -v dkms >/dev/null; then
	echo "ok 1 dkms builds dmsc for $kver # SKIP dkms not installed"
	exit 0
fi
log=$(mktemp)
if "$top/tools/dkms-install.sh" "$kver" >"$log" 2>&1 &&
   modinfo -k "$kver" -F version dmsc 2>/dev/null | grep -qx "$ver"; then
	echo "ok 1 dkms builds dmsc for $kver"
	rc=0
else
	sed 's/^/# /' "$log" | tail -30
	find /var/lib/dkms/dmsc -name make.log -exec tail -20 {} \; 2>/dev/null | sed 's/^/# /'
	echo "not ok 1 dkms builds dmsc for $kver"
	rc=1
fi
dkms remove -m dmsc -v "$ver" --all >/dev/null 2>&1
rm -rf "/usr/src/dmsc-$ver" "$log"
exit $rc
