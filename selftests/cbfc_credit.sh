#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's per-packet credit returns (Documentation/cbfc.md, "Credit
# returns") along a chain of three hops, with roce-gen's RoCEv2:
#
#  pe1 10.9.0.1 (roce-gen send, dmsc tunnel 1: SRv6 to P's End, then
#  |             PE2's End.DX4)
#  a1 fc00:1::1  [cbfc, session nexthop fc00:1::2]
#  |
#  p1 fc00:1::2  P: seg6local End fc00:b1::e
#  p2 fc00:2::1  [cbfc, session nexthop fc00:2::2 prevhop fc00:1::1]
#  |
#  e2 fc00:2::2  PE2: seg6local End.DX4 fc00:b2::d4
#  es 10.9.9.1   [cbfc, session prevhop fc00:2::1]
#  |
#  sv 10.9.9.2   s: roce-gen sink
#
# Each hop reserves 8 packets' worth of credit for the one before (16 in
# test_chain); the transfer is hundreds of times that, so it gets through
# only if credit returns flow: P's and PE2's modules send a RESV per batch
# of bytes forwarded (credit_batch, or a sixteenth of the reservation if
# less), PE1's and P's modules apply them.
# shellcheck disable=SC2154 # pe1, p, pe2, s (mkns) and top (lib.sh)
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
export TC_LIB_DIR=$top/tools/tc
FLOW=(src 10.9.0.1 dst 10.9.9.2 sport 50000 qpn 256)
N=${DMSC_CREDIT_PACKETS:-2000}	# packets per transfer
CREDIT=8800			# 8 packets of 1068 credit bytes and some
BATCH=2048			# above CREDIT / 16 (550): it does not bind
# The sender's socket buffer holds the packets PE1's cbfc keeps waiting
# for credit (about 60; its flow_limit is 1000): an unpaced host is held
# back by its send buffer, not dropped at its own qdisc.
SNDBUF=131072
T=
SINK=
CAP=
SAMPLER=
SENDER=
GAPS=()

