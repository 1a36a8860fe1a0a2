#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the credit loop's time goes (issue 9): one sender through PE1 - P
# - PE2 to a bottleneck of RATE Mbit/s, the credit on the hop P -> PE2
# alone (as tools/bench/cbfc_curve.sh -s), traced with the kernel's net
# tracepoints (a packet's send and receive on each device, timestamped
# by one clock); tools/bench/cbfc_loop.py then splits the loop: the
# packet freed at PE2, the RESV's way back to P, P's next packet to PE2.
#
# usage: cbfc_loop.sh [-r RATE_MBIT] [-d DELAY_MS] [-n PACKETS]
#        [-b BATCH] [-c CREDIT_PACKETS] [-t]
#        -t also prints the traced events (TR lines) for a timeline
#        as root inside a VM, after make all modules-all tools and
#        make -C selftests all:
#        tools/vm/run.sh -t 900 -- tools/bench/cbfc_loop.sh -c 10
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
rate=4
delay=20
count=2000
batch=16384
packets=10
raw=0
# shellcheck source=tools/bench/cbfc_credit.sh
. "$top/tools/bench/cbfc_credit.sh"	# pkt, cbfc_ceiling
while getopts "r:d:n:b:c:t" o; do
	case $o in
	r) rate=$OPTARG ;;
	d) delay=$OPTARG ;;
	n) count=$OPTARG ;;
	b) batch=$OPTARG ;;
	c) packets=$OPTARG ;;
	t) raw=1 ;;
	*) sed -n '/^# usage/,/^set -eu/p' "$0" | sed '$d'; exit 2 ;;
	esac
done

# The other hops' credit: the ceiling's of cbfc_curve.sh.
ceil=$(cbfc_ceiling "$rate" "$delay")

tr=/sys/kernel/tracing
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr"
[ -w "$tr/tracing_on" ] || { echo "cbfc_loop.sh: no tracefs at $tr" >&2; exit 1; }
events="net/net_dev_start_xmit net/netif_receive_skb"
clock=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$tr/trace_clock")
size=$(sed 's/ .*//' "$tr/buffer_size_kb")
out=$(mktemp)
trace_off() {
	local e
	echo 0 >"$tr/tracing_on"
	for e in $events; do echo 0 >"$tr/events/$e/enable"; done
	echo "$clock" >"$tr/trace_clock"
	echo "$size" >"$tr/buffer_size_kb"
	rm -f "$out"
}
trap trace_off EXIT
echo 0 >"$tr/tracing_on"
echo >"$tr/trace"
echo 32768 >"$tr/buffer_size_kb"
echo mono >"$tr/trace_clock"
for e in $events; do echo 1 >"$tr/events/$e/enable"; done

echo "# bottleneck $rate Mbit/s, RESVs delayed $delay ms a hop, $count packets, credit_batch $batch, P -> PE2 credit $packets packets ($((packets * pkt)) bytes)"
echo 1 >"$tr/tracing_on"
rc=0
run=$(DMSC_INCAST_CASES=test_incast_cbfc DMSC_INCAST_SENDERS=1 \
	DMSC_INCAST_CREDIT="$ceil" \
	DMSC_INCAST_HOP_CREDIT=$((packets * pkt)) DMSC_INCAST_BATCH="$batch" \
	DMSC_INCAST_SNDBUF=262144 DMSC_INCAST_DELAY_MS="$delay" \
	DMSC_INCAST_RATE="$rate" DMSC_INCAST_PACKETS="$count" \
	"$top/selftests/cbfc_incast.sh" 2>&1) || rc=$?
echo 0 >"$tr/tracing_on"
grep -E 'hop RTT|busy|per MB|^(not )?ok' <<<"$run" || true
# The case's own verdict is on loss, not on the figure: a run that lost
# packets or failed is no loop to split.
((rc == 0)) || { echo "cbfc_loop.sh: the incast run failed (rc $rc)" >&2; exit 1; }
# An overwritten ring would shift the packets' pairing in the analysis.
if grep -q '^overrun: [1-9]' "$tr"/per_cpu/cpu*/stats; then
	echo "cbfc_loop.sh: the trace ring overran; fewer packets (-n)" >&2
	exit 1
fi
# Only the hop into the bottleneck and the bottleneck itself.
grep -E ' dev=(e2|p2|es) ' "$tr/trace" |
	sed -nE 's/.* ([0-9]+\.[0-9]+): (\w+): dev=(\S+) .* len=([0-9]+).*/TR \1 \2 \3 \4/p' >"$out"
grep -q . "$out" || { echo "cbfc_loop.sh: nothing traced" >&2; exit 1; }
((raw)) && cat "$out"
python3 "$top/tools/bench/cbfc_loop.py" "$out" "$packets" "$count"
