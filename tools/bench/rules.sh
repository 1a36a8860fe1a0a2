#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cost of rule lookup against the number of rules: the same RoCEv2
# traffic through dmsc's hook with 10, 100, 1k, 10k and 100k rules.
#
#   +--------+  veth  +------------------------------+
#   |  snd   |--------|  pe: dmsc with N rules;       |
#   | roce-  |        |  tunnel 1 takes the traffic   |--> dummy0
#   |  gen   |        |  and sends it, encapsulated,  |    (freed at once)
#   +--------+        |  to dummy0                    |
#                     +------------------------------+
#
# The rules: N - 4 random IPv4 prefixes of mixed lengths (mostly /24 and
# /32, see selftests/nl_rules.c), none covering the traffic's destination
# 10.0.2.1, all to tunnel 2; and four by hand around it, so the packet
# walks a realistic path and scans more than one rule:
#   10.0.0.0/8 -> 2            a shorter prefix on the way down
#   10.0.2.0/24 src 192.168.0.0/16 -> 2   scanned first, does not match
#   10.0.2.0/24 -> 1           the rule that takes the traffic
#   10.0.2.128/25 -> 2         a sibling
# Rules are loaded in bulk over netlink (selftests/nl_rules: many
# requests per send(), no ack but for the last); "load ms" is that load.
#
# roce-gen sends unpaced from its own namespace, pinned to one cpu; veth
# hands each packet to pe on the sending cpu, so its packets per second
# is the cost of the whole path, lookup included. Tunnel 1 must have
# sent every packet, dummy0 at least as many. A TCG VM on a shared
# machine is noisy: every rule count runs once per round, in an order
# that alternates, on a fresh pair of namespaces, and the ratio to 10
# rules is the median of the rounds' ratios.
#
# usage: rules.sh [-r ROUNDS] [-n PACKETS_PER_QP] [-q QPS] [-N "COUNTS"]
#        tools/vm/run.sh -k 6.12 -s -- tools/bench/rules.sh
#        (DMSC_VM_SLUB_DEBUG= in the environment: no slab debugging)
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
RG=$top/tools/roce-gen/roce-gen
DMSC=$top/agent/dmsc
NL_RULES=$top/selftests/nl_rules
KO=${DMSC_KO:-$top/build/kmod/$(uname -r)/kernel/dmsc.ko}
[ -f "$KO" ] || KO=$top/kernel/dmsc.ko
rounds=5
count=2000
qps=16
counts="10 100 1000 10000 100000"
while getopts "r:n:q:N:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) count=$OPTARG ;;
	q) qps=$OPTARG ;;
	N) counts=$OPTARG ;;
	*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done

SND=rbench-snd-$$
PE=rbench-pe-$$
T=$(mktemp -d)
total=$((qps * count))

