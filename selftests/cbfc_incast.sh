#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Incast across a WAN path, issue 9's first measurement: four senders to
# one receiver through PE1 - P - PE2, the last hop a bottleneck. With
# cbfc and credit returns on every hop nothing is lost and the bottleneck
# stays busy; with pfifo queues the bottleneck's queue overflows.
#
#  h1..h4  10.1.K.1, fc00:a:K::1: roce-gen send, QP 256+K, port 50000+K
#  |         [cbfc, session nexthop fc00:a:K::2]           (pfifo)
#  pe1     dmsc tunnel 1: SRv6 to P's End, then PE2's End.DX4
#  a1 fc00:1::1  [cbfc, sessions nexthop fc00:1::2 prevhop fc00:a:K::1]
#  |
#  p  fc00:1::2 / fc00:2::1: seg6local End
#  p2            [cbfc, sessions nexthop fc00:2::2 prevhop fc00:1::1]
#  |
#  pe2 fc00:2::2: seg6local End.DX4 to 10.9.9.2
#  es 10.9.9.1   [cbfc rate R, sessions prevhop fc00:2::1]  (tbf R + pfifo)
#  |
#  s  10.9.9.2: roce-gen sink
#
# The bottleneck is 4 Mbit/s by default (DMSC_INCAST_RATE): a TCG VM
# shared with another forwards about 7 Mbit/s of these packets through
# the four hops, so a faster bottleneck would measure the emulator.
#
# The bottleneck rate is cbfc's own `rate` on es (tbf with a pfifo child
# in the pfifo run). The senders send unpaced: with cbfc their sockets
# wait for credit (a host's own packets are never dropped for it), with
# pfifo they send at whatever the path takes until the bottleneck drops.
# A socket is held back only once the packets queued on its host fill
# its send buffer (roce-gen's default 4 MiB, about 3,600 of these), so a
# run of more than h0's flow_limit (1000 packets) a sender must set a
# smaller one (DMSC_INCAST_SNDBUF; cbfc_curve.sh gives 256 KiB), or it
# drops at the sender's own qdisc. (256 KiB for every run made the deep
# failover case take its link down too late, after all 2,000 packets:
# not understood yet, so the default stays roce-gen's.)
#
# The failover case adds a backup path through a second transit node,
# PE1 a2 fc00:3::1 - bp (End, fc00:3::2 / fc00:4::1) - PE2 e3 fc00:4::2,
# as tunnel 1's backup list, and takes P's end of the PE1 - P link down
# when a third of the packets have reached the sink: PE1's cbfc fails
# the flows it holds over to the backup: nothing may be lost but what
# was on the link as it went.
#
# With DMSC_INCAST_OUT=DIR (make demo), the sink's link is captured and
# each QP's goodput per 100 ms goes to DIR/cbfc.dat, DIR/pfifo.dat and
# DIR/failover.dat (columns: seconds, then Mbit/s of QP 257..260) for
# gnuplot, and DIR/failover.t holds the second the link went down.
#
# Goodput is the bottleneck's utilisation: the frames the sink got, at
# es's frame length, over the time from the first arrival to the last,
# against R. Goal (issue 9): 0 lost PSNs and >= 95 % of R with cbfc; the
# pfifo line must lose packets. 0 lost and no drop are checked; the
# utilisation is printed with the verdict on the goal and must be at
# least 70 % (a shared TCG VM does not always forward at the rate).
# shellcheck disable=SC2154 # h1..h4, pe1, p, pe2, s, bp (mkns) and top (lib.sh)
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
export TC_LIB_DIR=$top/tools/tc
RATE=${DMSC_INCAST_RATE:-4}		# Mbit/s at the bottleneck
N=${DMSC_INCAST_PACKETS:-500}		# packets per sender
# Credit per session and hop: about 60 packets of 1024-byte payload.
CREDIT=${DMSC_INCAST_CREDIT:-64000}
# The credit of the hop into the bottleneck alone (P to PE2: P's
# sessions and PE2's reservation), the others keeping CREDIT: the curve
# (tools/bench/cbfc_curve.sh -s) measures that one loop with its
# upstream never short of packets.
HOP_CREDIT=${DMSC_INCAST_HOP_CREDIT:-$CREDIT}
SNDBUF=${DMSC_INCAST_SNDBUF:-}	# the senders' send buffers (bytes)
BATCH=${DMSC_INCAST_BATCH:-8192}
# Senders (1..4) and a delay on the two links credit returns take back
# (PE2 to P, P to PE1), in ms: tools/bench/cbfc_curve.sh measures the
# bottleneck's goodput against credit with one sender and a delay.
SENDERS=()
for ((k = 1; k <= ${DMSC_INCAST_SENDERS:-4}; k++)); do SENDERS+=("$k"); done
DELAY_MS=${DMSC_INCAST_DELAY_MS:-0}
OUT=${DMSC_INCAST_OUT:-}
BACKUP=0	# the failover case's second transit node
MID=		# run while the senders send (the failover case)
T_DOWN=		# when it took the link down ($EPOCHREALTIME)
T_START=	# when the senders started
FIRST=		# the sink's first and last arrival (epoch seconds)
LAST=
T=
MON=
PING=
SINK=
CAP=
PIDS=()

