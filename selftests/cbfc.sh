#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cbfc qdisc and its credit sessions, with real RoCEv2 from roce-gen:
#
#   +--------- a ----------+            +--------- b ---------+
#   | roce-gen send        |            | roce-gen sink       |
#   | 10.9.0.1   va [cbfc] |---veth-----| vb 10.9.0.2         |
#   | dmsc cbfc session .. |            | (rx counted on vb)  |
#   +----------------------+            +---------------------+
#
# One RoCEv2 flow (10.9.0.1:50000 > 10.9.0.2, QP 256) has a credit session
# on a; the qdisc on va holds its packets until credit covers them. b's vb
# counts what arrives (IPv6 off, a static neighbour: nothing else crosses).
# The test reads the packet length L off the qdisc's backlog, then gives
# credit in multiples of L and counts packets at the receiver.
# a, b (mkns) and top (lib.sh) are set by lib.sh:
# shellcheck disable=SC2154
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
NL_RAW=$top/selftests/nl_raw
export TC_LIB_DIR=$top/tools/tc
A=10.9.0.1
B=10.9.0.2
FLOW=(src "$A" dst "$B" sport 50000 qpn 256)
T=

# uapi/linux/dmsc.h, for nl_raw
DMSC_CMD_SESSION_NEW=13
DMSC_CMD_CREDIT=16
DMSC_CMD_SESSION_SET=17
DMSC_A_SESSION=12

an() { ip netns exec "$a" "$@"; }
bn() { ip netns exec "$b" "$@"; }
cbfc() { dns "$a" cbfc "$@"; }

# The veths' MACs, fixed: the static neighbours need no look-up. Set-ups
# use ip -batch, one ip a namespace: each process costs about 0.1 s in a
# TCG VM, and every case builds its namespaces anew.
MAC_VA=02:00:00:00:0a:01
MAC_VA2=02:00:00:00:0a:02
MAC_VB=02:00:00:00:0b:01
MAC_VB2=02:00:00:00:0b:02
MAC_VS=02:00:00:00:0b:03
MAC_SV=02:00:00:00:0c:01

# setup [TC OPTIONS...]: a and b joined by a veth, cbfc on a's end.
setup() {
	local ns
	T=$(mktemp -d)
	mkns a b
	for ns in "$a" "$b"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	# b's neighbour a too: its ARP for a (to answer with ICMP) would
	# bring a's reply to vb.
	ip -n "$a" -batch - <<-EOF
	link add va address $MAC_VA type veth peer name vb address $MAC_VB netns $b
	addr add $A/24 dev va
	link set va up
	neigh replace $B lladdr $MAC_VB dev va nud permanent
	EOF
	ip -n "$b" -batch - <<-EOF
	addr add $B/24 dev vb
	link set vb up
	neigh replace $A lladdr $MAC_VA dev vb nud permanent
	EOF
	tc -n "$a" qdisc add dev va root handle 1: cbfc "$@"
}

