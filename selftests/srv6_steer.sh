#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc steers RoCEv2 onto weighted SRv6 segment lists with a backup.
#
#                      +------+ fc00:1::e End
#                   .--|  p1  |--.
#  +------+  +------+  +------+  +------+  +------+
#  |  h1  |--| pe1  |--|  p2  |--| pe2  |--|  h2  |
#  +------+  | dmsc |  +------+  |      |  +------+
#  10.0.1.1  +------+  fc00:2::e | DX4 fc00:9::4   10.0.2.1
#  2001:db8:1::1  |    +------+  | DX6 fc00:9::6   2001:db8:2::1
#                 '----|  p3  |--'
#                      +------+ fc00:3::e End
#
#  pe1-pK: fc00:1K::1/2 and 10.1.K.1/2; pK-pe2: fc00:2K::1/2, 10.2.K.1/2.
#  pe1 sources tunnels from fc00:a::1. Inner traffic that dmsc does not
#  steer follows plain routes through p1. The P nodes and pe2 run the
#  kernel's own seg6local; dmsc runs on pe1 (forwarded traffic) and, in
#  one case, on h1 itself (host-originated traffic). roce-gen sends and
#  counts; tshark reads captures between pe1 and the P nodes.
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
NODES="h1 pe1 p1 p2 p3 pe2 h2"
T=$(mktemp -d)
SRC=fc00:a::1
SID_P1=fc00:1::e
SID_P2=fc00:2::e
SID_P3=fc00:3::e
DX4=fc00:9::4
DX6=fc00:9::6

# h1 CMD..., pe1 CMD..., ...: run in that node's namespace.
node_fns
d1() { dns "$NS_pe1" "$@"; }		# dmsc on pe1
dh() { dns "$NS_h1" "$@"; }		# dmsc on h1

topo_down() {
	nodes_del
	rm -rf "$T"
	return 0
}
trap 'cleanup_ns; topo_down' EXIT

topo_up() {
	local k
	nodes_add srv6 net.ipv4.icmp_ratelimit=0
	link h1 e0 pe1 h1
	link pe2 h2 h2 e0
	for k in 1 2 3; do
		link pe1 p$k p$k pe1
		link p$k pe2 pe2 p$k
		pe1 ip addr add fc00:1$k::1/64 dev p$k nodad
		pe1 ip addr add 10.1.$k.1/24 dev p$k
		p$k ip addr add fc00:1$k::2/64 dev pe1 nodad
		p$k ip addr add 10.1.$k.2/24 dev pe1
		p$k ip addr add fc00:2$k::1/64 dev pe2 nodad
		p$k ip addr add 10.2.$k.1/24 dev pe2
		pe2 ip addr add fc00:2$k::2/64 dev p$k nodad
		pe2 ip addr add 10.2.$k.2/24 dev p$k
		pe1 ip -6 route add fc00:$k::/64 via fc00:1$k::2
		p$k ip -6 route add fc00:9::/64 via fc00:2$k::2
		p$k ip -6 route add fc00:$k::e/128 encap seg6local action End \
			dev pe2
	done
	h1 ip addr add 10.0.1.1/24 dev e0
	h1 ip addr add 2001:db8:1::1/64 dev e0 nodad
	h1 ip route add default via 10.0.1.254
	h1 ip -6 route add default via 2001:db8:1::fe
	pe1 ip addr add 10.0.1.254/24 dev h1
	pe1 ip addr add 2001:db8:1::fe/64 dev h1 nodad
	pe1 ip addr add $SRC/128 dev lo
	h2 ip addr add 10.0.2.1/24 dev e0
	h2 ip addr add 2001:db8:2::1/64 dev e0 nodad
	h2 ip route add default via 10.0.2.254
	h2 ip -6 route add default via 2001:db8:2::fe
	pe2 ip addr add 10.0.2.254/24 dev h2
	pe2 ip addr add 2001:db8:2::fe/64 dev h2 nodad
	pe2 ip -6 route add $DX4/128 encap seg6local action End.DX4 \
		nh4 10.0.2.1 dev h2
	pe2 ip -6 route add $DX6/128 encap seg6local action End.DX6 \
		nh6 2001:db8:2::1 dev h2
	# Plain routes for what dmsc leaves alone, through p1 both ways.
	pe1 ip -6 route add fc00:9::/64 via fc00:11::2
	pe1 ip route add 10.0.2.0/24 via 10.1.1.2
	pe1 ip -6 route add 2001:db8:2::/64 via fc00:11::2
	p1 ip route add 10.0.2.0/24 via 10.2.1.2
	p1 ip -6 route add 2001:db8:2::/64 via fc00:21::2
	p1 ip route add 10.0.1.0/24 via 10.1.1.1
	p1 ip -6 route add 2001:db8:1::/64 via fc00:11::1
	pe2 ip route add 10.0.1.0/24 via 10.2.1.1
	pe2 ip -6 route add 2001:db8:1::/64 via fc00:21::1
}

# Forget every rule, tunnel and flow of a namespace.
dmsc_reset() {
	local ns=$1
	# One dmsc -batch for all of it, written by jq: in a TCG VM each
	# dmsc costs a third of a second, python's start-up a second. Flows
	# must not age out while a slow (TCG, busy host) case counts them:
	# ten minutes; the ageing case sets its own.
	{ dns "$ns" -j rule show; echo; dns "$ns" -j tunnel show; } |
	jq -rn 'input as $rules | input as $tunnels |
		($rules[] | "rule del dst \(.dst)" +
			(if .src then " src \(.src)" else "" end) +
			" qpn \(.qpn_lo)-\(.qpn_hi)"),
		($tunnels[] | "tunnel del \(.id)"),
		"flow flush",
		"set flow_limit 65536 flow_timeout 600000"' >"$T/reset.batch" ||
		fail "cannot list $ns's rules and tunnels"
	dns "$ns" -batch "$T/reset.batch"
}

# Python that reads the JSON documents on stdin into the list docs.
DOCS_PY='
import json, sys
text, dec, docs, i = sys.stdin.read(), json.JSONDecoder(), [], 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    d, i = dec.raw_decode(text, i)
    docs.append(d)
'

