#!/bin/bash
# Commas inside QEMU arguments are meant; cleanup() runs from a trap:
# shellcheck disable=SC2054,SC2317
# Run a command as root inside a QEMU VM booting a Debian kernel, with the
# host root shared read-only over 9p, and return the command's exit status.
#
# usage: run.sh [options] -- COMMAND [ARGS...]
#        run.sh -l
#
#   -k KVER     kernel: full KVER or a prefix (6.1, 6.12); default: newest 6.1
#   -K DIR      boot the kernel built in tree DIR instead (debug-kernel.sh);
#               also DMSC_VM_KERNEL_DIR. It must have 9p and virtio built in
#   -m MEM_MB   guest memory (default 1024)
#   -c CPUS     guest CPUs (default 2)
#   -t SECS     kill the VM and fail after SECS seconds (default 600)
#   -o OUTDIR   share OUTDIR writable, mounted in the guest at the same path
#   -e VAR[=VAL] pass VAR to the command (DMSC_* are always passed)
#   -d          show the kernel log on the console (loglevel 7)
#   -s          strict: fail (rc 126) if the guest kernel oopsed or warned
#   -i          interactive: the console's input is the command's stdin
#               (QEMU monitor: Ctrl-A c, quit: Ctrl-A x)
#   -a ACCEL    tcg (default) or kvm; also DMSC_VM_ACCEL
#   -l          list the kernels we test on and exit
#   -h          this help
#
# The command runs in the guest in the host's current directory, with
# PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin,
# HOME=/tmp, TERM=dumb; /tmp, /run, /dev/shm are fresh tmpfs, except that the
# repository's parent and the current directory are shared read-only at
# their own paths when they live there (a clone under /tmp works). Exit status: the command's; 124 on timeout; 125 if the VM failed
# (no exit marker: panic, setup error); 126 in strict mode on oops/warning;
# 2 on usage errors.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"
}
die() {
	echo "run.sh: $*" >&2
	exit 125
}
bad_usage() {
	echo "run.sh: $*" >&2
	usage >&2
	exit 2
}

kspec=
ktree=${DMSC_VM_KERNEL_DIR:-}
mem=1024
cpus=2
timeout_s=600
outdir=
debug=0
strict=0
interactive=0
accel=${DMSC_VM_ACCEL:-tcg}
extra_env=()

while getopts ":k:K:m:c:t:o:e:dsia:lh" opt; do
	case $opt in
	k) kspec=$OPTARG ;;
	K) ktree=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	o) outdir=$OPTARG ;;
	e) extra_env+=("$OPTARG") ;;
	d) debug=1 ;;
	s) strict=1 ;;
	i) interactive=1 ;;
	a) accel=$OPTARG ;;
	l) exec "$here/kernels.sh" ;;
	h) usage; exit 0 ;;
	:) bad_usage "-$OPTARG needs an argument" ;;
	*) bad_usage "unknown option -$OPTARG" ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" != -- ] || shift
[ $# -gt 0 ] || bad_usage "no command"

for v in "$mem" "$cpus" "$timeout_s"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || bad_usage "not a positive number: $v"
done
case $accel in
tcg | kvm) ;;
*) bad_usage "unknown accelerator: $accel" ;;
esac

if [ -n "$ktree" ]; then
	[ -z "$kspec" ] || bad_usage "-k and -K (DMSC_VM_KERNEL_DIR) exclude each other"
	[ -d "$ktree" ] || die "no kernel tree $ktree"
	ktree=$(cd "$ktree" && pwd)
	# A built tree: its .config and the release string Kbuild wrote.
	config=$ktree/.config
	kver=$(cat "$ktree/include/config/kernel.release" 2>/dev/null) ||
		die "$ktree is not a built kernel tree (no include/config/kernel.release)"
	kernel=$ktree/arch/x86/boot/bzImage
