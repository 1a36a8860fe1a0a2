#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for dmsc selftests, in the manner of the kernel's
# tools/testing/selftests/net/lib.sh: namespaces that clean themselves up,
# the module from this tree for the running kernel, KTAP output.
#
# A test script sources this file, declares its cases and runs them:
#
#   source "$(dirname "$0")/lib.sh"
#   test_foo() { ...; check "(( x == 3 ))" "why it failed"; }
#   ktap_run test_foo "foo does bar" test_baz "baz is refused"
#
# Each case runs in a subshell with `set -e`: a failing command fails the
# case; `fail MSG` fails it with a reason; `skip MSG` skips it.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DMSC=${DMSC:-$top/agent/dmsc}
KVER=$(uname -r)
DMSC_KO=${DMSC_KO:-$top/build/kmod/$KVER/kernel/dmsc.ko}
[ -f "$DMSC_KO" ] || DMSC_KO=$top/kernel/dmsc.ko

# Every namespace made through mkns is deleted on exit.
NS_LIST=()
NS_SUFFIX=$$

ksft_pass=0
ksft_fail=0
ksft_skip=0

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 4
}

# check "ARITHMETIC OR TEST EXPRESSION" "reason": fail the case unless true.
check() {
	if ! eval "$1"; then
		fail "${2:-$1}"
	fi
}

# mkns NAME...: create namespaces NAME-$$ and set variables NAME to them.
mkns() {
	local n full
	for n in "$@"; do
		full="$n-$NS_SUFFIX"
		ip netns add "$full"
		ip -n "$full" link set lo up
		NS_LIST+=("$full")
		printf -v "$n" '%s' "$full"
	done
}

# Topologies with routers (srv6_steer.sh, telemetry.sh): one namespace
# per node of $NODES, named PREFIX-NODE-$$ and held in NS_NODE.
# node_fns: a function per node, NODE CMD... runs CMD in its namespace.
node_fns() {
	local n
	for n in $NODES; do
		eval "$n() { ip netns exec \"\$NS_$n\" \"\$@\"; }"
	done
}

# nodes_add PREFIX [SYSCTL=VALUE...]: the namespaces, loopback up,
# forwarding and SRv6 on, no DAD (addresses usable at once), plus the
# sysctls given. They outlive the cases (not in NS_LIST, which each
# case's cleanup_ns empties): nodes_del deletes them.
NODES_NS=()
nodes_add() {
	local prefix=$1 n
	shift
	for n in $NODES; do
		printf -v "NS_$n" '%s' "$prefix-$n-$NS_SUFFIX"
		ip netns add "$prefix-$n-$NS_SUFFIX"
		NODES_NS+=("$prefix-$n-$NS_SUFFIX")
		$n ip link set lo up
		$n sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv6.conf.all.forwarding=1 \
			net.ipv6.conf.all.seg6_enabled=1 \
			net.ipv6.conf.default.seg6_enabled=1 \
			net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 "$@"
	done
}

nodes_del() {
	local n
	for n in "${NODES_NS[@]}"; do
		ip netns del "$n" 2>/dev/null || true
	done
	NODES_NS=()
}

# link NODE1 DEV1 NODE2 DEV2: a veth pair between two nodes, both ends up.
link() {
	local a=NS_$1 b=NS_$3
	ip -n "${!a}" link add "$2" type veth peer name "$4" netns "${!b}"
	ip -n "${!a}" link set "$2" up
	ip -n "${!b}" link set "$4" up
}

cleanup_ns() {
	local n
	for n in "${NS_LIST[@]}"; do
		ip netns del "$n" 2>/dev/null || true
	done
	NS_LIST=()
}

# Run dmsc in a namespace: dns NS ARGS...
dns() {
	local ns=$1
	shift
	# dmsc -n, not ip netns exec: the same network namespace without
	# ip's process and its mount namespace with /sys mounted anew, about
	# 0.1 s a call in a TCG VM, where the selftests make thousands.
	"$DMSC" -n "$ns" "$@"
}

# wait_until "COND" [TRIES]: evaluate COND every 0.1 s, up to TRIES times
# (default 100); true as soon as it holds.
wait_until() {
	local tries=${2:-100}
	for _ in $(seq "$tries"); do
		eval "$1" && return 0
		sleep 0.1
	done
	return 1
}

