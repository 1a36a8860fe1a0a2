#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The forwarding path of a PE, driven by the kernel's pktgen: dmsc's hook
# against the kernel's own seg6 encap route and against plain forwarding
# without encapsulation, same packets, one VM, one run.
#
#   +--------+ veth +--------+ veth +-------------------------------+ dummy0
#   |  gen   |------|  mid   |------|  pe: forwards 10.0.2.0/24     |------> freed
#   | pktgen | g0 m0| plain  |m1  p0|  (plain) no encapsulation    |
#   +--------+      | fwd    |      |  (seg6)  ip route ... encap seg6 mode encap
#                   +--------+      |  (dmsc)  dmsc tunnel + rule (hook)
#                                   |  (drop)  tc ingress drop on p0: the cost
#                                   |          of generating, mid and receiving
#                                   +-------------------------------+
#
# Why mid: pktgen keeps a reference to each packet it sends, so the skb
# arriving in the next namespace is shared and ip_rcv() clones it; the
# clone's data must then be copied by ip_forward() before anything may
# write to it, and a PE that encapsulates after ip_forward() (our hook at
# POST_ROUTING) would copy it a second time for headroom, while the
# kernel's seg6 route encapsulates at input, before ip_forward(), with one
# copy. A NIC hands the stack packets that are not shared. mid forwards
# plainly and makes them so, for every variant alike.
#
# pktgen sends RoCEv2-shaped UDP (destination port 4791) from its kernel
# thread; veth hands each packet on and the softirq that pktgen's own
# local_bh_enable() runs forwards it through mid and pe on the same cpu,
# so with one vCPU a run's rate is 1 / (generation + mid + pe). The
# (drop) variant measures all but pe's forwarding, so the forwarding cost
# of a variant is 1/pps - 1/pps(drop): the script prints both the raw
# rate ratios and these cost ratios. dummy0's counters check that every
# packet left, and with the expected size.
#
# pktgen's payload starts with its own header (magic, sequence number):
# read as a BTH, its QP number is the sequence number, so every packet
# would be a new flow. The dmsc variant therefore runs with flow tracking
# off (flow_limit 0), as the kernel's route has none either; the flow
# table's cost is what tools/bench/srv6_encap.sh measures with roce-gen.
#
# Rounds run the variants back to back in rotating order; results are
# medians over rounds.
#
# With -p VARIANT, one run of that variant is profiled instead (perf
# record of the whole VM, cpu-clock): the report shows where its time
# goes.
#
# usage: encap_fwd.sh [-r ROUNDS] [-n PACKETS] [-s PKT_SIZE] [-p VARIANT]
#        as root inside a VM with one vCPU and no slab debugging:
#        DMSC_VM_SLUB_DEBUG= tools/vm/run.sh -c 1 -- tools/bench/encap_fwd.sh
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
DMSC=$top/agent/dmsc
KO=${DMSC_KO:-$top/build/kmod/$(uname -r)/kernel/dmsc.ko}
[ -f "$KO" ] || KO=$top/kernel/dmsc.ko
rounds=9
count=200000
size=100
profile=
while getopts "r:n:s:p:" o; do
	case $o in
	p) profile=$OPTARG ;;
	r) rounds=$OPTARG ;;
	n) count=$OPTARG ;;
	s) size=$OPTARG ;;
	*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done

S1=fc00:1::e
S2=fc00:9::4
GEN=bench-gen-$$
MID=bench-mid-$$
PE=bench-pe-$$

cleanup() {
	ip netns del "$GEN" 2>/dev/null || true
	ip netns del "$MID" 2>/dev/null || true
	ip netns del "$PE" 2>/dev/null || true
}
trap cleanup EXIT

gen() { ip netns exec "$GEN" "$@"; }
mid() { ip netns exec "$MID" "$@"; }
pe() { ip netns exec "$PE" "$@"; }
# pg FILE CMD: one pktgen command, in gen's namespace (its /proc/net).
pg() { gen sh -c "echo '$2' > /proc/net/pktgen/$1"; }

dmsc_load() { [ -d /sys/module/dmsc ] || insmod "$KO"; }
dmsc_unload() { [ ! -d /sys/module/dmsc ] || rmmod dmsc; }