case_cleanup() {
	local pid
	for pid in "$SINK" "$CAP" "$SAMPLER" "$SENDER" "${GAPS[@]}"; do
		[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	done
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

# sess NS FIELD: a field of the flow's session on a node.
sess() {
	dns "$1" -j cbfc session show "${FLOW[@]}" | num "$2"
}

# stat NS FIELD: a per-namespace counter of dmsc info.
stat() {
	dns "$1" -j info | num "$2"
}

# qd NS DEV KEY: a counter or xstat of a node's cbfc qdisc.
qd() {
	tc -n "$1" -s -j qdisc show dev "$2" | num "$3"
}

# The veths' MACs (setup's static neighbours).
MAC_A1=02:00:00:00:01:01
MAC_P1=02:00:00:00:02:01
MAC_P2=02:00:00:00:02:02
MAC_E2=02:00:00:00:03:01
MAC_ES=02:00:00:00:03:02
MAC_SV=02:00:00:00:04:01

setup() {
	local ns
	T=$(mktemp -d)
	mkns pe1 p pe2 s
	for ns in "$pe1" "$p" "$pe2" "$s"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv6.conf.all.forwarding=1 \
			net.ipv6.conf.all.seg6_enabled=1 \
			net.ipv6.conf.default.seg6_enabled=1 \
			net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0
	done
	# ip -batch, one ip a namespace, and fixed MACs for the static
	# neighbours: each process costs about 0.1 s in a TCG VM.
	ip -n "$pe1" -batch - <<-EOF
	link add a1 address $MAC_A1 type veth peer name p1 address $MAC_P1 netns $p
	addr add 10.9.0.1/32 dev lo
	addr add fc00:1::1/64 dev a1 nodad
	link set a1 up
	neigh replace fc00:1::2 lladdr $MAC_P1 dev a1 nud permanent
	route add fc00:b1::/64 via fc00:1::2 dev a1
	route add 10.9.9.0/24 dev a1 src 10.9.0.1
	EOF
	ip -n "$p" -batch - <<-EOF
	link add p2 address $MAC_P2 type veth peer name e2 address $MAC_E2 netns $pe2
	addr add fc00:1::2/64 dev p1 nodad
	addr add fc00:2::1/64 dev p2 nodad
	link set p1 up
	link set p2 up
	neigh replace fc00:1::1 lladdr $MAC_A1 dev p1 nud permanent
	neigh replace fc00:2::2 lladdr $MAC_E2 dev p2 nud permanent
	route add fc00:b1::e/128 encap seg6local action End dev p1
	route add fc00:b2::/64 via fc00:2::2 dev p2
	EOF
	ip -n "$pe2" -batch - <<-EOF
	link add es address $MAC_ES type veth peer name sv address $MAC_SV netns $s
	addr add fc00:2::2/64 dev e2 nodad
	addr add 10.9.9.1/24 dev es
	link set e2 up
	link set es up
	neigh replace fc00:2::1 lladdr $MAC_P2 dev e2 nud permanent
	neigh replace 10.9.9.2 lladdr $MAC_SV dev es nud permanent
	route add fc00:b2::d4/128 encap seg6local action End.DX4 nh4 10.9.9.2 dev e2
	EOF
	ip -n "$s" -batch - <<-EOF
	addr add 10.9.9.2/24 dev sv
	link set sv up
	neigh replace 10.9.9.1 lladdr $MAC_ES dev sv nud permanent
	EOF
	in_order "$p" p1
	in_order "$pe2" e2
	in_order "$s" sv
	dns "$pe1" tunnel add 1 src fc00:1::1 path fc00:b1::e,fc00:b2::d4
	dns "$pe1" rule add dst 10.9.9.0/24 tunnel 1
	tc -n "$pe1" qdisc add dev a1 root cbfc
	tc -n "$p" qdisc add dev p2 root cbfc credit $CREDIT credit_batch $BATCH
	tc -n "$pe2" qdisc add dev es root cbfc credit $CREDIT credit_batch $BATCH
	# MODE=delta: the draft's form on every hop.
	dns "$pe1" cbfc session add "${FLOW[@]}" nexthop fc00:1::2 \
		credit $CREDIT ${MODE:+mode "$MODE"}
	dns "$p" cbfc session add "${FLOW[@]}" nexthop fc00:2::2 \
		prevhop fc00:1::1 credit $CREDIT ${MODE:+mode "$MODE"}
	dns "$pe2" cbfc session add "${FLOW[@]}" prevhop fc00:2::1 \
		${MODE:+mode "$MODE"}
}

sink_start() {
	ip netns exec "$s" "$RG" sink bind 10.9.9.2 json "$T/sink.json" \
		ready-file "$T/ready" 2>"$T/sink.err" &
	SINK=$!
	wait_until "[ -e '$T/ready' ]" || fail "the sink did not start"
}

# sink_stop: SINK_TOTALS = "packets gaps out-of-order".
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

# capture NS DEV: RSVP on a link, to $T/DEV.pcap, until capture_stop.
capture() {
	ip netns exec "$1" tcpdump -Z root -i "$2" -nn -U -w "$T/$2.pcap" \
		'ip6 proto 46' 2>"$T/cap.err" &
	CAP=$!
	wait_until "grep -q listening '$T/cap.err'" || fail "tcpdump: $(cat "$T/cap.err")"
}

capture_stop() {
	sleep 0.5
	kill -INT "$CAP"
	wait "$CAP" 2>/dev/null || true
	CAP=
}

# sampler: PE1's available credit every 50 ms into $T/avail, in the
# background, for "never above the reservation".
sampler() {
	while :; do
		sess "$pe1" available >>"$T/avail" 2>/dev/null || true
		sleep 0.05
	done &
	SAMPLER=$!
}

# sink_rx: packets the sink's link has received (RoCEv2 and any other).
sink_rx() {
	ip netns exec "$s" cat /sys/class/net/sv/statistics/rx_packets
}

# transfer: N packets from pe1 to the sink; ELAPSED_NS from the first
# send to the last packet at the sink (its rx counter).
transfer() {
	local t0 t1 rx0
	# shellcheck disable=SC2034 # read in the wait_until expression
	rx0=$(sink_rx)
	t0=$(date +%s%N)
	# A chain whose returns do not flow holds the sender in its socket
	# buffer for good: bounded, so the case fails instead of hanging.
	ip netns exec "$pe1" timeout 120 "$RG" send dst 10.9.9.2 qps 1 \
		sport 50000 qpn 256 count "$N" rate 0 size 1024 \
		sndbuf "$SNDBUF" json "$T/send.json" 2>"$T/send.err" ||
		fail "roce-gen send (exit $?: 124 is stuck for 120 s): $(cat "$T/send.err"); PE1: $(dns "$pe1" cbfc session show "${FLOW[@]}")"
	wait_until "(( \$(sink_rx) >= rx0 + N ))" 600 ||
		fail "the transfer stalled: $(dns "$pe1" cbfc session show "${FLOW[@]}")"
	t1=$(date +%s%N)
	ELAPSED_NS=$((t1 - t0))
}

# The totals agree hop to hop once the last returns arrived: what PE1
# sent is what P forwarded and returned, and PE1 holds it freed.
settled() {
	(( $(sess "$pe1" freed) == $(sess "$p" returned) &&
	   $(sess "$p" freed) == $(sess "$pe2" returned) ))
}

test_chain() {
	# 16 packets, not 8: a return's batch is at most a sixteenth of the
	# reservation (CRET_BATCH_PARTS), and with 8 that is under a packet,
	# a RESV per packet; with 16 it is two, so the bound on RESVs below
	# sees a batching that stopped working (setup and the checks take
	# this CREDIT).
	local CREDIT=17600
	trap case_cleanup EXIT
	dmesg_mark
	setup
	# RESVs take 10 ms back to PE1, as over a WAN: 16 packets of credit
	# per 10 ms round trip is below what roce-gen sends, so PE1 must wait
	# for returns (without the delay a fast host returned credit before
	# PE1 ran out, and the case showed nothing).
	tc -n "$p" qdisc add dev p1 root netem delay 10ms
	sink_start
	capture "$p" p1
	sampler
	transfer
	wait_until settled 50 || true
	kill "$SAMPLER" 2>/dev/null || true
	wait "$SAMPLER" 2>/dev/null || true
	SAMPLER=
	capture_stop
	sink_stop
	local sent bytes len resv tx rx goodput max
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	check "[ '$SINK_TOTALS' = '$N 0 0' ]" "the sink saw $SINK_TOTALS, not $N 0 0"
	for n in pe1 p pe2; do
		echo "$n: $(dns "${!n}" cbfc session show "${FLOW[@]}")"
	done
	sent=$(sess "$pe1" sent)
	len=$((sent / N))
	bytes=$((len * N))
	echo "credit unit per packet: $len bytes, $bytes in all"
	check "(( sent == bytes && len > 1024 ))" "PE1 sent $sent, not $N packets of one length"
	check "(( \$(qd $pe1 a1 credit_stalls) > 0 ))" \
		"PE1 never waited for credit: the test shows nothing"
	check "(( \$(qd $pe1 a1 drops) == 0 ))" \
		"PE1's cbfc dropped $(qd "$pe1" a1 drops) packets"
	# Each upstream session took credit updates; freed is exactly what
	# its next hop forwarded.
	check "(( \$(sess $pe1 updates) > 0 && \$(sess $p updates) > 0 ))" \
		"updates: PE1 $(sess "$pe1" updates) P $(sess "$p" updates)"
	check "(( \$(sess $pe1 freed) == \$(sess $p returned) && \$(sess $p returned) == bytes ))" \
		"PE1 freed $(sess "$pe1" freed), P returned $(sess "$p" returned), bytes $bytes"
	check "(( \$(sess $p freed) == \$(sess $pe2 returned) && \$(sess $pe2 returned) == bytes ))" \
		"P freed $(sess "$p" freed), PE2 returned $(sess "$pe2" returned), bytes $bytes"
	check "(( \$(sess $pe1 absurd) == 0 && \$(sess $p absurd) == 0 ))" "absurd updates"
	# The RESVs on P's link to PE1: what P sent and PE1 took, at most
	# one per credit_batch forwarded (the work sends the total it finds,
	# often more than a batch; the repeats add up to 5). With the 10 ms
	# return path PE1 sends in bursts of what came back, so a RESV often
	# carries most of a reservation: there is no useful lower bound
	# beyond the bytes / credit it takes to carry the transfer at all.
	# One tshark run (its start-up is slow in a TCG VM): every RSVP on
	# P's link to PE1 is a RESV P sent.
	tshark -V -r "$T/p1.pcap" >"$T/p1.txt" 2>/dev/null
	resv=$(grep -c '^Resource ReserVation Protocol (RSVP): Unknown (29). SESSION: IPv4, Destination 10.9.9.2, Protocol 17, Port 4791. FILTERSPEC: IPv4, Sender 10.9.0.1, Port 50000.' "$T/p1.txt" || true)
	tx=$(stat "$p" cret_tx)
	rx=$(stat "$pe1" cret_rx)
	echo "RESV P->PE1: tshark $resv, P cret_tx $tx, PE1 cret_rx $rx, bytes/credit_batch $((bytes / BATCH))"
	check "(( resv == tx && tx == rx ))" "tshark $resv, sent $tx, applied $rx"
	# Less than a batch goes out a tick after it was forwarded: a kernel
	# that forwards under a packet a tick (KASAN's, in check-debug: 1350
	# RESVs for 2000 packets) sends up to one per packet. A batch is
	# credit_batch or a sixteenth of the reservation if that is less
	# (CRET_BATCH_PARTS), in whole packets: here 1100 bytes, two.
	local batch=$((BATCH < CREDIT / 16 ? BATCH : CREDIT / 16))
	local most=$((bytes / ((batch + len - 1) / len * len) + 20))
	! kconfig KASAN || most=$((N + 20))
	check "(( resv >= bytes / CREDIT && resv <= most ))" \
		"$resv RESVs for $((bytes / batch)) batches of $batch bytes, $((bytes / CREDIT)) reservations, $N packets (at most $most)"
	check "! grep -q 'Malformed\|Expert Info' \"\$T/p1.txt\"" \
		"tshark: $(grep -m1 'Malformed\|Expert Info' "$T/p1.txt")"
	max=$(sort -n "$T/avail" | tail -1)
	echo "PE1 available: $(wc -l <"$T/avail") samples, max $max (reservation $CREDIT)"
	check "(( max <= CREDIT ))" "available $max above the reservation $CREDIT"
	goodput=$((bytes * 8 * 1000000 / ELAPSED_NS))	# kbit/s
	echo "goodput: $((goodput / 1000)).$(printf %03d $((goodput % 1000))) Mbit/s, $N packets in $((ELAPSED_NS / 1000000)) ms"
	for n in pe1 p pe2; do
		echo "$n: $(dns "${!n}" info | grep cret)"
	done
	dmesg_clean || fail "kernel log"
}

# 10% of the RESVs dropped on both reverse links: cumulative totals make
# every lost one good with the next (or a repeat), so no data is lost and
# the totals still agree.
test_resv_loss() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	tc -n "$p" qdisc add dev p1 root netem loss 10%
	tc -n "$pe2" qdisc add dev e2 root netem loss 10%
	sink_start
	sampler
	transfer
	wait_until settled 50 || true
	kill "$SAMPLER" 2>/dev/null || true
	wait "$SAMPLER" 2>/dev/null || true
	SAMPLER=
	sink_stop
	local bytes goodput max lost
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	check "[ '$SINK_TOTALS' = '$N 0 0' ]" "the sink saw $SINK_TOTALS, not $N 0 0"
	bytes=$(sess "$pe1" sent)
	lost=$(tc -n "$p" -s -j qdisc show dev p1 | num drops)
	echo "P->PE1: $(stat "$p" cret_tx) RESVs sent, netem dropped $lost, PE1 applied $(stat "$pe1" cret_rx)"
	check "(( lost > 0 ))" "netem dropped no RESV"
	check "(( \$(stat $pe1 cret_rx) + lost == \$(stat $p cret_tx) ))" \
		"PE1 applied $(stat "$pe1" cret_rx), sent $(stat "$p" cret_tx), lost $lost"
	check settled "PE1 freed $(sess "$pe1" freed) P returned $(sess "$p" returned); P freed $(sess "$p" freed) PE2 returned $(sess "$pe2" returned)"
	check "(( \$(sess $pe1 freed) == bytes ))" "PE1 freed $(sess "$pe1" freed), sent $bytes"
	max=$(sort -n "$T/avail" | tail -1)
	echo "PE1 available: $(wc -l <"$T/avail") samples, max $max (reservation $CREDIT)"
	check "(( max <= CREDIT ))" "available $max above the reservation $CREDIT"
	goodput=$((bytes * 8 * 1000000 / ELAPSED_NS))
	echo "goodput with 10% RESV loss: $((goodput / 1000)).$(printf %03d $((goodput % 1000))) Mbit/s, $N packets in $((ELAPSED_NS / 1000000)) ms"
	dmesg_clean || fail "kernel log"
}

# The draft's delta form, returned by the kernel as the cumulative one is
# (a RESV with the bytes freed since the last, C-Type 3). Without loss
# it carries a transfer, each hop's freed equal to what its next hop
# returned. Then the same 10 % RESV loss as test_resv_loss: each lost
# RESV is credit gone for good, PE1's credit runs out and the flow
# stalls with data unsent, none of it lost. Prints how far it got and
# the credit lost, against the cumulative form's whole transfer.
test_resv_loss_delta() {
	trap case_cleanup EXIT
	dmesg_mark
	MODE=delta setup
	sink_start
	capture "$p" p1
	N=200 transfer
	wait_until settled 50 || true
	capture_stop
	# tshark decodes the delta RESVs as it does the others: the vendor
	# object's data, no warning.
	tshark -V -r "$T/p1.pcap" >"$T/p1.txt" 2>/dev/null
	local resv
	resv=$(grep -c '^Resource ReserVation Protocol (RSVP): Unknown (29)' "$T/p1.txt" || true)
	echo "delta RESVs P->PE1 decoded by tshark: $resv (P sent $(stat "$p" cret_tx))"
	check "(( resv > 0 && resv == \$(stat $p cret_tx) ))" \
		"tshark decoded $resv RESVs, P sent $(stat "$p" cret_tx)"
	check "! grep -q 'Malformed\|Expert Info' \"\$T/p1.txt\"" \
		"tshark: $(grep -m1 'Malformed\|Expert Info' "$T/p1.txt")"
	check settled "delta, no loss: PE1 freed $(sess "$pe1" freed) P returned $(sess "$p" returned); P freed $(sess "$p" freed) PE2 returned $(sess "$pe2" returned)"
	check "(( \$(sess $pe1 freed) == \$(sess $pe1 sent) ))" \
		"delta, no loss: PE1 freed $(sess "$pe1" freed) of $(sess "$pe1" sent)"
	check "(( \$(stat $pe1 cret_rx) > 0 && \$(stat $pe1 cret_mode) == 0 ))" \
		"delta, no loss: PE1 cret_rx $(stat "$pe1" cret_rx) cret_mode $(stat "$pe1" cret_mode)"
	echo "delta, no loss: 200 of 200 packets, $(stat "$pe1" cret_rx) delta RESVs applied at PE1"
	# What lost RESVs do to the delta form (it stalls) is a finding,
	# not a promise: make check-deep shows it again.
	if [ "${DMSC_DEEP:-0}" != 1 ]; then
		sink_stop
		check "[ '$SINK_TOTALS' = '200 0 0' ]" \
			"delta, no loss: the sink's packets gaps out-of-order = $SINK_TOTALS, not 200 0 0"
		dmesg_clean || fail "kernel log"
		return 0
	fi

	tc -n "$p" qdisc add dev p1 root netem loss 10%
	tc -n "$pe2" qdisc add dev e2 root netem loss 10%
	local rx0 last now same=0 got
	rx0=$(sink_rx)
	ip netns exec "$pe1" timeout 60 "$RG" send dst 10.9.9.2 qps 1 \
		sport 50000 qpn 256 count "$N" psn 200 rate 0 size 1024 \
		sndbuf "$SNDBUF" json "$T/send.json" 2>"$T/send.err" &
	SENDER=$!
	# Until all arrived, or nothing did for 2 s: stalled.
	last=$rx0
	while (( same < 10 )); do
		sleep 0.2
		now=$(sink_rx)
		(( now - rx0 >= N )) && break
		if (( now == last )); then same=$((same + 1)); else same=0; fi
		last=$now
	done
	kill "$SENDER" 2>/dev/null || true
	wait "$SENDER" 2>/dev/null || true
	SENDER=
	sink_stop
	# The sink's count of RoCEv2 packets (the link's counts more).
	local pk g
	read -r pk g _ <<<"$SINK_TOTALS"
	got=$((pk - 200))
	# Each hop's credit lost: what its next hop returned less what it
	# got, with the RESVs netem dropped on the way.
	local lost1 lost2 leak1 leak2
	lost1=$(tc -n "$p" -s -j qdisc show dev p1 | num drops)
	lost2=$(tc -n "$pe2" -s -j qdisc show dev e2 | num drops)
	leak1=$(( $(sess "$p" returned) - $(sess "$pe1" freed) ))
	leak2=$(( $(sess "$pe2" returned) - $(sess "$p" freed) ))
	echo "sink: packets gaps out-of-order = $SINK_TOTALS"
	echo "delta, 10 % RESV loss: the flow stalled after $got of $N packets; credit lost for good: PE1 $leak1 bytes ($lost1 RESVs from P lost), P $leak2 bytes ($lost2 RESVs from PE2 lost), of $CREDIT reserved at each"
	echo "PE1 available $(sess "$pe1" available) (qlen $(qd "$pe1" a1 qlen)), P available $(sess "$p" available) (qlen $(qd "$p" p2 qlen))"
	check "(( lost1 + lost2 > 0 && got < N ))" \
		"delta: $lost1 + $lost2 RESVs lost, $got of $N arrived: no stall"
	check "(( leak1 >= 0 && leak2 >= 0 && leak1 + leak2 > 0 ))" \
		"delta: credit lost PE1 $leak1 P $leak2"
	check "(( \$(stat $pe1 cret_rx) + lost1 == \$(stat $p cret_tx) && \$(stat $p cret_rx) + lost2 == \$(stat $pe2 cret_tx) ))" \
		"delta: PE1 applied $(stat "$pe1" cret_rx) of $(stat "$p" cret_tx) with $lost1 lost; P applied $(stat "$p" cret_rx) of $(stat "$pe2" cret_tx) with $lost2 lost"
	# Stalled, not dropped: every PSN that reached the sink is in order.
	check "(( g == 0 && \$(qd $pe1 a1 drops) == 0 && \$(qd $p p2 drops) == 0 ))" \
		"delta: gaps $g, drops PE1 $(qd "$pe1" a1 drops) P $(qd "$p" p2 drops)"
	dmesg_clean || fail "kernel log"
}

# forge ARGS: a RESV from P's namespace to PE1 (rsvp_forge.py).
forge() {
	ip netns exec "$p" python3 "$top/selftests/rsvp_forge.py" "$@"
}

# Forged and broken credit returns reach PE1: each is counted by its
# reason and changes nothing; a good one from the next hop still counts.
test_forged() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	sink_start
	N=40 transfer
	wait_until settled 50 || true
	local freed c
	freed=$(sess "$pe1" freed)
	echo "PE1 after 40 packets: $(dns "$pe1" cbfc session show "${FLOW[@]}")"
	declare -A before
	for c in cret_rx cret_malformed cret_no_session cret_source cret_mode; do
		before[$c]=$(stat "$pe1" $c)
	done
	# From P's other address: not the session's next hop.
	forge src fc00:2::1 dst fc00:1::1 freed $((freed + 1)) qpn 256
	# From the next hop, for a QP with no session.
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 999
	# Truncated by 4 bytes, the header's length kept; and cut at the
	# Credit object with the header fixed up (and its checksum).
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 256 cut 4
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 256 cut 28 fixlen
	# A wrong checksum, and an object length off by 4.
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 256 badsum
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 256 objlen
	# The delta form, to a cumulative session: the wrong mode. A delta
	# of 0 is no delta: malformed.
	forge src fc00:1::2 dst fc00:1::1 freed 1000 qpn 256 delta
	forge src fc00:1::2 dst fc00:1::1 freed 0 qpn 256 delta
	# Freed above what PE1 sent: absurd, applied as nothing.
	forge src fc00:1::2 dst fc00:1::1 freed $((freed + 100000)) qpn 256
	# An IPsec policy at PE1 that refuses cleartext RSVP from P: the
	# hook applies it as raw delivery would, so the same return is not
	# taken (it would count in cret_rx as another absurd one) but
	# dropped and counted in cret_source.
	ip -n "$pe1" -6 xfrm policy add src fc00:1::2/128 dst fc00:1::1/128 \
		proto 46 dir in action block
	forge src fc00:1::2 dst fc00:1::1 freed $((freed + 100000)) qpn 256
	ip -n "$pe1" -6 xfrm policy del src fc00:1::2/128 dst fc00:1::1/128 \
		proto 46 dir in
	sleep 0.5
	for c in cret_rx cret_malformed cret_no_session cret_source cret_mode; do
		echo "$c: ${before[$c]} -> $(stat "$pe1" $c)"
	done
	# From P's other address, and the one IPsec refused.
	check "(( \$(stat $pe1 cret_source) == before[cret_source] + 2 ))" "cret_source"
	check "(( \$(stat $pe1 cret_no_session) == before[cret_no_session] + 1 ))" "cret_no_session"
	check "(( \$(stat $pe1 cret_malformed) == before[cret_malformed] + 5 ))" "cret_malformed"
	check "(( \$(stat $pe1 cret_mode) == before[cret_mode] + 1 ))" "cret_mode"
	check "(( \$(stat $pe1 cret_rx) == before[cret_rx] + 1 && \$(sess $pe1 absurd) == 1 ))" \
		"cret_rx $(stat "$pe1" cret_rx) absurd $(sess "$pe1" absurd)"
	check "(( \$(sess $pe1 freed) == freed ))" "freed moved: $(sess "$pe1" freed), was $freed"
	# And the chain still works.
	N=40 transfer
	sink_stop
	check "[ '$SINK_TOTALS' = '80 0 0' ]" "the sink saw $SINK_TOTALS, not 80 0 0"
	dmesg_clean || fail "kernel log"
}