case_cleanup() {
	[ -z "${CAP:-}" ] || kill "$CAP" 2>/dev/null || true
	[ -z "${SINK:-}" ] || kill "$SINK" 2>/dev/null || true
	[ -z "${MON:-}" ] || kill "$MON" 2>/dev/null || true
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

rx() { bn cat /sys/class/net/vb/statistics/rx_packets; }

# qd KEY [DEV]: a counter, xstat or option of va's (DEV's) qdisc, from
# tc -s -j.
qd() {
	tc -n "$a" -s -j qdisc show dev "${2:-va}" | num "$1"
}

# sess FIELD: a field of the flow's session, from dmsc -j.
sess() {
	dns "$a" -j cbfc session show "${FLOW[@]}" | num "$1"
}

# send COUNT [FIRST_PSN] [QPN] [QPS]: COUNT RoCEv2 packets of each of
# QPS QPs (1; QPN and sport 50000 the first, then one up each), unpaced.
send() {
	an "$RG" send dst $B qps "${4:-1}" sport 50000 qpn "${3:-256}" \
		count "$1" psn "${2:-0}" rate 0 size 1024 json "$T/send.json" \
		2>"$T/send.err" || fail "roce-gen send: $(cat "$T/send.err")"
}

# arrived RX0 N: exactly N packets more than RX0 reach b, and no more
# within half a second.
arrived() {
	local want=$(($1 + $2))
	wait_until "(( \$(rx) >= $want ))" || true
	sleep 0.5
	local got=$(($(rx) - $1))
	check "(( got == $2 ))" "$got packets arrived, not $2"
	echo "arrived: $got (want $2)"
}

sink_start() {
	rm -f "$T/ready"
	# Not through bn(): $! must be roce-gen itself (ip netns exec execs).
	ip netns exec "$b" "$RG" sink bind $B json "$T/sink.json" \
		ready-file "$T/ready" 2>"$T/sink.err" &
	SINK=$!
	wait_until "[ -e '$T/ready' ]" || fail "the sink did not start"
}

# sink_stop: stop the sink (in this shell: it is our child); its totals
# go to SINK_TOTALS as "packets gaps out-of-order".
sink_stop() {
	kill -TERM "$SINK"
	wait "$SINK" || fail "sink: $(cat "$T/sink.err")"
	SINK=
	# jq -n with input: an empty or incomplete file is an error, as
	# python's KeyError was.
	SINK_TOTALS=$(jq -rn 'input.totals | [.packets, .psn_gaps, .out_of_order] |
		if any(. == null) then error("incomplete totals") else join(" ") end' \
		"$T/sink.json") || fail "cannot read the sink's totals"
}

# pktlen: the length the qdisc counts for one packet of send's (1024-byte
# payload): a probe QP's session with no credit holds one packet, its
# backlog is the length; deleting the session lets the packet go.
PROBE=(src "$A" dst "$B" sport 50000 qpn 999)
probe_sent() {
	dns "$a" -j cbfc session show "${PROBE[@]}" | num sent
}

pktlen() {
	# Credit is counted in the RoCEv2 packet's IP length: what a probe
	# session is charged for one packet.
	cbfc session add "${PROBE[@]}" nexthop $B credit 100000
	send 1 0 999
	wait_until "(( \$(probe_sent) > 0 ))" || fail "the probe did not leave"
	LEN=$(probe_sent)
	cbfc session del "${PROBE[@]}"
	check "(( LEN > 1024 ))" "probe length $LEN"
}

# The session's credit is the next hop's reservation: available starts at
# it and never exceeds it; freed is a running total that cannot pass sent.
test_credit_cumulative() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	sink_start
	pktlen
	local rx0 len=$LEN
	echo "packet length at the qdisc: $len"
	rx0=$(rx)
	# A reservation of 3.5 packets: exactly 3 leave, nothing is dropped.
	cbfc session add "${FLOW[@]}" nexthop $B credit $((len * 7 / 2))
	send 10
	arrived "$rx0" 3
	check "(( \$(qd qlen) == 7 && \$(qd drops) == 0 ))" \
		"qlen $(qd qlen) drops $(qd drops), not 7 and 0"
	check "(( \$(qd stalled_flows) == 1 && \$(qd credit_stalls) >= 1 ))" \
		"stalled_flows $(qd stalled_flows) credit_stalls $(qd credit_stalls)"
	check "(( \$(sess sent) == 3 * len && \$(sess available) == len / 2 ))" \
		"sent $(sess sent) available $(sess available)"
	# The next hop freed 2 packets: 2 more.
	cbfc credit "${FLOW[@]}" freed $((len * 2))
	arrived "$rx0" 5
	# The same total again, and an older one: no credit.
	cbfc credit "${FLOW[@]}" freed $((len * 2))
	cbfc credit "${FLOW[@]}" freed "$len"
	arrived "$rx0" 5
	check "(( \$(sess stale) == 2 && \$(sess updates) == 1 ))" \
		"stale $(sess stale) updates $(sess updates), not 2 and 1"
	# More than was sent (5 packets) cannot have been freed: absurd,
	# ignored, and so is a total near 2^56 (once refused by the policy).
	cbfc credit "${FLOW[@]}" freed $((len * 6))
	cbfc credit "${FLOW[@]}" freed 72057594037927937
	arrived "$rx0" 5
	check "(( \$(sess absurd) == 2 && \$(sess updates) == 1 ))" \
		"absurd $(sess absurd) updates $(sess updates), not 2 and 1"
	check "(( \$(sess available) == len / 2 ))" \
		"available $(sess available), not $((len / 2))"
	# All 5 freed: the whole reservation again, 3 more, never above it.
	cbfc credit "${FLOW[@]}" freed $((len * 5))
	arrived "$rx0" 8
	check "(( \$(sess available) == len / 2 && \$(sess freed) == 5 * len ))" \
		"available $(sess available) freed $(sess freed)"
	# The session goes: its waiting packets leave without credit.
	cbfc session del "${FLOW[@]}"
	arrived "$rx0" 10
	sink_stop
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	check "[ '$SINK_TOTALS' = '11 0 0' ]" "the sink saw $SINK_TOTALS, not 11 0 0"
	check "(( \$(qd drops) == 0 ))" "drops $(qd drops)"
	dmesg_clean || fail "kernel log"
}

# Delta mode: each update adds, a repeated one too (credit the next hop
# never gave), up to what was sent.
test_credit_delta() {
	trap case_cleanup EXIT
	setup
	pktlen
	local rx0 len=$LEN out
	cbfc session add "${FLOW[@]}" nexthop $B mode delta credit $((len * 2))
	rx0=$(rx)
	send 10
	arrived "$rx0" 2
	cbfc credit "${FLOW[@]}" delta $((len * 2))
	arrived "$rx0" 4
	cbfc credit "${FLOW[@]}" delta $((len * 2))
	arrived "$rx0" 6
	check "(( \$(sess updates) == 2 && \$(sess sent) == 6 * len ))" \
		"updates $(sess updates) sent $(sess sent)"
	# A delta past what was sent is absurd here too.
	cbfc credit "${FLOW[@]}" delta $((len * 10))
	arrived "$rx0" 6
	check "(( \$(sess absurd) == 1 ))" "absurd $(sess absurd), not 1"
	# A delta session refuses a total, and says so.
	if out=$(cbfc credit "${FLOW[@]}" freed 100000 2>&1); then
		fail "freed accepted for a delta session"
	fi
	echo "$out"
	check "[[ '$out' == *'returns deltas: delta, not freed'* ]]" \
		"wrong error: $out"
	arrived "$rx0" 6
}

# Traffic without credit control passes while a credited flow waits.
# udp3 sends 3 UDP datagrams that are not RoCEv2 (to b's discard port).
udp3() {
	an python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(3):
    s.sendto(b"x" * 100, ("'$B'", 9))'
}

test_plain_band() {
	trap case_cleanup EXIT
	setup
	cbfc session add "${FLOW[@]}" nexthop $B
	local rx0
	send 10
	wait_until "(( \$(qd qlen) == 10 ))" || fail "not 10 queued"
	rx0=$(rx)
	# Plain UDP, and RoCEv2 of a QP that has no session.
	udp3
	send 5 0 300
	arrived "$rx0" 8
	check "(( \$(qd plain_packets) == 8 ))" \
		"plain_packets $(qd plain_packets), not 8"
	check "(( \$(qd qlen) == 10 && \$(qd credited_packets) == 0 ))" \
		"the credited flow moved: qlen $(qd qlen)"
}

# A flow whose queue empties is kept, idle (sch_cbfc.c): its next packets
# are credited to its session without a lookup. A session deleted and
# added again while the flow is idle takes them; once the session is
# deleted for good they are plain and the flow goes, as when the flow was
# freed with its last packet.
test_idle_flow() {
	trap case_cleanup EXIT
	setup
	cbfc session add "${FLOW[@]}" nexthop $B credit 1000000
	local rx0
	rx0=$(rx)
	send 5
	arrived "$rx0" 5
	check "(( \$(qd credited_packets) == 5 && \$(qd flows) == 0 && \$(qd idle_flows) == 1 && \$(sess packets) == 5 ))" \
		"credited_packets $(qd credited_packets) flows $(qd flows) idle_flows $(qd idle_flows) session packets $(sess packets), not 5 0 1 5"
	send 5 5
	arrived "$((rx0 + 5))" 5
	check "(( \$(qd credited_packets) == 10 && \$(sess packets) == 10 && \$(qd idle_flows) == 1 ))" \
		"the idle flow: credited_packets $(qd credited_packets) session packets $(sess packets) idle_flows $(qd idle_flows), not 10 10 1"
	# Deleted and added again with the flow idle: the new session.
	cbfc session del "${FLOW[@]}"
	cbfc session add "${FLOW[@]}" nexthop $B credit 1000000
	send 4 10
	arrived "$((rx0 + 10))" 4
	check "(( \$(qd credited_packets) == 14 && \$(sess packets) == 4 && \$(qd idle_flows) == 1 ))" \
		"added again: credited_packets $(qd credited_packets) session packets $(sess packets) idle_flows $(qd idle_flows), not 14 4 1"
	cbfc session del "${FLOW[@]}"
	send 3 14
	arrived "$((rx0 + 14))" 3
	check "(( \$(qd credited_packets) == 14 && \$(qd plain_packets) == 3 && \$(qd idle_flows) == 0 ))" \
		"session deleted: credited_packets $(qd credited_packets) plain_packets $(qd plain_packets) idle_flows $(qd idle_flows), not 14 3 0"
	check "(( \$(qd drops) == 0 && \$(qd qlen) == 0 ))" \
		"drops $(qd drops) qlen $(qd qlen)"
}

# Idle flows are bounded: at most `limit` of them once a new flow is made
# (21 here: 20 and the newest), those idle 3 s go as new flows come (up
# to 8 each), and a change that lowers the limit trims them at once.
test_idle_gc() {
	trap case_cleanup EXIT
	setup limit 20 flow_limit 5 plain_limit 10
	local i rx0 idle
	for ((i = 0; i < 31; i++)); do
		echo "cbfc session add src $A dst $B sport $((50000 + i)) qpn $((256 + i)) nexthop $B credit 1000000"
	done >"$T/add"
	"$DMSC" -n "$a" -batch "$T/add" || fail "dmsc -batch"
	rx0=$(rx)
	an "$RG" send dst $B qps 30 sport 50000 qpn 256 count 1 rate 0 \
		size 64 json /dev/null 2>"$T/send.err" || fail "roce-gen: $(cat "$T/send.err")"
	arrived "$rx0" 30
	idle=$(qd idle_flows)
	echo "30 flows of one packet each, limit 20: idle_flows $idle"
	check "(( \$(qd credited_packets) == 30 && idle >= 11 && idle <= 21 ))" \
		"credited_packets $(qd credited_packets) idle_flows $idle, not 30 and 11..21"
	# Past CBFC_FLOW_IDLE: a new flow frees 8 of the oldest.
	sleep 3.3
	an "$RG" send dst $B qps 1 sport 50030 qpn 286 count 1 rate 0 \
		size 64 json /dev/null 2>"$T/send.err" || fail "roce-gen: $(cat "$T/send.err")"
	arrived "$((rx0 + 30))" 1
	echo "3.3 s later, a new flow: idle_flows $(qd idle_flows)"
	check "(( \$(qd idle_flows) == idle - 8 + 1 ))" \
		"idle_flows $(qd idle_flows), not $((idle - 8 + 1))"
	idle=$(( idle - 7 < 12 ? idle - 7 : 12 ))
	tc -n "$a" qdisc change dev va root cbfc limit 12
	check "(( \$(qd idle_flows) == idle && \$(qd drops) == 0 ))" \
		"limit 12: idle_flows $(qd idle_flows) drops $(qd drops), not $idle and 0"
}

# The flow hash has limit / 2 buckets (1,024 to 65,536): a change of limit
# that resizes it moves every flow, idle or waiting for credit, into the
# new buckets at once. A flow left behind would be made again at its next
# packet (a waiting flow would get a second queue: flows 2) and leak with
# the old buckets.
test_hash_resize() {
	trap case_cleanup EXIT
	setup limit 40 flow_limit 20 plain_limit 10
	sink_start
	pktlen
	local i rx0 len=$LEN lim cp
	# pktlen deleted the probe's session: its flow goes at the next new
	# flow, so none can age past CBFC_FLOW_IDLE during the case.
	rx0=$(rx)
	# One flow waiting: a reservation of 3.5 packets, 10 sent.
	cbfc session add "${FLOW[@]}" nexthop $B credit $((len * 7 / 2))
	send 10
	arrived "$rx0" 3
	for ((i = 0; i < 10; i++)); do
		echo "cbfc session add src $A dst $B sport $((50000 + i)) qpn $((400 + i)) nexthop $B credit 1000000"
	done >"$T/add"
	"$DMSC" -n "$a" -batch "$T/add" || fail "dmsc -batch"
	send 1 0 400 10
	arrived "$((rx0 + 3))" 10
	check "(( \$(qd idle_flows) == 10 && \$(qd qlen) == 7 && \$(qd stalled_flows) == 1 ))" \
		"idle_flows $(qd idle_flows) qlen $(qd qlen) stalled_flows $(qd stalled_flows), not 10 7 1"
	rx0=$((rx0 + 13))
	# 1,024 buckets to 65,536 and back: each time the flows are found,
	# the waiting one too (a packet of its QP joins its queue; a flow
	# lost from the hash would be made again, a second queue). Idle
	# flows that were lost could go unnoticed: a new flow frees those
	# idle 3 s, and the resize can take that long under TCG.
	local k=0
	for lim in 200000 40; do
		tc -n "$a" qdisc change dev va root cbfc limit $lim ||
			fail "tc qdisc change limit $lim"
		check "(( \$(qd limit) == lim && \$(qd idle_flows) == 10 && \$(qd qlen) == 7 + k ))" \
			"limit $lim: limit $(qd limit) idle_flows $(qd idle_flows) qlen $(qd qlen), not $lim 10 $((7 + k))"
		cp=$(qd credited_packets)
		send 1 "$((k + 1))" 400 10
		send 1 "$((10 + k))"
		k=$((k + 1))
		arrived "$rx0" 10
		rx0=$((rx0 + 10))
		check "(( \$(qd idle_flows) == 10 && \$(qd credited_packets) == cp + 10 && \$(qd flows) == 1 && \$(qd qlen) == 7 + k ))" \
			"limit $lim, a packet of each flow: idle_flows $(qd idle_flows) credited_packets $(qd credited_packets) flows $(qd flows) qlen $(qd qlen), not 10 $((cp + 10)) 1 $((7 + k))"
	done
	# The waiting flow: still its session's, found by its credit.
	cbfc credit "${FLOW[@]}" freed $((len * 2))
	arrived "$rx0" 2
	cbfc session del "${FLOW[@]}"
	arrived "$((rx0 + 2))" 7
	check "(( \$(qd qlen) == 0 && \$(qd drops) == 0 ))" \
		"qlen $(qd qlen) drops $(qd drops), not 0 and 0"
	sink_stop
	local pk gaps ooo
	read -r pk gaps ooo <<<"$SINK_TOTALS"
	echo "sink: $pk packets, $gaps PSN gaps, $ooo out of order"
	check "(( pk == 43 && gaps == 0 && ooo == 0 ))" \
		"sink: $pk packets $gaps gaps $ooo out of order, not 43 0 0"
}

# limit, flow_limit and plain_limit drop, each counted by its reason;
# waiting for credit never does.
test_limits() {
	trap case_cleanup EXIT
	# Credited flows' room: limit - plain_limit = 6.
	setup limit 12 flow_limit 6 plain_limit 6
	cbfc session add "${FLOW[@]}" nexthop $B
	send 10
	wait_until "(( \$(qd qlen) == 6 ))" || fail "not 6 queued"
	check "(( \$(qd drop_limit) == 4 && \$(qd drops) == 4 ))" \
		"drop_limit $(qd drop_limit) drops $(qd drops), not 4"
	tc -n "$a" qdisc change dev va root cbfc limit 100 flow_limit 8
	send 10 10
	check "(( \$(qd qlen) == 8 && \$(qd drop_flow_limit) == 8 ))" \
		"qlen $(qd qlen) drop_flow_limit $(qd drop_flow_limit), not 8 and 8"
	# The plain band, slowed to 100 bytes/s so that it queues.
	tc -n "$a" qdisc change dev va root cbfc plain_limit 3 rate 800bit
	send 10 0 300
	# One reading of the three: under load a packet may leave between
	# separate readings (one each 10.8 s at this rate).
	local q d p j
	j=$(tc -n "$a" -s -j qdisc show dev va)
	q=$(num plain_qlen <<<"$j") d=$(num drop_plain_limit <<<"$j")
	p=$(num plain_packets <<<"$j")
	echo "plain band: queued $q dropped $d sent $p"
	check "(( q == 3 && d >= 1 && q + d + p == 10 ))" \
		"plain band: queued $q dropped $d sent $p"
	check "(( \$(qd drop_limit) == 4 && \$(qd drop_flow_limit) == 8 ))" \
		"other reasons moved"
	check "[ \"\$(qd rate)\" = 100 ]" \
		"rate $(qd rate) bytes/s, not 100"
}

# Credited flows waiting for credit fill their room, limit - plain_limit,
# and no more: the plain band keeps its own (review finding 1). Two
# sessions with no credit, 10 packets each, limit 20 and plain_limit 10.
test_plain_room() {
	trap case_cleanup EXIT
	setup limit 20 flow_limit 10 plain_limit 10
	cbfc session add "${FLOW[@]}" nexthop $B
	cbfc session add src "$A" dst "$B" sport 50000 qpn 257 nexthop $B
	send 10 0 256
	send 10 0 257
	wait_until "(( \$(qd qlen) == 10 ))" || fail "not 10 queued"
	check "(( \$(qd drop_limit) == 10 && \$(qd flows) == 1 ))" \
		"drop_limit $(qd drop_limit) flows $(qd flows), not 10 and 1"
	local rx0
	rx0=$(rx)
	udp3
	arrived "$rx0" 3
	check "(( \$(qd plain_packets) == 3 && \$(qd drop_plain_limit) == 0 ))" \
		"plain_packets $(qd plain_packets), not 3"
	check "(( \$(qd drop_limit) == 10 && \$(qd qlen) == 10 ))" \
		"drop_limit $(qd drop_limit) qlen $(qd qlen), not 10 and 10"
	# No room left for credited flows is refused.
	local out
	out=$(tc -n "$a" qdisc change dev va root cbfc plain_limit 20 2>&1) &&
		fail "plain_limit = limit accepted"
	check "[[ '$out' == *'plain_limit must be below limit'* ]]" "tc said: $out"
}

# Only the session that got credit has its flows looked at again: two
# sessions wait, credit for one re-stalls that one alone (credit_stalls
# counts waits; a recheck of every stalled flow would count both).
test_wake_session() {
	trap case_cleanup EXIT
	setup
	pktlen
	local len=$LEN rx0 c0
	c0=$(qd credit_stalls)	# the probe's
	cbfc session add "${FLOW[@]}" nexthop $B credit "$len"
	cbfc session add src "$A" dst "$B" sport 50000 qpn 257 nexthop $B \
		credit "$len"
	rx0=$(rx)
	send 3 0 256
	send 3 0 257
	arrived "$rx0" 2
	check "(( \$(qd credit_stalls) == c0 + 2 && \$(qd stalled_flows) == 2 ))" \
		"credit_stalls $(qd credit_stalls) stalled $(qd stalled_flows), not $((c0 + 2)) and 2"
	cbfc credit "${FLOW[@]}" freed "$len"
	arrived "$rx0" 3
	check "(( \$(qd credit_stalls) == c0 + 3 && \$(qd stalled_flows) == 2 ))" \
		"credit_stalls $(qd credit_stalls) stalled $(qd stalled_flows), not $((c0 + 3)) and 2"
	check "(( \$(sess packets) == 2 ))" "session 256 sent $(sess packets), not 2"
}

# A head packet larger than the session's whole reservation can never be
# covered: dropped and counted, not a silent stall (review finding 8).
test_oversize() {
	trap case_cleanup EXIT
	setup
	cbfc session add "${FLOW[@]}" nexthop $B credit 500
	local rx0
	rx0=$(rx)
	send 2
	wait_until "(( \$(qd drop_oversize) == 2 ))" || true
	check "(( \$(qd drop_oversize) == 2 && \$(qd drops) == 2 && \$(qd qlen) == 0 ))" \
		"drop_oversize $(qd drop_oversize) drops $(qd drops) qlen $(qd qlen)"
	check "(( \$(rx) == rx0 && \$(qd flows) == 0 ))" "rx $(($(rx) - rx0)) flows $(qd flows)"
}

# gso4: one UDP_SEGMENT send of 4 RoCEv2 segments of 1024 bytes (each
# with its BTH, QP 256) from 10.9.0.1:50000: one GSO skb at the qdisc.
gso4() {
	an python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'$A'", 50000))
s.setsockopt(socket.IPPROTO_UDP, 103, 1024)  # UDP_SEGMENT
bth = bytes([0x64, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0, 0, 0])
s.sendto((bth + bytes(1012)) * 4, ("'$B'", 4791))'
}

# A credited GSO skb is segmented at enqueue: each segment is charged on
# its own, so a reservation of 1.5 segments sends one and holds three.
test_gso() {
	trap case_cleanup EXIT
	setup
	cbfc session add "${FLOW[@]}" nexthop $B credit 1600
	local rx0
	rx0=$(rx)
	gso4
	arrived "$rx0" 1
	check "(( \$(qd qlen) == 3 && \$(qd drop_oversize) == 0 && \$(qd drops) == 0 ))" \
		"qlen $(qd qlen) drop_oversize $(qd drop_oversize) drops $(qd drops)"
	check "(( \$(qd backlog_credited) == 3 * 1066 ))" \
		"backlog_credited $(qd backlog_credited), not 3 segments of 1066"
	# Charged its IP length: 1066 less the Ethernet header.
	check "(( \$(sess packets) == 1 && \$(sess sent) == 1052 ))" \
		"session packets $(sess packets) sent $(sess sent)"
}

# Not in CASES yet: on 6.12 under TCG it measures about 0 Mbit/s with a
# backlog queued, with and without the drift compensation; to be found
# out (Documentation/cbfc.md, "Known problems").
# rate: the qdisc sends at the set rate even though every gap ends with
# a late timer (drift compensation, review finding 6). 10 Mbit/s, plain
# RoCEv2 of 1082 bytes (866 us a packet), measured over 2 s of a backlog.
# stamp: the qdisc's sent bytes in BYTES, taken at STAMP (ns, the middle
# of the tc call) give or take SPREAD: a tc call takes a good part of a
# second in a loaded TCG VM, which a window of seconds must not ignore.
stamp() {
	local t0 t1
	t0=$(date +%s%N)
	BYTES=$(qd bytes)
	t1=$(date +%s%N)
	STAMP=$(( (t0 + t1) / 2 ))
	SPREAD=$(( (t1 - t0) / 2 ))
}

test_rate() {
	trap case_cleanup EXIT
	setup rate 4mbit
	# A sink, so that b answers no ICMP error that stops the sender.
	sink_start
	# More than the test lasts (7 s at the rate for 3500 packets): it is
	# stopped once measured. Not through an(): $! must be roce-gen.
	ip netns exec "$a" "$RG" send dst $B qps 1 sport 50000 qpn 300 \
		count 100000 rate 0 size 1024 json "$T/send.json" \
		2>"$T/send.err" &
	local pid=$! b1 b2 t1 t2 e r tol q2
	wait_until "(( \$(qd qlen) >= 50 ))" || fail "no backlog"
	stamp
	t1=$STAMP b1=$BYTES e=$SPREAD
	sleep 4
	stamp
	t2=$STAMP b2=$BYTES e=$((e + SPREAD))
	q2=$(qd qlen)
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	r=$(( (b2 - b1) * 8 * 1000000 / (t2 - t1) ))	# kbit/s
	# 5 %, and what the two stamps' spread may add or take
	tol=$(( 200 + r * e / (t2 - t1) ))
	echo "rate 4mbit: measured $((r / 1000)).$(printf %03d $((r % 1000))) Mbit/s over $(( (t2 - t1) / 1000000 )) ms +- $((e / 1000000)) ms, $q2 packets queued at the end"
	check "(( r <= 4000 + tol ))" "measured $r kbit/s, above 4000 + $tol"
	# Without a backlog the sender, not the rate, set the pace: a VM
	# starved by its host (TCG, shared) cannot judge the lower bound.
	(( q2 > 0 )) || skip "the sender kept no backlog (the VM is too slow here): measured $r kbit/s, only the upper bound checked"
	check "(( r >= 4000 - tol ))" "measured $r kbit/s, below 4000 - $tol"
}

# The heartbeat: a PE (a) steers its own RoCEv2 onto tunnel 1, primary
# through va to b's End.DX4 fc00:b1::d4, backup through va2 to b's
# fc00:b2::d4; b decapsulates to the sink on s. cbfc with a 10 ms
# heartbeat on va; the session names tunnel 1.
#
#   a 10.9.0.1 --va/vb (primary)--  b  --vs/sv-- s 10.9.9.2 (sink)
#              --va2/vb2 (backup)--
hb_setup() {
	T=$(mktemp -d)
	mkns a b s
	ip -n "$a" -batch - <<-EOF
	link add va address $MAC_VA type veth peer name vb address $MAC_VB netns $b
	link add va2 address $MAC_VA2 type veth peer name vb2 address $MAC_VB2 netns $b
	addr add 10.9.0.1/32 dev lo
	addr add fc00:1::1/64 dev va nodad
	addr add fc00:2::1/64 dev va2 nodad
	link set va up
	link set va2 up
	neigh replace fc00:1::2 lladdr $MAC_VB dev va nud permanent
	neigh replace fc00:2::2 lladdr $MAC_VB2 dev va2 nud permanent
	route add fc00:b1::/64 via fc00:1::2 dev va
	route add fc00:b2::/64 via fc00:2::2 dev va2
	route add 10.9.9.0/24 dev va src 10.9.0.1
	EOF
	ip -n "$b" -batch - <<-EOF
	link add vs address $MAC_VS type veth peer name sv address $MAC_SV netns $s
	addr add fc00:1::2/64 dev vb nodad
	addr add fc00:2::2/64 dev vb2 nodad
	addr add 10.9.9.1/24 dev vs
	link set vb up
	link set vb2 up
	link set vs up
	neigh replace 10.9.9.2 lladdr $MAC_SV dev vs nud permanent
	route add fc00:b1::d4/128 encap seg6local action End.DX4 nh4 10.9.9.2 dev vb
	route add fc00:b2::d4/128 encap seg6local action End.DX4 nh4 10.9.9.2 dev vb2
	EOF
	ip -n "$s" -batch - <<-EOF
	addr add 10.9.9.2/24 dev sv
	link set sv up
	EOF
	ip netns exec "$b" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1
	dns "$a" tunnel add 1 src fc00:1::1 path fc00:b1::d4 \
		backup fc00:b2::d4
	dns "$a" rule add dst 10.9.9.0/24 tunnel 1
	tc -n "$a" qdisc add dev va root handle 1: cbfc heartbeat 10ms
}

HB_FLOW=(src 10.9.0.1 dst 10.9.9.2 sport 50000 qpn 256)

# hb_send COUNT FIRST_PSN [QPS]: RoCEv2 from a to the sink, COUNT packets
# of each QP (1; sport 50000 and QPN 256 the first, then one up each).
hb_send() {
	an "$RG" send dst 10.9.9.2 qps "${3:-1}" sport 50000 qpn 256 count "$1" \
		psn "$2" rate 0 size 1024 json "$T/send.json" \
		2>"$T/send.err" || fail "roce-gen send: $(cat "$T/send.err")"
}

hb_sess() {
	dns "$a" -j cbfc session show "${HB_FLOW[@]}" | num "$1"
}

# sink_all N: the sink (stopped) saw N packets and no PSN gap.
sink_all() {
	local p g
	read -r p g _ <<<"$SINK_TOTALS"
	check "(( p == $1 && g == 0 ))" "the sink saw $p packets, $g gaps: not $1 and 0"
}

# hb_stop: stop the sink (SINK_TOTALS then holds its counts) and the
# events monitor ($T/events holds what it saw).
hb_stop() {
	sink_stop
	kill "$MON" 2>/dev/null || true
	wait "$MON" 2>/dev/null || true
	MON=
}

# hb_done N: wait for N packets at the sink, stop the sink and the events
# monitor, and want all N there with no gap.
hb_done() {
	wait_until "(( \$(ip netns exec $s cat /sys/class/net/sv/statistics/rx_packets) >= $1 ))" || true
	hb_stop
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	sink_all "$1"
}

# hb_listen: the events monitor ($T/events) and the sink.
hb_listen() {
	# Not through dns(): $! must be dmsc itself, or hb_stop's kill
	# ends only the subshell and leaves the monitor (and its netns) alive.
	ip netns exec "$a" "$DMSC" -j monitor >"$T/events" 2>&1 &
	MON=$!
	ip netns exec "$s" "$RG" sink bind 10.9.9.2 json "$T/sink.json" \
		ready-file "$T/ready" 2>"$T/sink.err" &
	SINK=$!
	wait_until "[ -e '$T/ready' ]" || fail "the sink did not start"
}

# hb_begin TUNNEL CREDIT [ARG...]: the events monitor and the sink, a
# session of tunnel TUNNEL with CREDIT bytes of reservation (and ARGs to
# session add), and 5 packets sent.
hb_begin() {
	local tun=$1 credit=$2
	shift 2
	hb_listen
	dns "$a" cbfc session add "${HB_FLOW[@]}" nexthop fc00:1::2 \
		credit "$credit" tunnel "$tun" "$@"
	hb_send 5 0
}

# hb_start TUNNEL [ARG...]: the events monitor and the sink; a session of
# tunnel TUNNEL with 5 packets' worth (5 x 1146 at the qdisc) of
# reservation; 5 packets that leave and are freed (credit is flowing),
# then 15 more: 5 leave, 10 wait for credit that does not come.
hb_start() {
	local tun=$1
	shift
	hb_begin "$tun" 6000 "$@"
	wait_until "(( \$(hb_sess packets) == 5 ))" || fail "5 did not leave"
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed "$(hb_sess sent)"
	hb_send 15 5
}

# The next hop goes silent mid-transfer: credit flowed for the first 5
# packets, then none comes. Within 3 x heartbeat of the flow's wait the
# next hop is declared failed, the tunnel is on its backup and the 10
# packets that waited reach the sink through it.
test_heartbeat_failover() {
	trap case_cleanup EXIT
	dmesg_mark
	hb_setup
	# Credit flows, then silence: the heartbeat fails the next hop.
	hb_start 1
	wait_until "(( \$(qd heartbeat_failures) >= 1 ))" ||
		fail "no heartbeat failure"
	wait_until "grep -q nexthop-failed '$T/events'" || true
	hb_stop
	cat "$T/events"
	local waited
	waited=$(grep nexthop-failed "$T/events" | num waited_us)
	echo "failover: next hop declared failed after ${waited:-?} us of waiting (heartbeat 10 ms)"
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	check "[ -n '$waited' ] && (( waited >= 10000 && waited <= 30000 ))" \
		"waited ${waited:-no event} us, not 10..30 ms"
	check "grep -qE '\"event\": ?\"tunnel-backup\", ?\"tunnel\": ?1' '$T/events'" \
		"no tunnel-backup event"
	check "dns $a -j tunnel show 1 | grep -qE '\"active\": ?\"backup\"'" \
		"tunnel 1 is not on its backup: $(dns "$a" -j tunnel show 1)"
	# Steered to the backup early, switched by the work: one switch,
	# one event.
	check "(( \$(dns $a -j -s tunnel show 1 | num switches) == 1 && \$(grep -c tunnel-backup '$T/events') == 1 ))" \
		"switches $(dns "$a" -j -s tunnel show 1 | num switches), tunnel-backup events $(grep -c tunnel-backup "$T/events")"
	check "(( \$(qd heartbeat_failures) == 1 && \$(qd failovers) == 1 && \$(qd drop_failed) == 0 ))" \
		"heartbeat_failures $(qd heartbeat_failures) failovers $(qd failovers) drop_failed $(qd drop_failed)"
	check "(( \$(qd qlen) == 0 && \$(hb_sess failed) == 1 ))" \
		"qlen $(qd qlen) failed $(hb_sess failed)"
	sink_all 20
	dmesg_clean || fail "kernel log"
}

# The heartbeat switched off while 10 packets wait, and on again later:
# the wait counts from the moment it is on again, as for a flow that
# stalled while it was off, not from the stall under the first
# heartbeat, which would fail the flow the moment it is switched on
# (until 2026-12-03 it did, 11 s into a wait of no credit, here). The
# silent hop then fails a heartbeat later, as usual, and the 10 reach
# the sink through the backup. The first heartbeat (30 s) and the second
# (10 s) leave room for a debug kernel's slow commands (a tc call takes
# seconds under KASAN).
test_heartbeat_again() {
	trap case_cleanup EXIT
	dmesg_mark
	local waited hf ql
	hb_setup
	tc -n "$a" qdisc change dev va root cbfc heartbeat 30s
	hb_start 1
	wait_until "(( \$(qd qlen) == 10 ))" || fail "$(qd qlen) wait, not 10"
	tc -n "$a" qdisc change dev va root cbfc heartbeat 0
	(( $(qd heartbeat_failures) == 0 )) ||
		fail "failed under the first heartbeat, before it was off"
	sleep 11
	tc -n "$a" qdisc change dev va root cbfc heartbeat 10s
	sleep 0.3
	hf=$(qd heartbeat_failures) ql=$(qd qlen)
	check "(( hf == 0 && ql == 10 ))" \
		"on again: heartbeat_failures $hf qlen $ql, not 0 and 10"
	wait_until "grep -q nexthop-failed '$T/events'" 200 || true
	hb_done 20
	waited=$(grep nexthop-failed "$T/events" | num waited_us)
	echo "failed after ${waited:-?} us of waiting, the heartbeat of 10 s on again"
	check "[ -n '$waited' ] && (( waited >= 10000000 && waited <= 11500000 ))" \
		"waited ${waited:-no event} us, not 10..11.5 s"
	check "(( \$(qd heartbeat_failures) == 1 && \$(qd qlen) == 0 ))" \
		"heartbeat_failures $(qd heartbeat_failures) qlen $(qd qlen), not 1 and 0"
	dmesg_clean || fail "kernel log"
}

# The same silence with a backup reservation: the session names the
# backup list's first hop (b on va2) and the 4 packets' worth of credit
# it reserved, less a little, and va2 has cbfc too. At the failure the
# session moves onto the backup's credit rather than losing credit
# control: of the 10 that waited, 3 leave through the backup and 7 wait
# for credit there; the backup hop's cumulative totals, counted from the
# move, let them go 3, 3 and 1 more; then the backup hop falls silent
# too and its heartbeat fails the session for good; all 25 reach the
# sink.
# A session without a backup fails as before (test_heartbeat_failover).
test_heartbeat_backup_credit() {
	trap case_cleanup EXIT
	dmesg_mark
	hb_setup
	tc -n "$a" qdisc add dev va2 root handle 1: cbfc
	# 1068 bytes of credit a packet: 3.75 packets' worth.
	hb_start 1 backup-nexthop fc00:2::2 backup-credit 4011
	wait_until "(( \$(qd heartbeat_failures) >= 1 ))" ||
		fail "no heartbeat failure"
	wait_until "(( \$(qd credited_packets va2) >= 3 && \$(qd qlen va2) >= 7 ))" || true
	sleep 0.5
	local unit out
	out=$(dns "$a" -j cbfc session show "${HB_FLOW[@]}")
	# Credit is counted in the RoCEv2 packet's IP length.
	unit=$(($(hb_sess sent) / $(hb_sess packets)))
	echo "session after the move: $out"
	check "(( \$(hb_sess on_backup) == 1 && \$(hb_sess failed) == 0 ))" \
		"on_backup $(hb_sess on_backup) failed $(hb_sess failed): the session did not move onto its backup"
	check "grep -qE '\"nexthop\": ?\"fc00:2::2\"' <<<'$out' && (( \$(hb_sess credit) == 4011 ))" \
		"the session's next hop and credit are not the backup's"
	check "(( \$(qd credited_packets va2) == 3 && \$(qd qlen va2) == 7 ))" \
		"backup qdisc: credited_packets $(qd credited_packets va2) qlen $(qd qlen va2), not 3 and 7"
	check "(( \$(hb_sess sent) - \$(hb_sess freed) == 3 * unit ))" \
		"in flight on the backup: $(($(hb_sess sent) - $(hb_sess freed))), not $((3 * unit))"
	# The primary's totals no longer count: the backup's, from 0, do.
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed $((3 * unit))
	wait_until "(( \$(qd credited_packets va2) >= 6 ))" || true
	check "(( \$(qd credited_packets va2) == 6 && \$(qd qlen va2) == 4 ))" \
		"after 3 returned: credited_packets $(qd credited_packets va2) qlen $(qd qlen va2), not 6 and 4"
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed $((6 * unit))
	wait_until "(( \$(qd credited_packets va2) >= 9 ))" || true
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed $((9 * unit))
	wait_until "(( \$(qd qlen va2) == 0 ))" || true
	check "(( \$(qd credited_packets va2) == 10 && \$(hb_sess absurd) == 0 ))" \
		"backup: credited_packets $(qd credited_packets va2) absurd $(hb_sess absurd), not 10 and 0"
	# Then the backup hop falls silent too (a heartbeat on va2 now, not
	# before: this case's own steps take seconds under TCG): 5 more, 2
	# leave on what is left of its credit, 3 wait; the heartbeat fails
	# the session for good (no further backup), the 3 go out
	# uncontrolled.
	tc -n "$a" qdisc change dev va2 root cbfc heartbeat 1s
	hb_send 5 20
	wait_until "(( \$(qd heartbeat_failures va2) >= 1 ))" ||
		fail "the backup's heartbeat did not fail"
	wait_until "(( \$(ip netns exec $s cat /sys/class/net/sv/statistics/rx_packets) >= 25 ))" || true
	check "(( \$(hb_sess failed) == 1 && \$(qd drop_failed va2) == 0 ))" \
		"after the backup's silence: failed $(hb_sess failed) drop_failed $(qd drop_failed va2), not 1 and 0"
	hb_stop
	cat "$T/events"
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	check "grep nexthop-failed '$T/events' | grep -qE '\"on_backup\": ?1'" \
		"the nexthop-failed event does not say on_backup 1"
	check "(( \$(qd heartbeat_failures) == 1 && \$(qd failovers) == 1 && \$(qd drop_failed) == 0 ))" \
		"heartbeat_failures $(qd heartbeat_failures) failovers $(qd failovers) drop_failed $(qd drop_failed)"
	# Out of order is allowed: packets sent while the failure was being
	# found go to the backup straight, before those re-sent by the work.
	sink_all 25
	# Moved, the backup is the next hop: no second move, no setting it.
	out=$(dns "$a" cbfc session set "${HB_FLOW[@]}" backup none 2>&1) &&
		fail "session set on a moved session was taken"
	echo "session set after the move: $out"
	check "grep -q 'moved onto its backup' <<<'$out'" "error: $out"
	dmesg_clean || fail "kernel log"
}

# hb_backup CREDIT BACKUP_CREDIT [ARG...]: hb_setup with va's heartbeat
# off (only what the case does moves the packets) and cbfc on va2, the
# backup list's device; hb_begin's session with CREDIT bytes of
# reservation and a backup reservation of BACKUP_CREDIT at fc00:2::2.
hb_backup() {
	hb_setup
	tc -n "$a" qdisc change dev va root cbfc heartbeat 0
	tc -n "$a" qdisc add dev va2 root handle 1: cbfc
	hb_begin 1 "$1" backup-nexthop fc00:2::2 backup-credit "$2" "${@:3}"
}

# The tunnel switched to its backup by hand while 5 packets wait on va for
# the primary's credit: the session moves onto its backup reservation
# (on_backup 1, not failed), and the switch wakes the 5. They were
# encapsulated for the primary: they are not charged to the backup's
# credit on va but re-sent on the backup list at once, where va2's cbfc
# charges them, and the session is not failed for them. (Until
# 2026-12-03 the switch left them waiting for va's heartbeat, and for
# good with it off, as here.) Switched back to the primary, the moved
# session has no credit there: it is failed.
test_backup_credit_switch() {
	trap case_cleanup EXIT
	dmesg_mark
	# No heartbeat on va: only the switch can move the 5.
	hb_backup 6000 100000
	wait_until "(( \$(hb_sess packets) == 5 ))" || fail "5 did not leave"
	# 660 bytes of credit left: the next 5 wait.
	hb_send 5 5
	wait_until "(( \$(qd qlen) == 5 ))" || fail "$(qd qlen) wait, not 5"
	dns "$a" tunnel switch 1 backup
	wait_until "(( \$(qd credited_packets va2) >= 5 ))" || true
	sleep 0.3
	check "(( \$(hb_sess on_backup) == 1 && \$(hb_sess failed) == 0 ))" \
		"after the switch: on_backup $(hb_sess on_backup) failed $(hb_sess failed), not 1 and 0"
	check "(( \$(qd credited_packets va2) == 5 && \$(qd qlen) == 0 && \$(qd heartbeat_failures) == 0 ))" \
		"va2 credited_packets $(qd credited_packets va2), va qlen $(qd qlen) heartbeat_failures $(qd heartbeat_failures): not 5, 0, 0"
	check "(( \$(qd credited_packets) == 5 ))" \
		"the 5 old-path packets were charged on va ($(qd credited_packets) credited there, not 5)"
	dns "$a" tunnel switch 1 primary
	check "(( \$(hb_sess failed) == 1 ))" \
		"back on the primary, the moved session is not failed"
	hb_done 10
	dmesg_clean || fail "kernel log"
}

# Switched back to the primary while packets wait on va2 for the backup
# hop's credit: the moved session is failed (uncontrolled), and those
# packets leave at once. No return of the backup's would come for them
# here, and the heartbeat is off on both qdiscs: before the switch woke
# them they stayed queued for good.
test_primary_again_wakes() {
	trap case_cleanup EXIT
	dmesg_mark
	# 1068 bytes of credit a packet: 5 on the primary, 3 on the backup.
	hb_backup 6000 3300
	wait_until "(( \$(hb_sess packets) == 5 ))" || fail "5 did not leave"
	dns "$a" tunnel switch 1 backup
	hb_send 5 5
	wait_until "(( \$(qd qlen va2) == 2 && \$(qd credited_packets va2) == 3 ))" || true
	check "(( \$(hb_sess on_backup) == 1 && \$(qd credited_packets va2) == 3 && \$(qd qlen va2) == 2 ))" \
		"on the backup: on_backup $(hb_sess on_backup), va2 sent $(qd credited_packets va2) and holds $(qd qlen va2): not 1, 3 and 2"
	dns "$a" tunnel switch 1 primary
	wait_until "(( \$(qd qlen va2) == 0 ))" || true
	check "(( \$(hb_sess failed) == 1 && \$(qd qlen va2) == 0 && \$(qd credited_packets va2) == 5 ))" \
		"back on the primary: failed $(hb_sess failed), va2 holds $(qd qlen va2) and sent $(qd credited_packets va2): not 1, 0 and 5"
	hb_done 10
	dmesg_clean || fail "kernel log"
}

# Switched to its backup and at once back to the primary (one dmsc -batch,
# the two commands on one socket) while 32 sessions of the tunnel have 2
# packets each waiting on va for the primary's credit: the first switch
# moves the sessions onto their backup reservations and wakes their
# flows, whose packets, encapsulated for the primary, leave for the
# failover work (a record a flow) to be re-sent on the backup list; the
# second fails the sessions (no credit on the primary). The re-sends must
# not switch the tunnel: they are no failure, and the operator's switch
# back stands. (Until 2026-12-03 each re-send switched the tunnel to its
# backup as a failure does: a record the work took after the second
# command undid it, 3 switches.) Either way the 96 reach the sink,
# through the backup (re-sent) or the primary (dequeued after the second
# command, the session failed).
test_switch_back_stands() {
	trap case_cleanup EXIT
	dmesg_mark
	local i active n failed
	hb_setup
	tc -n "$a" qdisc change dev va root cbfc heartbeat 0
	tc -n "$a" qdisc add dev va2 root handle 1: cbfc
	hb_listen
	# 1068 bytes of credit a packet: 1 of each QP's 3 leaves.
	for ((i = 0; i < 32; i++)); do
		echo "cbfc session add src 10.9.0.1 dst 10.9.9.2" \
			"sport $((50000 + i)) qpn $((256 + i))" \
			"nexthop fc00:1::2 credit 1100 tunnel 1" \
			"backup-nexthop fc00:2::2 backup-credit 100000"
	done | dns "$a" -batch - || fail "32 sessions"
	hb_send 3 0 32
	wait_until "(( \$(qd qlen) == 64 ))" || fail "$(qd qlen) wait, not 64"
	# At a real-time priority the batch keeps the failover work (a
	# kworker bound to the CPU the re-sends were queued on, the batch's)
	# from running between its two commands: the work runs after the
	# switch back, an order a busy host can give any time.
	printf 'tunnel switch 1 backup\ntunnel switch 1 primary\n' |
		chrt -f 10 "$DMSC" -n "$a" -batch - || fail "dmsc -batch"
	wait_until "(( \$(qd qlen) == 0 ))" || true
	# The failover work, if the re-sends went to it, has run by now.
	sleep 0.5
	active=$(dns "$a" -j tunnel show 1 | grep -oE '"active": ?"[a-z]+"' |
		sed 's/.*"\([a-z]*\)"$/\1/')
	n=$(dns "$a" -j -s tunnel show 1 | num switches)
	failed=$(dns "$a" -j cbfc session show | grep -oE '"failed": ?1' | wc -l)
	echo "tunnel 1: $active, $n switches; va2 sent $(qd credited_packets va2); $failed sessions failed"
	check "[ '$active' = primary ] && (( n == 2 ))" \
		"tunnel 1 on its $active after $n switches: not on the primary after 2"
	check "(( failed == 32 ))" \
		"back on the primary, $failed of the 32 moved sessions failed"
	hb_done 96
	dmesg_clean || fail "kernel log"
}

# The backup hop's own credit form: a delta session (the primary's hop
# returns deltas) whose backup hop returns cumulative totals
# (backup-mode cumulative). Before the move the session takes deltas and
# refuses totals, from dmsc cbfc credit and as the kernel's credit
# returns (RESVs forged from b's addresses, rsvp_forge.py: refused ones
# count in cret_mode); after the switch to the backup it takes the
# backup hop's totals, counted from the move, refuses its deltas, and
# counts a delta through dmsc cbfc credit as the left hop's (stale). The
# packets that waited leave, on the backup, as those totals come, and
# the sink sees all of them. The session's own returns upstream are not
# in this case: they keep its mode.
test_backup_mode() {
	trap case_cleanup EXIT
	dmesg_mark
	# 1068 bytes of credit a packet at the qdisc: 3 packets' worth.
	hb_backup 3300 3300 mode delta backup-mode cumulative
	local out unit modes upd rx md
	out=$(dns "$a" -j cbfc session show "${HB_FLOW[@]}")
	echo "session: $out"
	modes=$(jq -r '"\(.mode) \(.backup_mode)"' <<<"$out")
	check "[ '$modes' = 'delta cumulative' ]" \
		"mode and backup_mode \"$modes\", not delta and cumulative"
	wait_until "(( \$(hb_sess packets) == 3 ))" || fail "3 did not leave: $(hb_sess packets)"
	unit=$(($(hb_sess sent) / 3))
	out=$(dns "$a" cbfc credit "${HB_FLOW[@]}" freed "$unit" 2>&1) &&
		fail "a total taken by a delta session: $out"
	check "grep -q 'returns deltas: delta, not freed' <<<'$out'" "error: $out"
	# The kernel's returns from the primary's hop: a total refused, a
	# delta taken.
	rx=$(cret cret_rx)
	md=$(cret cret_mode)
	bforge src fc00:1::2 dst fc00:1::1 freed "$unit" qpn 256
	wait_until "(( \$(cret cret_mode) > md || \$(cret cret_rx) > rx ))" || true
	check "(( \$(cret cret_rx) == rx && \$(cret cret_mode) == md + 1 && \$(hb_sess packets) == 3 ))" \
		"a total from the primary's hop: cret_rx $(cret cret_rx) (was $rx) cret_mode $(cret cret_mode) (was $md) packets $(hb_sess packets), not +0, +1, 3"
	bforge src fc00:1::2 dst fc00:1::1 freed "$unit" qpn 256 delta
	wait_until "(( \$(hb_sess packets) == 4 ))" || true
	check "(( \$(hb_sess packets) == 4 && \$(cret cret_rx) == rx + 1 && \$(cret cret_mode) == md + 1 ))" \
		"a delta from the primary's hop: packets $(hb_sess packets) cret_rx $(cret cret_rx) (was $rx) cret_mode $(cret cret_mode) (was $md), not 4, +1, +1"
	# One more waits on va for the primary's credit; then the switch,
	# which wakes it: encapsulated for the primary, it is re-sent on the
	# backup (cbfc_old_path), and va2 charges it to the backup's credit.
	dns "$a" tunnel switch 1 backup
	wait_until "(( \$(qd credited_packets va2) >= 1 ))" || true
	check "(( \$(hb_sess on_backup) == 1 && \$(hb_sess failed) == 0 && \$(qd credited_packets va2) == 1 && \$(qd qlen) == 0 ))" \
		"after the switch: on_backup $(hb_sess on_backup) failed $(hb_sess failed) va2 credited_packets $(qd credited_packets va2) va qlen $(qd qlen), not 1, 0, 1, 0"
	# The primary's form now is the left hop's, late: stale, no credit.
	local st
	st=$(hb_sess stale)
	dns "$a" cbfc credit "${HB_FLOW[@]}" delta "$unit" ||
		fail "a late delta of the hop the session left was refused"
	check "(( \$(hb_sess stale) == st + 1 && \$(hb_sess packets) == 5 ))" \
		"a late delta after the move: stale $(hb_sess stale) (was $st) packets $(hb_sess packets), not +1 and 5"
	# 4 more on the backup's credit of 3, one of it spent: 2 leave on
	# va2, 2 wait there.
	hb_send 4 5
	wait_until "(( \$(qd credited_packets va2) >= 3 && \$(qd qlen va2) >= 2 ))" || true
	check "(( \$(qd credited_packets va2) == 3 && \$(qd qlen va2) == 2 ))" \
		"backup: credited_packets $(qd credited_packets va2) qlen $(qd qlen va2), not 3 and 2"
	# The backup hop's returns: a delta refused, its total taken: one
	# more packet's worth on va2.
	rx=$(cret cret_rx)
	md=$(cret cret_mode)
	upd=$(hb_sess updates)
	bforge src fc00:2::2 dst fc00:2::1 freed "$unit" qpn 256
	wait_until "(( \$(cret cret_mode) > md || \$(cret cret_rx) > rx ))" || true
	check "(( \$(cret cret_rx) == rx + 1 && \$(cret cret_mode) == md ))" \
		"a total from the backup's hop: cret_rx $(cret cret_rx) (was $rx) cret_mode $(cret cret_mode) (was $md), not +1, +0"
	bforge src fc00:2::2 dst fc00:2::1 freed "$unit" qpn 256 delta
	wait_until "(( \$(qd credited_packets va2) >= 4 && \$(qd qlen va2) >= 1 ))" || true
	check "(( \$(qd credited_packets va2) == 4 && \$(qd qlen va2) == 1 && \$(qd qlen) == 0 ))" \
		"after the backup's return: va2 credited_packets $(qd credited_packets va2) qlen $(qd qlen va2), va qlen $(qd qlen): not 4, 1, 0"
	check "(( \$(cret cret_rx) == rx + 1 && \$(cret cret_mode) == md + 1 && \$(hb_sess updates) == upd + 1 ))" \
		"after the move: cret_rx $(cret cret_rx) (was $rx) cret_mode $(cret cret_mode) (was $md) updates $(hb_sess updates) (was $upd)"
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed $((2 * unit)) ||
		fail "the backup's total refused after the move"
	wait_until "(( \$(qd qlen va2) == 0 ))" || true
	check "(( \$(qd credited_packets va2) == 5 && \$(qd qlen va2) == 0 && \$(hb_sess absurd) == 0 ))" \
		"after a second total: credited_packets $(qd credited_packets va2) qlen $(qd qlen va2) absurd $(hb_sess absurd), not 5, 0, 0"
	# The same total again is stale, not credit twice.
	upd=$(hb_sess updates)
	dns "$a" cbfc credit "${HB_FLOW[@]}" freed $((2 * unit))
	check "(( \$(hb_sess updates) == upd && \$(hb_sess stale) >= 1 ))" \
		"a repeated total: updates $(hb_sess updates) (was $upd) stale $(hb_sess stale)"
	hb_done 9
	dmesg_clean || fail "kernel log"
}

# bforge ARGS: a credit-return RESV from b's namespace (rsvp_forge.py,
# whose flow is HB_FLOW's).
bforge() {
	ip netns exec "$b" python3 "$top/selftests/rsvp_forge.py" "$@"
}

# cret COUNTER: a's credit-return counter (dmsc info).
cret() {
	dns "$a" -j info | num "$1"
}

# The link to the next hop goes down while 10 packets wait for credit,
# with the heartbeat at 60 s so that only the link can fail it: "peer",
# the far end is set down and va loses its carrier; "self", va itself is
# set down; "del", va is deleted (its qdisc goes with it, the failover
# runs in its destroy). The flow fails over at once: the tunnel is on its
# backup, the 10 packets reach the sink through it, the event is
# nexthop-down. "nobackup": the session names a tunnel without a backup,
# so nothing fails over and the 10 are freed with the link, as before.
# "credit": as "self", with a backup reservation: the session moves onto
# it, and the 10 are charged to it on va2's cbfc.
test_link_down() {
	trap case_cleanup EXIT
	dmesg_mark
	local how t0 ms first last n p g events tun want extra
	local hows="peer self del nobackup credit"
	# The three ways the core takes a link down cross its code
	# (dev_deactivate, the device's deletion); what follows without a
	# backup or onto a backup reservation is the module's own logic:
	# left to the newest kernel, as NEWEST_CASES are (lib.sh).
	if [ "${DMSC_OLDER_KERNEL:-0}" = 1 ] && [ "${DMSC_DEEP:-0}" != 1 ]; then
		hows="peer self del"
		echo "# older kernel: nobackup and credit left to the newest (make check-deep runs them)"
	elif [ "${DMSC_DEEP:-0}" != 1 ]; then
		# nobackup and credit set the device down as self does.
		hows="peer del nobackup credit"
		echo "# newest kernel: self's set down is nobackup's and credit's (make check-deep runs it alone too)"
	fi
	for how in $hows; do
		hb_setup
		tc -n "$a" qdisc change dev va root cbfc heartbeat 60s
		tun=1
		extra=()
		if [ "$how" = nobackup ]; then
			dns "$a" tunnel add 2 src fc00:1::1 path fc00:b1::d4
			tun=2
		elif [ "$how" = credit ]; then
			# A backup reservation: the session moves onto it.
			tc -n "$a" qdisc add dev va2 root handle 1: cbfc
			extra=(backup-nexthop fc00:2::2 backup-credit 100000)
		fi
		hb_start $tun "${extra[@]}"
		wait_until "(( \$(qd qlen) == 10 ))" || fail "$(qd qlen) wait, not 10"
		# The backup's packets on the wire (outer IPv6 + SRH), timed.
		ip netns exec "$b" tcpdump -tt -nn -l -i vb2 'ip6[6] == 43' \
			>"$T/backup.txt" 2>"$T/cap.err" &
		CAP=$!
		wait_until "grep -q listening '$T/cap.err'" ||
			fail "tcpdump: $(cat "$T/cap.err")"
		t0=$EPOCHREALTIME
		case $how in
		peer)	ip -n "$b" link set vb down ;;
		self|nobackup|credit) ip -n "$a" link set va down ;;
		del)	ip -n "$a" link del va ;;
		esac
		if [ "$how" = nobackup ]; then
			wait_until "(( \$(qd qlen) == 0 ))" || true
			sleep 0.5
		else
			wait_until "(( \$(grep -c ' IP6 ' '$T/backup.txt') >= 10 ))" || true
			wait_until "grep -q nexthop-down '$T/events'" || true
		fi
		kill "$CAP" 2>/dev/null || true
		wait "$CAP" 2>/dev/null || true
		CAP=
		# ms from the link going down to the first and the last packet
		# on the backup: "first last count".
		ms=$(LC_ALL=C awk -v t0="${t0/,/.}" '/ IP6 / { n++; if (n == 1) f = $1; l = $1 }
			END { if (!n) print "- - 0"
			      else printf "%d %d %d", (f - t0) * 1000, (l - t0) * 1000, n }' \
			"$T/backup.txt")
		hb_stop
		events=$(cat "$T/events")
		echo "$events"
		read -r p g _ <<<"$SINK_TOTALS"
		read -r first last n <<<"$ms"
		echo "link down ($how): on the backup after $first ms (first packet) to $last ms (packet $n); sink: packets gaps out-of-order = $SINK_TOTALS"
		if [ "$how" = nobackup ]; then
			check "(( n == 0 && p == 10 ))" \
				"$how: $n packets on the backup, $p at the sink, not 0 and 10"
			check "! grep -q nexthop-down <<<\"\$events\"" \
				"$how: a nexthop-down event"
			check "(( \$(qd link_failures) == 0 && \$(qd failovers) == 0 && \$(qd qlen) == 0 && \$(hb_sess failed) == 0 ))" \
				"$how: link_failures $(qd link_failures) failovers $(qd failovers) qlen $(qd qlen) failed $(hb_sess failed)"
		else
			# The bash, ip and tcpdump around it, not the failover
			# (waited_us in the event): 1014 ms once on KASAN.
			check "(( n == 10 && last < $(slow_ms 1000) ))" \
				"$how: $n packets on the backup, the last $last ms after the link went down"
			check "grep -q nexthop-down <<<\"\$events\"" \
				"$how: no nexthop-down event"
			check "grep -qE '\"event\": ?\"tunnel-backup\", ?\"tunnel\": ?1' <<<\"\$events\"" \
				"$how: no tunnel-backup event"
			check "dns $a -j tunnel show 1 | grep -qE '\"active\": ?\"backup\"'" \
				"$how: tunnel 1 is not on its backup"
			check "(( \$(dns $a -j -s tunnel show 1 | num switches) == 1 && \$(grep -c tunnel-backup <<<\"\$events\") == 1 ))" \
				"$how: switches $(dns "$a" -j -s tunnel show 1 | num switches), tunnel-backup events $(grep -c tunnel-backup <<<"$events")"
			if [ "$how" = credit ]; then
				# Moved, not failed, by the reset; the work's walk
				# of idle sessions leaves it so.
				check "(( \$(hb_sess failed) == 0 && \$(hb_sess on_backup) == 1 && \$(qd credited_packets va2) == 10 ))" \
					"$how: failed $(hb_sess failed) on_backup $(hb_sess on_backup), $(qd credited_packets va2) charged to the backup, not 0, 1 and 10"
				check "(( \$(grep -c nexthop-down <<<\"\$events\") == 1 )) && grep nexthop-down <<<\"\$events\" | grep -qE '\"on_backup\": ?1'" \
					"$how: not one nexthop-down event with on_backup 1"
			else
				check "(( \$(hb_sess failed) == 1 ))" "$how: the session is not failed"
			fi
			check "(( p == 20 && g == 0 ))" \
				"$how: the sink saw $p packets, $g gaps: not 20 and 0"
		fi
		# One flow failed over, or none; va's qdisc went with it in "del".
		want=1
		[ "$how" != nobackup ] || want=0
		[ "$how" = del ] ||
			check "(( \$(qd link_failures) == want && \$(qd heartbeat_failures) == 0 && \$(qd failovers) == want && \$(qd drop_failed) == 0 && \$(qd qlen) == 0 ))" \
				"$how: link_failures $(qd link_failures) heartbeat_failures $(qd heartbeat_failures) failovers $(qd failovers) drop_failed $(qd drop_failed) qlen $(qd qlen)"
		# Deleting the session wakes what waits on it: the flows
		# the reset freed must not be among them (slub_debug).
		dns "$a" cbfc session del "${HB_FLOW[@]}" ||
			fail "$how: session del"
		cleanup_ns
		rm -rf "$T"
		T=
	done
	dmesg_clean || fail "kernel log"
}

