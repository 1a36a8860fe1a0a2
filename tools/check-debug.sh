#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-debug: every selftest in one strict VM run on the debug kernel
# (tools/vm/debug-kernel.sh: KASAN, lockdep, kmemleak, debugobjects), then
# the end-of-run checks (lockdep still on, a kmemleak scan). Prints the
# KTAP, then "N passed, N failed, N skipped"; exits non-zero on failure.
# Expects `make all modules-debug` done (make check-debug does it).
#
#   DMSC_DEBUG_TESTS="a.sh b.sh"   run only these selftests
#   DMSC_DEBUG_TEST_TIMEOUT=SECS   limit per selftest (default 3600)
#   DMSC_DEBUG_VMS=N               split the selftests over N VMs run side
#                                  by side (default: 2 on 2 or more CPUs)
#
# Each VM is a whole run of its own: its own boot, its own end-of-run
# checks (lockdep, kmemleak after the unload), its own log and kernel log.
# A selftest runs mostly one thread, and a TCG vCPU is one host thread:
# two VMs on two cores take about half the time of one. The selftests are
# dealt out longest first by the time they took on this kernel
# (Documentation/testing.md), so the VMs end at about the same time.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=build/check-debug
mkdir -p "$logdir"
rm -f "$logdir"/*.log "$logdir"/*.rc
log=$logdir/vm.log
# Shared with the VM: its whole kernel log and the kmemleak report.
export DMSC_DEBUG_OUT=$top/$logdir/out
rm -rf "$DMSC_DEBUG_OUT"
mkdir -p "$DMSC_DEBUG_OUT"

die() {
	echo "check-debug: $*" >&2
	echo "not ok - check-debug: $*"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

kdir=$(tools/vm/debug-kernel.sh -n) || die "no debug kernel: run make check-debug"
kver=$(cat "$kdir/include/config/kernel.release")
# No /boot/config-KVER for this kernel: tests that look at the config
# (genl_basic.sh) read the tree's (DMSC_* reaches the guest).
export DMSC_KCONFIG=$kdir/.config
[ -f "build/kmod/$kver/kernel/dmsc.ko" ] ||
	die "no build/kmod/$kver/kernel/dmsc.ko: run make modules-debug"

make -s --no-print-directory -C selftests all || die "selftests do not build"
tests=${DMSC_DEBUG_TESTS:-$(make -s --no-print-directory -C selftests list)}
# shellcheck disable=SC2086
set -- $tests
[ $# -gt 0 ] || die "no selftests to run"

# KASAN, lockdep and debugobjects under TCG: several times slower than the
# stock kernels (srv6_steer.sh alone takes 5-7 min there). A VM gets its
# tests' limits plus boot and the kmemleak scans.
limit=${DMSC_DEBUG_TEST_TIMEOUT:-3600}
vms=${DMSC_DEBUG_VMS:-$(($(nproc) >= 2 ? 2 : 1))}
case $vms in
'' | *[!0-9]* | 0) die "DMSC_DEBUG_VMS=$vms: a number of VMs, 1 or more" ;;
esac
[ "$vms" -le $# ] || vms=$#

# Seconds each took on the debug kernel (2026-11-24 and 11-28 runs); an
# unlisted one counts as 300.
weight() {
	case $1 in
	cbfc.sh) echo 1250 ;;
	cbfc_credit.sh) echo 780 ;;
	srv6_steer.sh) echo 600 ;;
	cbfc_incast.sh) echo 430 ;;
	rsvp.sh) echo 420 ;;
	flow_churn.sh) echo 600 ;;
	module_lifecycle.sh | genl_basic.sh | rules.sh) echo 200 ;;
	*) echo 300 ;;
	esac
}

# Longest first, each to the VM with the least so far.
declare -a shard load
for ((i = 0; i < vms; i++)); do shard[i]=; load[i]=0; done
while read -r w t; do
	min=0
	for ((i = 1; i < vms; i++)); do
		[ "${load[i]}" -lt "${load[min]}" ] && min=$i
	done
	shard[min]+=" $t"
	load[min]=$((load[min] + w))
done < <(for t in "$@"; do echo "$(weight "$t") $t"; done | sort -rn)

# One VM: its KTAP to $logdir/vm-N.log, its kernel log to $out/N.
run_vm() {
	local n=$1 out=$DMSC_DEBUG_OUT/$1
	shift
	mkdir -p "$out"
	# shellcheck disable=SC2048,SC2086
	set -- $*
	# -s: a kernel oops, WARN or KASAN report (taint) anywhere fails it.
	DMSC_DEBUG_OUT=$out tools/vm/run.sh -K "$kdir" -s -m 4096 \
		-t $((limit * $# + 900)) -o "$out" -- \
		tools/check-debug-guest.sh -t "$limit" "$@" \
		>"$logdir/vm-$n.log" 2>&1
	echo $? >"$logdir/vm-$n.rc"
}

start=$(date +%s)
pids=()
for ((i = 0; i < vms; i++)); do
	echo "# ==== check-debug VM $i on $kver ($kdir):${shard[i]}"
	run_vm "$i" "${shard[i]}" &
	pids+=($!)
done
wait "${pids[@]}"
secs=$(($(date +%s) - start))

# Each VM's output in turn, as one VM's would read.
rc=0
for ((i = 0; i < vms; i++)); do
	vlog=$logdir/vm-$i.log
	tee -a "$log" <"$vlog"
	vrc=$(cat "$logdir/vm-$i.rc" 2>/dev/null || echo 125)
	if [ "$vrc" != 0 ]; then
		rc=$vrc
		if tools/ktap-count.sh -q "$vlog"; then
			echo "not ok - vm-$kver-$i: exit $vrc" | tee -a "$log"
		fi
	fi
done
echo
echo "# check-debug: the guests' kernel logs: $DMSC_DEBUG_OUT/N/dmesg.txt"
printf '# check-debug: %d VM(s) side by side took %dm%02ds\n' "$vms" \
	$((secs / 60)) $((secs % 60))
# Broken KTAP (a plan not met, a bail-out) counts too; the summary is last.
tools/ktap-count.sh "$log"
counted=$?
[ "$counted" = 0 ] && [ "$rc" = 0 ]