modprobe pktgen
modprobe -q sch_ingress || true
modprobe -q cls_matchall || true
modprobe -q act_gact || true

for ns in "$GEN" "$MID" "$PE"; do
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
done
ip -n "$GEN" link add g0 type veth peer name m0 netns "$MID"
ip -n "$MID" link add m1 type veth peer name p0 netns "$PE"
gen ip link set g0 up
mid ip link set m0 up
mid ip link set m1 up
pe ip link set p0 up
pe ip link add dummy0 type dummy
pe ip link set dummy0 up
gen ip addr add 10.0.1.1/24 dev g0
mid ip addr add 10.0.1.254/24 dev m0
mid ip addr add 10.0.3.1/24 dev m1
pe ip addr add 10.0.3.2/24 dev p0
mid ip route add 10.0.2.0/24 via 10.0.3.2
pe ip route add 10.0.1.0/24 via 10.0.3.1
pe ip addr add fc00:a::1/128 dev lo
pe ip -6 route add fc00::/16 dev dummy0
pe ip sr tunsrc set fc00:a::1
# A permanent neighbour: no packet waits for ARP.
mid ip neigh replace 10.0.3.2 lladdr "$(pe cat /sys/class/net/p0/address)" dev m1 nud permanent
mid_mac=$(mid cat /sys/class/net/m0/address)

gen ls /proc/net/pktgen/kpktgend_0 >/dev/null
pg kpktgend_0 rem_device_all
pg kpktgend_0 "add_device g0"
for c in "count $count" "clone_skb 0" "pkt_size $size" "delay 0" \
	"dst 10.0.2.1" "src_min 10.0.1.1" "src_max 10.0.1.1" \
	"dst_mac $mid_mac" "udp_dst_min 4791" "udp_dst_max 4791" \
	"udp_src_min 49152" "udp_src_max 49407" "burst 1"; do
	pg g0 "$c"
done

tx() { pe cat /sys/class/net/dummy0/statistics/tx_"$1"; }

setup() {
	pe ip route del 10.0.2.0/24 2>/dev/null || true
	pe tc qdisc del dev p0 ingress 2>/dev/null || true
	case $1 in
	dmsc)
		dmsc_load
		pe "$DMSC" set flow_limit 0
		pe "$DMSC" tunnel add 1 src fc00:a::1 path $S1,$S2 >/dev/null
		pe "$DMSC" rule add dst 10.0.2.0/24 tunnel 1 >/dev/null
		pe ip route add 10.0.2.0/24 dev dummy0 ;;
	seg6)
		dmsc_unload
		pe ip route add 10.0.2.0/24 encap seg6 mode encap \
			segs $S1,$S2 dev dummy0 ;;
	plain)
		dmsc_unload
		pe ip route add 10.0.2.0/24 dev dummy0 ;;
	drop)
		dmsc_unload
		pe ip route add 10.0.2.0/24 dev dummy0
		pe tc qdisc add dev p0 ingress
		pe tc filter add dev p0 ingress matchall action drop ;;
	esac
}

teardown() {
	if [ "$1" = dmsc ]; then
		pe "$DMSC" rule del dst 10.0.2.0/24 >/dev/null
		pe "$DMSC" tunnel del 1 >/dev/null
	fi
}

# run VARIANT: prints the rate pktgen achieved; checks dummy0.
run() {
	local v=$1 p0 b0 p1 b1 res pps want_len
	setup "$v"
	p0=$(tx packets)
	b0=$(tx bytes)
	pg pgctrl start
	p1=$(tx packets)
	b1=$(tx bytes)
	teardown "$v"
	res=$(gen cat /proc/net/pktgen/g0)
	pps=$(echo "$res" | sed -n 's/^ *\([0-9][0-9]*\)pps.*/\1/p')
	[ -n "$pps" ] || { echo "$v: no pktgen result: $res" >&2; exit 1; }
	case $v in
	drop) want_len=0 ;;
	plain) want_len=$size ;;
	*) want_len=$((size + 40 + 8 + 2 * 16)) ;;
	esac
	if [ "$v" = drop ]; then
		(( p1 - p0 == 0 )) || { echo "drop: $((p1 - p0)) packets got through" >&2; exit 1; }
	else
		if (( p1 - p0 != count )); then
			echo "$v: dummy0 sent $((p1 - p0)) packets, not $count" >&2
			exit 1
		fi
		if (( (b1 - b0) != count * want_len )); then
			echo "$v: dummy0 sent $(( (b1 - b0) / count )) bytes a packet, not $want_len" >&2
			exit 1
		fi
	fi
	echo "$pps"
}

