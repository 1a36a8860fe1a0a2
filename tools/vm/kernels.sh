#!/bin/bash
# List or resolve the Debian kernels dmsc is tested on.
#
#   kernels.sh                 the test set, one KVER a line: newest 6.1, newest 6.12
#   kernels.sh -d|--default    the default kernel (newest 6.1)
#   kernels.sh -r SPEC         resolve SPEC (a full KVER such as 6.1.0-56-amd64,
#                              or a prefix such as 6.1 or 6.12) to an installed KVER
#   kernels.sh -a|--all        every installed kernel a VM can boot
#
# A kernel counts as installed when /boot/vmlinuz-KVER and /lib/modules/KVER
# exist (that is all run.sh needs); the test set also needs the headers
# (/lib/modules/KVER/build), since the module is built against them.
set -euo pipefail

usage() {
	sed -n '2,12s/^# \{0,1\}//p' "$0"
}

# Every bootable KVER, oldest first.
bootable() {
	local img kver
	for img in /boot/vmlinuz-*; do
		[ -e "$img" ] || continue
		kver=${img#/boot/vmlinuz-}
		[ -d "/lib/modules/$kver/kernel" ] && echo "$kver"
	done | sort -V
}

# Newest bootable KVER matching an extended regexp, optionally with headers.
newest() {
	local re=$1 need_headers=${2:-0} kver found=
	for kver in $(bootable); do
		[[ $kver =~ $re ]] || continue
		if [ "$need_headers" = 1 ] && [ ! -e "/lib/modules/$kver/build/Makefile" ]; then
			continue
		fi
		found=$kver
	done
	[ -n "$found" ] && echo "$found"
}

# Debian's kernel families: 6.1 (linux-image-amd64) and the 6.12 backport
# series (linux-image-6.12.*+deb12-amd64).
RE_61='^6\.1\.0-[0-9]+-amd64$'
RE_612='^6\.12\.[0-9]+\+deb12-amd64$'

resolve() {
	local spec=$1 kver
	case $spec in
	6.1) newest "$RE_61" ;;
	6.12) newest "$RE_612" ;;
	*)
		# An exact KVER wins; otherwise the newest KVER starting with SPEC.
		if [ -e "/boot/vmlinuz-$spec" ] && [ -d "/lib/modules/$spec" ]; then
			echo "$spec"
			return
		fi
		kver=$(bootable | while read -r k; do
			[ "${k#"$spec"}" != "$k" ] && echo "$k"
		done | tail -n 1)
		[ -n "$kver" ] && echo "$kver"
		;;
	esac
}

case ${1:-} in
'')
	rc=0
	newest "$RE_61" 1 || { echo "kernels.sh: no 6.1 kernel with headers installed" >&2; rc=1; }
	newest "$RE_612" 1 || { echo "kernels.sh: no 6.12 kernel with headers installed" >&2; rc=1; }
	exit $rc
	;;
-d | --default)
	newest "$RE_61" || { echo "kernels.sh: no 6.1 kernel installed" >&2; exit 1; }
	;;
-r | --resolve)
	[ $# -eq 2 ] || { usage >&2; exit 2; }
	resolve "$2" || { echo "kernels.sh: no installed kernel matches '$2'" >&2; exit 1; }
	;;
-a | --all)
	bootable
	;;
-h | --help)
	usage
	;;
*)
	usage >&2
	exit 2
	;;
esac
