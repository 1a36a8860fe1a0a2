#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bottleneck goodput as a function of credit (issue 9): credit theory says
# a hop keeps its next hop's queue busy once the credit it holds covers
# the bandwidth-delay product of the credit loop; below that the link
# idles for part of each round trip.
#
# One sender through PE1 - P - PE2 to a bottleneck of RATE Mbit/s (cbfc's
# `rate` on PE2's egress), the topology of selftests/cbfc_incast.sh run
# with one sender. Credit returns take DELAY ms back over each hop (netem
# on PE2 -> P and P -> PE1: only RESVs go that way), so the loop's round
# trip is DELAY plus the hops' own time. One hop's BDP is RATE / 8 x its
# round trip, which the first run measures with ping across P - PE2
# (netem's DELAY and what the two stacks add under TCG); RATE / 8 x
# DELAY, netem's share alone, is printed beside it. The first run gives
# every session 32 times that (512 packets at most): the ceiling this VM
# forwards at, the baseline of the ratio. The others give each session
# the same credit, from a quarter of the hop's BDP to four times it.
# Prints, per
# credit, the bottleneck's utilisation (goodput over RATE) and its ratio
# to the ceiling, and the RESVs the hops sent per MB at credit_batch
# BATCH (16384, the default).
#
# With -s only the hop into the bottleneck (P to PE2) gets the credit of
# a run; the others keep the ceiling's, so P always has packets waiting
# and the run measures that one loop, as credit theory has it. Without
# it every hop has the same credit: a chain of three loops of one BDP
# each, where P may be short of PE1's packets when PE2's credit comes.
#
# Each credit is rounded up to whole packets: a hop spends credit a
# packet at a time, 1068 credit bytes each (the inner IPv4 datagram: 20
# + 8 UDP + 12 BTH + 1024 payload + 4 ICRC), so one BDP to the byte,
# 10,400 bytes, lets only 9 packets be in flight against a round trip of
# 9.6 frames at the bottleneck (1082 bytes each, 2.16 ms at 4 Mbit/s):
# the link could be 93 % busy at most, whatever the loop. With -x the
# credits are the BDP's fractions to the byte, as the tables before
# 2026-12-03 have them.
#
# usage: cbfc_curve.sh [-r RATE_MBIT] [-d DELAY_MS] [-n PACKETS] [-b BATCH]
#        [-q QUARTERS]   credits to run, in quarters of the BDP
#                        ("1 2 4 6 8 12 16")
#        [-s]            the hop into the bottleneck alone
#        [-x]            credits to the byte, not whole packets
#        as root inside a VM, after make all modules-all tools and
#        make -C selftests all:
#        tools/vm/run.sh -t 1800 -- tools/bench/cbfc_curve.sh
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
rate=4
delay=20
count=1000
batch=16384
quarters="1 2 4 6 8 12 16"
single=0
whole=1
# shellcheck source=tools/bench/cbfc_credit.sh
. "$top/tools/bench/cbfc_credit.sh"	# pkt, cbfc_ceiling
while getopts "r:d:n:b:q:sx" o; do
	case $o in
	r) rate=$OPTARG ;;
	d) delay=$OPTARG ;;
	n) count=$OPTARG ;;
	b) batch=$OPTARG ;;
	q) quarters=$OPTARG ;;
	s) single=1 ;;
	x) whole=0 ;;
	*) sed -n '/^# usage/,/^set -eu/p' "$0" | sed '$d'; exit 2 ;;
	esac
done
bdp=$((rate * 1000000 * delay / 8000))	# bytes, netem's delay alone
ceil=$(cbfc_ceiling "$rate" "$delay")

