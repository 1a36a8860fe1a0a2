#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: userspace unit tests and style checks on the host, then
# every selftest inside a VM on each test kernel. Prints the KTAP of
# everything, then one line "N passed, N failed, N skipped"; exits
# non-zero if anything failed. Expects `make all modules-all` done.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logdir=build/check
mkdir -p "$logdir"
rm -f "$logdir"/*.log "$logdir"/*.out "$logdir"/*.rc
failed_steps=()

# step NAME CMD...: run CMD, show its output, keep it for counting. A step
# that fails without a failure the counter sees (a "not ok", broken KTAP)
# gets a "not ok" line of its own, so a crash or a build failure is counted.
step() {
	local name=$1 log="$logdir/$1.log" rc started=$SECONDS
	shift
	echo "# ==== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# Where make check's time goes, read off any log (CI's too).
	echo "# ==== $name: exit $rc after $((SECONDS - started)) s"
	if [ "$rc" != 0 ] && tools/ktap-count.sh -q "$log"; then
		echo "not ok - $name: exit $rc" | tee -a "$log"
	fi
	[ "$rc" = 0 ] || failed_steps+=("$name")
}

checkpatch() {
	local cp=/usr/src/linux-source-6.1/scripts/checkpatch.pl out
	echo "TAP version 13"
	echo "1..1"
	# compat.h exists to hold kernel version tests: that warning is its job.
	# Only our sources, not what Kbuild generates beside them.
	out=$("$cp" --no-tree -q --ignore LINUX_VERSION_CODE \
		-f $(git ls-files 'kernel/*.[ch]') 2>&1)
	if [ -z "$out" ]; then
		echo "ok 1 checkpatch: kernel/ is clean"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok 1 checkpatch: kernel/ has style problems"
	fi
}

# replay OUT RC: show a finished step's output, exit with its status.
replay() {
	cat "$1"
	return "$(cat "$2")"
}

# The harness first: it must see a broken test as one, or nothing after it
# means anything.
step harness tools/check-selftest.sh
# -j2: the builds in parallel; the tests run one after another.
step unit-agent make -s -j2 -C agent check
step unit-ebpf make -s -C ebpf check
[ -f tools/roce-gen/Makefile ] && step unit-roce-gen make -s -C tools/roce-gen check
step pki tools/pki/test.sh
step checkpatch checkpatch
step ynl python3 tools/ynl-check.py
step dkms tools/dkms-check.sh
step install tools/install-check.sh

make -s --no-print-directory -C selftests all
tests=$(make -s --no-print-directory -C selftests list)
# The newest kernel runs every selftest. The older ones run those whose
# code paths differ by kernel version: module load and unload, genl,
# SRv6 with seg6local, the qdisc, netfilter hooks, eBPF, teardown under
# traffic. Left to the newest: the control plane's selftests and the rule
# table's logic, which drive the module through the same genl API on any
# kernel, and the incast, the qdisc's own scheduling, whose kernel paths
# cbfc.sh crosses on every kernel (Documentation/testing.md). make
# check-deep runs every selftest on every kernel.
newest_only=(rules.sh cli.sh mpte_install.sh agent_service.sh ynl.sh
	agent_telemetry.sh agent_roles.sh cbfc_incast.sh)
# make check-deep (DMSC_DEEP=1, passed into the VM) adds the selftests'
# DEEP_CASES: half an hour more per kernel.
vm_limit=4800
[ "${DMSC_DEEP:-0}" != 1 ] || vm_limit=7200
# vm KVER: the selftests for that kernel in a VM of it. -s: a kernel
# oops or WARN anywhere in the run fails it.
vm() {
	local run=$tests t
	if [ "$1" != "$newest" ] && [ "${DMSC_DEEP:-0}" != 1 ]; then
		run=
		for t in $tests; do
			[[ " ${newest_only[*]} " == *" $t "* ]] || run+=" $t"
		done
	fi
	# shellcheck disable=SC2086
	DMSC_OLDER_KERNEL=$([ "$1" = "$newest" ] || echo 1) \
	tools/vm/run.sh -k "$1" -s -m 2048 -t "$vm_limit" -- \
		selftests/run_tests.sh -t 1200 $run
}
# The kernels' VMs run one after the other, output as it comes.
# DMSC_VM_PARALLEL=1 runs them side by side (output shown when both are
# done): on this 2-core host that gained nothing, each VM's selftests
# taking about twice as long (Documentation/testing.md).
kernels=$(tools/vm/kernels.sh)
newest=$(echo "$kernels" | tail -1)
if [ "${DMSC_VM_PARALLEL:-0}" != 1 ]; then
	for kver in $kernels; do
		step "vm-$kver" vm "$kver"
	done
else
	declare -A pid
	for kver in $kernels; do
		vm "$kver" >"$logdir/vm-$kver.out" 2>&1 &
		pid[$kver]=$!
	done
	for kver in $kernels; do
		wait "${pid[$kver]}"
		echo "$?" >"$logdir/vm-$kver.rc"
	done
	for kver in $kernels; do
		step "vm-$kver" replay "$logdir/vm-$kver.out" "$logdir/vm-$kver.rc"
	done
fi

echo
if [ ${#failed_steps[@]} -ne 0 ]; then
	echo "# failed steps: ${failed_steps[*]}"
fi
# Each broken KTAP document (no plan, fewer results than planned, a number
# twice, a bail-out) is a "not ok" of its own, then the summary line.
tools/ktap-count.sh "$logdir"/*.log
counted=$?
[ "$counted" = 0 ] && [ ${#failed_steps[@]} -eq 0 ]