# The link goes down while the session has nothing queued (its packets
# left, credit in hand): the reset finds no flow of it, and the failover
# work fails it over by the device its packets last went through. The
# tunnel is on its backup and the next packets reach the sink through it,
# where they would have been dropped by the deactivated device, unseen by
# any heartbeat (they never reach a cbfc queue).
test_link_down_idle() {
	trap case_cleanup EXIT
	dmesg_mark
	hb_setup
	tc -n "$a" qdisc change dev va root cbfc heartbeat 60s
	hb_begin 1 100000
	wait_until "(( \$(hb_sess packets) == 5 && \$(qd qlen) == 0 ))" ||
		fail "$(hb_sess packets) left, $(qd qlen) queued: not 5 and 0"
	ip -n "$b" link set vb down
	wait_until "grep -q nexthop-down '$T/events'" || true
	hb_send 5 5
	wait_until "(( \$(bn cat /sys/class/net/vb2/statistics/rx_packets) >= 5 ))" || true
	sleep 0.2
	hb_stop
	cat "$T/events"
	echo "link down with nothing queued: sink: packets gaps out-of-order = $SINK_TOTALS"
	sink_all 10
	check "grep -qE '\"event\": ?\"nexthop-down\"' '$T/events'" "no nexthop-down event"
	check "(( \$(dns $a -j -s tunnel show 1 | num switches) == 1 && \$(grep -c tunnel-backup '$T/events') == 1 ))" \
		"switches $(dns "$a" -j -s tunnel show 1 | num switches), tunnel-backup events $(grep -c tunnel-backup "$T/events")"
	check "(( \$(hb_sess failed) == 1 && \$(qd link_failures) == 1 && \$(qd failovers) == 1 ))" \
		"failed $(hb_sess failed) link_failures $(qd link_failures) failovers $(qd failovers)"
	dmesg_clean || fail "kernel log"
}

