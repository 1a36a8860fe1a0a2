#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check: unit tests, then roce-gen between two namespaces, KTAP output.
# Every count is compared exactly with what the sender or a qdisc reports.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the cases -----------------------------------------------------------

# Clean path: every packet arrives once, in order, with a good ICRC.
clean()	# FAMILY DST
{
	sink_start idle 2 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst "$2" qps 8 count 500 rate 20000 size 512 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local sp sb
	sp=$(jv "$TMP/send.json" 'd["totals"]["packets"]')
	sb=$(jv "$TMP/send.json" 'd["totals"]["bytes"]')
	expect "$sp" -eq 4000 "sender packets"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq "$sp" "sink packets"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["bytes"]')" -eq "$sb" "sink bytes"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["flows"]')" -eq 8 "flows"
	expect "$(jv "$TMP/sink.json" 'len(set(q["sport"] for q in d["qps"]))')" -eq 8 "distinct sports"
	expect "$(jv "$TMP/sink.json" 'all(q["packets"] == 500 and q["next_psn"] == 500 and q["src"] == "'"$1"'" for q in d["qps"])')" = True "per-QP packets"
	expect "$(jv "$TMP/sink.json" 'sum(d["totals"][k] for k in ("psn_gaps","out_of_order","duplicates","too_old","icrc_errors","malformed","socket_drops"))')" -eq 0 "error counters"
}
test_clean_v4() { clean $V4_S $V4_R; }
test_clean_v6() { clean $V6_S $V6_R; }

# Faults the sender injects, with periods whose multiples do not meet below
# 1000 PSNs, so the sink's counts must equal the sender's exactly.
inject()	# DST
{
	sink_start idle 2 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst "$1" qps 4 count 1000 rate 20000 size 64 opcode ud-send-only \
	     skip-every 97 dup-every 89 swap-every 83 bad-icrc-every 79 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local S=$TMP/send.json K=$TMP/sink.json
	local skip dup swap bad sp
	skip=$(jv "$S" 'd["injected"]["skipped"]')
	dup=$(jv "$S" 'd["injected"]["duplicated"]')
	swap=$(jv "$S" 'd["injected"]["swapped"]')
	bad=$(jv "$S" 'd["injected"]["bad_icrc"]')
	sp=$(jv "$S" 'd["totals"]["packets"]')
	expect "$skip" -eq 40 "skipped"
	expect "$dup" -gt 0 "duplicated"
	expect "$(jv "$K" 'd["totals"]["psn_gaps"]')" -eq $((skip + bad)) "gaps"
	expect "$(jv "$K" 'd["totals"]["duplicates"]')" -eq "$dup" "duplicates"
	expect "$(jv "$K" 'd["totals"]["out_of_order"]')" -eq "$swap" "out of order"
	expect "$(jv "$K" 'd["totals"]["icrc_errors"]')" -eq "$bad" "ICRC errors"
	expect "$(jv "$K" 'd["totals"]["packets"]')" -eq $((sp - bad)) "packets"
	expect "$(jv "$K" 'd["qps"][0]["opcode"]')" = ud-send-only "opcode"
}
test_inject_v4() { inject $V4_R; }
test_inject_v6() { inject $V6_R; }

# A u32 filter sends every PSN ending in 0x7 to a pfifo of length 0:
# a deterministic drop whose count the qdisc reports.
psn_filter()	# CLASS PSN_VALUE PSN_MASK
{
	tcs filter add dev va parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match u32 "$2" "$3" at 36 flowid "$1"
	tcs filter add dev va parent 1: protocol ipv6 prio 2 u32 \
		match ip6 protocol 17 0xff match u32 "$2" "$3" at 56 flowid "$1"
}

htb_two_classes()	# RATE_OF_1:20 LEAF...
{
	local rate=$1
	shift
	tcs qdisc add dev va root handle 1: htb default 10 r2q 1000 &&
	tcs class add dev va parent 1: classid 1:10 htb rate 10gbit quantum 1600 &&
	tcs class add dev va parent 1: classid 1:20 htb rate "$rate" ceil "$rate" quantum 1600 \
		burst 1600 cburst 1600 &&
	tcs qdisc add dev va parent 1:20 handle 20: "$@"
}