if [ -n "$profile" ]; then
	command -v perf >/dev/null || { echo "perf missing (apt-get install linux-perf)" >&2; exit 1; }
	setup "$profile"
	perf record -q -a -g -e cpu-clock -o /tmp/encap_fwd.perf -- \
		ip netns exec "$GEN" sh -c 'echo start > /proc/net/pktgen/pgctrl' 2>/dev/null
	teardown "$profile"
	# The flat profile first (where the time is), then the call graphs
	# (how it got there).
	echo "# flat profile, self time"
	perf report -q -i /tmp/encap_fwd.perf --stdio --no-children --sort sym -g none 2>/dev/null | head -n 40
	echo "# call graphs"
	perf report -q -i /tmp/encap_fwd.perf --stdio --no-children --sort sym -G 2>/dev/null | head -n 120
	exit 0
fi

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "# $(uname -r), $(nproc) cpu: $rounds rounds of $count packets of $size bytes from pktgen"
variants=(drop plain seg6 dmsc)
declare -A all
for r in $(seq "$rounds"); do
	# Rotate the order so that no variant always follows the same one.
	k=$(( (r - 1) % ${#variants[@]} ))
	line="round $r:"
	declare -A pr=()
	for v in "${variants[@]:k}" "${variants[@]:0:k}"; do
		pr[$v]=$(run "$v")
		line+=" $v ${pr[$v]}"
	done
	echo "# $line"
	for v in "${variants[@]}"; do
		all[$v]+="${pr[$v]} "
	done
	# Per-round ratios: raw rates, and forwarding costs net of (drop).
	all[r_seg6]+="$(python3 -c "print(${pr[dmsc]}/${pr[seg6]})") "
	all[r_plain]+="$(python3 -c "print(${pr[dmsc]}/${pr[plain]})") "
	all[c_seg6]+="$(python3 -c "d=1/${pr[drop]}; print((1/${pr[seg6]}-d)/(1/${pr[dmsc]}-d))") "
	all[c_plain]+="$(python3 -c "d=1/${pr[drop]}; print((1/${pr[plain]}-d)/(1/${pr[dmsc]}-d))") "
	all[k_plain]+="$(python3 -c "d=1/${pr[drop]}; print((1/${pr[plain]}-d)/(1/${pr[seg6]}-d))") "
done

med() { echo "${all[$1]}" | tr ' ' '\n' | sed '/^$/d' | median; }
printf '\n| variant | median pps | forwarding cost (ns/pkt, net of gen+rx) |\n|---|---|---|\n'
d=$(med drop)
for v in "${variants[@]}"; do
	p=$(med "$v")
	if [ "$v" = drop ]; then
		printf '| %s | %s | (gen + rx) %.0f ns |\n' "$v" "$p" "$(python3 -c "print(1e9/$p)")"
	else
		printf '| %s | %s | %.0f |\n' "$v" "$p" "$(python3 -c "print(1e9/$p - 1e9/$d)")"
	fi
done
echo
printf 'dmsc / seg6 rate:  %.3f (median of per-round ratios; goal >= 1.0)\n' "$(med r_seg6)"
printf 'dmsc / plain rate: %.3f (goal >= 0.85)\n' "$(med r_plain)"
printf 'forwarding cost seg6 / dmsc:  %.3f (> 1: dmsc is cheaper)\n' "$(med c_seg6)"
printf 'forwarding cost plain / dmsc: %.3f\n' "$(med c_plain)"
printf 'forwarding cost plain / seg6: %.3f (the kernel seg6 against plain, for scale)\n' "$(med k_plain)"