# snap NS [ID]: counters into shell variables, with one dmsc call per
# object and one jq: S_<name> for each namespace counter; with ID,
# T_packets T_flows T_switches T_active, per path i T_p<i> (packets) and
# T_f<i> (flows), for the backup T_pb and T_fb (-1 if none). A dmsc that
# fails fails the case: no value of an older snapshot stays behind.
snap() {
	local ns=$1 id=${2:-} out
	# jq, not python: snap runs some forty times, and python's start-up
	# under TCG is most of a snap.
	out=$({ dns "$ns" -j info; echo
		[ -z "$id" ] || dns "$ns" -j -s tunnel show "$id"; } |
	jq -r -s --arg id "$id" '
if length != (if $id == "" then 1 else 2 end) then
	error("\(length) JSON documents from dmsc")
else . end |
(.[0].stats | to_entries[] | "S_\(.key)=\(.value)"),
(if length > 1 then
	(.[1] | if type == "array" then .[0] else . end) as $t |
	("packets", "flows", "switches", "active" | "T_\(.)=\($t[.] // -1)"),
	($t.paths // [] | .[] | "T_p\(.index)=\(.packets) T_f\(.index)=\(.flows)"),
	($t.backup // {} | "T_pb=\(.packets // -1) T_fb=\(.flows // -1)")
else empty end)') || fail "cannot read dmsc counters"
	unset "${!S_@}" "${!T_@}"
	eval "$out"
}

# flows NS: "src:sport:qpn:path" per flow, sorted, one per line.
flows() {
	dns "$1" -j flow show | python3 -c "$DOCS_PY"'
for f in sorted("%s:%s:%s:%s" % (f["src"], f["sport"], f["qpn"], f["path"]) for f in docs[0]):
    print(f)'
}

# sink_start EXPECTED [ARGS]: roce-gen sink on h2; it stops after
# EXPECTED packets, or 5 s after the last one.
sink_start() {
	local i
	rm -f "$T/ready" "$T/sink.json"
	# It ends when COUNT arrived; idle only ends a sink that waits in
	# vain, and a sender on a busy host may take seconds to start.
	h2 "$RG" sink idle 20 count "$1" json "$T/sink.json" \
		ready-file "$T/ready" "${@:2}" 2>"$T/sink.err" &
	SINK=$!
	for i in $(seq 200); do
		[ -e "$T/ready" ] && return 0
		sleep 0.1
	done
	fail "sink did not start: $(cat "$T/sink.err")"
}
# sink_wait: K_packets and K_bad (loss, reordering, duplicates, bad ICRC).
sink_wait() {
	wait "$SINK" || fail "sink failed: $(cat "$T/sink.err")"
	# Not eval "$(jq ...)": that is 0 when jq fails, and the counts of
	# the sink before would stand. jq, not python: its start-up is a
	# second in a TCG VM, and sink_wait runs some thirty times.
	local k
	k=$(jq -rn 'input.totals | "K_packets=\(.packets)",
		"K_bad=\(.psn_gaps + .out_of_order + .duplicates + .too_old +
			.icrc_errors + .malformed)",
		"K_totals=\(tostring | @sh)"' <"$T/sink.json") ||
		fail "cannot read $T/sink.json"
	eval "$k"
}
# The sink saw every packet it was sent, once, in order, intact.
sink_clean() {
	check "(( K_packets == $1 ))" "sink got $K_packets packets, not $1"
	check "(( K_bad == 0 ))" "sink saw loss or reordering: $K_totals"
}
# send FROM_NS DST ARGS...: roce-gen from a node, on one cpu: veth
# delivers on the sending cpu's backlog, and a sender that the scheduler
# moves under load can overtake its own packets still queued on the other
# cpu: reordering that no path caused, seen in TCG VMs with and without
# dmsc.
send() {
	local from=$1 dst=$2
	shift 2
	$from taskset -c 0 "$RG" send dst "$dst" json "$T/send.json" "$@" \
		2>"$T/send.err" || fail "roce-gen send failed: $(cat "$T/send.err")"
}
# roce FROM DST QPS COUNT SIZE: send through a sink and expect all of it.
roce() {
	sink_start $(($3 * $4))
	send "$1" "$2" qps "$3" count "$4" size "$5" rate 3000
	sink_wait
	sink_clean $(($3 * $4))
}

# cap_start NS DEV FILE [FILTER...] / cap_stop
cap_start() {
	local ns=$1 dev=$2 file=$3 i
	shift 3
	ip netns exec "$ns" tcpdump -Z root -i "$dev" -nn -U -s 192 -B 8192 \
		-w "$file" "$@" 2>"$file.err" &
	CAP=$!
	for i in $(seq 200); do
		grep -q listening "$file.err" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "tcpdump did not start: $(cat "$file.err")"
}
cap_stop() {
	sleep 1
	kill -INT "$CAP" 2>/dev/null || true
	wait "$CAP" 2>/dev/null || true
}
# fields FILE [-Y FILTER] -e F...: one line per packet, '|' between fields.
fields() {
	local f=$1
	shift
	tshark -r "$f" -T fields -E separator='|' -E aggregator=',' "$@" \
		2>/dev/null
}

setup_case() {
	echo "at ${SECONDS}s"
	dmsc_reset "$NS_pe1"
	dmsc_reset "$NS_h1"
}

# --- cases -----------------------------------------------------------------

test_encap_v4() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	snap "$NS_pe1"
	local e0=$S_encap_packets b0=$S_encap_bytes
	roce h1 10.0.2.1 16 100 512
	snap "$NS_pe1" 1
	# inner: 20 + 8 + 12 + 512 + 4 (ICRC) = 556 bytes
	check "(( S_encap_packets - e0 == 1600 ))" "encap_packets +$((S_encap_packets - e0))"
	check "(( S_encap_bytes - b0 == 1600 * 556 ))" "encap_bytes +$((S_encap_bytes - b0))"
	check "(( T_packets == 1600 && T_p0 == 1600 ))" "tunnel packets $T_packets/$T_p0"
	check "(( T_f0 == 16 && T_flows == 16 && S_flows == 16 ))" \
		"flows: path $T_f0, tunnel $T_flows, namespace $S_flows"
	check "[ \"\$(flows $NS_pe1 | cut -d: -f1,4 | sort | uniq -c | tr -s ' ')\" = ' 16 10.0.1.1:0' ]" \
		"flow table: $(flows "$NS_pe1")"
}

# Every field of the outer header and SRH, as tshark reads them.
test_srh_fields() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	cap_start "$NS_p1" pe1 "$T/srh.pcap" ip6
	roce h1 10.0.2.1 2 5 100
	cap_stop
	local all got want n
	all=$(fields "$T/srh.pcap" -Y udp.dstport==4791 -e ipv6.src \
		-e ipv6.dst -e ipv6.nxt -e ipv6.plen -e ipv6.routing.type \
		-e ipv6.routing.len -e ipv6.routing.segleft \
		-e ipv6.routing.srh.last_entry -e ipv6.routing.srh.flags \
		-e ipv6.routing.srh.addr -e ipv6.routing.nxt -e ip.src \
		-e ip.dst -e udp.dstport)
	got=$(sort -u <<<"$all")
	n=$(wc -l <<<"$all")
	# plen: SRH 8 + 2 x 16, inner 20 + 8 + 12 + 100 + 4
	want="$SRC|$SID_P1|43|184|4|4|1|1|0x00|$DX4,$SID_P1|4|10.0.1.1|10.0.2.1|4791"
	check "[ \"\$got\" = \"\$want\" ]" "captured '$got', wanted '$want'"
	check "(( n == 10 ))" "$n encapsulated packets on the wire, not 10"
}

test_encap_v6() {
	setup_case
	d1 tunnel add 2 src $SRC path $SID_P2,$DX6
	d1 rule add dst 2001:db8:2::/64 tunnel 2
	cap_start "$NS_p2" pe1 "$T/v6.pcap" ip6
	roce h1 2001:db8:2::1 16 100 512
	cap_stop
	local got want
	got=$(fields "$T/v6.pcap" -Y udp.dstport==4791 -e ipv6.src \
		-e ipv6.dst -e ipv6.routing.segleft \
		-e ipv6.routing.srh.addr -e ipv6.routing.nxt | sort -u)
	want="$SRC,2001:db8:1::1|$SID_P2,2001:db8:2::1|1|$DX6,$SID_P2|41"
	check "[ \"\$got\" = \"\$want\" ]" "captured '$got', wanted '$want'"
	snap "$NS_pe1" 2
	check "(( T_packets == 1600 && T_flows == 16 ))" \
		"tunnel: $T_packets packets, $T_flows flows"
}

# H.Encaps.Red: the first SID only in the DA; SL counts it, Last Entry
# does not; the SRH lists the rest.
test_encap_red() {
	setup_case
	d1 tunnel add 3 src $SRC path $SID_P3,$DX4 mode encap.red
	d1 rule add dst 10.0.2.0/24 tunnel 3
	cap_start "$NS_p3" pe1 "$T/red.pcap" ip6
	roce h1 10.0.2.1 4 50 256
	cap_stop
	local got want
	got=$(fields "$T/red.pcap" -Y udp.dstport==4791 -e ipv6.dst \
		-e ipv6.plen -e ipv6.routing.len -e ipv6.routing.segleft \
		-e ipv6.routing.srh.last_entry -e ipv6.routing.srh.addr \
		-e ipv6.routing.nxt | sort -u)
	# plen: SRH 8 + 16, inner 20 + 8 + 12 + 256 + 4
	want="$SID_P3|324|2|1|0|$DX4|4"
	check "[ \"\$got\" = \"\$want\" ]" "captured '$got', wanted '$want'"
}

# H.Encaps.Red with a single SID: no SRH at all, IPv4 right after IPv6.
test_encap_red_one() {
	setup_case
	d1 tunnel add 4 src $SRC path $DX4 mode encap.red
	d1 rule add dst 10.0.2.0/24 tunnel 4
	cap_start "$NS_p1" pe1 "$T/red1.pcap" ip6
	roce h1 10.0.2.1 4 50 256
	cap_stop
	local got
	got=$(fields "$T/red1.pcap" -Y udp.dstport==4791 -e ipv6.src \
		-e ipv6.dst -e ipv6.nxt -e ipv6.plen -e ipv6.routing.type |
		sort -u)
	check "[ \"\$got\" = \"$SRC|$DX4|4|300|\" ]" "captured '$got'"
}

# Other UDP ports and TCP pass untouched, on plain routes through p1.
test_non_roce() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	d1 rule add dst 2001:db8:2::/64 tunnel 1
	snap "$NS_pe1"
	local r0=$S_roce_packets e0=$S_encap_packets i
	cap_start "$NS_p1" pe1 "$T/plain.pcap"
	rm -f "$T/listening"
	h2 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5000)); s.listen(1); s.settimeout(30)
