#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the dmsc module source under /usr/src and let DKMS build and
# install it for KVER (default: every kernel with headers). Root only.
#   tools/dkms-install.sh [KVER]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
src=/usr/src/dmsc-$ver

rm -rf "$src"
mkdir -p "$src"
cp -a "$top/dkms.conf" "$top/Kbuild" "$top/kernel" "$top/uapi" "$src/"
# Only sources travel: no objects of an earlier in-tree build.
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
	-o -name modules.order -o -name Module.symvers \) -delete
dkms remove -m dmsc -v "$ver" --all >/dev/null 2>&1 || true
dkms add -m dmsc -v "$ver"
if [ $# -gt 0 ]; then
	dkms install -m dmsc -v "$ver" -k "$1"
else
	dkms autoinstall
fi
