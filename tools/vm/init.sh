#!/bin/busybox sh
# shellcheck shell=dash disable=SC1091,SC2093
# /init of the dmsc test VM (PID 1, busybox sh). Built into the initramfs by
# mkinitramfs.sh; run.sh appends a second archive with /dmsc-run/conf (NONCE,
# OUTDIR, INTERACTIVE) and /dmsc-run/cmd.sh (environment, cd, exec COMMAND).
#
# It loads the 9p modules, mounts the host root read-only at /newroot, gives
# it fresh writable /tmp and /run and the kernel filesystems, and switches to
# it, running stage2.sh as PID 1 there.
# PID 1 must never exit (the kernel would panic), hence no "set -e": every
# failure goes through fail(), which powers off without the exit marker.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console node, so the kernel could not give us a
# console: take it from devtmpfs.
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

off() {
	sync
	poweroff -f
	# Not reached unless poweroff failed; -no-reboot makes this exit QEMU too.
	echo b >/proc/sysrq-trigger
	sleep 1000
}

fail() {
	echo "dmsc-vm: init: $*"
	dmesg | tail -n 20
	off
}

NONCE=
OUTDIR=
INTERACTIVE=0
NSHARES=0
[ -r /dmsc-run/conf ] || fail "no /dmsc-run/conf: run this initramfs through tools/vm/run.sh"
. /dmsc-run/conf

while read -r m; do
	insmod "/modules/$m.ko" || fail "insmod $m failed"
done </modules/load

# 512 KiB is the largest msize the virtio transport takes on 6.1; big messages
# cut the number of round trips through QEMU for reads of binaries and data.
P9OPTS=trans=virtio,version=9p2000.L,msize=512000

# The virtio device may still be probing: retry briefly.
i=0
until mount -t 9p -o "$P9OPTS,ro,cache=loose" hostroot /newroot 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 50 ] || fail "cannot mount the host root (9p tag hostroot)"
	sleep 0.1
done

R=/newroot
# Writable, empty places over the read-only host tree. /var/run is a symlink
# to /run on Debian, so "ip netns add" finds /var/run/netns writable.
mount -t tmpfs -o mode=0755 tmpfs $R/run || fail "mount /run"
mount -t tmpfs -o mode=1777 tmpfs $R/tmp || fail "mount /tmp"
mount -t proc proc $R/proc || fail "mount /proc"
mount -t sysfs sysfs $R/sys || fail "mount /sys"
mount -t devtmpfs devtmpfs $R/dev || fail "mount /dev"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
# Cheap and wanted by tc/bpftool, tracing and cgroup-aware tools; not fatal.
mount -t bpf bpf $R/sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t securityfs securityfs $R/sys/kernel/security 2>/dev/null
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup 2>/dev/null

# Host directories under /tmp or /run (a clone there) over the fresh tmpfs,
# at their own paths, read-only like the rest of the host.
i=0
while [ "$i" -lt "${NSHARES:-0}" ] && IFS= read -r dir; do
	mkdir -p "$R$dir" || fail "mkdir $dir"
	mount -t 9p -o "$P9OPTS,ro,cache=loose" "hostdir$i" "$R$dir" ||
		fail "cannot mount $dir (9p tag hostdir$i)"
	i=$((i + 1))
done </dmsc-run/shares

if [ -n "$OUTDIR" ]; then
	# After /tmp and the shares: an OUTDIR under /tmp must land on top of
	# the guest's tmpfs.
	# cache=none: every write reaches the host before write() returns, so
	# nothing is lost by the forced power-off.
	mkdir -p "$R$OUTDIR" || fail "mkdir $OUTDIR"
	mount -t 9p -o "$P9OPTS,cache=none" hostout "$R$OUTDIR" ||
		fail "cannot mount $OUTDIR (9p tag hostout)"
fi

hostname dmsc-vm
ip link set lo up

# Become the host root for real (switch_root, not a chrooted child): the
# kernel's own helpers (request_module -> /sbin/modprobe, firmware loading)
# resolve paths in PID 1's root, which must have the host's /lib/modules.
# Stage 2 runs from tmpfs with our busybox, so it does not depend on the host.
S=$R/run/dmsc-vm
mkdir -p $S
cp /bin/busybox /stage2.sh /dmsc-run/cmd.sh $S/ || fail "cannot set up stage 2"
exec switch_root $R /run/dmsc-vm/busybox sh /run/dmsc-vm/stage2.sh "$NONCE" "$INTERACTIVE"
fail "switch_root failed"
