#!/bin/bash
# Extract the uncompressed ELF kernel from a bzImage.
#
#   vmlinux.sh BZIMAGE OUTFILE
#
# Why: QEMU boots an ELF vmlinux through its PVH entry point (CONFIG_PVH,
# set in Debian's kernels), which skips the firmware's real-mode path and the
# in-guest decompression of the kernel; under TCG that decompression costs
# 0.7 s (zstd, 6.12) to 1.5 s (xz, 6.1) of every boot. Same method as the
# kernel's scripts/extract-vmlinux: try each compression magic in the image.
# OUTFILE is written atomically; exits non-zero if no ELF kernel was found.
set -euo pipefail

[ $# -eq 2 ] || { sed -n '2,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
img=$1
out=$2

tmpout=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmpout"' EXIT

is_elf() {
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]
}

try() {
	local magic=$1 off
	shift
	# shellcheck disable=SC2013 # one number per line
	for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1); do
		# Trailing data after the stream makes the decompressor complain;
		# what it wrote before that is what we want.
		tail -c "+$((off + 1))" "$img" | "$@" >"$tmpout" 2>/dev/null || true
		if is_elf "$tmpout"; then
			chmod 644 "$tmpout"
			mv -f "$tmpout" "$out"
			exit 0
		fi
	done
}

try '\x28\xb5\x2f\xfd' zstd -dcq
try '\xfd7zXZ\x00' xz -dcq
try '\x1f\x8b\x08' gzip -dcq
try '\x02\x21\x4c\x18' lz4 -dcq
echo "vmlinux.sh: no ELF kernel found in $img" >&2
exit 1