open(sys.argv[1], "w").close()
c, _ = s.accept(); print(len(c.recv(100)))' "$T/listening" >"$T/tcp.out" &
	local srv=$!
	for i in $(seq 200); do
		[ -e "$T/listening" ] && break
		sleep 0.1
	done
	h1 python3 -c '
import socket, time
t = socket.create_connection(("10.0.2.1", 5000), timeout=10)
t.sendall(b"hello tcp"); t.close()
for fam, dst in ((socket.AF_INET, "10.0.2.1"), (socket.AF_INET6, "2001:db8:2::1")):
    u = socket.socket(fam, socket.SOCK_DGRAM)
    for p in (4790, 4792, 53):
        u.sendto(b"x" * 40, (dst, p))
        time.sleep(0.05)'
	wait $srv
	cap_stop
	check "[ \"\$(cat $T/tcp.out)\" = 9 ]" "TCP did not get through"
	local all udp4 udp6 tcp srh
	# One pass: what each packet is, then sorted out with awk.
	all=$(fields "$T/plain.pcap" -Y '!icmp && !icmpv6 && !arp' \
		-e ip.dst -e ipv6.dst -e ipv6.routing.type -e udp.dstport \
		-e tcp.dstport)
	udp4=$(awk -F'|' '$1 == "10.0.2.1" && $2 == "" && $4 != "" { print $4 }' <<<"$all" |
		sort -n | tr '\n' ' ')
	udp6=$(awk -F'|' '$2 == "2001:db8:2::1" && $3 == "" && $4 != "" { print $4 }' <<<"$all" |
		sort -n | tr '\n' ' ')
	tcp=$(awk -F'|' '$1 == "10.0.2.1" && $2 == "" && $5 == 5000' <<<"$all" | wc -l)
	srh=$(awk -F'|' '$3 != ""' <<<"$all" | wc -l)
	check "[ '$udp4' = '53 4790 4792 ' ]" "plain IPv4 UDP on the wire: '$udp4'"
	check "[ '$udp6' = '53 4790 4792 ' ]" "plain IPv6 UDP on the wire: '$udp6'"
	check "(( tcp >= 3 ))" "plain TCP on the wire: $tcp packets"
	check "(( srh == 0 ))" "$srh packets were encapsulated"
	snap "$NS_pe1"
	check "(( S_roce_packets == r0 && S_encap_packets == e0 ))" \
		"roce_packets +$((S_roce_packets - r0)), encap_packets +$((S_encap_packets - e0))"
}

# UDP to 4791 without room for a BTH: counted, passed on plain routes.
test_malformed() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	snap "$NS_pe1"
	local m0=$S_malformed e0=$S_encap_packets r0=$S_roce_packets n
	cap_start "$NS_p1" pe1 "$T/short.pcap" udp port 4791
	h1 python3 -c '
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in (0, 4, 11):
    u.sendto(b"\0" * n, ("10.0.2.1", 4791))'
	cap_stop
	snap "$NS_pe1"
	check "(( S_malformed - m0 == 3 && S_roce_packets - r0 == 3 ))" \
		"malformed +$((S_malformed - m0)), roce_packets +$((S_roce_packets - r0))"
	check "(( S_encap_packets == e0 ))" "short ones encapsulated"
	n=$(fields "$T/short.pcap" -e frame.number | wc -l)
	check "(( n == 3 ))" "$n short packets on the plain route, not 3"
}