# P held back by its next hop: PE2's egress forwards one packet a second
# (cbfc rate 8kbit: one every 1.2 s), so after its 8 packets of credit P
# holds the flow's packets and forwards one as PE2 returns credit.
# Between those P has nothing new to return, and its repeats end after
# 310 ms: about 900 ms of silence, against PE1's heartbeat of 500 ms
# (not 300: under TCG the gaps between keepalives reached 251 ms, and
# CI failed the case on both kernels). P is alive and hears from PE2, so it keeps
# sending PE1 its unchanged total every 100 ms (cret_keepalive) and PE1
# fails nothing. Then the control: with P's RESVs dropped the same
# heartbeat fails P within a second. The sender has far more packets
# than get through (1,000: 20 minutes at PE2's rate), so that PE1 still
# has some waiting at the control however slow the kernel: on KASAN the
# 3-second window took 69 s and 100 packets had left PE1 by then.
test_held() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	tc -n "$pe2" qdisc change dev es root cbfc rate 8kbit
	tc -n "$pe1" qdisc change dev a1 root cbfc heartbeat 500ms
	sink_start
	# The RESVs each hop hears, timed: P's at PE1, PE2's at P.
	ip netns exec "$pe1" tcpdump -tt -nn -l -i a1 \
		'ip6 proto 46 and src fc00:1::2' >"$T/at_pe1" 2>"$T/gap1.err" &
	GAPS+=($!)
	ip netns exec "$p" tcpdump -tt -nn -l -i p2 \
		'ip6 proto 46 and src fc00:2::2' >"$T/at_p" 2>"$T/gap2.err" &
	GAPS+=($!)
	wait_until "grep -q listening '$T/gap1.err' && grep -q listening '$T/gap2.err'" ||
		fail "tcpdump: $(cat "$T/gap1.err" "$T/gap2.err")"
	dns "$pe1" -j monitor >"$T/events" 2>&1 &
	GAPS+=($!)
	ip netns exec "$pe1" "$RG" send dst 10.9.9.2 qps 1 sport 50000 \
		qpn 256 count 1000 rate 0 size 1024 sndbuf "$SNDBUF" \
		json "$T/send.json" 2>"$T/send.err" &
	SENDER=$!
	wait_until "(( \$(qd $pe1 a1 credit_stalls) > 0 && \$(qd $p p2 credit_stalls) > 0 ))" ||
		fail "PE1 and P did not both wait: PE1 $(qd "$pe1" a1 credit_stalls), P $(qd "$p" p2 credit_stalls)"
	local ka0 ka1 stale0 stale1 fwd0 fwd1 fail0 t0 secs
	fail0=$(qd "$pe1" a1 heartbeat_failures)
	# The window as the clock has it: on a slow kernel (KASAN) each
	# sample takes a second or more.
	t0=${EPOCHREALTIME/./}
	ka0=$(stat "$p" cret_keepalive)
	stale0=$(sess "$pe1" stale)
	fwd0=$(sess "$p" packets)
	sleep 3
	ka1=$(stat "$p" cret_keepalive)
	stale1=$(sess "$pe1" stale)
	fwd1=$(sess "$p" packets)
	secs=$(( (${EPOCHREALTIME/./} - t0 + 999999) / 1000000 ))
	echo "held $secs s: P forwarded $((fwd1 - fwd0)) packets, sent $((ka1 - ka0)) keepalives; PE1 took $((stale1 - stale0)) stale updates, heartbeat failures $(qd "$pe1" a1 heartbeat_failures)"
	echo "P: $(dns "$p" cbfc session show "${FLOW[@]}")"
	echo "heartbeat failures when both waited: $fail0; events: $(grep -c nexthop-failed "$T/events")"
	grep nexthop-failed "$T/events" | head -3
	echo "longest silence: at PE1 from P $(max_gap "$T/at_pe1") ms, at P from PE2 $(max_gap "$T/at_p") ms"
	# PE2 sends one every 1.2 s: about secs / 1.2, and 3 of slack.
	check "(( fwd1 - fwd0 >= 1 && fwd1 - fwd0 <= secs + 3 ))" \
		"P forwarded $((fwd1 - fwd0)) packets in $secs s, not one in about 1.2 s: the rate did not hold it"
	check "(( ka1 - ka0 >= 5 ))" "P sent $((ka1 - ka0)) keepalives in $secs s"
	check "(( stale1 - stale0 >= 5 ))" "PE1 took $((stale1 - stale0)) stale updates"
	check "(( \$(qd $pe1 a1 heartbeat_failures) == 0 ))" \
		"PE1 failed P over although it was alive and kept its total coming"
	# Control: P's RESVs dropped, the heartbeat fails it.
	tc -n "$p" qdisc add dev p1 root netem loss 100%
	wait_until "(( \$(qd $pe1 a1 heartbeat_failures) > 0 ))" 30 ||
		fail "PE1's heartbeat did not fail P with its RESVs dropped: the case shows nothing"
	echo "control: P's RESVs dropped, PE1's heartbeat failed it (failures $(qd "$pe1" a1 heartbeat_failures))"
	kill "$SENDER" 2>/dev/null || true
	wait "$SENDER" 2>/dev/null || true
	SENDER=
	dmesg_clean || fail "kernel log"
}