case_cleanup() {
	local pid
	for pid in "$SINK" "$CAP" "$MON" "$PING" "${PIDS[@]}"; do
		[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	done
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

flow() {	# flow K: sender K's flow, as dmsc cbfc takes it
	echo "src 10.1.$1.1 dst 10.9.9.2 sport $((50000 + $1)) qpn $((256 + $1))"
}

# links_up "NS DEV"...: each link up.
links_up() {
	local l
	for l in "$@"; do
		ip -n "${l% *}" link set "${l#* }" up
	done
}

# topology: the namespaces, links, addresses and SRv6 routes.
topology() {
	local ns k h
	T=$(mktemp -d)
	mkns h1 h2 h3 h4 pe1 p pe2 s
	for ns in "$h1" "$h2" "$h3" "$h4" "$pe1" "$p" "$pe2" "$s"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv6.conf.all.forwarding=1 \
			net.ipv6.conf.all.seg6_enabled=1 \
			net.ipv6.conf.default.seg6_enabled=1 \
			net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0
	done
	for k in "${SENDERS[@]}"; do
		h=h$k
		ip -n "${!h}" link add h0 type veth peer name "s$k" netns "$pe1"
		ip -n "${!h}" addr add "10.1.$k.1/24" dev h0
		ip -n "${!h}" addr add "fc00:a:$k::1/64" dev h0 nodad
		ip -n "$pe1" addr add "10.1.$k.2/24" dev "s$k"
		ip -n "$pe1" addr add "fc00:a:$k::2/64" dev "s$k" nodad
		ip -n "${!h}" link set h0 up
		ip -n "$pe1" link set "s$k" up
		neigh "${!h}" "10.1.$k.2" h0 "$pe1" "s$k"
		neigh "${!h}" "fc00:a:$k::2" h0 "$pe1" "s$k"
		neigh "$pe1" "fc00:a:$k::1" "s$k" "${!h}" h0
		ip -n "${!h}" route add 10.9.9.0/24 via "10.1.$k.2" dev h0
	done
	ip -n "$pe1" link add a1 type veth peer name p1 netns "$p"
	ip -n "$p" link add p2 type veth peer name e2 netns "$pe2"
	ip -n "$pe2" link add es type veth peer name sv netns "$s"
	ip -n "$pe1" addr add fc00:1::1/64 dev a1 nodad
	ip -n "$p" addr add fc00:1::2/64 dev p1 nodad
	ip -n "$p" addr add fc00:2::1/64 dev p2 nodad
	ip -n "$pe2" addr add fc00:2::2/64 dev e2 nodad
	ip -n "$pe2" addr add 10.9.9.1/24 dev es
	ip -n "$s" addr add 10.9.9.2/24 dev sv
	links_up "$pe1 a1" "$p p1" "$p p2" "$pe2 e2" "$pe2 es" "$s sv"
	neigh "$pe1" fc00:1::2 a1 "$p" p1
	neigh "$p" fc00:1::1 p1 "$pe1" a1
	neigh "$p" fc00:2::2 p2 "$pe2" e2
	neigh "$pe2" fc00:2::1 e2 "$p" p2
	neigh "$pe2" 10.9.9.2 es "$s" sv
	neigh "$s" 10.9.9.1 sv "$pe2" es
	ip -n "$pe1" -6 route add fc00:b1::/64 via fc00:1::2 dev a1
	ip -n "$pe1" route add 10.9.9.0/24 dev a1
	ip -n "$p" -6 route add fc00:b1::e/128 encap seg6local action End dev p1
	ip -n "$p" -6 route add fc00:b2::/64 via fc00:2::2 dev p2
	ip -n "$pe2" -6 route add fc00:b2::d4/128 encap seg6local \
		action End.DX4 nh4 10.9.9.2 dev e2
	if ((BACKUP)); then
		backup_path
	else
		dns "$pe1" tunnel add 1 src fc00:1::1 path fc00:b1::e,fc00:b2::d4
	fi
	dns "$pe1" rule add dst 10.9.9.0/24 tunnel 1
}

# backup_path: PE1 - bp - PE2, tunnel 1's backup. bp runs no cbfc: the
# flows that fail over leave credit control (their sessions at PE1 have
# failed; an agent would signal new ones along the backup).
backup_path() {
	mkns bp
	ip netns exec "$bp" sysctl -qw net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.all.seg6_enabled=1 \
		net.ipv6.conf.default.seg6_enabled=1 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$pe1" link add a2 type veth peer name b1 netns "$bp"
	ip -n "$bp" link add b2 type veth peer name e3 netns "$pe2"
	ip -n "$pe1" addr add fc00:3::1/64 dev a2 nodad
	ip -n "$bp" addr add fc00:3::2/64 dev b1 nodad
	ip -n "$bp" addr add fc00:4::1/64 dev b2 nodad
	ip -n "$pe2" addr add fc00:4::2/64 dev e3 nodad
	links_up "$pe1 a2" "$bp b1" "$bp b2" "$pe2 e3"
	neigh "$pe1" fc00:3::2 a2 "$bp" b1
	neigh "$bp" fc00:3::1 b1 "$pe1" a2
	neigh "$bp" fc00:4::2 b2 "$pe2" e3
	neigh "$pe2" fc00:4::1 e3 "$bp" b2
	ip -n "$pe1" -6 route add fc00:b3::/64 via fc00:3::2 dev a2
	ip -n "$bp" -6 route add fc00:b3::e/128 encap seg6local action End dev b1
	ip -n "$bp" -6 route add fc00:b4::/64 via fc00:4::2 dev b2
	ip -n "$pe2" -6 route add fc00:b4::d4/128 encap seg6local \
		action End.DX4 nh4 10.9.9.2 dev e3
	dns "$pe1" tunnel add 1 src fc00:1::1 path fc00:b1::e,fc00:b2::d4 \
		backup fc00:b3::e,fc00:b4::d4
}

# cbfc on every hop: credit sessions, returns every BATCH bytes.
queues_cbfc() {
	local k h
	for k in "${SENDERS[@]}"; do
		h=h$k
		tc -n "${!h}" qdisc add dev h0 root cbfc
		# shellcheck disable=SC2046
		dns "${!h}" cbfc session add $(flow "$k") nexthop "fc00:a:$k::2" \
			credit $CREDIT
		# shellcheck disable=SC2046
		dns "$pe1" cbfc session add $(flow "$k") nexthop fc00:1::2 \
			prevhop "fc00:a:$k::1" credit $CREDIT tunnel 1
		# shellcheck disable=SC2046
		dns "$p" cbfc session add $(flow "$k") nexthop fc00:2::2 \
			prevhop fc00:1::1 credit $HOP_CREDIT
		# shellcheck disable=SC2046
		dns "$pe2" cbfc session add $(flow "$k") prevhop fc00:2::1
	done
	tc -n "$pe1" qdisc add dev a1 root cbfc credit $CREDIT credit_batch $BATCH
	tc -n "$p" qdisc add dev p2 root cbfc credit $CREDIT credit_batch $BATCH
	tc -n "$pe2" qdisc add dev es root cbfc rate "${RATE}mbit" \
		credit $HOP_CREDIT credit_batch $BATCH
	if [ "$DELAY_MS" != 0 ]; then
		# Only RESVs (and neighbour traffic) go these ways.
		tc -n "$pe2" qdisc add dev e2 root netem delay "${DELAY_MS}ms"
		tc -n "$p" qdisc add dev p1 root netem delay "${DELAY_MS}ms"
	fi
}

# pfifo everywhere, the bottleneck a tbf at the same rate over a pfifo
# of 50 packets.
queues_pfifo() {
	local k h
	for k in "${SENDERS[@]}"; do
		h=h$k
		tc -n "${!h}" qdisc add dev h0 root pfifo
	done
	tc -n "$pe1" qdisc add dev a1 root pfifo
	tc -n "$p" qdisc add dev p2 root pfifo
	tc -n "$pe2" qdisc add dev es root handle 1: tbf rate "${RATE}mbit" \
		burst 16k latency 1s
	tc -n "$pe2" qdisc add dev es parent 1:1 pfifo limit 50
}

# series NAME: each QP's goodput per 100 ms at the sink, from the
# capture, into $OUT/NAME.dat.
series() {
	tshark -r "$T/sv.pcap" -Y infiniband -T fields -e frame.time_relative \
		-e infiniband.bth.destqp -e frame.len 2>/dev/null |
		awk -v qps="${SENDERS[*]}" '
		{ b = int($1 * 10); bits[b, $2 - 256] += $3 * 8; if (b > last) last = b }
		END {
			n = split(qps, q, " ")
			for (b = 0; b <= last; b++) {
				line = sprintf("%.1f", b / 10)
				for (i = 1; i <= n; i++)
					line = line sprintf(" %.3f", bits[b, q[i]] * 10 / 1e6)
				print line
			}
		}' >"$OUT/$1.dat"
	echo "  per-QP goodput every 100 ms: $OUT/$1.dat ($(wc -l <"$OUT/$1.dat") samples)"
	# The moment the link went down, on the plot's clock (its first
	# frame is second 0).
	[ -z "$T_DOWN" ] || tshark -r "$T/sv.pcap" -c 1 -T fields \
		-e frame.time_epoch 2>/dev/null |
		awk -v t="${T_DOWN/,/.}" '{ printf "%.3f\n", t - $1 }' >"$OUT/$1.t"
}

# incast NAME: every sender sends N packets at once, unpaced. Sets TOTALS
# ("packets gaps"), UTIL (per mille of RATE) and prints the lines.
incast() {
	local k h pkts len t first last gaps
	ip netns exec "$s" "$RG" sink bind 10.9.9.2 json "$T/sink.json" \
		ready-file "$T/ready" idle 3 wait 60 2>"$T/sink.err" &
	SINK=$!
	wait_until "[ -e '$T/ready' ]" || fail "the sink did not start"
	if [ -n "$OUT" ]; then
		ip netns exec "$s" tcpdump -Z root -i sv -nn -U -s 64 \
			-w "$T/sv.pcap" udp port 4791 2>"$T/cap.err" &
		CAP=$!
		wait_until "grep -q listening '$T/cap.err'" ||
			fail "tcpdump: $(cat "$T/cap.err")"
	fi
	PIDS=()
	T_START=$EPOCHREALTIME
	for k in "${SENDERS[@]}"; do
		h=h$k
		ip netns exec "${!h}" "$RG" send dst 10.9.9.2 qps 1 \
			sport $((50000 + k)) qpn $((256 + k)) count "$N" rate 0 \
			size 1024 ${SNDBUF:+sndbuf "$SNDBUF"} \
			json "$T/send$k.json" 2>"$T/send$k.err" &
		PIDS+=($!)
	done
	[ -z "$MID" ] || "$MID"
	for k in "${!PIDS[@]}"; do
		wait "${PIDS[k]}" || fail "sender $((k + 1)): $(cat "$T/send$((k + 1)).err")"
	done
	PIDS=()
	# idle 3: the sink ends 3 s after the last packet.
	wait "$SINK" || fail "sink: $(cat "$T/sink.err")"
	SINK=
	if [ -n "$OUT" ]; then
		kill -INT "$CAP"
		wait "$CAP" 2>/dev/null || true
		CAP=
		series "$1"
	fi
	read -r pkts first last gaps <<<"$(jq -r '[.totals.packets,
		([.qps[].first_arrival] | min), ([.qps[].last_arrival] | max),
		.totals.psn_gaps] | @tsv' "$T/sink.json")"
	TOTALS="$pkts $gaps"
	FIRST=$first
	LAST=$last
	len=$(( $(ip netns exec "$pe2" cat /sys/class/net/es/statistics/tx_bytes) /
		$(ip netns exec "$pe2" cat /sys/class/net/es/statistics/tx_packets) ))
	t=$(jq -n "$last - $first")
	UTIL=$(jq -n "($pkts - 1) * $len * 8 / $t / ($RATE * 1e6) * 1000 | floor")
	jq -r '.qps[] | "  QP \(.dest_qp): \(.packets) packets, \(.psn_gaps) lost PSNs, \(.last_arrival - .first_arrival | . * 1000 | floor) ms"' \
		"$T/sink.json"
	echo "  sink: $pkts of $((N * ${#SENDERS[@]})) packets, $gaps lost PSNs, bottleneck ${RATE} Mbit/s busy $((UTIL / 10)).$((UTIL % 10)) % over $(jq -n "$t * 1000 | floor") ms ($len-byte frames)"
}

# hop_rtt: with a delay on the returns' way, the round trip of the hop
# into the bottleneck (P to PE2 and back, netem included), the median of
# 20 pings, as the "delay" of that hop's bandwidth-delay product; the
# curve (tools/bench/cbfc_curve.sh) takes it from this line.
hop_rtt() {
	local rtt
	[ "$DELAY_MS" != 0 ] || return 0
	rtt=$(ip netns exec "$p" ping -6 -n -c 20 -i 0.05 fc00:2::2 |
		sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	[ -n "$rtt" ] || fail "no ping reply from PE2"
	echo "hop RTT P-PE2: $rtt ms (netem $DELAY_MS ms on the way back)"
}

# hop_rtt_load: the same round trip while the incast runs, from pings
# every 20 ms throughout (started before, stopped after): the loop the
# credit must cover is the loaded one, where the stacks' and the
# emulator's queueing add to netem's delay. Only replies that came
# between the sink's first and last packet count; the median is printed.
hop_rtt_load_start() {
	[ "$DELAY_MS" != 0 ] || return 0
	ip netns exec "$p" ping -6 -n -D -i 0.02 fc00:2::2 >"$T/ping.load" 2>&1 &
	PING=$!
}

hop_rtt_load_end() {
	local rtt n mean p90 max
	[ -n "$PING" ] || return 0
	kill "$PING" 2>/dev/null || true
	wait "$PING" 2>/dev/null || true
	PING=
	read -r rtt n mean p90 max <<<"$(sed -n 's/^\[\([0-9.]*\)\].* time=\([0-9.]*\) ms.*/\1 \2/p' "$T/ping.load" |
		awk -v a="$FIRST" -v b="$LAST" '$1 >= a && $1 <= b { print $2 }' | sort -n |
		awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "%s %d %.1f %s %s\n", v[int((NR + 1) / 2)], NR, s / NR, v[int(NR * 0.9 + 0.5)], v[NR] }')"
	[ -n "$rtt" ] || fail "no ping reply from PE2 while the incast ran"
	# The median is the loop's usual length; a credit of one BDP at it
	# keeps the link busy only if no loop is longer (mean, p90, max).
	echo "hop RTT P-PE2 under load: $rtt ms (median of $n pings during the run; mean $mean, p90 $p90, max $max ms)"
}

test_incast_cbfc() {
	trap case_cleanup EXIT
	dmesg_mark
	topology
	queues_cbfc
	hop_rtt
	hop_rtt_load_start
	incast cbfc
	hop_rtt_load_end
	echo "cbfc:  $(tc -n "$pe2" -s -j qdisc show dev es | jq -c '.[0] | {sent: .packets, drops}')"
	local k h stalls
	for k in "${SENDERS[@]}"; do
		h=h$k
		stalls=$(tc -n "${!h}" -s -j qdisc show dev h0 | jq '[.. | .credit_stalls? // empty] | first // 0')
		echo "  h$k: credit stalls $stalls, drops $(tc -n "${!h}" -s -j qdisc show dev h0 | jq '.[0].drops')"
	done
	# The cost of the returns: RESVs the two transit hops sent, per MB
	# the sink got (credit_batch $BATCH).
	local resv bytes
	resv=$(( $(dns "$p" -j info | num cret_tx) + $(dns "$pe2" -j info | num cret_tx) ))
	bytes=$(ip netns exec "$s" cat /sys/class/net/sv/statistics/rx_bytes)
	echo "credit returns: $resv RESVs from P and PE2 for $bytes bytes: $((resv * 1000000 / (bytes > 0 ? bytes : 1))) per MB and hop pair (credit_batch $BATCH)"
	check "[ '$TOTALS' = '$((N * ${#SENDERS[@]})) 0' ]" \
		"cbfc: the sink saw $TOTALS (packets, lost PSNs), not $((N * ${#SENDERS[@]})) 0"
	# The goal is 95 %; what a TCG VM on a shared host can forward sets
	# the floor a run must pass (the one-packet-per-tick rate bug gave
	# 12 %). The figure and the verdict on the goal are printed.
	# A KASAN kernel (make check-debug) forwards a third as fast or less:
	# 28.5 % busy with 0 lost on a quiet machine (2026-11-25), 17.7 % on
	# a loaded one (2026-11-28). There the speed is the debug kernel's
	# and the machine's, so no floor: the stock kernels' runs (make
	# check) hold it; the loss checks are the same.
	echo "goal: bottleneck >= 95 % busy: $( ((UTIL >= 950)) && echo met || echo "missed ($((UTIL / 10)).$((UTIL % 10)) %)")"
	if kconfig KASAN; then
		echo "KASAN kernel: the floor of 70 % is not held here"
	else
		check "(( UTIL >= 700 ))" "cbfc: the bottleneck was busy $UTIL per mille, below the floor of 700"
	fi
	# The senders' own qdiscs too: a host's packets wait in its socket.
	for n in pe1 p pe2 "${SENDERS[@]/#/h}"; do
		check "(( \$(tc -n ${!n} -s -j qdisc show | jq '[.[].drops] | add') == 0 ))" \
			"$n dropped: $(tc -n "${!n}" -s -j qdisc show | jq -c '[.[] | {dev, kind, drops}]')"
	done
	dmesg_clean || fail "kernel log"
}

test_incast_pfifo() {
	trap case_cleanup EXIT
	dmesg_mark
	topology
	queues_pfifo
	incast pfifo
	echo "pfifo: $(tc -n "$pe2" -s -j qdisc show dev es | jq -c '[.[] | {kind, sent: .packets, drops}]')"
	# shellcheck disable=SC2034 # read in the check
	local lost=${TOTALS#* }
	# A KASAN kernel may forward too slowly to fill the bottleneck's
	# queue: the comparison is for the stock kernels (make check).
	if kconfig KASAN; then
		echo "KASAN kernel: pfifo lost $lost PSNs (not judged here)"
	else
		check "(( lost > 0 ))" "pfifo: no PSN lost at the bottleneck (the comparison shows nothing)"
	fi
	dmesg_clean || fail "kernel log"
}

# link_down: once a third of the packets have left the bottleneck, P's
# end of the PE1 - P link goes down (PE1's a1 loses its carrier).
link_down() {
	local third=$((N * ${#SENDERS[@]} / 3))
	# One process polls: each `ip netns exec` remounts sysfs, and under
	# the incast a KASAN kernel ran so few of them that the link went
	# down after 2000 of the 2000 had passed (make check-debug).
	timeout 600 ip netns exec "$pe2" bash -c "until (( \$(< /sys/class/net/es/statistics/tx_packets) >= $third )); do sleep 0.01; done" ||
		fail "the bottleneck did not pass $third packets"
	T_DOWN=$EPOCHREALTIME
	ip -n "$p" link set p1 down
	echo "link down: $(ip netns exec "$pe2" cat /sys/class/net/es/statistics/tx_packets) packets through the bottleneck (a third: $third)"
}

# The incast with cbfc, and the PE1 - P link lost a third of the way:
# PE1's cbfc fails its waiting flows over to the backup through bp at
# once (link_failures, a nexthop-down event), new packets follow them
# there, and the sink sees every packet but those on the link as it
# went (veth drops them, or P, its routes through p1 gone).
test_incast_failover() {
	trap case_cleanup EXIT
	dmesg_mark
	BACKUP=1
	topology
	queues_cbfc
	# PE1 gives the senders their credit back as it forwards, on
	# whichever link: without cbfc on a2 what fails over is never
	# returned and the senders stall.
	tc -n "$pe1" qdisc add dev a2 root cbfc credit $CREDIT credit_batch $BATCH
	# Not through dns(): $! must be dmsc itself, or the kill below
	# ends only the subshell and leaves the monitor (and its netns) alive.
	ip netns exec "$pe1" "$DMSC" -j monitor >"$T/events" 2>&1 &
	MON=$!
	MID=link_down
	incast failover
	MID=
	kill "$MON" 2>/dev/null || true
	wait "$MON" 2>/dev/null || true
	MON=
	local lf fo df dn ch via wire got lost qd
	# The link's failover is counted where it is made: by a1's qdisc
	# (its reset, or a dequeue that found the carrier lost), or by
	# a2's, where the hook sent the first packets it bypassed a1 with
	# (cbfc_fail_early). Both, summed.
	qd=$(tc -n "$pe1" -s -j qdisc show dev a1; tc -n "$pe1" -s -j qdisc show dev a2)
	ch=$(jq -s '[.[][] | .carrier_holds // 0] | add' <<<"$qd")
	lf=$(jq -s '[.[][] | .link_failures // 0] | add' <<<"$qd")
	fo=$(jq -s '[.[][] | .failovers // 0] | add' <<<"$qd")
	df=$(jq -s '[.[][] | .drop_failed // 0] | add' <<<"$qd")
	dn=$(jq -s '[.[][] | .drop_nomem // 0] | add' <<<"$qd")
	via=$(ip netns exec "$bp" cat /sys/class/net/b2/statistics/tx_packets)
	# What PE1 had handed to the link as it went (veth drops it, the far
	# end being down: a1's tx_dropped), or what reached P as its end
	# went down (its routes through p1 gone: Ip6InNoRoutes, where RESVs
	# to PE1 count too) is lost with the link, as on any link: an upper
	# bound of what may be lost. None of the packets that waited at PE1
	# may be, and no tail either (every PSN received or a gap).
	wire=$(( $(ip netns exec "$pe1" cat /sys/class/net/a1/statistics/tx_dropped) +
		$(ip netns exec "$p" cat /sys/class/net/p1/statistics/rx_dropped) +
		$(ip netns exec "$p" awk '$1 == "Ip6InNoRoutes" { print $2 }' /proc/net/snmp6) ))
	read -r got lost <<<"$TOTALS"
	echo "failover: $got packets, $lost lost PSNs; on the link as it went down: at most $wire (a1 tx_dropped $(ip netns exec "$pe1" cat /sys/class/net/a1/statistics/tx_dropped), p1 rx_dropped, P's Ip6InNoRoutes); a1's qdisc held for the lost carrier $ch times"
	echo "failover: link down $(awk -v t="${T_DOWN/,/.}" -v s="${T_START/,/.}" 'BEGIN { printf "%.2f", t - s }') s into the run; PE1 (a1 and a2) link_failures $lf (a1: $(jq -s '[.[0][] | .link_failures // 0] | add' <<<"$qd")), failovers $fo; $via packets through the backup, $(jq .totals.out_of_order "$T/sink.json") out of order at the sink; events: $(grep -oE 'nexthop-down|tunnel-backup' "$T/events" | sort | uniq -c | tr -s ' \n' ' ')"
	check "(( got + lost == N * ${#SENDERS[@]} && lost <= wire ))" \
		"failover: the sink saw $got packets and $lost lost PSNs of $((N * ${#SENDERS[@]})), at most $wire lost on the link"
	check "(( lf >= 1 && fo == lf && df == 0 && dn == 0 ))" \
		"failover: PE1 (a1 and a2) link_failures $lf failovers $fo drop_failed $df drop_nomem $dn"
	# The rest went through bp, less what P and PE2 held then: on a
	# KASAN kernel, whose queues build before PE1, 321 of the 1333.
	check "(( via >= N / 5 ))" "failover: only $via packets through the backup"
	# One per sender's session, whichever qdisc saw the link go first.
	check "(( \$(grep -c nexthop-down '$T/events') == ${#SENDERS[@]} ))" \
		"failover: $(grep -c nexthop-down "$T/events") nexthop-down events, not one per sender (${#SENDERS[@]})"
	check "dns $pe1 -j tunnel show 1 | grep -qE '\"active\": ?\"backup\"'" \
		"failover: tunnel 1 is not on its backup"
	check "(( \$(dns $pe1 -j -s tunnel show 1 | num switches) == 1 ))" \
		"failover: tunnel 1 switched $(dns "$pe1" -j -s tunnel show 1 | num switches) times, not once"
	for n in pe1 p pe2; do
		check "(( \$(tc -n ${!n} -s -j qdisc show | jq '[.[] | select(.dev != \"a1\") | .drops] | add') == 0 ))" \
			"$n dropped: $(tc -n "${!n}" -s -j qdisc show | jq -c '[.[] | {dev, kind, drops}]')"
	done
	dmesg_clean || fail "kernel log"
}

tools=("$RG" jq)
[ -z "$OUT" ] || tools+=(tcpdump tshark)
[ "$DELAY_MS" = 0 ] || tools+=(ping)
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || [ -x "$tool" ] || {
		echo "TAP version 13"; echo "1..0 # SKIP $tool missing"; exit 4; }
done
load_module

CASES=(
	test_incast_cbfc "cbfc incast: 4 senders through PE1-P-PE2 to a ${RATE} Mbit/s bottleneck, 0 lost PSNs, no drop, bottleneck busy (goal 95 %)"
	test_incast_pfifo "pfifo incast: the same with pfifo queues and a tbf bottleneck loses packets"
	test_incast_failover "cbfc incast, the PE1-P link down a third of the way: PE1 fails over to the backup at once, nothing lost but what was on the link"
)
# Not slow, but it lost 1 to 3 packets that were never on the link in
# about one run in three on 6.1 (Documentation/cbfc.md, "Link down").
# The cause found (new packets steered into the device linkwatch was
# deactivating, uncounted on 6.1) is mended: the hook bypasses from the
# carrier's loss, and the qdiscs fail over as soon as either sees it. A
# packet requeued into the core's gso_skb at the link-down would still
# be lost uncounted. It stays in make check-deep until more runs on both
# kernels show that none is lost; its failure is a finding, not noise.
DEEP_CASES="test_incast_failover"
cases_only CASES "${DMSC_INCAST_CASES:-}"
ktap_run "${CASES[@]}"
