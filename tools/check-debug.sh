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
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logdir=build/check-debug
mkdir -p "$logdir"
rm -f "$logdir"/*.log
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
# stock kernels (srv6_steer.sh alone takes 5-7 min there). The VM gets every
# test's limit plus boot and the kmemleak scans.
limit=${DMSC_DEBUG_TEST_TIMEOUT:-3600}
vm_limit=$((limit * $# + 900))

echo "# ==== check-debug on $kver ($kdir): $*"
start=$(date +%s)
# -s: a kernel oops, WARN or KASAN report (taint) anywhere fails the run.
tools/vm/run.sh -K "$kdir" -s -m 4096 -t "$vm_limit" -o "$DMSC_DEBUG_OUT" -- \
	tools/check-debug-guest.sh -t "$limit" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
if [ "$rc" != 0 ] && tools/ktap-count.sh -q "$log"; then
	echo "not ok - vm-$kver: exit $rc" | tee -a "$log"
fi

echo
echo "# check-debug: the guest's kernel log: $DMSC_DEBUG_OUT/dmesg.txt"
printf '# check-debug: the VM run took %dm%02ds\n' $((secs / 60)) $((secs % 60))
# Broken KTAP (a plan not met, a bail-out) counts too; the summary is last.
tools/ktap-count.sh "$log"
counted=$?
[ "$counted" = 0 ] && [ "$rc" = 0 ]