# UDP datagrams delivered in the sink's namespace.
sink_udp() {
	ip netns exec "$s" awk '/^Udp:/ && $2 ~ /^[0-9]+$/ { print $2 }' /proc/net/snmp
}

# The link to the primary's next hop goes down where no cbfc qdisc is to
# see it (va has none): the hook sends the next packets on the backup
# (dmsc_srv6_bypass), and the backup's qdisc, the first to see the
# session's packets come that way, moves it onto its backup reservation
# with a nexthop-down event naming va (cbfc_fail_early). The packets are
# charged to the backup hop, which sees them, not to the primary's 6000
# bytes: before, they were, and the session stalled after 5 of the 10
# (6.12, 2026-11-30: the sink saw 10 of 15, va2 charged 5).
test_link_down_bypass() {
	trap case_cleanup EXIT
	dmesg_mark
	local va sent
	hb_setup
	tc -n "$a" qdisc del dev va root
	tc -n "$a" qdisc add dev va2 root handle 1: cbfc
	va=$(ip -n "$a" -j link show va | jq '.[0].ifindex')
	hb_begin 1 6000 backup-nexthop fc00:2::2 backup-credit 100000
	# The sink's datagrams: vs counts b's own IPv6 chatter too.
	wait_until "(( \$(sink_udp) >= 5 ))" ||
		fail "the first 5 did not reach the sink"
	ip -n "$b" link set vb down
	wait_until "[[ \"\$(an cat /sys/class/net/va/operstate)\" =~ ^(down|lowerlayerdown)$ ]]" ||
		fail "va did not lose its carrier"
	hb_send 10 5
	wait_until "(( \$(qd credited_packets va2) == 10 ))" || true
	wait_until "grep -q tunnel-backup '$T/events'" || true
	sleep 0.2
	hb_stop
	cat "$T/events"
	sent=$(hb_sess sent)
	echo "link down, no qdisc on it: va2 charged $(qd credited_packets va2) packets, link_failures $(qd link_failures va2); session on_backup $(hb_sess on_backup) failed $(hb_sess failed) sent $sent available $(hb_sess available); sink: packets gaps out-of-order = $SINK_TOTALS"
	sink_all 15
	check "(( \$(qd credited_packets va2) == 10 && \$(qd link_failures va2) == 1 && \$(qd failovers va2) == 1 && \$(qd credit_stalls va2) == 0 ))" \
		"va2: credited_packets $(qd credited_packets va2) link_failures $(qd link_failures va2) failovers $(qd failovers va2) credit_stalls $(qd credit_stalls va2), not 10 1 1 0"
	check "(( \$(hb_sess on_backup) == 1 && \$(hb_sess failed) == 0 ))" \
		"on_backup $(hb_sess on_backup) failed $(hb_sess failed), not 1 and 0"
	# The 10 on the backup's credit, in inner IP bytes: 1068 each (IPv4
	# and UDP headers, BTH, 1024 bytes, ICRC).
	check "(( \$(hb_sess available) == 100000 - 10 * 1068 ))" \
		"available $(hb_sess available), not 100000 - 10 x 1068"
	check "(( \$(grep -c nexthop-down '$T/events') == 1 )) && grep nexthop-down '$T/events' | grep -qE '\"ifindex\": ?$va,'" \
		"not one nexthop-down event naming va ($va)"
	check "(( \$(dns $a -j -s tunnel show 1 | num switches) == 1 )) && dns $a -j tunnel show 1 | grep -qE '\"active\": ?\"backup\"'" \
		"tunnel 1: switches $(dns "$a" -j -s tunnel show 1 | num switches), not on its backup once"
	dmesg_clean || fail "kernel log"
}