# A session whose previous hop cannot be reached backs off to a send
# every 1.28 s, and the work sleeps that long. Another session's return
# of less than a batch must not wait for it: each of 6 lone packets of
# the flow, 500 ms apart, is returned within 250 ms.
test_pull_in() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	dns "$p" cbfc session add src 10.9.0.1 dst 10.9.9.2 sport 50001 \
		qpn 257 nexthop fc00:2::2 prevhop fc00:99::1 credit $CREDIT
	ip netns exec "$pe1" "$RG" send dst 10.9.9.2 qps 1 sport 50001 \
		qpn 257 count 1 size 1024 2>"$T/send.err" ||
		fail "roce-gen: $(cat "$T/send.err")"
	# 10+20+...+640 ms of failures: now 1.28 s apart.
	sleep 3
	local err0
	err0=$(stat "$p" cret_tx_errors)
	check "(( err0 >= 6 ))" "P's sends to an unreachable prevhop failed $err0 times, not backing off"
	ip netns exec "$p" tcpdump -tt -nn -l -i any \
		'(ip6 proto 46 and dst fc00:1::1) or ip6 dst fc00:b2::d4' \
		>"$T/at_p" 2>"$T/cap.err" &
	CAP=$!
	wait_until "grep -q listening '$T/cap.err'" || fail "tcpdump: $(cat "$T/cap.err")"
	ip netns exec "$pe1" "$RG" send dst 10.9.9.2 qps 1 sport 50000 \
		qpn 256 count 6 rate 2 size 1024 2>"$T/send.err" ||
		fail "roce-gen: $(cat "$T/send.err")"
	sleep 0.5
	capture_stop
	# Each packet P forwards, and the first RESV to PE1 after it.
	local delays
	delays=$(awk '/> fc00:b2::d4/ { if (!t) t = $1 }
		      /> fc00:1::1.*RSVP/ && t { printf "%d ", ($1 - t) * 1000; t = 0 }' "$T/at_p")
	echo "returns of lone packets, ms after P forwarded each: $delays(backing-off session's send failures $err0 -> $(stat "$p" cret_tx_errors))"
	local n=0 max=0 d
	for d in $delays; do
		n=$((n + 1))
		(( d > max )) && max=$d
	done
	check "(( n == 6 ))" "$n of 6 packets returned"
	check "(( max < 250 ))" "a lone packet's return waited $max ms, for the backing-off session's timer"
	dmesg_clean || fail "kernel log"
}