# The most specific rule wins; the rules of a tunnel that is down do not
# match; with none left, traffic follows normal routing.
test_rule_order() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 tunnel add 2 src $SRC path $SID_P2,$DX4
	d1 tunnel add 3 src $SRC path $SID_P3,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	d1 rule add dst 10.0.2.0/24 qpn 256-257 tunnel 2
	# QPNs 256..259: two flows in the QP range rule, two not.
	roce h1 10.0.2.1 4 10 64
	local t1 t2 t3
	snap "$NS_pe1" 1; t1=$T_packets
	snap "$NS_pe1" 2; t2=$T_packets
	check "(( t1 == 20 && t2 == 20 ))" "qpn range: tunnels 1/2 got $t1/$t2"
	# A longer destination beats a QP range; a source prefix breaks the
	# tie between equal destinations.
	d1 rule add dst 10.0.2.1/32 tunnel 3
	d1 rule add dst 10.0.2.1/32 src 10.0.1.0/24 tunnel 1
	roce h1 10.0.2.1 4 10 64
	snap "$NS_pe1" 1; t1=$T_packets
	snap "$NS_pe1" 3; t3=$T_packets
	check "(( t1 == 60 && t3 == 0 ))" "longest match: tunnels 1/3 got $t1/$t3"
	# Tunnel 1 down: its rules skip, the next most specific is tunnel 3.
	d1 tunnel change 1 state down
	roce h1 10.0.2.1 4 10 64
	snap "$NS_pe1" 3
	check "(( T_packets == 40 ))" "down tunnel not skipped: tunnel 3 got $T_packets"
	check "(( \$(d1 -j -s rule show | json_get 'sum(r[\"packets\"] for r in d)') == 120 ))" \
		"rule packet counters"
	d1 tunnel change 2 state down
	d1 tunnel change 3 state down
	snap "$NS_pe1"
	local e0=$S_encap_packets
	roce h1 10.0.2.1 4 10 64
	snap "$NS_pe1"
	check "(( S_encap_packets == e0 ))" "encapsulated while every tunnel was down"
}

# pcapflows.py A.pcap B.pcap: RoCEv2 flows (UDP source port, dest QP)
# in two captures of SRv6-encapsulated IPv4: "nA nB both pktsA pktsB".
write_pcapflows() {
	cat >"$T/pcapflows.py" <<'EOF'
import struct, sys

def flows(path):
    out = {}
    with open(path, 'rb') as f:
        e = '<' if f.read(24)[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
        while True:
            ph = f.read(16)
            if len(ph) < 16:
                return out
            pkt = f.read(struct.unpack(e + 'IIII', ph)[2])
            if pkt[12:14] != b'\x86\xdd':
                continue
            nh, off = pkt[20], 54
            if nh == 43:
                nh, off = pkt[off], off + (pkt[off + 1] + 1) * 8
            if nh != 4 or pkt[off + 9] != 17:
                continue
            off += (pkt[off] & 15) * 4
            sport, dport = struct.unpack('>HH', pkt[off:off + 4])
            if dport != 4791:
                continue
            key = (sport, int.from_bytes(pkt[off + 13:off + 16], 'big'))
            out[key] = out.get(key, 0) + 1

a, b = flows(sys.argv[1]), flows(sys.argv[2])
print(len(a), len(b), len(set(a) & set(b)), sum(a.values()), sum(b.values()))
EOF
}

# 3:1 over two lists, 2000 flows of 2 packets. Captures on the pe1-p1 and
# pe1-p2 links show that no flow has packets on both.
test_weights() {
	setup_case
	write_pcapflows
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 weight 3 \
		path $SID_P2,$DX4 weight 1
	d1 rule add dst 10.0.2.0/24 tunnel 1
	cap_start "$NS_p1" pe1 "$T/w1.pcap" ip6
	local cap1=$CAP
	cap_start "$NS_p2" pe1 "$T/w2.pcap" ip6
	roce h1 10.0.2.1 2000 2 64
	cap_stop
	CAP=$cap1 cap_stop
	snap "$NS_pe1" 1
	local f0=$T_f0 f1=$T_f1 p0=$T_p0 wire
	echo "split 3:1: list 0 $f0 flows ($((f0 * 1000 / 2000)) per mille), list 1 $f1"
	check "(( f0 + f1 == 2000 ))" "flows $f0 + $f1 != 2000"
	# 75 % +- 5 %: 1400..1600 of 2000.
	check "(( f0 >= 1400 && f0 <= 1600 ))" "list 0 has $f0 of 2000 flows"
	check "(( T_p0 == 2 * f0 && T_p1 == 2 * f1 ))" \
		"packets $T_p0/$T_p1 are not 2 x flows $f0/$f1"
	# flows on p1, on p2, on both; packets on p1, on p2
	wire=$(python3 "$T/pcapflows.py" "$T/w1.pcap" "$T/w2.pcap")
	echo "on the wire: $wire"
	check "[ '$wire' = '$f0 $f1 0 $((2 * f0)) $((2 * f1))' ]" \
		"wire: '$wire', wanted '$f0 $f1 0 $((2 * f0)) $((2 * f1))'"

	# 3:1 -> 1:1 moves 256 of 1024 buckets, all from list 0 to list 1.
	flows "$NS_pe1" >"$T/before"
	# 2000 entries take several messages: the dump resumes exactly.
	check "(( \$(sort -u $T/before | wc -l) == 2000 ))" \
		"flow dump gave $(wc -l <"$T/before") lines, $(sort -u "$T/before" | wc -l) distinct"
	d1 tunnel change 1 path $SID_P1,$DX4 weight 1 path $SID_P2,$DX4 weight 1
	flows "$NS_pe1" >"$T/after"
	local moved back
	moved=$(paste -d' ' "$T/before" "$T/after" |
		awk '{ split($1, a, ":"); split($2, b, ":"); if (a[4] != b[4]) n++ } END { print n + 0 }')
	back=$(paste -d' ' "$T/before" "$T/after" |
		awk '{ split($1, a, ":"); split($2, b, ":"); if (a[4] == 1 && b[4] == 0) n++ } END { print n + 0 }')
	snap "$NS_pe1" 1
	echo "reweight 3:1 -> 1:1: $moved of 2000 flows moved (the minimum is list 0's surplus, ~500); now $T_f0/$T_f1"
	check "(( back == 0 ))" "$back flows moved from list 1 to list 0"
	check "(( moved == f0 - T_f0 ))" "$moved moved, list 0 lost $((f0 - T_f0))"
	check "(( moved >= 400 && moved <= 600 ))" "$moved flows moved"
	check "(( T_f0 >= 900 && T_f0 <= 1100 ))" "1:1 gives list 0 $T_f0 flows"
	# The same flows again: each on its new list, in order.
	f0=$T_f0
	roce h1 10.0.2.1 2000 1 64
	snap "$NS_pe1" 1
	check "(( T_p0 == p0 + f0 ))" "list 0 got $((T_p0 - p0)) packets, not $f0"
}

# The split the issue asks for: 10,000 flows, 3:1, within 5 %.
test_split_10k() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 weight 3 \
		path $SID_P2,$DX4 weight 1
	d1 rule add dst 10.0.2.0/24 tunnel 1
	send h1 10.0.2.1 qps 10000 count 1 size 64 rate 3000
	snap "$NS_pe1" 1
	echo "split 3:1 of 10000 flows: $T_f0 / $T_f1 ($((T_f0 * 1000 / 10000)) per mille on list 0)"
	check "(( T_f0 + T_f1 == 10000 && T_p0 == T_f0 && T_p1 == T_f1 ))" \
		"flows $T_f0/$T_f1, packets $T_p0/$T_p1"
	check "(( T_f0 >= 7000 && T_f0 <= 8000 ))" "list 0 has $T_f0 of 10000"
}

