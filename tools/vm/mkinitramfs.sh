#!/bin/bash
# Build the VM's initramfs for one Debian kernel: busybox-static, the modules
# needed to mount the host root over virtio-9p (with their dependencies,
# decompressed), and init.sh as /init.
#
#   mkinitramfs.sh KVER OUTFILE
#   mkinitramfs.sh -c CONFIG KVER OUTFILE
#
# -c: a kernel built here (tools/vm/debug-kernel.sh) that has no
# /lib/modules/KVER: no modules go in; its .config, CONFIG, must have what
# init needs built in (=y), or this fails.
#
# The archive is an uncompressed newc cpio: the guest then spends no time
# decompressing it, which matters under TCG. OUTFILE is written atomically
# (temporary file + rename), so concurrent builds of the same kernel are safe.
set -euo pipefail

# What init needs, by module name; whatever the kernel has built in is skipped,
# dependencies come from modules.dep.
WANTED=(virtio_pci 9pnet_virtio 9p)
# Their Kconfig symbols, for -c.
declare -A SYMBOL=([virtio_pci]=CONFIG_VIRTIO_PCI [9pnet_virtio]=CONFIG_NET_9P_VIRTIO
	[9p]=CONFIG_9P_FS)
BUSYBOX=${BUSYBOX:-/bin/busybox}

die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

config=
if [ "${1:-}" = -c ] && [ $# -ge 2 ]; then
	config=$2
	shift 2
fi
[ $# -eq 2 ] || { sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
kver=$1
out=$2
moddir=/lib/modules/$kver
here=$(cd "$(dirname "$0")" && pwd)

if [ -n "$config" ]; then
	[ -r "$config" ] || die "cannot read $config"
	for m in "${WANTED[@]}"; do
		grep -qx "${SYMBOL[$m]}=y" "$config" ||
			die "$config: ${SYMBOL[$m]} is not =y, but the VM cannot load $m from /lib/modules/$kver"
	done
else
	[ -f "$moddir/modules.dep" ] || die "no $moddir/modules.dep (kernel $kver not installed?)"
fi
[ -x "$BUSYBOX" ] || die "no $BUSYBOX (apt-get install busybox-static)"
# A dynamically linked busybox would need its libraries in the initramfs.
if LC_ALL=C file -L "$BUSYBOX" 2>/dev/null | grep -q 'dynamically linked'; then
	die "$BUSYBOX is dynamically linked; install busybox-static"
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/dmsc-initramfs.XXXXXX")
tmpout=
cleanup() {
	rm -rf "$stage"
	[ -z "$tmpout" ] || rm -f "$tmpout"
}
trap cleanup EXIT

# Module name as the kernel sees it: basename, no .ko[.xz|.zst|.gz], '-' -> '_'.
modname() {
	local n=${1##*/}
	n=${n%%.ko*}
	echo "${n//-/_}"
}

declare -A path_of deps_of builtin
[ -n "$config" ] || while IFS= read -r line; do
	p=${line%%:*}
	n=$(modname "$p")
	path_of[$n]=$p
	deps_of[$n]=${line#*:}
done <"$moddir/modules.dep"
if [ -z "$config" ] && [ -f "$moddir/modules.builtin" ]; then
	while IFS= read -r p; do
		builtin[$(modname "$p")]=1
	done <"$moddir/modules.builtin"
fi

# Depth-first: dependencies before the module that needs them.
declare -A seen
order=()
visit() {
	local n=$1 d
	[ -z "${seen[$n]:-}" ] || return 0
	seen[$n]=1
	[ -z "${builtin[$n]:-}" ] || return 0
	[ -n "${path_of[$n]:-}" ] || die "module $n is neither built in nor in $moddir/modules.dep"
	for d in ${deps_of[$n]}; do
		visit "$(modname "$d")"
	done
	order+=("$n")
}
# With -c all of them are built in (checked above): nothing to load.
[ -n "$config" ] || for m in "${WANTED[@]}"; do
	visit "$m"
done

mkdir -p "$stage"/{bin,dev,proc,sys,newroot,modules}
cp "$BUSYBOX" "$stage/bin/busybox"
cp "$here/init.sh" "$stage/init"
cp "$here/stage2.sh" "$stage/stage2.sh"
chmod 755 "$stage/init" "$stage/bin/busybox"

for n in "${order[@]}"; do
	src=$moddir/${path_of[$n]}
	dst=$stage/modules/$n.ko
	case $src in
	*.ko) cp "$src" "$dst" ;;
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*) die "unknown module format: $src" ;;
	esac
	echo "$n" >>"$stage/modules/load"
done
# Keep the file even when everything is built in: init reads it.
touch "$stage/modules/load"
echo "$kver" >"$stage/kver"

mkdir -p "$(dirname "$out")"
tmpout=$(mktemp "$out.XXXXXX")
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) >"$tmpout"
chmod 644 "$tmpout"
mv -f "$tmpout" "$out"
tmpout=