filter_drop()	# DST
{
	qdisc_reset
	htb_two_classes 10gbit pfifo limit 0 && psn_filter 1:20 7 0xf ||
		{ FAIL="tc setup failed"; return 1; }
	sink_start idle 2 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst "$1" qps 4 count 1000 rate 20000 size 256 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local drops gaps tail
	drops=$(qdisc_stat va 20: dropped)
	gaps=$(jv "$TMP/sink.json" 'd["totals"]["psn_gaps"]')
	tail=$(tail_lost)
	qdisc_reset
	expect "$drops" -eq 252 "qdisc drops (4 QPs x 63 PSNs)"
	expect $((gaps + tail)) -eq "$drops" "sink gaps + tail loss vs qdisc drops"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq $((4000 - drops)) "packets"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["out_of_order"] + d["totals"]["duplicates"]')" -eq 0 "reorder/dup"
}
test_filter_drop_v4() { filter_drop $V4_R; }
test_filter_drop_v6() { filter_drop $V6_R; }

# PSNs ending in 3 (mod 8) go through a class slower than their share:
# they queue and come late. Nothing is lost.
htb_reorder()	# DST
{
	qdisc_reset
	htb_two_classes 3mbit pfifo limit 100000 && psn_filter 1:20 3 0x7 ||
		{ FAIL="tc setup failed"; return 1; }
	sink_start idle 3 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst "$1" qps 4 count 1000 rate 4000 size 1024 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	qdisc_reset
	expect "$(jv "$TMP/sink.json" 'd["totals"]["out_of_order"]')" -gt 0 "out of order"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["psn_gaps"]')" -eq 0 "gaps"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["duplicates"]')" -eq 0 "duplicates"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq 4000 "packets"
}
test_htb_reorder_v4() { htb_reorder $V4_R; }
test_htb_reorder_v6() { htb_reorder $V6_R; }

netem_ok()
{
	qdisc_reset
	tcs qdisc add dev va root netem delay 0 2>/dev/null || return 1
	qdisc_reset
}

# netem as the leaf RoCE packets go through, so its counters are ours only.
netem_case()	# DST KIND netem-args...
{
	local dst=$1 kind=$2
	shift 2
	netem_ok || { SKIP="sch_netem not available in this kernel"; return 4; }
	htb_two_classes 10gbit netem "$@" limit 100000 && psn_filter 1:20 0 0 ||
		{ FAIL="tc setup failed"; return 1; }
	sink_start idle 2 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst "$dst" qps 4 count 1000 rate 10000 size 256 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local K=$TMP/sink.json sp drops sent tail
	sp=$(jv "$TMP/send.json" 'd["totals"]["packets"]')
	drops=$(qdisc_stat va 20: dropped)
	sent=$(qdisc_stat va 20: sent)
	tail=$(tail_lost)
	qdisc_reset
	case $kind in
	loss)
		expect "$drops" -gt 0 "netem drops"
		expect $(( $(jv "$K" 'd["totals"]["psn_gaps"]') + tail )) -eq "$drops" "gaps + tail loss vs netem drops"
		expect "$(jv "$K" 'd["totals"]["packets"]')" -eq $((sp - drops)) "packets"
		;;
	reorder)
		expect "$(jv "$K" 'd["totals"]["out_of_order"]')" -gt 0 "out of order"
		expect "$(jv "$K" 'd["totals"]["psn_gaps"]')" -eq 0 "gaps"
		expect "$(jv "$K" 'd["totals"]["packets"]')" -eq "$sp" "packets"
		;;
	duplicate)
		expect "$(jv "$K" 'd["totals"]["duplicates"]')" -gt 0 "duplicates"
		expect "$(jv "$K" 'd["totals"]["duplicates"]')" -eq $((sent - sp)) "duplicates vs netem extra packets"
		expect "$(jv "$K" 'd["totals"]["psn_gaps"]')" -eq 0 "gaps"
		;;
	esac
}
test_netem_loss_v4() { netem_case $V4_R loss loss 5%; }
test_netem_loss_v6() { netem_case $V6_R loss loss 5%; }
test_netem_reorder_v4() { netem_case $V4_R reorder delay 5ms reorder 20% gap 5; }
test_netem_reorder_v6() { netem_case $V6_R reorder delay 5ms reorder 20% gap 5; }
test_netem_duplicate_v4() { netem_case $V4_R duplicate duplicate 5%; }
test_netem_duplicate_v6() { netem_case $V6_R duplicate duplicate 5%; }