# max_gap FILE: the longest gap, in ms, between tcpdump -tt lines,
# and when (seconds after the first).
max_gap() {
	awk 'NR == 1 { t0 = $1 } NR > 1 && $1 - p > g { g = $1 - p; at = p - t0 }
	     { p = $1 } END { printf "%d (at %.2f s, %d RESVs)", g * 1000, at, NR }' "$1"
}

# Deleting the namespaces while returns are pending, and the module
# after: clean.
test_teardown() {
	trap case_cleanup EXIT
	dmesg_mark
	setup
	sink_start
	N=200 transfer
	ip netns del "$p"
	ip netns del "$pe2"
	ip netns del "$pe1"
	sleep 0.5
	dmesg_clean || fail "kernel log"
}

for tool in "$RG" tshark tcpdump python3 jq; do
	command -v "$tool" >/dev/null || [ -x "$tool" ] || {
		echo "TAP version 13"; echo "1..0 # SKIP $tool missing"; exit 4; }
done
load_module

CASES=(
	test_chain "cbfc credit returns: PE1-P-PE2 with 16 packets of credit carries $N packets without loss; freed equals what the next hop forwarded, RESVs per batch"
	test_resv_loss "cbfc credit returns: 10% of RESVs lost, no data lost, the totals still agree"
	test_resv_loss_delta "cbfc credit returns: the delta form carries a transfer without loss; with 10% of RESVs lost (make check-deep) it leaks credit until the flow stalls"
	test_forged "cbfc credit returns: forged (wrong source, refused by IPsec policy, wrong form), truncated and absurd RESVs are counted and change nothing"
	test_held "cbfc credit returns: a hop held back by its next hop keeps its previous hop's heartbeat up (keepalives), and fails without them"
	test_pull_in "cbfc credit returns: a session backing off from an unreachable prevhop does not hold back another's return"
	test_teardown "cbfc credit returns: namespaces deleted after traffic, clean log"
)
# The work's timing (keepalives, pull-in), the delta form and what lost
# RESVs do to the totals are the module's own, the same on any kernel;
# the older kernels run the chain (the returns' socket, hook and netem),
# forged returns (the IPsec check) and teardown.
NEWEST_CASES="test_held test_pull_in test_resv_loss test_resv_loss_delta"
cases_only CASES "${DMSC_CREDIT_CASES:-}"
ktap_run "${CASES[@]}"