# A UDP_SEGMENT sender hands pe1 one GSO packet of four RoCEv2 datagrams
# (veth keeps it whole): segmented, then each one encapsulated.
# gso_send QP...: h1 sends one UDP_SEGMENT packet of 1012-byte RoCEv2
# datagrams to h2, one per QP given; h2 counts what arrives in
# $T/udp.out, and $GSO_RX is how many skbs pe1 received for them.
gso_send() {
	local rx0 rx1 i srv
	rm -f "$T/udp.ready"
	h2 python3 -c '
import socket, sys
s = socket.socket(); s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.2.1", 4791)); s.settimeout(20)
open(sys.argv[1], "w").close()
n = []
try:
    while len(n) < int(sys.argv[2]):
        n.append(len(s.recv(2000)))
    s.settimeout(1)		# one more would be one too many
    n.append(len(s.recv(2000)))
except socket.timeout:
    pass
print(" ".join(map(str, n)))' "$T/udp.ready" $# >"$T/udp.out" &
	srv=$!
	for i in $(seq 200); do
		[ -e "$T/udp.ready" ] && break
		sleep 0.1
	done
	rx0=$(pe1 cat /sys/class/net/h1/statistics/rx_packets)
	h1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_UDP, 103, 1012)		# UDP_SEGMENT
msg = b""
for qp in map(int, sys.argv[1:]):
    bth = bytes([4, 0, 0xff, 0xff, 0, qp >> 16, (qp >> 8) & 0xff, qp & 0xff, 0, 0, 0, 0])
    msg += bth + b"x" * 1000
s.sendto(msg, ("10.0.2.1", 4791))' "$@"
	rx1=$(pe1 cat /sys/class/net/h1/statistics/rx_packets)
	wait $srv
	GSO_RX=$((rx1 - rx0))
	echo "pe1 received $GSO_RX skb(s) for $# datagrams"
}

# A UDP_SEGMENT sender hands pe1 one GSO packet of four RoCEv2 datagrams
# (veth keeps it whole): segmented, then each one encapsulated.
test_gso() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	gso_send 291 291 291 291			# QP 0x123
	snap "$NS_pe1" 1
	# Fewer skbs than datagrams: they came as one GSO packet (plus any
	# neighbour traffic on the link).
	check "(( GSO_RX < 4 ))" "no GSO packet: $GSO_RX received"
	check "(( T_p0 == 4 && T_f0 == 1 ))" "tunnel: $T_p0 packets, $T_f0 flows"
	check "[ \"\$(cat $T/udp.out)\" = '1012 1012 1012 1012' ]" \
		"h2 got: $(cat "$T/udp.out")"
}

# Each segment of a GSO packet carries its own BTH: two QPs in one GSO
# packet go where their own rules say, one through p1, one through p2,
# and the QP no rule takes leaves unencapsulated by the plain route.
test_gso_per_segment() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 tunnel add 2 src $SRC path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 qpn 256 tunnel 1
	d1 rule add dst 10.0.2.0/24 qpn 512 tunnel 2
	snap "$NS_pe1"
	local e0=$S_encap_packets
	gso_send 256 512 256 512 768
	snap "$NS_pe1" 1
	local t1p=$T_p0 t1f=$T_f0
	snap "$NS_pe1" 2
	echo "QP 256: $t1p packets, $t1f flows on tunnel 1; QP 512: $T_p0, $T_f0 on tunnel 2"
	check "(( GSO_RX < 5 ))" "no GSO packet: $GSO_RX received"
	check "(( t1p == 2 && t1f == 1 && T_p0 == 2 && T_f0 == 1 ))" \
		"tunnel 1: $t1p packets $t1f flows, tunnel 2: $T_p0 packets $T_f0 flows"
	check "(( S_encap_packets - e0 == 4 ))" \
		"encapsulated $((S_encap_packets - e0)) datagrams, not 4"
	check "[ \"\$(cat $T/udp.out)\" = '1012 1012 1012 1012 1012' ]" \
		"h2 got: $(cat "$T/udp.out")"
}

# Switch to the backup: all flows at once; back: each to its list.
test_backup() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 path $SID_P2,$DX4 \
		backup $SID_P3,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	roce h1 10.0.2.1 200 2 64
	flows "$NS_pe1" >"$T/primary"
	rm -f "$T/events"
	d1 -j monitor count 2 >"$T/events" &
	local mon=$! a0 a1
	sleep 1
	d1 tunnel switch 1 backup
	snap "$NS_pe1" 1
	a0=$T_p0 a1=$T_p1
	check "[ '$T_active' = backup ]" "active: $T_active"
	check "(( T_fb == 200 && T_f0 == 0 && T_f1 == 0 ))" \
		"flows on backup/0/1: $T_fb/$T_f0/$T_f1"
	check "(( \$(flows $NS_pe1 | grep -c ':backup$') == 200 ))" \
		"flow table: not every flow on the backup"
	roce h1 10.0.2.1 200 2 64
	snap "$NS_pe1" 1
	check "(( T_pb == 400 ))" "backup carried $T_pb packets, not 400"
	check "(( T_p0 == a0 && T_p1 == a1 ))" "primary lists carried packets on backup"
	d1 tunnel switch 1 primary
	wait $mon
	flows "$NS_pe1" >"$T/restored"
	check "diff -q $T/primary $T/restored >/dev/null" \
		"flows did not return to their lists"
	snap "$NS_pe1" 1
	check "(( T_switches == 2 ))" "switches: $T_switches"
	check "[ \"\$(tr -d ' ' <$T/events | tr '\n' ' ')\" = '{\"event\":\"tunnel-backup\",\"tunnel\":1} {\"event\":\"tunnel-primary\",\"tunnel\":1} ' ]" \
		"events: $(cat "$T/events")"
	# Removing the backup (an empty BACKUP nest) while on it is refused;
	# off it, allowed.
	d1 tunnel switch 1 backup
	raw_expect 22 "on its backup" $CMD_TUNNEL_SET "$A_TUNNEL:nest{" \
		"$TA_ID:u32=1" "$TA_BACKUP:nest{" "}" "}"
	d1 tunnel switch 1 primary
	raw_expect 0 "" $CMD_TUNNEL_SET "$A_TUNNEL:nest{" "$TA_ID:u32=1" \
		"$TA_BACKUP:nest{" "}" "}"
	snap "$NS_pe1" 1
	check "(( T_fb == -1 ))" "backup still there"
	# The CLI spelling of the same: it must send the empty nest.
	d1 tunnel change 1 backup fc00:3::e,$DX4
	snap "$NS_pe1" 1
	check "(( T_fb == 0 ))" "backup not restored by the CLI"
	d1 tunnel change 1 backup none
	snap "$NS_pe1" 1
	check "(( T_fb == -1 ))" "'tunnel change backup none' kept the backup"
}