# A stopped sink overflows its socket: the loss shows as socket_drops,
# and they account for every missing PSN, so a test can tell them apart.
test_socket_drops()
{
	sink_start idle 2 psn 0 rcvbuf 65536 || { FAIL="sink did not start"; return 1; }
	kill -STOP "$SINK_PID"
	send dst $V4_R qps 2 count 1000 rate 0 size 1024 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; kill -CONT "$SINK_PID"; return 1; }
	kill -CONT "$SINK_PID"
	sink_wait
	local drops gaps tail
	drops=$(jv "$TMP/sink.json" 'd["totals"]["socket_drops"]')
	gaps=$(jv "$TMP/sink.json" 'd["totals"]["psn_gaps"]')
	tail=$(tail_lost)
	expect "$drops" -gt 0 "socket drops"
	expect $((gaps + tail)) -eq "$drops" "gaps + tail loss vs socket drops"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq $((2000 - drops)) "packets"
}

# Many QPs at a high rate: the sink keeps up and counts all of them.
test_rate_many_qps()
{
	sink_start idle 2 psn 0 || { FAIL="sink did not start"; return 1; }
	send dst $V6_R qps 256 count 200 rate 50000 size 128 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local rate
	rate=$(jv "$TMP/send.json" 'int(d["rate_pps"])')
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq 51200 "packets"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["flows"]')" -eq 256 "flows"
	expect "$(jv "$TMP/sink.json" 'd["totals"]["socket_drops"] + d["totals"]["psn_gaps"]')" -eq 0 "drops"
	expect "$rate" -gt 40000 "achieved rate"
	expect "$rate" -lt 52000 "achieved rate"
}

# Pacing: 1000 pps for 1 s is about 1000 packets, spread over the second.
# The sender does not burst to make up for stalls longer than 50 ms, which
# an emulated (TCG) VM has: there it sends fewer, never more.
test_pacing()
{
	sink_start idle 2 || { FAIL="sink did not start"; return 1; }
	send dst $V4_R qps 2 duration 1 rate 1000 size 64 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	local n span
	n=$(jv "$TMP/sink.json" 'd["totals"]["packets"]')
	span=$(jv "$TMP/sink.json" 'int(1000 * (max(q["last_arrival"] for q in d["qps"]) - min(q["first_arrival"] for q in d["qps"])))')
	expect "$n" -ge 800 "packets in 1 s"
	expect "$n" -le 1002 "packets in 1 s"
	expect "$n" -eq "$(jv "$TMP/send.json" 'd["totals"]["packets"]')" "sink vs sender"
	expect "$span" -ge 950 "arrival span ms"
}

# tshark decodes every packet as InfiniBand BTH, fields right, no expert
# warnings; the ICRC on the wire is checked by an independent Python CRC.
tshark_case()	# DST
{
	command -v tshark >/dev/null || { SKIP="tshark not installed"; return 4; }
	local cap=$TMP/cap.pcap op expect_lines got
	rm -f "$cap"
	# timeout passes our SIGINT on to tcpdump and bounds it if we fail to.
	timeout 60 ip netns exec "$NS_R" tcpdump -Z root --immediate-mode -i vb -U -w "$cap" udp port 4791 \
		2>/dev/null &
	local tpid=$!
	for _ in $(seq 40); do [ -s "$cap" ] && break; sleep 0.05; done
	sleep 0.2
	for op in rc-send-only rc-send-only-imm rc-write-only ud-send-only uc-send-only; do
		send dst "$1" qps 2 qpn 0x1234 count 3 psn 0xfffffe size 37 opcode $op dscp 26 ||
			{ FAIL="sender failed: $(cat "$TMP/send.err")"; kill $tpid; return 1; }
	done
	sleep 0.5
	kill -INT $tpid
	wait $tpid 2>/dev/null
	got=$(tshark -r "$cap" -Y infiniband.bth -T fields -e infiniband.bth.destqp \
		-e infiniband.bth.psn 2>/dev/null | sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ' ')
	expect_lines="5 0x001234 0 5 0x001234 16777214 5 0x001234 16777215 5 0x001235 0 5 0x001235 16777214 5 0x001235 16777215 "
	expect "$got" = "$expect_lines" "destqp/psn fields"
	expect "$(tshark -r "$cap" -Y infiniband.bth 2>/dev/null | wc -l)" -eq 30 "BTH packets"
	expect "$(tshark -r "$cap" -Y '_ws.malformed || _ws.expert.severity >= 6291456' 2>/dev/null | wc -l)" -eq 0 "malformed or expert warnings"
	expect "$(tshark -r "$cap" -Y infiniband.invariant.crc 2>/dev/null | wc -l)" -eq 30 "ICRC field present"
	expect "$(python3 tests/pcap_icrc.py "$cap")" = "good 30 bad 0" "ICRC (independent check)"
}
test_tshark_v4() { tshark_case $V4_R; }
test_tshark_v6() { tshark_case $V6_R; }