# A session without a tunnel only fails: the event, the counters, and its
# waiting packets dropped as drop_failed.
test_heartbeat_no_tunnel() {
	trap case_cleanup EXIT
	# The heartbeat starts off, so that all 10 packets wait before it
	# can fail them, however slow the kernel (under KASAN the sender
	# took longer than 10 ms for them): the count below is exact.
	setup heartbeat 0
	cbfc session add "${FLOW[@]}" nexthop $B credit 0
	local rx0 out
	rx0=$(rx)
	send 10
	wait_until "(( \$(qd qlen) == 10 ))" || fail "not 10 queued: $(qd qlen)"
	sleep 0.5
	check "(( \$(qd heartbeat_failures) == 0 && \$(qd qlen) == 10 ))" \
		"heartbeat 0 is not off: failures $(qd heartbeat_failures) qlen $(qd qlen)"
	out=$(tc -n "$a" qdisc change dev va root cbfc heartbeat 10ms 2>&1) ||
		fail "heartbeat 10ms refused: $out"
	wait_until "(( \$(qd drop_failed) == 10 ))" || true
	check "(( \$(qd heartbeat_failures) == 1 && \$(qd drop_failed) == 10 && \$(qd failovers) == 0 && \$(qd qlen) == 0 ))" \
		"failures $(qd heartbeat_failures) drop_failed $(qd drop_failed) failovers $(qd failovers) qlen $(qd qlen)"
	check "(( \$(sess failed) == 1 && \$(rx) == rx0 ))" "failed $(sess failed) rx $(($(rx) - rx0))"
	# A failed session is out of credit control: its next packets pass.
	send 5 10
	wait_until "(( \$(rx) - rx0 == 5 ))" || true
	check "(( \$(rx) - rx0 == 5 && \$(qd drop_failed) == 10 && \$(qd qlen) == 0 ))" \
		"after the failure: rx $(($(rx) - rx0)) of 5, drop_failed $(qd drop_failed) qlen $(qd qlen)"
	# Below 10 ms is refused by the kernel too; 0 is off.
	out=$(tc -n "$a" qdisc change dev va root cbfc heartbeat 0 2>&1) ||
		fail "heartbeat 0 refused: $out"
	check "(( \$(qd heartbeat) == 0 ))" "heartbeat $(qd heartbeat), not 0"
	out=$(tc -n "$a" qdisc change dev va root cbfc credit_batch 4096 2>&1) ||
		fail "credit_batch refused: $out"
	check "(( \$(qd credit_batch) == 4096 ))" "credit_batch $(qd credit_batch), not 4096"
}