# operstate NS DEV RE: wait until DEV's operstate in NS matches RE, and
# for the device's deactivation (carrier lost) or activation (back):
# linkwatch sets the operstate just before, under the RTNL lock it holds
# through the (de)activation, so a request that takes that lock (tc's
# dump) returns after it. A veth whose peer went down is "down" on 6.12
# (the peer is in another namespace) and "lowerlayerdown" on 6.1.
operstate() {
	local i
	for i in $(seq 100); do
		if [[ "$(ip netns exec "$1" cat "/sys/class/net/$2/operstate")" =~ ^($3)$ ]]; then
			tc -n "$1" qdisc show dev "$2" >/dev/null
			return 0
		fi
		sleep 0.1
	done
	fail "$2 is not $3: $(ip netns exec "$1" cat "/sys/class/net/$2/operstate")"
}

# P1's end of its link to pe1 back up, with the routes that went with it.
p1_link_up() {
	p1 ip link set pe1 up
	p1 sysctl -qw net.ipv6.conf.pe1.keep_addr_on_down=0
	p1 ip route replace 10.0.1.0/24 via 10.1.1.1
	p1 ip -6 route replace 2001:db8:1::/64 via fc00:11::1
}

# The far end of pe1's link to p1 goes down: pe1's p1 loses its carrier,
# linkwatch points its queues at noop_qdisc, and IPv6 keeps the route
# through it. The flows of the list through p1 go on the backup while the
# carrier is lost (the device dropped them before), the tunnel stays on
# its primary (no switch, no event: no cbfc qdisc here), and the primary
# takes them back when the device is up again.
test_backup_nocarrier() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 path $SID_P2,$DX4 \
		backup $SID_P3,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	roce h1 10.0.2.1 200 2 64
	snap "$NS_pe1" 1
	local a0=$T_p0 a1=$T_p1 drop i
	check "(( a0 > 0 && a1 > 0 && a0 + a1 == 400 && T_pb == 0 ))" \
		"before: lists carried $a0/$a1, backup $T_pb"
	drop=$(pe1 cat /sys/class/net/p1/statistics/tx_dropped)
	# p1 keeps its address; its routes through the link go with it and
	# come back (p1_link_up), for the cases after this one, whatever
	# this one's outcome.
	p1 sysctl -qw net.ipv6.conf.pe1.keep_addr_on_down=1
	# The case's own trap (ktap_run) and this link's repair.
	trap 'p1_link_up || true; cleanup_ns' EXIT
	p1 ip link set pe1 down
	operstate "$NS_pe1" p1 "down|lowerlayerdown"
	roce h1 10.0.2.1 200 2 64
	snap "$NS_pe1" 1
	check "(( T_p0 == a0 && T_pb == a0 && T_p1 - a1 == 400 - a0 ))" \
		"device down: lists carried $((T_p0 - a0))/$((T_p1 - a1)), backup $T_pb (want 0/$((400 - a0)) and $a0)"
	check "(( \$(pe1 cat /sys/class/net/p1/statistics/tx_dropped) == drop ))" \
		"p1 dropped $(( $(pe1 cat /sys/class/net/p1/statistics/tx_dropped) - drop )) packets"
	check "[ '$T_active' = primary ] && (( T_switches == 0 ))" \
		"tunnel $T_active after $T_switches switches"
	p1_link_up
	trap cleanup_ns EXIT
	operstate "$NS_pe1" p1 up
	# Neighbour discovery again through the link that came back.
	for i in $(seq 10); do
		pe1 ping -6 -c 1 -W 1 fc00:11::2 >/dev/null && break
		(( i < 10 )) || fail "p1 unreachable again"
	done
	roce h1 10.0.2.1 200 2 64
	snap "$NS_pe1" 1
	check "(( T_p0 == 2 * a0 && T_pb == a0 ))" \
		"device up: list 0 carried $((T_p0 - a0)), backup $((T_pb - a0)) more"
}

# Requests the dmsc CLI would not send, through selftests/nl_raw.
NL_RAW=$top/selftests/nl_raw
CMD_TUNNEL_NEW=3
CMD_TUNNEL_SET=4
CMD_RULE_NEW=7
A_TUNNEL=8
A_RULE=9
TA_ID=2
TA_SRC=3
TA_PATH=5
TA_BACKUP=6
PA_SEGS=2
RA_FAMILY=2
RA_DST=3
RA_DST_LEN=4
RA_QPN_LO=7
RA_QPN_HI=8
RA_TUNNEL=9
hexaddr() {
	python3 -c 'import ipaddress, sys; print("".join(ipaddress.IPv6Address(a).packed.hex() for a in sys.argv[1].split(",")))' "$1"
}
# raw_expect ERRNO MSG CMD ATTR...: nl_raw in pe1 answers errno ERRNO and
# an extack containing MSG.
raw_expect() {
	local errno=$1 msg=$2 out
	shift 2
	# nl_raw exits 0 whatever errno the kernel answered: anything else
	# is a usage error or a sanitizer's report.
	out=$(pe1 "$NL_RAW" "$@" 2>&1) || fail "nl_raw $*: exit $?: $out"
	[[ "$out" == *"errno=$errno"* ]] || fail "nl_raw $*: '$out', wanted errno=$errno"
	[[ "$out" == *"$msg"* ]] || fail "nl_raw $*: '$out', wanted '$msg'"
	echo "ok: $(tr '\n' ' ' <<<"$out")"
}
# raw_new ID SIDS ERRNO MSG: TUNNEL_NEW with one path of SIDS.
raw_new() {
	raw_expect "$3" "$4" $CMD_TUNNEL_NEW "$A_TUNNEL:nest{" "$TA_ID:u32=$1" \
		"$TA_SRC:bin=$(hexaddr $SRC)" "$TA_PATH:nest{" \
		"$PA_SEGS:bin=$(hexaddr "$2")" "}" "}"
}

# expect_err WANT CMD...: dmsc in pe1 must fail and say WANT.
expect_err() {
	local want=$1 out
	shift
	if out=$(d1 "$@" 2>&1); then
		fail "'$*' succeeded"
	fi
	[[ "$out" == *"$want"* ]] || fail "'$*' said '$out', not '$want'"
	echo "ok: $* -> $out"
}

