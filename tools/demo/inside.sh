#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the VM: two AIDCs joined by an SRv6 WAN of three
# transit routers running the kernel's own seg6local. dmsc on the PE of
# AIDC 1 steers RoCEv2 flows onto two weighted segment lists (3:1) with a
# backup; halfway through the traffic the operator moves the tunnel onto
# its backup. roce-gen's sink counts every PSN at the far end.
#
#                     .-- p1 (End) --.
#  h1 --- pe1 (dmsc) ---- p2 (End) ---- pe2 (End.DX4) --- h2
#  AIDC 1             '-- p3 (End) --'                    AIDC 2
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dmsc=$top/agent/dmsc
rg=$top/tools/roce-gen/roce-gen
ko=$top/build/kmod/$(uname -r)/kernel/dmsc.ko
T=$(mktemp -d)
nodes="h1 pe1 p1 p2 p3 pe2 h2"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '%s# %s\n' "${1}" "${*:2}" >&2; ip netns exec "demo-$1" "${@:2}"; }
for n in $nodes; do eval "$n() { ip netns exec demo-$n \"\$@\"; }"; done

cleanup() {
	for n in $nodes; do ip netns del "demo-$n" 2>/dev/null || true; done
	rmmod dmsc 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

link() {	# link A DEV_IN_A B DEV_IN_B
	ip -n "demo-$1" link add "$2" type veth peer name "$4" netns "demo-$3"
	ip -n "demo-$1" link set "$2" up
	ip -n "demo-$3" link set "$4" up
}

# The emulator's hazard, not the demo's: selftests/vm_pin_keys.sh says why.
[ "${DMSC_VM:-0}" != 1 ] || "$top/selftests/vm_pin_keys.sh"
say "kernel $(uname -r): insmod dmsc.ko; seven namespaces are seven nodes"
insmod "$ko"
for n in $nodes; do
	ip netns add "demo-$n"
	$n ip link set lo up
	$n sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.all.seg6_enabled=1 net.ipv6.conf.default.seg6_enabled=1 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
done
link h1 e0 pe1 h1
link pe2 h2 h2 e0
for k in 1 2 3; do
	link pe1 p$k p$k pe1
	link p$k pe2 pe2 p$k
	pe1 ip addr add fc00:1$k::1/64 dev p$k nodad
	p$k ip addr add fc00:1$k::2/64 dev pe1 nodad
	p$k ip addr add fc00:2$k::1/64 dev pe2 nodad
	pe2 ip addr add fc00:2$k::2/64 dev p$k nodad
	pe1 ip -6 route add fc00:$k::/64 via fc00:1$k::2
	p$k ip -6 route add fc00:9::/64 via fc00:2$k::2
	# The WAN's transit routers: stock Linux SRv6 End.
	p$k ip -6 route add fc00:$k::e/128 encap seg6local action End dev pe2
done
h1 ip addr add 10.0.1.1/24 dev e0
h1 ip route add default via 10.0.1.254
pe1 ip addr add 10.0.1.254/24 dev h1
pe1 ip addr add fc00:a::1/128 dev lo
h2 ip addr add 10.0.2.1/24 dev e0
h2 ip route add default via 10.0.2.254
pe2 ip addr add 10.0.2.254/24 dev h2
# AIDC 2's PE decapsulates and hands IPv4 to h2: stock End.DX4.
pe2 ip -6 route add fc00:9::4/128 encap seg6local action End.DX4 \
	nh4 10.0.2.1 dev h2
# Without dmsc, pe1 has no route to AIDC 2 at all: only SRv6 gets there.
pe1 ip route add 10.0.2.0/24 dev p1

say "pe1: a tunnel with two weighted segment lists (3:1) and a backup"
dmsc=${dmsc#"$top/"}	# shorter to read: paths are relative to the repo
cd "$top"
run pe1 "$dmsc" tunnel add 1 src fc00:a::1 \
	path fc00:1::e,fc00:9::4 weight 3 \
	path fc00:2::e,fc00:9::4 weight 1 \
	backup fc00:3::e,fc00:9::4
run pe1 "$dmsc" rule add dst 10.0.2.0/24 tunnel 1
run pe1 "$dmsc" tunnel show
run pe1 "$dmsc" rule show

say "h1 -> h2: 64 queue pairs of RoCEv2, 300 packets each; capture at p1"
h2 "$rg" sink idle 4 count $((64 * 300)) json "$T/sink.json" \
	ready-file "$T/ready" 2>"$T/sink.err" &
sink=$!
while [ ! -e "$T/ready" ]; do sleep 0.1; done
p1 tcpdump -Z root -i pe1 -nn -U -c 1 -w "$T/p1.pcap" ip6 proto 43 2>/dev/null &
cap=$!
h1 taskset -c 0 "$rg" send dst 10.0.2.1 qps 64 count 300 size 1024 \
	rate 4000 json "$T/send.json" 2>"$T/send.err" &
sender=$!
sleep 2.5

say "halfway: the operator moves tunnel 1 onto its backup (p3)"
run pe1 "$dmsc" tunnel switch 1 backup
wait "$sender"
wait "$sink" || { cat "$T/sink.err"; exit 1; }
wait "$cap" || true

say "one packet as p1 received it (tshark)"
tshark -r "$T/p1.pcap" -V -O ipv6,ip,infiniband 2>/dev/null |
	grep -E 'Source Address|Destination Address|Segments Left|Address\[|Destination Queue Pair|Packet Sequence Number|^Internet Protocol' |
	sed 's/^/    /'

say "pe1: per-list counters (-s) and a few flows (-j)"
run pe1 "$dmsc" -s tunnel show 1
run pe1 "$dmsc" -j flow show | python3 -c '
import json, sys
flows = json.load(sys.stdin)
for f in flows[:4]:
    print("   ", json.dumps(f))
print("    ... %d flows, on lists: %s" % (len(flows),
      sorted({str(f["path"]) for f in flows})))'

say "h2: what the RoCEv2 sink counted"
python3 - "$T/send.json" "$T/sink.json" <<'PY'
import json, sys
snd, snk = (json.load(open(p)) for p in sys.argv[1:])
t = snk["totals"]
print("    sent %d packets on %d QPs; received %d on %d flows"
      % (snd["totals"]["packets"], snd["qp_count"], t["packets"], t["flows"]))
print("    lost PSNs %d, out of order %d, duplicates %d, bad ICRC %d"
      % (t["psn_gaps"], t["out_of_order"], t["duplicates"], t["icrc_errors"]))
PY

say "pe1 and pe2 are separate nodes: each namespace has its own dmsc state"
run pe1 "$dmsc" -j info
run pe2 "$dmsc" -j info

say "part 2: incast through PE1 - P - PE2, cbfc against pfifo (selftests/cbfc_incast.sh)"
# DMSC_DEEP: its failover case, which make check leaves to make
# check-deep, is the plot's failover moment.
DMSC_DEEP=1 "$top/selftests/cbfc_incast.sh"