# Deleting the qdisc, the namespace and the module while packets wait
# and failovers are pending or under way: clean under slub_debug.
test_heartbeat_teardown() {
	trap case_cleanup EXIT
	dmesg_mark
	hb_setup
	dns "$a" cbfc session add "${HB_FLOW[@]}" nexthop fc00:1::2 \
		credit 0 tunnel 1
	hb_send 20 0
	tc -n "$a" qdisc del dev va root
	tc -n "$a" qdisc add dev va root handle 1: cbfc heartbeat 10ms
	dns "$a" tunnel switch 1 primary
	hb_send 20 20
	ip netns del "$a"
	local i
	for i in $(seq 120); do
		rmmod dmsc 2>/dev/null && break
		sleep 0.5
	done
	check "! module_loaded" "the module is still in use"
	load_module
	dmesg_clean || fail "kernel log"
}

# A transit hop sees the flow inside SRv6: a's own seg6 encap route makes
# va's packets IPv6 + SRH + the RoCEv2 packet.
test_srv6_inner() {
	trap case_cleanup EXIT
	T=$(mktemp -d)
	mkns a b
	ip -n "$a" link add va type veth peer name vb netns "$b"
	ip -n "$a" addr add $A/24 dev va
	ip -n "$a" addr add fc00:9::1/64 dev va nodad
	ip -n "$b" addr add fc00:9::2/64 dev vb nodad
	ip -n "$a" link set va up
	ip -n "$b" link set vb up
	ip -n "$a" neigh replace fc00:9::2 dev va nud permanent \
		lladdr "$(bn cat /sys/class/net/vb/address)"
	ip -n "$a" route add 10.9.1.0/24 encap seg6 mode encap \
		segs fc00:9::2 dev va
	tc -n "$a" qdisc add dev va root cbfc
	local flow=(src "$A" dst 10.9.1.2 sport 50000 qpn 256) len
	# First no credit, to read the SRv6 packet's length off the backlog.
	cbfc session add "${flow[@]}" nexthop fc00:9::2 credit 0
	an "$RG" send dst 10.9.1.2 qps 1 sport 50000 qpn 256 count 10 \
		rate 0 size 1024 json "$T/send.json" 2>"$T/send.err" ||
		fail "roce-gen send: $(cat "$T/send.err")"
	wait_until "(( \$(qd qlen) >= 10 ))" || fail "not 10 queued"
	len=$(( $(qd backlog_credited) / 10 ))
	check "(( len * 10 == \$(qd backlog_credited) && len > 1082 ))" \
		"backlog_credited $(qd backlog_credited) is not 10 SRv6 packets"
	echo "SRv6 packet length at the qdisc: $len"
	cbfc session del "${flow[@]}"
	wait_until "(( \$(qd qlen) == 0 ))" || fail "the 10 did not leave"
	# Then a reservation of 3 of them.
	cbfc session add "${flow[@]}" nexthop fc00:9::2 credit $((len * 3))
	an "$RG" send dst 10.9.1.2 qps 1 sport 50000 qpn 256 count 10 psn 10 \
		rate 0 size 1024 json "$T/send.json" 2>"$T/send.err" ||
		fail "roce-gen send: $(cat "$T/send.err")"
	wait_until "(( \$(qd credited_packets) >= 13 ))" || true
	sleep 0.5
	check "(( \$(qd credited_packets) == 13 && \$(qd qlen) == 7 ))" \
		"credited_packets $(qd credited_packets) qlen $(qd qlen), not 13 and 7"
	check "(( \$(dns $a -j cbfc session show ${flow[*]} | num packets) == 3 ))" \
		"the session counted other than 3 packets"
}