test_bad_input() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 weight 3 path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	{ d1 -j -s tunnel show; d1 -j -s rule show; d1 -j info; } >"$T/before"
	local segs17
	segs17=$(python3 -c 'print(",".join("fc00:1::%x" % i for i in range(1, 18)))')
	# The CLI checks SIDs and prefixes too; the kernel must, on its own.
	raw_new 2 ff02::1 22 "segment 1 (ff02::1) is multicast"
	raw_new 2 $SID_P1,:: 22 "segment 2 (::) is unspecified"
	raw_new 2 ::1 22 "segment 1 (::1) is loopback"
	raw_new 2 ::ffff:10.0.0.1 22 "is IPv4-mapped"
	raw_new 2 "$segs17" 22 "too many segments: 17 > 16"
	raw_expect 22 "not a non-zero multiple of 16" $CMD_TUNNEL_NEW \
		"$A_TUNNEL:nest{" "$TA_ID:u32=2" "$TA_SRC:bin=$(hexaddr $SRC)" \
		"$TA_PATH:nest{" "$PA_SEGS:bin=00112233" "}" "}"
	raw_expect 22 "segment list missing" $CMD_TUNNEL_NEW \
		"$A_TUNNEL:nest{" "$TA_ID:u32=2" "$TA_SRC:bin=$(hexaddr $SRC)" \
		"$TA_PATH:nest{" "}" "}"
	raw_expect 22 "invalid prefix: host bits set beyond /24" $CMD_RULE_NEW \
		"$A_RULE:nest{" "$RA_FAMILY:u8=2" "$RA_DST:bin=0a000201" \
		"$RA_DST_LEN:u8=24" "$RA_TUNNEL:u32=1" "}"
	raw_expect 22 "address of 16 bytes for a family of 4" $CMD_RULE_NEW \
		"$A_RULE:nest{" "$RA_FAMILY:u8=2" "$RA_DST:bin=$(hexaddr ::1)" \
		"$RA_TUNNEL:u32=1" "}"
	raw_expect 22 "empty qpn range: 9 > 8" $CMD_RULE_NEW \
		"$A_RULE:nest{" "$RA_FAMILY:u8=2" "$RA_DST:bin=0a000200" \
		"$RA_DST_LEN:u8=24" "$RA_QPN_LO:u32=9" "$RA_QPN_HI:u32=8" \
		"$RA_TUNNEL:u32=1" "}"
	# A change with one bad path changes nothing, weights included.
	raw_expect 22 "segment 1 (ff0e::1) is multicast" $CMD_TUNNEL_SET \
		"$A_TUNNEL:nest{" "$TA_ID:u32=1" "$TA_PATH:nest{" \
		"$PA_SEGS:bin=$(hexaddr $SID_P1)" "}" "$TA_PATH:nest{" \
		"$PA_SEGS:bin=$(hexaddr ff0e::1)" "}" "}"
	# Through the CLI: what only the kernel can know.
	expect_err "tunnel 1 exists" tunnel add 1 src $SRC path $SID_P1
	expect_err "tunnel 9 does not exist" rule add dst 10.0.3.0/24 tunnel 9
	expect_err "a rule with this match exists" rule add dst 10.0.2.0/24 tunnel 1
	expect_err "tunnel has no backup path" tunnel switch 1 backup
	expect_err "tunnel 1 is in use by 1 rule" tunnel del 1
	expect_err "tunnel 7 does not exist" tunnel del 7
	expect_err "no such rule" rule del dst 10.0.9.0/24
	# And what the CLI refuses itself.
	expect_err "multicast" tunnel add 2 src $SRC path ff02::1
	expect_err "16" tunnel add 2 src $SRC path "$segs17"
	expect_err "host bits" rule add dst 10.0.2.1/24 tunnel 1
	{ d1 -j -s tunnel show; d1 -j -s rule show; d1 -j info; } >"$T/after"
	check "diff $T/before $T/after" "state changed"
}

# Too big once encapsulated: dropped, counted, and the sender told the
# MTU that fits (outer MTU 1400 less 40 + 8 + 2 x 16 = 1320).
test_mtu() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 tunnel add 2 src $SRC path $SID_P1,$DX6
	d1 rule add dst 10.0.2.0/24 tunnel 1
	d1 rule add dst 2001:db8:2::/64 tunnel 2
	pe1 ip link set p1 mtu 1400
	p1 ip link set pe1 mtu 1400
	snap "$NS_pe1"
	local m0=$S_drop_mtu e0=$S_encap_packets
	cap_start "$NS_h1" e0 "$T/icmp.pcap" icmp or icmp6
	# 20 + 8 + 12 + 1300 + 4 = 1344 bytes inner (40 more for IPv6):
	# 1424 and 1444 outer.
	h1 "$RG" send dst 10.0.2.1 qps 1 count 1 size 1300 json /dev/null \
		>/dev/null 2>&1 || true
	h1 "$RG" send dst 2001:db8:2::1 qps 1 count 1 size 1300 json /dev/null \
		>/dev/null 2>&1 || true
	# Just fits: 1320 inner, 1400 outer, delivered.
	roce h1 10.0.2.1 1 3 1276
	cap_stop
	pe1 ip link set p1 mtu 1500
	p1 ip link set pe1 mtu 1500
	h1 ip route flush cache
	h1 ip -6 route flush cache
	snap "$NS_pe1"
	check "(( S_drop_mtu - m0 == 2 ))" "drop_mtu +$((S_drop_mtu - m0)), not 2"
	check "(( S_encap_packets - e0 == 3 ))" "encap_packets +$((S_encap_packets - e0))"
	local all got4 got6
	all=$(fields "$T/icmp.pcap" -Y 'icmp.type==3 || icmpv6.type==2' \
		-e ip.src -e icmp.code -e icmp.mtu -e icmpv6.mtu)
	got4=$(awk -F'|' '$3 != "" { print $1 "|" $2 "|" $3 }' <<<"$all" | sort -u)
	got6=$(awk -F'|' '$4 != "" { print $4 }' <<<"$all" | sort -u)
	check "[ '$got4' = '10.0.1.254,10.0.1.1|4|1320' ]" "ICMP frag needed to h1: '$got4'"
	check "[ '$got6' = '1320' ]" "ICMPv6 packet too big to h1: '$got6'"
}

# The outer packet is routed through xfrm, as a socket's would be: an
# IPsec policy that blocks the SRv6 underlay stops our packets too, even
# with the route to the first segment already cached.
test_xfrm_policy() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	roce h1 10.0.2.1 1 10 64
	pe1 ip -6 xfrm policy add src $SRC/128 dst $SID_P1/128 dir out action block
	snap "$NS_pe1"
	local n0=$S_drop_noroute e0=$S_encap_packets
	send h1 10.0.2.1 qps 1 count 10 size 64 rate 3000
	snap "$NS_pe1"
	pe1 ip -6 xfrm policy del src $SRC/128 dst $SID_P1/128 dir out
	echo "blocked by policy: drop_noroute +$((S_drop_noroute - n0)), encap +$((S_encap_packets - e0))"
	check "(( S_drop_noroute - n0 == 10 && S_encap_packets == e0 ))" \
		"policy ignored: drop_noroute +$((S_drop_noroute - n0)), encap +$((S_encap_packets - e0))"
	roce h1 10.0.2.1 1 10 64
}

