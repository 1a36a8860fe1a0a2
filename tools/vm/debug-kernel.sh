#!/bin/bash
# Build, once, the debug kernel of `make check-debug`: Debian's
# linux-source-6.12 with defconfig + kvm_guest.config + tools/vm/debug.config
# (KASAN, lockdep, kmemleak, debugobjects, list debugging; everything the VM
# and the selftests need built in). Prints the kernel tree's path.
#
#   debug-kernel.sh        build unless cached, then print the tree's path
#   debug-kernel.sh -n     print the path if it is built, else fail
#
# The tree is cached in ${DMSC_DEBUG_CACHE:-/var/cache/dmsc/debug-kernel}/KEY/,
# KEY a hash of debug.config, this script and the linux-source package
# version: a second call with the same inputs only prints the path. The tree
# is a full build (bzImage, vmlinux, Module.symvers), so out-of-tree modules
# build against it with `make -C TREE M=DIR modules`. The build log is
# KEY/build.log; the build time is printed and kept in KEY/build-time. An
# interrupted compile resumes where it stopped on the next call.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
frag=$here/debug.config
pkg=linux-source-6.12
tarball=/usr/src/$pkg.tar.xz
cache=${DMSC_DEBUG_CACHE:-/var/cache/dmsc/debug-kernel}
jobs=${DMSC_DEBUG_JOBS:-2}

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

only_print=0
case ${1:-} in
'') ;;
-n) only_print=1 ;;
*) sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
	die "$pkg is not installed (apt-get install $pkg)"
key=$( {
	cat "$frag" "${BASH_SOURCE[0]}"
	echo "$pkg $ver"
} | sha256sum | cut -c1-16)
dir=$cache/$key
tree=$dir/linux

if [ -f "$dir/done" ]; then
	echo "$tree"
	exit 0
fi
[ "$only_print" = 0 ] || die "not built yet: run tools/vm/debug-kernel.sh"
[ -r "$tarball" ] || die "no $tarball (apt-get install $pkg)"

# One build at a time: a second caller waits for the first, then finds the
# tree done. Two parallel builds would only fight over the 2 cores.
mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
	echo "debug-kernel: another build is running, waiting for it" >&2
	flock 9
fi
if [ -f "$dir/done" ]; then
	echo "$tree"
	exit 0
fi

configure() {
	run tar -C "$dir" -xf "$tarball"
	mv "$dir/$pkg" "$tree"
	cd "$tree"
	run make defconfig
	run make kvm_guest.config
	run scripts/kconfig/merge_config.sh -m .config "$frag"
	run make olddefconfig

	# olddefconfig silently drops what it cannot have (an unmet dependency, a
	# misspelt name): every line of the fragment must be in .config as written.
	missing=()
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" .config || missing+=("$line")
			;;
		'# CONFIG_'*' is not set')
			sym=${line#\# }
			sym=${sym%% *}
			! grep -q "^$sym=" .config || missing+=("$line")
			;;
		esac
	done <"$frag"
	if [ ${#missing[@]} -ne 0 ]; then
		printf '  wanted: %s\n' "${missing[@]}" >&2
		for line in "${missing[@]}"; do
			sym=${line#\# }
			sym=${sym%%[= ]*}
			printf '  got:    %s\n' "$(grep -E "^(# )?${sym}[= ]" .config || echo "$sym absent")" >&2
		done
		die "${#missing[@]} option(s) of $frag did not survive olddefconfig"
	fi
	touch "$dir/configured"
}

log=$dir/build.log
start=$(date +%s)
prior=0
record_elapsed() {
	[ -d "$dir" ] && echo $((prior + $(date +%s) - start)) >"$dir/elapsed"
}
run() {
	if ! "$@" >>"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "failed: $* (full log: $log)"
	fi
}

# A directory whose config was checked is an interrupted compile: make
# carries on where it stopped (the time spent before is in KEY/elapsed).
# Anything else without "done" is a failed setup: start over.
if [ -f "$dir/configured" ]; then
	echo "debug-kernel: resuming the build in $dir (log: $log)" >&2
	prior=$(cat "$dir/elapsed" 2>/dev/null || echo 0)
	cd "$tree"
else
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "debug-kernel: building $pkg $ver in $dir (log: $log)" >&2
	configure
fi
trap record_elapsed EXIT
trap 'exit 143' TERM INT

echo "debug-kernel: config checked, compiling (-j$jobs)" >&2
# The default target: vmlinux, bzImage and the (few) modules, hence
# Module.symvers for out-of-tree builds.
run make -j"$jobs" all
kver=$(make -s --no-print-directory kernelrelease)
secs=$((prior + $(date +%s) - start))
echo "$kver" >"$dir/kernelrelease"
echo "$secs" >"$dir/build-time"
touch "$dir/done"
printf 'debug-kernel: built %s in %dm%02ds (debug-kernel build time)\n' \
	"$kver" $((secs / 60)) $((secs % 60)) >&2

# Older builds (other keys) are ~10 GB of objects nobody boots any more.
for d in "$cache"/*/; do
	d=${d%/}
	[ "$d" = "$dir" ] || rm -rf "$d"
done
echo "$tree"