# shellcheck disable=SC2086 # the attribute lists split into words
test_bad_input() {
	trap case_cleanup EXIT
	setup
	local out ph
	# tc: what the plugin refuses, naming the option ...
	out=$(tc -n "$a" qdisc change dev va root cbfc limit 0 2>&1) &&
		fail "limit 0 accepted"
	check "[[ '$out' == *'bad value \"0\" for \"limit\"'* ]]" "tc said: $out"
	out=$(tc -n "$a" qdisc change dev va root cbfc heartbeat 5us 2>&1) &&
		fail "heartbeat 5us accepted"
	check "[[ '$out' == *'\"heartbeat\": out of range'* ]]" "tc said: $out"
	out=$(tc -n "$a" qdisc change dev va root cbfc colour red 2>&1) &&
		fail "an unknown option accepted"
	check "[[ '$out' == *'unknown option \"colour\"'* ]]" "tc said: $out"
	# ... and what the kernel refuses, with its extack.
	out=$(tc -n "$a" qdisc change dev va root cbfc limit 10 flow_limit 20 2>&1) &&
		fail "flow_limit > limit accepted"
	check "[[ '$out' == *'Error: cbfc: flow_limit exceeds limit'* ]]" "tc said: $out"
	out=$(tc -n "$a" qdisc change dev va root cbfc limit 5 2>&1) &&
		fail "limit below the flow_limit in force accepted"
	check "[[ '$out' == *'flow_limit exceeds limit'* ]]" "tc said: $out"
	check "(( \$(qd limit) == 10000 ))" \
		"a refused change changed limit"

	# genl: each refusal names the attribute.
	local sess="$DMSC_A_SESSION:nest{ 2:u8=2 3:bin=0a090001 4:bin=0a090002 5:u16=50000 6:u32=256"
	local nh="7:bin=00000000000000000000ffff0a090002"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW ${sess/2:u8=2/2:u8=7} $nh '}')
	check "[[ '$out' == *'errno=97'* && '$out' == *'extack=session family: not AF_INET or AF_INET6'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW ${sess/3:bin=0a090001/3:bin=00000000000000000000ffff0a090001} $nh '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session src: length does not match family'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW ${sess/6:u32=256/6:u32=16777216} $nh '}')
	check "[[ '$out' == *'errno=34'* ]]" "qpn 2^24: $out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session nexthop or prevhop missing'* ]]" "$out"
	# Credit returns go to prevhop over IPv6 with no interface: only a
	# routable unicast address is taken.
	for ph in fe80::1 ::ffff:10.9.0.1 ff02::1 ::1; do
		out=$(dns "$a" cbfc session add src 10.9.0.1 dst 10.9.0.2 \
			sport 50000 qpn 256 prevhop $ph 2>&1) &&
			fail "prevhop $ph accepted"
		check "[[ '$out' == *'session prevhop: a global or ULA unicast IPv6 address'* ]]" \
			"prevhop $ph: $out"
	done
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 12:u64=1 '}')
	check "[[ '$out' == *'errno=22'* ]]" "a reply-only attribute (sent): $out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 10:u64=5 '}')
	check "[[ '$out' == *'extack=session freed: only in a credit update'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_CREDIT $sess 10:u64=5 '}')
	check "[[ '$out' == *'errno=2'* && '$out' == *'extack=no such session'* ]]" "$out"
	# A backup reservation: both attributes, a tunnel, another hop.
	local bnh="25:bin=fc000000000000000000000000000002" bcr="26:u64=4000"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 18:u32=1 $bnh '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session backup-credit missing'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh $bnh $bcr '}')
	check "[[ \$out == *errno=22* && \$out == *'tunnel, which moves to its backup list'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 18:u32=1 ${nh/7:/25:} $bcr '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session backup-nexthop: the same hop as nexthop'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 18:u32=1 $bnh 26:u64=0 '}')
	check "[[ '$out' == *'errno=34'* ]]" "backup credit 0: $out"
	# backup-mode (28): with the pair only, and a mode that exists.
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 18:u32=1 28:u8=1 '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session backup-mode: needs backup-nexthop and backup-credit'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh 18:u32=1 $bnh $bcr 28:u8=2 '}')
	check "[[ '$out' == *'errno=34'* ]]" "backup mode 2: $out"
	out=$(an "$NL_RAW" $DMSC_CMD_CREDIT $sess 10:u64=5 28:u8=0 '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'backup are set by session add and set'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_SET $sess $bnh $bcr '}')
	check "[[ '$out' == *'errno=2'* && '$out' == *'extack=no such session'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh '}')
	check "[[ '$out' == *'errno=0'* ]]" "a good session refused: $out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_SET $sess $bnh $bcr '}')
	check "[[ \$out == *errno=22* && \$out == *'tunnel, which moves to its backup list'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_SET $sess 9:u64=5 '}')
	check "[[ '$out' == *'errno=22'* && '$out' == *'extack=session set: only the backup'* ]]" "$out"
	check "(( \$(sess on_backup) == 0 && \$(sess credit) == 0 ))" \
		"a refused set changed the session"
	out=$(an "$NL_RAW" $DMSC_CMD_SESSION_NEW $sess $nh '}')
	check "[[ '$out' == *'errno=17'* && '$out' == *'extack=session exists for this flow'* ]]" "$out"
	out=$(an "$NL_RAW" $DMSC_CMD_CREDIT $sess 11:u64=5 '}')
	check "[[ '$out' == *'returns totals: freed, not delta'* ]]" "$out"
	# Any u64 passes the policy; above sent (0) it is counted and ignored.
	out=$(an "$NL_RAW" $DMSC_CMD_CREDIT $sess 10:u64=9223372036854775807 '}')
	check "[[ '$out' == *'errno=0'* ]]" "freed 2^63-1: $out"
	check "(( \$(sess freed) == 0 && \$(sess updates) == 0 && \$(sess absurd) == 1 ))" \
		"an absurd update changed the session"
	# Credit is for the administrator only.
	out=$(an setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all "$DMSC" cbfc credit "${FLOW[@]}" freed 100000 2>&1) &&
		fail "an unprivileged user gave credit"
	check "[[ '$out' == *'Operation not permitted'* ]]" "wrong error: $out"
	check "(( \$(sess freed) == 0 ))" "credit changed anyway"
	# Sessions are per namespace: b has none.
	check "[ \"\$(dns $b -j cbfc session show)\" = '[]' ]" \
		"b sees a's session: $(dns "$b" cbfc session show)"
}