# A sender that starts after the sink's idle time: "wait" keeps the sink
# for it (without wait, the same sink would have stopped with nothing).
test_late_sender()
{
	sink_start idle 1 wait 4 psn 0 || { FAIL="sink did not start"; return 1; }
	sleep 2
	send dst $V4_R qps 2 count 50 rate 1000 size 64 ||
		{ FAIL="sender failed: $(cat "$TMP/send.err")"; return 1; }
	sink_wait
	expect "$(jv "$TMP/sink.json" 'd["totals"]["packets"]')" -eq 100 "sink packets"
}

# Wrong use fails with the option's name; no destination, no default.
test_cli_errors()
{
	local out
	out=$(ns "$ROCE_GEN" send 2>&1); expect $? -eq 2 "send without dst rc"
	[[ $out == *'"dst ADDR" is required'* ]] || FAIL="${FAIL:+$FAIL; }no dst message"
	out=$(ns "$ROCE_GEN" send dst $V4_R qps 0 2>&1)
	[[ $out == *'bad value "0" for "qps"'* ]] || FAIL="${FAIL:+$FAIL; }qps message"
	out=$(ns "$ROCE_GEN" send dst $V4_R bogus 2>&1)
	[[ $out == *'unknown option "bogus"'* ]] || FAIL="${FAIL:+$FAIL; }unknown option message"
	out=$(ns "$ROCE_GEN" send dst $V4_R sndbuf 100 2>&1)
	[[ $out == *'bad value "100" for "sndbuf"'* ]] || FAIL="${FAIL:+$FAIL; }sndbuf message"
	out=$("$ROCE_GEN" sink idle x 2>&1)
	[[ $out == *'bad value "x" for "idle"'* ]] || FAIL="${FAIL:+$FAIL; }sink idle message"
	# Outside an "ip netns" namespace the sender refuses to start.
	out=$(unshare -n "$ROCE_GEN" send dst $V4_R 2>&1); expect $? -eq 2 "outside netns rc"
	[ -z "$FAIL" ]
}

# NET_TESTS="a b" in the environment runs only those.
NET_TESTS=${NET_TESTS:-"clean_v4 clean_v6 inject_v4 inject_v6 filter_drop_v4 filter_drop_v6
	htb_reorder_v4 htb_reorder_v6 netem_loss_v4 netem_loss_v6
	netem_reorder_v4 netem_reorder_v6 netem_duplicate_v4 netem_duplicate_v6
	socket_drops rate_many_qps pacing late_sender tshark_v4 tshark_v6 cli_errors"}

# --- the runner ----------------------------------------------------------

# A unit binary that cannot list its tests must not make a plan of none.
if ! UNIT_TESTS=$(tests/unit list) || [ -z "$UNIT_TESTS" ]; then
	echo "Bail out! tests/unit list failed"
	exit 1
fi
n_unit=$(echo "$UNIT_TESTS" | wc -w)
n_net=$(echo $NET_TESTS | wc -w)
echo "TAP version 13"
echo "1..$((n_unit + n_net))"
i=0 pass=0 fail=0 skip=0

for t in $UNIT_TESTS; do
	i=$((i + 1))
	if out=$(tests/unit "$t" 2>&1); then
		echo "ok $i unit_$t"; pass=$((pass + 1))
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok $i unit_$t"; fail=$((fail + 1))
	fi
done

if [ "$(id -u)" != 0 ] || ! topo_up 2>"$TMP/topo.err"; then
	reason="needs root and network namespaces: $(head -1 "$TMP/topo.err" 2>/dev/null)"
	for t in $NET_TESTS; do
		i=$((i + 1)); echo "ok $i $t # SKIP $reason"; skip=$((skip + 1))
	done
else
	for t in $NET_TESTS; do
		i=$((i + 1)) FAIL= SKIP=
		qdisc_reset
		"test_$t"
		rc=$?
		if [ $rc -eq 4 ]; then
			echo "ok $i $t # SKIP $SKIP"; skip=$((skip + 1))
		elif [ $rc -eq 0 ] && [ -z "$FAIL" ]; then
			echo "ok $i $t"; pass=$((pass + 1))
		else
			[ -s "$TMP/sink.err" ] && sed 's/^/# sink: /' "$TMP/sink.err"
			echo "not ok $i $t # ${FAIL:-exit $rc}"; fail=$((fail + 1))
		fi
		[ -n "${SINK_PID:-}" ] && { kill "$SINK_PID" 2>/dev/null; wait "$SINK_PID" 2>/dev/null; SINK_PID=; }
	done
fi
echo "# $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