# The host is the node: dmsc on h1 encapsulates what h1 sends.
test_host_originated() {
	setup_case
	dh tunnel add 1 src 2001:db8:1::1 path $SID_P2,$DX4
	dh rule add dst 10.0.2.0/24 tunnel 1
	snap "$NS_pe1"
	local e0=$S_encap_packets
	cap_start "$NS_p2" pe1 "$T/host.pcap" ip6
	roce h1 10.0.2.1 8 100 512
	cap_stop
	snap "$NS_pe1"
	check "(( S_encap_packets == e0 ))" "pe1 encapsulated too"
	snap "$NS_h1" 1
	check "(( S_encap_packets == 800 && T_p0 == 800 && T_f0 == 8 ))" \
		"h1: encap_packets $S_encap_packets, path packets $T_p0, flows $T_f0"
	local got
	got=$(fields "$T/host.pcap" -Y udp.dstport==4791 -e ipv6.src -e ipv6.dst \
		-e ipv6.routing.srh.addr -e ip.src | sort -u)
	check "[ \"\$got\" = \"2001:db8:1::1|$SID_P2|$DX4,$SID_P2|10.0.1.1\" ]" \
		"captured '$got'"
	dmsc_reset "$NS_h1"
}

# A bounded table counts what it could not hold; idle flows age out.
test_flow_table() {
	setup_case
	# Set before the first flow: the ageing work runs every half timeout.
	# Longer on KASAN, where sending and reading back took long enough
	# for the first flows to age between the two counts (10 and 0).
	local timeout
	timeout=$(slow_ms 6000)
	d1 set flow_limit 10 flow_timeout "$timeout"
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	snap "$NS_pe1"
	local u0=$S_flows_untracked
	roce h1 10.0.2.1 20 3 64
	snap "$NS_pe1" 1
	check "(( S_flows == 10 && T_flows == 10 ))" \
		"flows: namespace $S_flows, tunnel $T_flows, not 10"
	# Once per packet of a flow that found the table full: 10 x 3.
	check "(( S_flows_untracked - u0 == 30 ))" \
		"flows_untracked +$((S_flows_untracked - u0)), not 30"
	d1 set flow_limit 65536
	sleep $((timeout * 5 / 3000))
	snap "$NS_pe1" 1
	check "(( S_flows == 0 && T_flows == 0 ))" \
		"flows did not age out: namespace $S_flows, tunnel $T_flows"
	roce h1 10.0.2.1 5 1 64
	snap "$NS_pe1"
	check "(( S_flows == 5 ))" "$S_flows flows tracked, not 5"
	d1 flow flush
	snap "$NS_pe1" 1
	check "(( S_flows == 0 && T_flows == 0 ))" "flush left flows"
}

# Start roce-gen in the background for SECS seconds.
bg_traffic() {
	h1 taskset -c 0 "$RG" send dst 10.0.2.1 qps 64 duration "$1" \
		rate 3000 size 256 json /dev/null >/dev/null 2>&1 &
	BG=$!
	sleep 1
}

test_del_under_traffic() {
	setup_case
	local i
	bg_traffic 6
	for i in 1 2 3; do
		d1 tunnel add 1 src $SRC path $SID_P1,$DX4 path $SID_P2,$DX4
		d1 rule add dst 10.0.2.0/24 tunnel 1
		sleep 0.5
		d1 tunnel change 1 path $SID_P3,$DX4
		sleep 0.3
		d1 rule del dst 10.0.2.0/24
		d1 tunnel del 1
	done
	wait $BG || true
	snap "$NS_pe1"
	check "(( S_flows == 0 && S_tunnels == 0 && S_rules == 0 ))" \
		"left: $S_flows flows, $S_tunnels tunnels, $S_rules rules"
	dmesg_clean || fail "kernel log has warnings"
}

test_rmmod_under_traffic() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	bg_traffic 4
	rmmod dmsc
	check "[ ! -d /sys/module/dmsc ]" "module still loaded"
	wait $BG || true
	dmesg_clean || fail "kernel log has warnings"
	insmod "$DMSC_KO"
}

test_netns_under_traffic() {
	setup_case
	d1 tunnel add 1 src $SRC path $SID_P1,$DX4 path $SID_P2,$DX4
	d1 rule add dst 10.0.2.0/24 tunnel 1
	bg_traffic 4
	ip netns del "$NS_pe1"
	NS_pe1=
	wait $BG || true
	sleep 2
	dmesg_clean || fail "kernel log has warnings"
}

test_dmesg() {
	rmmod dmsc
	dmesg_clean || fail "kernel log has warnings (see above)"
	insmod "$DMSC_KO"
}

for tool in "$DMSC" "$RG" tshark tcpdump jq; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool"; exit 4; }
done
load_module
dmesg_mark
topo_up
cases=(
	test_encap_v4 "H.Encaps, IPv4 inner: 16 flows arrive complete, in order"
	test_srh_fields "outer IPv6 and SRH fields on the wire"
	test_encap_v6 "H.Encaps, IPv6 inner through End.DX6"
	test_encap_red "H.Encaps.Red: first SID in the DA only"
	test_encap_red_one "H.Encaps.Red with one SID: no SRH"
	test_non_roce "other UDP ports and TCP are not encapsulated"
	test_malformed "UDP/4791 too short for a BTH passes, counted"
	test_rule_order "most specific rule wins; down tunnels do not match"
	test_weights "3:1 split of 2000 flows, sticky; reweight moves the minimum"
	test_split_10k "3:1 split of 10000 flows within 5 %"
	test_gso "a GSO packet is segmented, each segment encapsulated"
	test_gso_per_segment "each GSO segment is classified by its own QP"
	test_backup "backup takes every flow at once, primary restores them"
	test_backup_nocarrier "a list whose first hop lost its carrier: its flows on the backup until the device is up"
	test_bad_input "bad input is refused with a message, nothing changes"
	test_mtu "too big once encapsulated: dropped, sender told the MTU"
	test_xfrm_policy "an IPsec policy on the underlay applies to the outer packet"
	test_host_originated "host-originated RoCEv2 encapsulated on the host"
	test_flow_table "flow table is bounded and ages out"
	test_del_under_traffic "rules and tunnels deleted under traffic"
	test_rmmod_under_traffic "rmmod under traffic"
	test_netns_under_traffic "namespace deleted under traffic"
	test_dmesg "unload at the end, kernel log clean"
)
# The module's own logic, the same on any kernel: the weighted split (its
# hash and tables), the flow table's bound and ageing, the switch to the
# backup and back (also at a first hop's carrier loss), what the hook
# leaves alone or counts as malformed, the SRH it writes (the older
# kernels' seg6local reads it in every encap case) and the reduced
# form (on the newest only), deletes under traffic (rmmod and netns
# deletion under traffic stay: their teardown order is the kernel's).
# The carrier's loss stays on every kernel: linkwatch and IPv6's routes
# on a device without carrier are the kernel's.
NEWEST_CASES="test_weights test_flow_table test_backup test_non_roce
	test_malformed test_srh_fields test_encap_red test_del_under_traffic"
# make check-deep runs these too (selftests/lib.sh): the 10,000-flow split,
# and cases mostly covered by another (rules.sh for precedence, test_gso,
# test_encap_red, on the newest, for the reduced encapsulation).
DEEP_CASES="test_rule_order test_split_10k test_gso_per_segment test_xfrm_policy
	test_encap_red_one"
# DMSC_SRV6_CASES="test_a test_b": run only those (while debugging).
cases_only cases "${DMSC_SRV6_CASES:-}"
ktap_run "${cases[@]}"
