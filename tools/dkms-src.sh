#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copy what DKMS builds dmsc.ko from into DIR: dkms.conf, the top Kbuild,
# kernel/ (Kbuild and the sources) and uapi/. Sources only, never the
# objects or the *.mod.c of an in-tree build. The one list of those files:
# `make install` and tools/dkms-install.sh both use it.
#   tools/dkms-src.sh DIR
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$1

cd "$top"
files=(dkms.conf Kbuild kernel/Kbuild)
for f in kernel/*.[ch] uapi/linux/*.h; do
	case $f in *.mod.c) continue ;; esac
	files+=("$f")
done
for f in "${files[@]}"; do
	install -D -m 0644 "$f" "$dest/$f"
done