# run CREDIT: one incast run; prints "UTIL_PERMILLE RESV_PER_MB PACKETS
# LOST RTT_MS LOADED_RTT_MS". With -s, CREDIT is the bottleneck hop's alone.
run() {
	local out util resv sink rtt lrtt all=$1
	((single)) && all=$ceil
	out=$(DMSC_INCAST_CASES=test_incast_cbfc DMSC_INCAST_SENDERS=1 \
		DMSC_INCAST_CREDIT="$all" DMSC_INCAST_HOP_CREDIT="$1" \
		DMSC_INCAST_BATCH="$batch" DMSC_INCAST_SNDBUF=262144 \
		DMSC_INCAST_DELAY_MS="$delay" DMSC_INCAST_RATE="$rate" \
		DMSC_INCAST_PACKETS="$count" \
		"$top/selftests/cbfc_incast.sh" 2>&1) || true
	util=$(echo "$out" | grep -oE 'busy [0-9]+\.[0-9] %' | tr -d '.%' | awk '{print $2}')
	resv=$(echo "$out" | grep -oE '[0-9]+ per MB and hop pair' | awk '{print $1}')
	sink=$(echo "$out" | grep -oE 'sink: [0-9]+ of [0-9]+ packets, [0-9]+ lost' | awk '{print $2, $6}')
	rtt=$(echo "$out" | sed -n 's/.*hop RTT P-PE2: \([0-9.]*\) ms.*/\1/p')
	lrtt=$(echo "$out" | sed -n 's/.*hop RTT P-PE2 under load: \([0-9.]*\) ms.*/\1/p')
	if [ -z "$util" ] || [ -z "$resv" ] || [ -z "$rtt" ] || [ -z "$lrtt" ]; then
		printf '#   %s\n' "$out" >&2
		echo "cbfc_curve.sh: no figure from the run with credit $1" >&2
		exit 1
	fi
	echo "$util $resv $sink $rtt $lrtt"
}

echo "# bottleneck $rate Mbit/s, RESVs delayed $delay ms a hop (netem's BDP $bdp bytes), $count packets of 1024 bytes, credit_batch $batch, $( ((single)) && echo "the credit on the hop P-PE2 alone (the others $ceil)" || echo "the credit on every hop")"
echo "# credits $( ((whole)) && echo "rounded up to whole packets of $pkt credit bytes" || echo "to the byte (-x)")"
ceiling=$(run "$ceil")
read -r c_util c_resv c_pkts c_lost rtt c_lrtt <<<"$ceiling"
hop=$(awk -v r="$rate" -v t="$rtt" 'BEGIN { printf "%d", r * 1e6 / 8 * t / 1000 }')
echo "# hop P-PE2: round trip $rtt ms, BDP $hop bytes ($(awk -v h="$hop" -v b="$bdp" 'BEGIN { printf "%.2f", h / b }') x netem's)"
echo "# ceiling (credit $ceil bytes, $(awk -v c="$ceil" -v b="$bdp" 'BEGIN { printf "%.1f", c / b }') x netem's BDP): busy $((c_util / 10)).$((c_util % 10)) %, $c_pkts packets, $c_lost lost, $c_resv RESVs per MB, hop RTT under load $c_lrtt ms"
# loadRTT: the hop's round trip while that run's traffic flowed (median
# of pings every 20 ms); xBDPload: the credit against the BDP at it.
printf '%10s %7s %8s %8s %9s %11s %5s %8s %9s\n' credit packets xBDP busy% xCeiling RESV/MB lost loadRTT xBDPload
for q in $quarters; do	# quarters of the hop's BDP
	credit=$((hop * q / 4))
	((whole)) && credit=$(((credit + pkt - 1) / pkt * pkt))
	res=$(run "$credit")	# exits the script where it gives no figure
	read -r util resv pkts lost _ lrtt <<<"$res"
	printf '%10d %7d %8s %8s %9s %11d %5d %8s %9s\n' "$credit" $((credit / pkt)) \
		"$(awk -v c="$credit" -v h="$hop" 'BEGIN { printf "%.3f", c / h }')" \
		"$((util / 10)).$((util % 10))" \
		"$(awk -v u="$util" -v c="$c_util" 'BEGIN { printf "%.3f", u / c }')" \
		"$resv" "$lost" "$lrtt" \
		"$(awk -v c="$credit" -v r="$rate" -v t="$lrtt" 'BEGIN { printf "%.3f", c / (r * 1e6 / 8 * t / 1000) }')"
	[ "$pkts" = "$count" ] || echo "# credit $credit: the sink got $pkts of $count packets"
done