# Deleting the qdisc and unloading the module with packets waiting for
# credit: no leak, no splat (the harness boots slub_debug). a's own packets
# stay charged to roce-gen's socket, which holds a's namespace: they are
# let go by deleting the qdisc or the session (Documentation/cbfc.md).
test_teardown() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	cbfc session add "${FLOW[@]}" nexthop $B
	send 20
	wait_until "(( \$(qd qlen) == 20 ))" || fail "not 20 queued"
	tc -n "$a" qdisc del dev va root
	# The session outlives the qdisc.
	check "(( \$(sess sent) == 0 ))" "sent $(sess sent)"

	tc -n "$a" qdisc add dev va root cbfc
	send 20 20
	wait_until "(( \$(qd qlen) == 20 ))" || fail "not 20 queued again"
	# The module is in use while a cbfc qdisc exists.
	if rmmod dmsc 2>"$T/rmmod.err"; then
		fail "rmmod succeeded under a cbfc qdisc"
	fi
	echo "rmmod: $(cat "$T/rmmod.err")"
	check "module_loaded" "the module went away"
	check "(( \$(qd qlen) == 20 ))" "the queue changed"
	local rx0
	rx0=$(rx)
	cbfc session del "${FLOW[@]}"
	arrived "$rx0" 20
	dmesg_clean || fail "kernel log"
}

# Deleting a forwarding node's namespace with packets queued in its cbfc
# qdisc, then unloading the module:
#
#   h 10.9.2.1 -- hx/ah -- a (forwards; cbfc on va) -- va/vb -- b 10.9.0.2
test_teardown_netns() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	mkns h
	ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	an sysctl -qw net.ipv4.ip_forward=1
	ip -n "$h" link add hx type veth peer name ah netns "$a"
	ip -n "$h" addr add 10.9.2.1/24 dev hx
	ip -n "$a" addr add 10.9.2.2/24 dev ah
	ip -n "$h" link set hx up
	ip -n "$a" link set ah up
	ip -n "$h" route add default via 10.9.2.2
	ip -n "$h" neigh replace 10.9.2.2 dev hx nud permanent \
		lladdr "$(an cat /sys/class/net/ah/address)"
	local flow=(src 10.9.2.1 dst "$B" sport 50000 qpn 256)
	cbfc session add "${flow[@]}" nexthop $B
	ip netns exec "$h" "$RG" send dst $B qps 1 sport 50000 qpn 256 \
		count 20 rate 0 size 1024 json "$T/send.json" 2>"$T/send.err" ||
		fail "roce-gen send: $(cat "$T/send.err")"
	wait_until "(( \$(qd qlen) == 20 ))" || fail "not 20 queued"
	check "(( \$(qd flows) == 1 && \$(qd stalled_flows) == 1 ))" \
		"flows $(qd flows) stalled $(qd stalled_flows), not 1 and 1"
	# The namespace goes with its devices, qdisc, packets and sessions.
	ip netns del "$a"
	# Its cleanup runs in a work item, slow under TCG: unload once done.
	local i
	for i in $(seq 120); do
		rmmod dmsc 2>/dev/null && break
		sleep 0.5
	done
	echo "rmmod after the namespace went: $((i / 2)) s"
	check "! module_loaded" "the module is still in use"
	load_module
	dmesg_clean || fail "kernel log"
}

[ -x "$RG" ] || { echo "1..0 # SKIP no $RG (make tools)"; exit 4; }
[ -f "$TC_LIB_DIR/q_cbfc.so" ] || { echo "1..0 # SKIP no q_cbfc.so (make tools)"; exit 4; }
command -v jq >/dev/null || { echo "1..0 # SKIP no jq"; exit 4; }
load_module
CASES=(
	test_credit_cumulative "cbfc: credit C sends exactly C bytes' worth, freed N N more; repeated, stale and absurd totals add nothing, available never exceeds C"
	test_credit_delta "cbfc: a delta session adds every delta, a repeated one too, none past sent"
	test_plain_band "cbfc: plain UDP and RoCEv2 without a session pass while a credited flow waits"
	test_idle_flow "cbfc: an emptied flow is kept for its next packets; once its session is deleted they are plain, a new session takes them"
	test_idle_gc "cbfc: idle flows are bounded by limit, go after 3 s idle as new flows come, and a lowered limit trims them"
	test_hash_resize "cbfc: a limit change that resizes the flow hash keeps every flow, idle and waiting"
	test_limits "cbfc: limit, flow_limit and plain_limit drops are counted by reason"
	test_plain_room "cbfc: credited flows at limit - plain_limit leave the plain band its room"
	test_wake_session "cbfc: credit for one session wakes that session's flows only"
	test_oversize "cbfc: a head packet above the session's credit is dropped as oversize"
	test_gso "cbfc: a credited GSO skb is segmented and each segment charged"
	test_rate "cbfc: rate 4mbit with a backlog sends 4 Mbit/s +- 5 %"
	test_heartbeat_failover "cbfc: next hop silent: within 3 x heartbeat the tunnel is on its backup, the waiting packets reach the sink through it"
	test_heartbeat_again "cbfc: the heartbeat switched off while a flow waits and on again counts the wait from then, not from the stall"
	test_heartbeat_backup_credit "cbfc: next hop silent, a backup reservation: the session moves onto the backup hop's credit, the waiting packets leave through the backup as it grants"
	test_backup_mode "cbfc: a backup hop that returns credit in another form than the primary's (backup-mode): after the move the session takes the backup's form and refuses the other"
	test_backup_credit_switch "cbfc: tunnel switched to its backup: the session moves onto the backup's credit, packets queued for the primary are re-sent on the backup, not charged to it; back on the primary the session fails"
	test_primary_again_wakes "cbfc: switched back to the primary, a moved session fails and its packets waiting for the backup's credit leave at once"
	test_switch_back_stands "cbfc: switched to the backup and at once back, the re-send of packets queued for the primary leaves the tunnel on the primary"
	test_link_down_idle "cbfc: the link goes down with nothing queued: the session its packets last took fails over, the next packets reach the sink through the backup"
	test_link_down_bypass "cbfc: the link goes down where no cbfc qdisc sees it: the backup's qdisc moves the session onto the backup's credit at its first packet, with the event"
	test_link_down "cbfc: the link to the next hop goes down (carrier lost, set down, deleted): at once the tunnel is on its backup, the waiting packets reach the sink through it; without a backup they go with the link"
	test_heartbeat_no_tunnel "cbfc: next hop silent, no tunnel: the waiting packets are dropped as failed, heartbeat 0 is off"
	test_heartbeat_teardown "cbfc: qdisc, netns and module go while packets wait and failovers are pending"
	test_srv6_inner "cbfc: an SRv6 packet is classified by the RoCEv2 flow inside it"
	test_bad_input "cbfc: bad tc options and genl attributes are refused, the extack names them"
	test_teardown "cbfc: qdisc delete and session delete with packets queued are clean, rmmod refused while a qdisc exists"
	test_teardown_netns "cbfc: netns delete with forwarded packets queued, then rmmod, are clean"
)
# The qdisc's own accounting, the same on any kernel: credit arithmetic,
# the plain band, limits, waking, oversize drops, a failure without a
# tunnel, the rate, the credit modes, and what the heartbeat, a tunnel's
# switch and the bypass decide. The older kernels run the cases that
# cross kernel code whose behaviour moved: GSO, link down (carrier,
# dev_deactivate, unregister) with the failover's transmit, SRv6,
# netlink policies and extack, teardown (with failovers pending too).
NEWEST_CASES="test_credit_cumulative test_credit_delta test_plain_band test_idle_flow
	test_idle_gc test_hash_resize
	test_limits test_plain_room test_wake_session test_oversize
	test_heartbeat_no_tunnel test_rate
	test_heartbeat_backup_credit test_backup_mode
	test_heartbeat_failover test_heartbeat_again test_backup_credit_switch test_primary_again_wakes
	test_switch_back_stands
	test_link_down_idle
	test_link_down_bypass"
# make check-deep runs these too (selftests/lib.sh): a silent next hop
# onto a backup reservation is test_heartbeat_failover's silence and
# test_link_down's credit move (one primitive fails a session over).
DEEP_CASES="test_heartbeat_backup_credit"
cases_only CASES "${DMSC_CBFC_CASES:-}"
ktap_run "${CASES[@]}"
