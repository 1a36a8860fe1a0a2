#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put the dmsc module source in /usr/src/dmsc-VERSION and register it with
# DKMS, which builds and installs dmsc.ko for KVER, and (AUTOINSTALL) for
# each kernel installed later. Root only; `make install` runs it.
#   tools/dkms-install.sh [KVER]  KVER defaults to the running kernel; if
#                                 its headers are missing, only register
#   tools/dkms-install.sh -r      remove dmsc VERSION from DKMS and its
#                                 source from /usr/src; nothing else
# With DMSC_DKMS_ROOT=DIR the source, the DKMS tree and the installed
# module all live under DIR, not in the system's trees: tools/dkms-check.sh
# builds there so an installed dmsc (or any other module) is left alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
root=${DMSC_DKMS_ROOT:-}

if [ -n "$root" ]; then
	srcroot=$root/src
	modroot=$root/modules
	dkms=(dkms --dkmstree "$root/dkms" --sourcetree "$srcroot"
		--installtree "$modroot")
	depmod=(--no-depmod)
	mkdir -p "$root/dkms" "$srcroot" "$modroot"
else
	srcroot=/usr/src
	modroot=/lib/modules
	dkms=(dkms)
	depmod=()
fi
src=$srcroot/dmsc-$ver

# Only this version of dmsc; an unknown one is not an error.
unregister() {
	if "${dkms[@]}" status -m dmsc -v "$ver" 2>/dev/null | grep -q .; then
		"${dkms[@]}" remove -m dmsc -v "$ver" --all
	fi
}

if [ "${1:-}" = -r ]; then
	unregister
	rm -rf "$src"
	exit 0
fi

kver=${1:-$(uname -r)}
unregister
rm -rf "$src"
"$top/tools/dkms-src.sh" "$src"
"${dkms[@]}" add -m dmsc -v "$ver"
if [ ! -e "/lib/modules/$kver/build" ]; then
	if [ $# -gt 0 ]; then
		echo "dkms-install: no headers for $kver (/lib/modules/$kver/build)" >&2
		exit 1
	fi
	echo "dkms-install: no headers for $kver (/lib/modules/$kver/build):" \
		"dmsc $ver is registered; DKMS builds it when a kernel with" \
		"headers is installed, or: dkms install -m dmsc -v $ver -k KVER"
	exit 0
fi
mkdir -p "$modroot/$kver"
"${dkms[@]}" install -m dmsc -v "$ver" -k "$kver" "${depmod[@]}"
