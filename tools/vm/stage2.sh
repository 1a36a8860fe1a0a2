# shellcheck shell=dash disable=SC2016
# Stage 2 of the dmsc test VM's init: PID 1 in the host root (read-only 9p),
# run by init.sh through switch_root as
#   /run/dmsc-vm/busybox sh /run/dmsc-vm/stage2.sh NONCE INTERACTIVE
# Runs cmd.sh with the host's /bin/sh, prints the exit marker
# "DMSC_VM_EXIT=<rc>:<taint>:<nonce>" that run.sh looks for, powers off.
# No "set -e": PID 1 must reach the power-off whatever happens.

S=/run/dmsc-vm
bb=$S/busybox
nonce=$1
interactive=$2

# env -i: the command sees only what cmd.sh exports, not the kernel's
# leftovers (HOME=/, TERM=linux, BOOT_IMAGE...).
if [ "$interactive" = 1 ]; then
	# A session with the serial line as controlling tty: job control, ^C.
	$bb cttyhack $bb setsid -c $bb env -i /bin/sh $S/cmd.sh
else
	$bb env -i /bin/sh $S/cmd.sh </dev/null
fi
rc=$?

taint=$($bb cat /proc/sys/kernel/tainted)
# D (oops, 128), W (warning, 512), L (soft lockup, 16384): show why, since the
# console is quiet by default.
if [ $((taint & (128 | 512 | 16384))) -ne 0 ]; then
	echo "dmsc-vm: kernel oops/warning (tainted=$taint); kernel log:"
	# From the first report on; the boot messages before it are noise.
	$bb dmesg | $bb sed -n '/WARNING:\|BUG:\|Oops\|Call Trace/,$p' | $bb head -n 150
fi
echo "DMSC_VM_EXIT=$rc:$taint:$nonce"
$bb sync
$bb poweroff -f
# Not reached unless poweroff failed; -no-reboot makes this exit QEMU too.
echo b >/proc/sysrq-trigger
$bb sleep 1000