else
	if [ -n "$kspec" ]; then
		kver=$("$here/kernels.sh" -r "$kspec") || exit 125
	else
		kver=$("$here/kernels.sh" -d) || exit 125
	fi
	config=/boot/config-$kver
	kernel=/boot/vmlinuz-$kver
fi
[ -r "$kernel" ] || die "cannot read $kernel"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"

if [ -n "$outdir" ]; then
	mkdir -p "$outdir"
	outdir=$(cd "$outdir" && pwd -P)
fi

# The guest gets fresh tmpfs on /tmp, /run and /dev/shm, which would hide a
# checkout (or the directory we run in) that lives there: share such a
# directory on its own and mount it over the tmpfs at the same path. The
# repository's parent goes too, so ../shared beside a clone stays visible.
# hidden DIR: DIR is below one of those (not one of them: the guest keeps
# its own /tmp when the checkout is /tmp/dmsc).
hidden() {
	case $1/ in
	/tmp/ | /run/ | /var/run/ | /dev/shm/) return 1 ;;
	/tmp/* | /run/* | /var/run/* | /dev/shm/*) return 0 ;;
	*) return 1 ;;
	esac
}
under() { # under DIR PARENT: DIR is PARENT or below it
	case $1/ in "$2"/*) return 0 ;; esac
	return 1
}
shares=()
for d in "$(dirname "$top")" "$top" "$(pwd -P)"; do
	d=$(cd "$d" && pwd -P)
	hidden "$d" || continue
	for s in ${shares[@]+"${shares[@]}"}; do
		! under "$d" "$s" || continue 2
	done
	shares+=("$d")
done
case $(pwd -P)/ in
/dev/* | /proc/* | /sys/*)
	echo "run.sh: warning: $PWD is hidden in the VM (kernel filesystems there)" >&2
	;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmsc-vm.XXXXXX")
qpid=
fpid=
cleanup() {
	# Kill QEMU (through timeout(1), which passes the signal on) if we are
	# interrupted, then drop the temporary files.
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	[ -z "$fpid" ] || kill "$fpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- initramfs: cached per kernel, rebuilt when its inputs change ----------
cache=${DMSC_VM_CACHE:-$top/build/vm}
# A tree's kernel has no /lib/modules/KVER: its initramfs holds no modules
# and depends on its .config (9p and virtio must be =y) instead.
if [ -n "$ktree" ]; then
	mkinitramfs_args=(-c "$config")
	kinput=$config
else
	mkinitramfs_args=()
	kinput=/lib/modules/$kver/modules.dep
fi
key=$( {
	cat "$here/mkinitramfs.sh" "$here/init.sh" "$here/stage2.sh"
	stat -Lc '%n %s %Y' "$kinput" /bin/busybox
} | sha256sum | cut -c1-16)
base=$cache/initramfs-$kver-$key.cpio
if [ ! -s "$base" ]; then
	"$here/mkinitramfs.sh" ${mkinitramfs_args[@]+"${mkinitramfs_args[@]}"} "$kver" "$base" ||
		die "initramfs build failed"
	# Drop stale builds for this kernel.
	for f in "$cache/initramfs-$kver-"*.cpio; do
		[ "$f" = "$base" ] || rm -f "$f"
	done
fi

# --- kernel: the extracted ELF vmlinux boots faster (see vmlinux.sh) ---------
if [ -n "$ktree" ]; then
	# A tree has its ELF vmlinux already.
	if [ "${DMSC_VM_PVH:-1}" != 0 ] && grep -qx 'CONFIG_PVH=y' "$config" &&
		[ -r "$ktree/vmlinux" ]; then
		kernel=$ktree/vmlinux
	fi
elif [ "${DMSC_VM_PVH:-1}" != 0 ] && grep -qx 'CONFIG_PVH=y' "$config" 2>/dev/null; then
	vmlinux=$cache/vmlinux-$kver-$(stat -Lc '%s %Y' "$kernel" | sha256sum | cut -c1-16)
	if [ ! -s "$vmlinux" ]; then
		if "$here/vmlinux.sh" "$kernel" "$vmlinux"; then
			# Stale extractions only, not another run's temporary file.
			for f in "$cache/vmlinux-$kver-"????????????????; do
				[ "$f" = "$vmlinux" ] || rm -f "$f"
			done
		else
			echo "run.sh: booting the compressed $kernel instead" >&2
			vmlinux=
		fi
	fi
	[ -z "$vmlinux" ] || kernel=$vmlinux
fi

# --- per-run archive: configuration and the command, appended to the base --
# Quote for the guest's sh (dash or busybox): single quotes, ' as '\''.
q() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}
nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
mkdir -p "$tmp/run/dmsc-run"
{
	echo "NONCE=$nonce"
	echo "OUTDIR=$(q "$outdir")"
	echo "INTERACTIVE=$interactive"
	echo "NSHARES=${#shares[@]}"
} >"$tmp/run/dmsc-run/conf"
# One path per line, read by init.sh; the 9p tags are hostdir0, hostdir1...
printf '%s\n' ${shares[@]+"${shares[@]}"} >"$tmp/run/dmsc-run/shares"
{
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/tmp USER=root LOGNAME=root SHELL=/bin/sh TERM=dumb LANG=C.UTF-8"
	echo "export DMSC_VM=1 DMSC_VM_KVER=$(q "$kver")"
	while IFS= read -r name; do
		echo "export $name=$(q "${!name}")"
	done < <(compgen -e | grep '^DMSC_' | grep -v '^DMSC_VM_\(ACCEL\|CACHE\)$' || true)
	for e in ${extra_env[@]+"${extra_env[@]}"}; do
		name=${e%%=*}
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || bad_usage "bad variable name: $name"
		if [ "$name" = "$e" ]; then
			[ -n "${!name+x}" ] || continue
			echo "export $name=$(q "${!name}")"
		else
			echo "export $name=$(q "${e#*=}")"
		fi
	done
	echo "cd $(q "$PWD") || { echo \"dmsc-vm: $(q "$PWD") is not visible in the VM\" >&2; exit 125; }"
	printf 'exec'
	for a in "$@"; do
		printf ' %s' "$(q "$a")"
	done
	echo
} >"$tmp/run/dmsc-run/cmd.sh"
(cd "$tmp/run" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$tmp/run.cpio"
cat "$base" "$tmp/run.cpio" >"$tmp/initrd"

# --- QEMU -------------------------------------------------------------------
if [ "$debug" = 1 ]; then
	loglevel=7
else
	# 2: only panics and oopses (EMERG, ALERT) reach the console.
	loglevel=2
fi
# panic=-1 + -no-reboot: a panic ends QEMU at once instead of waiting for
# the timeout. No EFI, so Debian's lockdown-in-secure-boot never triggers and
# unsigned out-of-tree modules load (with a taint); sig_enforce=0 to be sure.
append="console=ttyS0 loglevel=$loglevel panic=-1 oops=continue module.sig_enforce=0"
# A slub_debug report of one 8 KiB object is ~600 lines: keep them all.
append+=" log_buf_len=16M"
append+=" mitigations=off tsc=reliable no_timer_check i8042.noaux i8042.nokbd"
# Memory-safety checks of the stock kernels (see README): slab poisoning and
# red zones on every cache, so a use-after-free shows as "Poison
# overwritten"; KFENCE where the kernel has it. DMSC_VM_APPEND adds more,
# DMSC_VM_SLUB_DEBUG= (empty) turns slab debugging off for benchmarks.
# A KASAN kernel catches all that itself, exactly and faster: no slub_debug
# there, but every KASAN report rather than the first one only.
if grep -qx 'CONFIG_KASAN=y' "$config" 2>/dev/null; then
	append+=" kasan_multi_shot"
else
	slub=${DMSC_VM_SLUB_DEBUG-FZPU}
	[ -z "$slub" ] || append+=" slub_debug=$slub"
fi
grep -qx 'CONFIG_KFENCE=y' "$config" 2>/dev/null &&
	append+=" kfence.sample_interval=${DMSC_VM_KFENCE:-10}"
append+=${DMSC_VM_APPEND:+ $DMSC_VM_APPEND}

if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu "${DMSC_VM_KVM_CPU:-host}")
else
	accel_args=(-accel tcg,thread=multi -cpu max)
fi

if [ "$interactive" = 1 ]; then
	console=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$tmp/console.log"
		-serial chardev:con -mon chardev=con,mode=readline)
else
	console=(-chardev "stdio,id=con,signal=off,logfile=$tmp/console.log"
		-serial chardev:con)
fi

qemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot
	"${accel_args[@]}" -machine pc -smp "$cpus" -m "$mem"
	-kernel "$kernel" -initrd "$tmp/initrd" -append "$append"
	"${console[@]}"
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot)
for i in "${!shares[@]}"; do
	qemu+=(-fsdev "local,id=hostdir$i,path=${shares[$i]//,/,,},security_model=none,readonly=on,multidevs=remap"
		-device "virtio-9p-pci,fsdev=hostdir$i,mount_tag=hostdir$i")
done
if [ -n "$outdir" ]; then
	# QEMU option values escape commas by doubling them.
	qemu+=(-fsdev "local,id=hostout,path=${outdir//,/,,},security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=hostout,mount_tag=hostout)
fi

marker="DMSC_VM_EXIT=[0-9]*:[0-9]*:$nonce"
# QEMU runs in the background and we wait for it: bash runs the INT/TERM
# traps (which kill it) during "wait", never while a foreground child runs.
# timeout(1) puts QEMU in its own process group, so a signal to ours alone
# would not reach it.
set +e
if [ "$interactive" = 1 ]; then
	# Explicit stdin: a background job would otherwise get /dev/null.
	# --foreground: QEMU must stay in the terminal's process group to read
	# from it (else SIGTTIN stops it).
	exec 3<&0
	timeout --foreground -k 5 "$timeout_s" "${qemu[@]}" <&3 &
	qpid=$!
	wait "$qpid"
	qrc=$?
	qpid=
else
	# Console to stdout without CRs and without our marker line; sed -u so
	# output streams line by line.
	mkfifo "$tmp/console"
	# The power-off message is KERN_EMERG: hide it unless -d.
	quiet_re='^\[ *[0-9.]*\] reboot: Power down$'
	[ "$debug" = 0 ] || quiet_re="^$marker$"
	sed -u -e 's/\r$//' -e "/^$marker\$/d" -e "s/$marker\$//" -e "/$quiet_re/d" <"$tmp/console" &
	fpid=$!
	timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null >"$tmp/console" &
	qpid=$!
	wait "$qpid"
	qrc=$?
	qpid=
	wait "$fpid"
	fpid=
fi
set -e

res=$(grep -ao "$marker" "$tmp/console.log" 2>/dev/null | tail -n 1 || true)
if [ -z "$res" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "run.sh: timeout: the VM ($kver) did not finish within ${timeout_s}s" >&2
		exit 124
	fi
	if grep -aq 'Kernel panic' "$tmp/console.log" 2>/dev/null; then
		echo "run.sh: the guest kernel ($kver) panicked" >&2
	else
		echo "run.sh: the VM ($kver) ended without an exit status (qemu rc $qrc); rerun with -d to see the kernel log" >&2
	fi
	exit 125
fi
res=${res#DMSC_VM_EXIT=}
rc=${res%%:*}
taint=${res#*:}
taint=${taint%%:*}
# B (32): bad page or slab corruption (slub_debug), D (128): oops,
# W (512): warning, L (16384): soft lockup.
if [ $((taint & (32 | 128 | 512 | 16384))) -ne 0 ]; then
	echo "run.sh: warning: the guest kernel ($kver) oopsed or warned (tainted=$taint)" >&2
	if [ "$strict" = 1 ] && [ "$rc" = 0 ]; then
		rc=126
	fi
fi
exit "$rc"