# in_order NS DEV...: every packet the veths receive goes to CPU 0's
# backlog (RPS). A veth hands a packet to the backlog of the CPU that
# sent it; a qdisc that holds packets (cbfc waiting for credit) is run
# from whichever CPU the credit arrived on, so two packets of one flow
# could sit in two CPUs' backlogs and be delivered swapped. A NIC's ring
# keeps them in order; this makes the veths do the same.
in_order() {
	local ns=$1 dev
	shift
	for dev in "$@"; do
		ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$dev/queues/rx-0/rps_cpus" ||
			fail "rps_cpus on $dev in $ns"
	done
}

# neigh NS ADDR DEV PEER_NS PEER_DEV: a permanent neighbour entry in NS
# for ADDR on DEV, with PEER_DEV's MAC (no resolution traffic in a test).
neigh() {
	ip -n "$1" neigh replace "$2" dev "$3" nud permanent \
		lladdr "$(ip netns exec "$4" cat "/sys/class/net/$5/address")"
}

# num KEY: the first number of "KEY" in the JSON on stdin; fails if there
# is none. Bash alone: in a TCG VM each process costs 50-100 ms, and the
# selftests read counters thousands of times (grep | head | grep was three
# more processes a read; python's start-up is slower still).
num() {
	local json re="\"$1\": ?([0-9]+)"
	IFS= read -r -d '' json || true
	[[ $json =~ $re ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

# jq-free JSON field extraction: json_get 'expr' reads JSON on stdin and
# prints the python expression evaluated on it as `d`.
json_get() {
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

module_loaded() {
	[ -d /sys/module/dmsc ]
}

load_module() {
	module_loaded || insmod "$DMSC_KO"
}

unload_module() {
	! module_loaded || rmmod dmsc
}

# What counts as a splat in the kernel log: oopses and warnings, the
# memory checkers (slub_debug's "BUG <cache> ...: Poison overwritten",
# KFENCE, KASAN, kmemleak), refcount and list debugging, lockdep, RCU.
DMESG_SPLAT_RE='WARNING:|BUG:|BUG [a-z0-9_-]+ \(|Poison overwritten|Redzone|Object padding|Oops|general protection|KASAN|KFENCE|UBSAN|kmemleak: [0-9]+ new suspected|refcount_t|list_(add|del) corruption|RCU stall|rcu_sched self-detected|rcu: INFO|suspicious RCU usage|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|Call Trace'

# The kernel log since the test started must hold no splat. The mark is
# the time stamp of the last line: the ring buffer wraps (a slub_debug
# report of an 8 KiB object is ~600 lines), so a line count would not do.
dmesg_mark() {
	DMESG_START=$(dmesg | awk 'END { printf "%.6f", substr($0, 2, index($0, "]") - 2) }')
}

# It is called as `dmesg_clean || fail`, where set -e does not act: each
# failure is returned explicitly. A log that cannot be read is not clean.
dmesg_clean() {
	local log bad
	log=$(dmesg) || { echo "dmesg_clean: cannot read the kernel log" >&2; return 1; }
	bad=$(awk -v m="${DMESG_START:-0}" 'substr($0, 2, index($0, "]") - 2) + 0 > m + 0' <<<"$log" |
		grep -E "$DMESG_SPLAT_RE" || true)
	if [ -n "$bad" ]; then
		echo "$bad" | head -20 >&2
		return 1
	fi
}

NOTIFY_PID=
# notify_listen: receive sd_notify datagrams on $T/notify into $T/notified,
# one per line, as systemd's notify socket would (agent_service.sh,
# agent_telemetry.sh; each defines wait_for). The listener's pid is
# NOTIFY_PID, for the cleanup.
notify_listen() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ").strip() + "\n")
        f.flush()
' "$T/notify" "$T/notified" &
	NOTIFY_PID=$!
	wait_for "[ -S '$T/notify' ]" "no notify socket"
}

# cases_only ARRAY SELECTION: keep in ARRAY (function, description pairs)
# only the cases whose function SELECTION names, for DMSC_*_CASES while
# debugging one case; an empty SELECTION keeps them all.
cases_only() {
	local -n cases_ref=$1
	local only=$2 sel=() i
	[ -n "$only" ] || return 0
	for ((i = 0; i < ${#cases_ref[@]}; i += 2)); do
		if listed "${cases_ref[i]}" "$only"; then
			sel+=("${cases_ref[i]}" "${cases_ref[i + 1]}")
		fi
	done
	cases_ref=(${sel[@]+"${sel[@]}"})
}

# kconfig SYMBOL: the running kernel has CONFIG_SYMBOL (y or m). A kernel
# built in a tree (check-debug) has its config there, not in /boot.
kconfig() {
	grep -q "^CONFIG_$1=[ym]" "${DMSC_KCONFIG:-/boot/config-$(uname -r)}" 2>/dev/null
}

# slow_ms MS: MS, or three times it on a KASAN kernel (check-debug), where
# every command a bound covers (ip, tc, tcpdump's start) runs that much
# slower under TCG. For bounds on the harness's own time, not on what the
# module promises.
slow_ms() {
	if kconfig KASAN; then
		echo $(($1 * 3))
	else
		echo "$1"
	fi
}

# listed FN LIST: FN is one of LIST's names; any whitespace separates
# them (a list may wrap).
listed() {
	[[ " ${2//[$'\t\n']/ } " == *" $1 "* ]]
}

# ktap_run FN DESCRIPTION [FN DESCRIPTION...]: run each case, print KTAP.
# A case named in DEEP_CASES (set by the test) is a slow scale or soak
# case: it runs under DMSC_DEEP=1 (make check-deep) and is otherwise
# reported as skipped, so that make check keeps to its 45 minutes and
# still shows what it left out. A case named in NEWEST_CASES tests the
# module's logic through code that is the same on every kernel (no
# compat path, no kernel API whose behaviour moved): make check runs it
# on the newest kernel only (tools/check.sh sets DMSC_OLDER_KERNEL=1 on
# the others), make check-deep everywhere.
ktap_run() {
	local n=$(($# / 2)) i=0 fn desc rc log reason started
	echo "TAP version 13"
	echo "1..$n"
	local deep=${DEEP_CASES:-} newest=${NEWEST_CASES:-}
	while [ $# -ge 2 ]; do
		fn=$1 desc=$2
		shift 2
		i=$((i + 1))
		if listed "$fn" "$deep" && [ "${DMSC_DEEP:-0}" != 1 ]; then
			echo "ok $i $desc # SKIP deep case: make check-deep runs it"
			ksft_skip=$((ksft_skip + 1))
			continue
		fi
		if listed "$fn" "$newest" &&
		   [ "${DMSC_OLDER_KERNEL:-0}" = 1 ] && [ "${DMSC_DEEP:-0}" != 1 ]; then
			echo "ok $i $desc # SKIP the same on every kernel: make check runs it on the newest"
			ksft_skip=$((ksft_skip + 1))
			continue
		fi
		log=$(mktemp)
		started=$SECONDS
		# Not in an && list: errexit must stay in force inside the case.
		set +e
		# DMSC_TRACE=1: every command of the case, timed (where it goes).
		( set -e; trap cleanup_ns EXIT
		  if [ "${DMSC_TRACE:-0}" = 1 ]; then
			# Its own fd: not into an out=$(... 2>&1) of the case.
			exec {xfd}>&2
			BASH_XTRACEFD=$xfd
			PS4='+ $EPOCHREALTIME '
			set -x
		  fi
		  "$fn" ) >"$log" 2>&1
		rc=$?
		sed 's/^/# /' "$log"
		# Where a selftest's minutes go (make check's budget is 45).
		echo "# $fn took $((SECONDS - started)) s"
		case $rc in
		0) echo "ok $i $desc"; ksft_pass=$((ksft_pass + 1)) ;;
		4) echo "ok $i $desc # SKIP $(grep -m1 '^SKIP: ' "$log" | cut -c7-)"
		   ksft_skip=$((ksft_skip + 1)) ;;
		*) reason=$(grep -m1 '^FAIL: ' "$log" | cut -c7-)
		   echo "not ok $i $desc # ${reason:-exit $rc}"
		   ksft_fail=$((ksft_fail + 1)) ;;
		esac
		rm -f "$log"
	done
	echo "# $ksft_pass passed, $ksft_fail failed, $ksft_skip skipped"
	[ "$ksft_fail" = 0 ]
}

trap cleanup_ns EXIT
