#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SRv6 encapsulation of RoCEv2: dmsc's hook against the kernel's own seg6
# lwtunnel, same segments, same traffic, one machine, one run.
#
#   +--------+  veth  +---------------------------+
#   |  snd   |--------|  pe: encapsulates, sends   |
#   | roce-  |        |  the outer packet to dummy0 |
#   |  gen   |        |  (freed at once: no sink    |
#   +--------+        |  cost in the measurement)   |
#                     +---------------------------+
#
# (a) dmsc:   tunnel with segments S1,S2 and a rule for the inner prefix;
#             the inner route points at dummy0 but is never used.
# (b) kernel: ip route add PREFIX encap seg6 mode encap segs S1,S2 dev dummy0,
#             with dmsc.ko unloaded so that no hook of ours is on the path.
# (0) plain:  IPv4 forwarding to dummy0 without encapsulation, for scale.
#
# roce-gen sends unpaced from its own namespace, pinned to one cpu; veth
# hands each packet to the receiving namespace on the sending cpu, so a
# run's packets per second is the cost of the whole path, encapsulation
# included. dummy0's counters check that every packet left encapsulated,
# with the same size in (a) and (b). A TCG VM on a shared machine is noisy (runs of one variant
# differ by half): each round runs both variants back to back, in
# alternating order, and the result is the median of the rounds' ratios.
#
# usage: srv6_encap.sh [-r ROUNDS] [-n PACKETS_PER_QP] [-q QPS] [-s SIZE]
#        run it as root inside a VM, one vCPU keeps the path on one cpu:
#        tools/vm/run.sh -c 1 -- tools/bench/srv6_encap.sh
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
RG=$top/tools/roce-gen/roce-gen
DMSC=$top/agent/dmsc
KO=${DMSC_KO:-$top/build/kmod/$(uname -r)/kernel/dmsc.ko}
[ -f "$KO" ] || KO=$top/kernel/dmsc.ko
rounds=15
count=3000
qps=16
size=64
while getopts "r:n:q:s:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) count=$OPTARG ;;
	q) qps=$OPTARG ;;
	s) size=$OPTARG ;;
	*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done

S1=fc00:1::e
S2=fc00:9::4
SND=bench-snd-$$
PE=bench-pe-$$
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

dmsc_load() { [ -d /sys/module/dmsc ] || insmod "$KO"; }
dmsc_unload() { [ ! -d /sys/module/dmsc ] || rmmod dmsc; }

ip netns add "$SND"
ip netns add "$PE"
snd ip link set lo up
pe ip link set lo up
pe sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
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
# The kernel's seg6 encap takes its source from here; ours from the tunnel.
pe ip sr tunsrc set fc00:a::1

tx() { pe cat /sys/class/net/dummy0/statistics/tx_"$1"; }

# route VARIANT: install the inner route of a variant.
route() {
	pe ip route del 10.0.2.0/24 2>/dev/null || true
	case $1 in
	dmsc|plain)
		pe ip route add 10.0.2.0/24 dev dummy0 ;;
	kernel)
		pe ip route add 10.0.2.0/24 encap seg6 mode encap \
			segs $S1,$S2 dev dummy0 ;;
	esac
}

# run VARIANT: one measurement; prints pps, checks dummy0's counters.
run() {
	local v=$1 p0 b0 p1 b1 pps
	case $v in
	dmsc)
		dmsc_load
		pe "$DMSC" tunnel add 1 src fc00:a::1 path $S1,$S2 >/dev/null
		pe "$DMSC" rule add dst 10.0.2.0/24 tunnel 1 >/dev/null ;;
	*)
		dmsc_unload ;;
	esac
	route "$v"
	p0=$(tx packets)
	b0=$(tx bytes)
	snd taskset -c 0 "$RG" send dst 10.0.2.1 qps "$qps" count "$count" rate 0 \
		size "$size" json "$T/send.json" >/dev/null 2>"$T/err" || {
		echo "roce-gen failed: $(cat "$T/err")" >&2
		exit 1
	}
	p1=$(tx packets)
	b1=$(tx bytes)
	pps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["rate_pps"]))' "$T/send.json")
	if [ "$v" = dmsc ]; then
		pe "$DMSC" rule del dst 10.0.2.0/24 >/dev/null
		pe "$DMSC" tunnel del 1 >/dev/null
	fi
	if (( p1 - p0 != total )); then
		echo "$v: dummy0 sent $((p1 - p0)) packets, not $total" >&2
		exit 1
	fi
	echo "$pps $(( (b1 - b0) / total ))"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "# $(uname -r): $rounds rounds of $total RoCEv2 packets ($qps QPs, $size-byte payload), unpaced"
dmsc_pps='' kernel_pps='' ratios=''
pps_dmsc=0 pps_kernel=0 len_dmsc=0 len_kernel=0
out=$(run plain)
plain_before=${out% *}
for r in $(seq "$rounds"); do
	# Paired rounds, the order alternating: a round's ratio compares two
	# runs seconds apart, which the load of the machine running the VM
	# disturbs far less than it does runs minutes apart.
	if (( r % 2 )); then order="dmsc kernel"; else order="kernel dmsc"; fi
	for v in $order; do
		out=$(run "$v")
		printf -v "pps_$v" '%s' "${out% *}"
		printf -v "len_$v" '%s' "${out#* }"
	done
	if [ "$len_dmsc" != "$len_kernel" ]; then
		echo "outer packets differ: dmsc $len_dmsc bytes, kernel $len_kernel" >&2
		exit 1
	fi
	ratio=$(python3 -c "print('%.3f' % ($pps_dmsc / $pps_kernel))")
	echo "# round $r: dmsc $pps_dmsc pps, kernel $pps_kernel pps, ratio $ratio ($len_dmsc bytes per packet on dummy0)"
	dmsc_pps+="$pps_dmsc " kernel_pps+="$pps_kernel " ratios+="$ratio "
done
out=$(run plain)
plain_after=${out% *}
dmsc_load

med_dmsc=$(tr ' ' '\n' <<<"$dmsc_pps" | grep . | median)
med_kernel=$(tr ' ' '\n' <<<"$kernel_pps" | grep . | median)
med_ratio=$(tr ' ' '\n' <<<"$ratios" | grep . | median)
echo "plain forwarding (no encap): $plain_before / $plain_after pps (first / last run)"
echo "dmsc hook H.Encaps:          $med_dmsc pps (median)"
echo "kernel seg6 encap:           $med_kernel pps (median)"
echo "ratio dmsc/kernel:           $med_ratio (median of paired rounds; goal >= 0.95)"
python3 -c "import sys; sys.exit(0 if $med_ratio >= 0.95 else 1)"