cleanup() {
	ip netns del "$SND" 2>/dev/null || true
	ip netns del "$PE" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

snd() { ip netns exec "$SND" "$@"; }
pe() { ip netns exec "$PE" "$@"; }

[ -d /sys/module/dmsc ] || insmod "$KO"

setup() {
	ip netns del "$SND" 2>/dev/null || true
	ip netns del "$PE" 2>/dev/null || true
	ip netns add "$SND"
	ip netns add "$PE"
	snd ip link set lo up
	pe ip link set lo up
	pe sysctl -qw net.ipv4.ip_forward=1
	ip -n "$SND" link add e0 type veth peer name snd netns "$PE"
	snd ip link set e0 up
	pe ip link set snd up
	pe ip link add dummy0 type dummy
	pe ip link set dummy0 up
	snd ip addr add 10.0.1.1/24 dev e0
	snd ip route add default via 10.0.1.254
	pe ip addr add 10.0.1.254/24 dev snd
	pe ip addr add fc00:a::1/128 dev lo
	pe ip -6 route add fc00::/16 dev dummy0
	pe ip route add 10.0.2.0/24 dev dummy0
	pe "$DMSC" tunnel add 1 src fc00:a::1 path fc00:1::e,fc00:9::4 >/dev/null
	pe "$DMSC" tunnel add 2 src fc00:a::1 path fc00:2::e,fc00:9::4 >/dev/null
}

# Slab and per-cpu memory in use, kB.
mem_kb() {
	awk '$1 == "Slab:" || $1 == "Percpu:" { s += $2 } END { print s }' \
		/proc/meminfo
}

# run N: one measurement; prints "pps load_ms bytes_per_rule".
run() {
	local n=$1 out ms m0 m1 p0 p1 t1 pps i
	setup
	pe "$DMSC" rule add dst 10.0.0.0/8 tunnel 2 >/dev/null
	pe "$DMSC" rule add dst 10.0.2.0/24 src 192.168.0.0/16 tunnel 2 >/dev/null
	pe "$DMSC" rule add dst 10.0.2.0/24 tunnel 1 >/dev/null
	pe "$DMSC" rule add dst 10.0.2.128/25 tunnel 2 >/dev/null
	m0=$(mem_kb)
	out=$(pe "$NL_RULES" add -n $((n - 4)) -t 2 -s "$n" -a 10.0.2.1)
	m1=$(mem_kb)
	case $out in
	*" errors=0 "*) ;;
	*) echo "loading $n rules: $out" >&2; exit 1 ;;
	esac
	ms=$(sed -n 's/.* ms=\([0-9]*\).*/\1/p' <<<"$out")
	if [ "$(pe "$DMSC" -j info | python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["rules"])')" != "$n" ]; then
		echo "pe does not hold $n rules" >&2
		exit 1
	fi
	p0=$(pe cat /sys/class/net/dummy0/statistics/tx_packets)
	snd taskset -c 0 "$RG" send dst 10.0.2.1 qps "$qps" count "$count" \
		rate 0 size 64 json "$T/send.json" >/dev/null 2>"$T/err" || {
		echo "roce-gen failed: $(cat "$T/err")" >&2
		exit 1
	}
	p1=$(pe cat /sys/class/net/dummy0/statistics/tx_packets)
	t1=$(pe "$DMSC" -j -s tunnel show 1 | python3 -c 'import json,sys; d=json.load(sys.stdin); print((d[0] if isinstance(d, list) else d)["packets"])')
	# dummy0 may also send the odd IPv6 neighbour packet of its own.
	if (( p1 - p0 < total || t1 != total )); then
		echo "$n rules: dummy0 sent $((p1 - p0)), tunnel 1 $t1 packets, not $total" >&2
		exit 1
	fi
	pps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["rate_pps"]))' "$T/send.json")
	# The namespaces go now, and the next run waits until their rules
	# are freed: a namespace's exit (a kworker) freeing 100k rules must
	# not share the cpu with the next measurement.
	ip netns del "$SND"
	ip netns del "$PE"
	for i in $(seq 600); do
		(( $(mem_kb) > m0 + 2048 )) || break
		sleep 0.1
	done
	# Memory per rule only means something for many rules.
	if (( n >= 10000 )); then
		echo "$pps $ms $(( (m1 - m0) * 1024 / (n - 4) ))"
	else
		echo "$pps $ms -"
	fi
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "# $(uname -r), $(nproc) cpus: $rounds rounds of $total RoCEv2 packets ($qps QPs, 64-byte payload), unpaced"
echo "# rule counts: $counts"
declare -A pps ms mem ratios
fwd=$counts
rev=$(tr ' ' '\n' <<<"$counts" | tac | tr '\n' ' ')
base=${counts%% *}
for r in $(seq "$rounds"); do
	if (( r % 2 )); then order=$fwd; else order=$rev; fi
	declare -A this=()
	for n in $order; do
		out=$(run "$n")
		this[$n]=${out%% *}
		pps[$n]+="${out%% *} "
		out=${out#* }
		ms[$n]+="${out% *} "
		mem[$n]+="${out#* } "
	done
	line="# round $r:"
	for n in $counts; do
		ratio=$(python3 -c "print('%.3f' % (${this[$n]} / ${this[$base]}))")
		ratios[$n]+="$ratio "
		line+=" $n:${this[$n]}pps"
	done
	echo "$line"
done

printf '%8s | %8s | %8s | %9s | %s\n' rules "load ms" pps "ratio" "slab+percpu bytes/rule"
printf '%8s | %8s | %8s | %9s | %s\n' -------- -------- -------- --------- ---------
for n in $counts; do
	printf '%8s | %8s | %8s | %9s | %s\n' "$n" \
		"$(tr ' ' '\n' <<<"${ms[$n]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${pps[$n]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${ratios[$n]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${mem[$n]}" | grep . | median)"
done
last=${counts##* }
worst=$(tr ' ' '\n' <<<"${ratios[$last]}" | grep . | median)
echo "ratio at $last rules: $worst (median of the rounds; goal >= 0.9)"
python3 -c "import sys; sys.exit(0 if $worst >= 0.9 else 1)"
