#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RSVP-CBFC hop-by-hop set-up and teardown between dmsc-rsvp speakers,
# one per node, each creating its kernel credit session:
#
#            fd00:1::/64      +----- p -----+     fd00:2::/64
#          +------------------| fc00:a::2   |------------------+
#   +------+----+             | -f mb 2 MB  |           +------+----+
#   |     s     |             +-------------+           |     t     |
#   | fc00:a::1 |             +----- b -----+           | fc00:a::4 |
#   | source    |-------------| fc00:a::3   |-----------| tail 40000|
#   +-----------+ fd00:3::/64 | 50000 bytes | fd00:4::/64 (+ ::5, no
#                             +-------------+             speaker)
#
# The flow 10.1.0.1:49152 > 10.2.0.1 QP 256 is set up along the primary
# list p,t and the backup list b,t (the hops' own addresses). Expected
# kernel sessions: s -> p with p's 2 MB (delta: p answers in the draft's
# MB form), p -> t and b -> t with t's 40000 (cumulative), and on t one
# with no next hop that returns to p, the primary's last hop (the source
# sends the backup's PATH once the primary is up, so p's comes first).
# a, b (mkns) and top (lib.sh) are set by lib.sh:
# shellcheck disable=SC2154
source "$(dirname "$0")/lib.sh"

RSVP=${DMSC_RSVP:-$top/agent/dmsc-rsvp}
AGENT=${DMSC_AGENT:-$top/agent/dmsc-agent}
PKI=$top/tools/pki/dmsc-pki
# dmsc-rsvp run, or dmsc-agent's sr role (sr.rsvp) with the same settings.
SPEAKERS=rsvp
# shellcheck disable=SC2034 # read by lib.sh (node_fns, nodes_add)
NODES="s p b t"
FLOW=(src 10.1.0.1 dst 10.2.0.1 sport 49152 qpn 256)
T=
PIDS=()
CAP=

node_fns

# The topology: four nodes, four links, each node's address on lo and a
# route to each neighbour's.
topo() {
	T=$(mktemp -d)
	nodes_add rsvp
	link s sp p ps
	link p pt t tp
	link s sb b bs
	link b bt t tb
	# ip -batch, one ip a node: each process costs about 0.1 s in a TCG
	# VM, and every case builds the topology anew.
	ip -n "$NS_s" -batch - <<-EOF
	addr add fd00:1::1/64 dev sp
	addr add fd00:3::1/64 dev sb
	addr add fc00:a::1/128 dev lo
	route add fc00:a::2/128 via fd00:1::2
	route add fc00:a::3/128 via fd00:3::2
	EOF
	ip -n "$NS_p" -batch - <<-EOF
	addr add fd00:1::2/64 dev ps
	addr add fd00:2::1/64 dev pt
	addr add fc00:a::2/128 dev lo
	route add fc00:a::1/128 via fd00:1::1
	route add fc00:a::4/127 via fd00:2::2
	EOF
	ip -n "$NS_b" -batch - <<-EOF
	addr add fd00:3::2/64 dev bs
	addr add fd00:4::1/64 dev bt
	addr add fc00:a::3/128 dev lo
	route add fc00:a::1/128 via fd00:3::1
	route add fc00:a::4/128 via fd00:4::2
	EOF
	ip -n "$NS_t" -batch - <<-EOF
	addr add fd00:2::2/64 dev tp
	addr add fd00:4::2/64 dev tb
	addr add fc00:a::4/128 dev lo
	addr add fc00:a::5/128 dev lo
	route add fc00:a::2/128 via fd00:2::1
	route add fc00:a::3/128 via fd00:4::1
	EOF
}

# speaker NODE ADDR [OPTIONS...]: dmsc-rsvp in NODE, control socket
# $T/NODE.sock, log $T/NODE.log. With SPEAKERS=agent, dmsc-agent with the
# sr role and its sr.rsvp made of the same options (-r, -f, -c), the
# agent's own control socket $T/NODE.agent.
speaker() {
	local n=$1 addr=$2 rsvp
	shift 2
	if [ "$SPEAKERS" = agent ]; then
		rsvp="\"address6\": \"$addr\", \"control\": \"$T/$n.sock\", \"retry_ms\": 300, \"retries\": 3"
		while [ $# -gt 0 ]; do
			case $1 in
			-r) rsvp+=", \"refresh_ms\": $2" ;;
			-f) rsvp+=", \"form\": \"$2\"" ;;
			-c) rsvp+=", \"credit\": $2" ;;
			*) fail "speaker: $1 has no sr.rsvp field here" ;;
			esac
			shift 2
		done
		echo "{ \"node\": \"$n\", \"roles\": [\"sr\"], \"control\": \"$T/$n.agent\", \"sr\": { \"rsvp\": { $rsvp } } }" >"$T/$n.json"
		ip netns exec "$(ns_of "$n")" "$AGENT" -c "$T/$n.json" \
			>"$T/$n.log" 2>&1 &
	else
		# Not through the function $n: $! must be the speaker, for kill.
		ip netns exec "$(ns_of "$n")" "$RSVP" run -C "$T/$n.sock" \
			-6 "$addr" -t 300 -n 3 "$@" 2>"$T/$n.log" &
	fi
	PIDS+=($!)
	for _ in $(seq 100); do
		[ -S "$T/$n.sock" ] && return 0
		sleep 0.1
	done
	fail "speaker in $n did not start: $(cat "$T/$n.log")"
}

# speakers [REFRESH_MS]: one per node; R is long by default, so that no
# refresh moves the counters while a case reads them.
speakers() {
	local r=${1:-600000}
	speaker s fc00:a::1 -r "$r"
	speaker p fc00:a::2 -r "$r" -f mb -c 2097152
	speaker b fc00:a::3 -r "$r" -c 50000
	speaker t fc00:a::4 -r "$r" -c 40000
}

rs() {
	local n=$1
	shift
	$n "$RSVP" -C "$T/$n.sock" "$@"
}

# stat NODE NAME: one of the speaker's counters.
stat() {
	rs "$1" stats | awk -v k="$2" '$1 == k { print $2 }'
}

# sessions NODE: the node's kernel sessions, one line each:
# "src dst sport qpn nexthop mode credit" ("-" for a tail's next hop).
sessions() {
	dns "$(ns_of "$1")" -j cbfc session show |
	jq -rn 'input[] | "\(.src) \(.dst) \(.sport) \(.qpn) \(.nexthop // "-") \(.mode) \(.credit)"'
}

# prevhops NODE: the previous hop of each of the node's kernel sessions.
prevhops() {
	dns "$(ns_of "$1")" -j cbfc session show | jq -r '.[] | .prevhop // "-"'
}

# The tail's session: no next hop, in t's own form, returning to PREV.
want_tail() {
	want t "10.1.0.1 10.2.0.1 49152 256 - cumulative 0"
	check "[ \"\$(prevhops t)\" = '$1' ]" "t's session returns to $(prevhops t), not $1"
}

# kbackup NODE: the node's kernel sessions' tunnel and backup, one line
# each: "nexthop tunnel backup_nexthop backup_credit backup_mode
# on_backup", "-" for an absent one.
kbackup() {
	dns "$(ns_of "$1")" -j cbfc session show | jq -r '.[] |
		"\(.nexthop) \(.tunnel // "-") \(.backup_nexthop // "-") \(.backup_credit // "-") \(.backup_mode // "-") \(.on_backup // "-")"'
}

# want_backup NODE LINES: kbackup NODE is exactly LINES.
want_backup() {
	local got
	got=$(kbackup "$1")
	[ "$got" = "$2" ] || fail "$1's sessions' backups: \"$got\", want \"$2\""
	echo "$1: backup: ${got:-no session}"
}

ns_of() {
	local v=NS_$1
	echo "${!v}"
}

case_cleanup() {
	local p
	[ -z "$CAP" ] || kill -INT "$CAP" 2>/dev/null || true
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
	nodes_del
	[ -z "$T" ] || rm -rf "$T"
}

# want NODE LINES: the node's kernel sessions are exactly LINES.
want() {
	local got
	got=$(sessions "$1")
	[ "$got" = "$2" ] || fail "$1's sessions: \"$got\", want \"$2\""
	echo "$1: ${got:-no session}"
}

# Poll until NODE has no kernel session and no speaker state.
wait_empty() {
	local n=$1
	for _ in $(seq 50); do
		[ -z "$(sessions "$n")" ] && [ -z "$(rs "$n" state)" ] && return 0
		sleep 0.1
	done
	fail "$n still has: $(sessions "$n") / $(rs "$n" state)"
}

test_setup_teardown() {
	trap case_cleanup EXIT
	local out v n path resv
	topo
	speakers
	# tshark on p's link to s: the PATH that reaches p, the RESV it sends.
	# Not through the function p: SIGINT must reach tcpdump itself.
	ip netns exec "$NS_p" tcpdump -Z root -i ps -nn -U -w "$T/ps.pcap" \
		'ip6 proto 46' 2>"$T/cap.err" &
	CAP=$!
	for n in $(seq 100); do
		grep -q listening "$T/cap.err" 2>/dev/null && break
		sleep 0.1
	done
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4 \
		backup fc00:a::3,fc00:a::4) || fail "setup: $out $(cat "$T"/*.log)"
	echo "$out"
	check "[ \"\$out\" = \$'primary up nexthop fc00:a::2 credit 2097152\nbackup up nexthop fc00:a::3 credit 50000' ]" \
		"setup status: $out"
	want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	want b "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	# The tail holds a path state per list, each with its previous hop;
	# one kernel session per flow: the primary's, returning to p.
	want_tail fc00:a::2
	out=$(rs t state)
	check "(( \$(grep -c 'prev fc00:a::2 next tail up credit 0 kernel 1' <<<\"\$out\") == 1 && \$(grep -c 'prev fc00:a::3 next tail up credit 0 kernel 0' <<<\"\$out\") == 1 ))" \
		"t's state: $out"
	check "(( \$(stat t tail_shared) == 1 && \$(stat t sessions_added) == 1 ))" \
		"t: tail_shared $(stat t tail_shared) sessions_added $(stat t sessions_added), not 1 1"
	# Every PATH sent arrived (a slow VM may retransmit some: counted).
	for n in s p b t; do
		echo "$n: $(rs $n stats | grep -E '^(rx|tx)_(path|resv)|^retransmits' | tr '\n' ' ')"
	done
	check "(( \$(stat p rx_path) + \$(stat b rx_path) == \$(stat s tx_path) && \$(stat s tx_path) == 2 + \$(stat s retransmits) ))" \
		"s sent $(stat s tx_path) PATH, p got $(stat p rx_path), b $(stat b rx_path)"
	check "(( \$(stat t rx_path) == \$(stat p tx_path) + \$(stat b tx_path) && \$(stat t tx_resv) == \$(stat p rx_resv) + \$(stat b rx_resv) ))" \
		"t: PATH in $(stat t rx_path), RESV out $(stat t tx_resv)"
	check "(( \$(stat s rx_resv) == \$(stat p tx_resv) + \$(stat b tx_resv) && \$(stat s rx_resv) >= 2 ))" \
		"s got $(stat s rx_resv) RESV"
	sleep 1
	kill -INT "$CAP"
	wait "$CAP" 2>/dev/null || true
	CAP=
	tshark -V -r "$T/ps.pcap" >"$T/ps.txt" 2>/dev/null
	path=$(grep -c '^Resource ReserVation Protocol (RSVP): Unknown (28). SESSION: IPv4, Destination 10.2.0.1, Protocol 17, Port 4791. SENDER TEMPLATE: IPv4, Sender 10.1.0.1, Port 49152.' "$T/ps.txt" || true)
	resv=$(grep -c '^Resource ReserVation Protocol (RSVP): Unknown (29). SESSION: IPv4, Destination 10.2.0.1, Protocol 17, Port 4791. FILTERSPEC: IPv4, Sender 10.1.0.1, Port 49152.' "$T/ps.txt" || true)
	echo "tshark on p/ps: $path PATH, $resv RESV"
	v=$(stat p rx_path)
	n=$(stat p tx_resv)
	check "(( path == v && resv == n && path >= 1 && resv >= 1 ))" \
		"tshark saw $path PATH and $resv RESV, p counted $v and $n"
	check "(( \$(grep -c 'HOP object (3)' \"\$T/ps.txt\") == path + resv ))" \
		"not $((path + resv)) HOP objects"
	check "! grep -q 'Malformed\|Expert Info' \"\$T/ps.txt\"" \
		"tshark: $(grep -m1 'Malformed\|Expert Info' "$T/ps.txt")"

	out=$(rs s teardown "${FLOW[@]}")
	check "[ \"\$out\" = 'ok 2' ]" "teardown: $out"
	for n in s p b t; do
		wait_empty $n
	done
	check "(( \$(stat p rx_pathtear) == 1 && \$(stat b rx_pathtear) == 1 && \$(stat t rx_pathtear) == 2 ))" \
		"PathTear received: p $(stat p rx_pathtear) b $(stat b rx_pathtear) t $(stat t rx_pathtear)"
	check "(( \$(stat s sessions_deleted) == 1 && \$(stat p sessions_deleted) == 1 && \$(stat b sessions_deleted) == 1 ))" \
		"sessions deleted: s $(stat s sessions_deleted) p $(stat p sessions_deleted) b $(stat b sessions_deleted)"
	# t: the primary's PathTear may come first; its session then goes
	# to the backup's state until that one's PathTear.
	check "(( \$(stat t sessions_deleted) == \$(stat t sessions_added) && \$(stat t sessions_added) >= 1 ))" \
		"t: sessions added $(stat t sessions_added) deleted $(stat t sessions_deleted)"
	echo "after teardown: no session, no state on s p b t"
	for n in s p b t; do
		check "(( \$(stat $n kernel_errors) == 0 ))" "$n: kernel errors"
	done
}

# The backup's credit in the source's kernel session (dmsc -j cbfc
# session show): set up with tunnel 5, s's session carries the tunnel and,
# once b's RESV is in, b's address and the 50000 bytes b reserved; a
# backup torn down alone (set ... backup none, PathTear down b,t) is taken
# out of the session, set again it is put back; the primary's session is
# made once and kept throughout.
test_backup_credit() {
	trap case_cleanup EXIT
	local out n
	topo
	speakers
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4 \
		backup fc00:a::3,fc00:a::4 tunnel 5) ||
		fail "setup: $out $(cat "$T"/*.log)"
	echo "$out"
	check "[ \"\$out\" = \$'primary up nexthop fc00:a::2 credit 2097152 tunnel 5\nbackup up nexthop fc00:a::3 credit 50000 kernel yes' ]" \
		"setup status: $out"
	want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	want_backup s "fc00:a::2 5 fc00:a::3 50000 cumulative 0"
	want b "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"

	out=$(rs s set "${FLOW[@]}" backup none) || fail "set backup none: $out"
	check "[ \"\$out\" = 'primary up nexthop fc00:a::2 credit 2097152 tunnel 5' ]" \
		"status after set backup none: $out"
	want_backup s "fc00:a::2 5 - - - 0"
	wait_empty b
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"

	out=$(rs s set "${FLOW[@]}" backup fc00:a::3,fc00:a::4) ||
		fail "set backup: $out $(cat "$T"/s.log)"
	check "[ \"\$out\" = \$'primary up nexthop fc00:a::2 credit 2097152 tunnel 5\nbackup up nexthop fc00:a::3 credit 50000 kernel yes' ]" \
		"status after set backup: $out"
	want_backup s "fc00:a::2 5 fc00:a::3 50000 cumulative 0"
	for n in sessions_added backups_set backups_cleared kernel_errors backup_moved backup_no_session; do
		echo "s: $n $(stat s $n)"
	done
	check "(( \$(stat s sessions_added) == 1 && \$(stat s backups_set) == 2 && \$(stat s backups_cleared) == 1 ))" \
		"s: sessions_added $(stat s sessions_added) backups_set $(stat s backups_set) backups_cleared $(stat s backups_cleared), not 1 2 1"

	out=$(rs s teardown "${FLOW[@]}")
	check "[ \"\$out\" = 'ok 2' ]" "teardown: $out"
	for n in s p b t; do
		wait_empty $n
	done
	for n in s p b t; do
		check "(( \$(stat $n kernel_errors) == 0 ))" "$n: kernel errors"
	done
}

# cret NODE: the credit returns the node's module applied (dmsc info).
cret() {
	dns "$(ns_of "$1")" -j info | num cret_rx
}

# roce N: N RoCEv2 packets of the flow (10.1.0.1:49152 > 10.2.0.1, BTH
# dest QP 256) sent by t out of its dummy device "sink", whose cbfc qdisc
# counts them for t's session: what t returns to its previous hop.
roce() {
	t python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.1.0.1", 49152))
bth = bytes([4, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0, 0, 0])
for _ in range(int(sys.argv[1])):
    s.sendto(bth + bytes(988), ("10.2.0.1", 4791))' "$1"
}

# The kernel's failover followed by the source's speaker (Documentation/
# cbfc.md, "Failover at the source"). s's flow runs on p,t with the
# backup b,t and dmsc tunnel 5, whose backup list leads to b; t sends the
# flow's RoCEv2 out of a cbfc qdisc, so its session returns credit to its
# previous hop (from fc00:a::4, the address p and b name as next hop).
# Before: t's returns reach p, none reach b. Then dmsc tunnel switch 5
# backup, the switch the heartbeat's failover makes, with the same
# tunnel-backup event: s tears the primary down (p's state and session
# go), stops refreshing it, and t's session returns to b, the backup's
# last hop, which receives t's returns. Switched back: the backup torn
# down, the primary signalled anew, t's session returns to p again.
test_failover_events() {
	trap case_cleanup EXIT
	local out rx_p rx_b path_p path_b n
	topo
	export TC_LIB_DIR=$top/tools/tc
	t ip route replace fc00:a::2/128 via fd00:2::1 src fc00:a::4
	t ip route replace fc00:a::3/128 via fd00:4::1 src fc00:a::4
	t ip addr add 10.1.0.1/32 dev lo
	t ip link add sink type dummy
	t ip link set sink up
	t ip route add 10.2.0.0/24 dev sink
	t tc qdisc add dev sink root cbfc || fail "no cbfc qdisc in t"
	dns "$NS_s" tunnel add 5 src fc00:a::1 path fc00:a::2 backup fc00:a::3 ||
		fail "tunnel 5 in s"
	# R = 1 s: a refresh of the primary would show within the case.
	speakers 1000
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4 \
		backup fc00:a::3,fc00:a::4 tunnel 5) ||
		fail "setup: $out $(cat "$T"/*.log)"
	check "[ \"\$out\" = \$'primary up nexthop fc00:a::2 credit 2097152 tunnel 5\nbackup up nexthop fc00:a::3 credit 50000 kernel yes' ]" \
		"setup status: $out"
	want_tail fc00:a::2

	# Control: t's returns go to p, the primary's last hop.
	rx_p=$(cret p)
	rx_b=$(cret b)
	roce 20
	wait_until "(( \$(cret p) > $rx_p ))" 30 ||
		fail "t's returns never reached p: cret_rx $(cret p); t: $(dns "$NS_t" -j cbfc session show); p: $(dns "$NS_p" -j info)"
	sleep 0.3
	check "(( \$(cret b) == $rx_b ))" "b took returns before the failover: cret_rx $(cret b)"
	echo "before: p cret_rx $rx_p -> $(cret p), b cret_rx $rx_b -> $(cret b)"

	dns "$NS_s" tunnel switch 5 backup
	wait_until "(( \$(stat s failovers_handled) == 1 ))" 50 ||
		fail "s did not act on tunnel-backup: $(rs s stats | grep -E 'events|failover|primary_') $(cat "$T"/s.log)"
	check "(( \$(stat s primary_torn) == 1 && \$(stat s events_seen) >= 1 && \$(stat s events_malformed) == 0 && \$(stat s events_lost) == 0 ))" \
		"s: primary_torn $(stat s primary_torn) events_seen $(stat s events_seen) malformed $(stat s events_malformed) lost $(stat s events_lost)"
	out=$(dns "$NS_s" -j cbfc session show | jq -r '.[0] | "\(.nexthop) \(.on_backup)"')
	check "[ \"\$out\" = 'fc00:a::3 1' ]" \
		"s's session not moved onto the backup: $out ($(kbackup s))"
	out=$(rs s status "${FLOW[@]}")
	echo "$out"
	check "[ \"\$out\" = \$'primary moved nexthop fc00:a::2 credit 2097152 tunnel 5 # on the backup since tunnel-backup 5\nbackup up nexthop fc00:a::3 credit 50000 kernel moved' ]" \
		"status after the switch: $out"
	# The PathTear took p's state and session, and t's session went to b.
	wait_empty p
	wait_until "[ \"\$(prevhops t)\" = fc00:a::3 ]" 50 ||
		fail "t's session returns to $(prevhops t), not b's fc00:a::3"
	want_tail fc00:a::3

	# The backup's last hop receives t's returns now; p none.
	rx_p=$(cret p)
	rx_b=$(cret b)
	roce 20
	wait_until "(( \$(cret b) > $rx_b ))" 30 ||
		fail "b received no returns after the failover: cret_rx $(cret b) cret_source $(dns "$NS_b" -j info | num cret_source); t: $(dns "$NS_t" -j cbfc session show)"
	check "(( \$(cret p) == $rx_p ))" "p still took returns: cret_rx $(cret p)"
	echo "after: b cret_rx $rx_b -> $(cret b), p cret_rx $rx_p -> $(cret p)"

	# No refresh of the primary any more (R is 1 s); the backup's go on.
	path_p=$(stat p rx_path)
	path_b=$(stat b rx_path)
	sleep 2.5
	check "(( \$(stat p rx_path) == $path_p && \$(stat b rx_path) >= $path_b + 2 ))" \
		"in 2.5 s p got $(( $(stat p rx_path) - path_p )) PATHs (want 0), b $(( $(stat b rx_path) - path_b )) (want 2 or more)"
	check "[ -z \"\$(rs p state)\" ]" "p has state again: $(rs p state)"

	# Back on the primary: signalled anew, t returns to p again.
	dns "$NS_s" tunnel switch 5 primary
	wait_until "(( \$(stat s primary_resignalled) == 1 ))" 50 ||
		fail "s did not act on tunnel-primary: $(cat "$T"/s.log)"
	wait_until "[ \"\$(rs s status ${FLOW[*]})\" = \$'primary up nexthop fc00:a::2 credit 2097152 tunnel 5\nbackup up nexthop fc00:a::3 credit 50000 kernel yes' ]" 100 ||
		fail "status after the switch back: $(rs s status "${FLOW[@]}")"
	want_backup s "fc00:a::2 5 fc00:a::3 50000 cumulative 0"
	wait_until "[ \"\$(prevhops t)\" = fc00:a::2 ]" 50 ||
		fail "t's session returns to $(prevhops t), not p's fc00:a::2"
	for n in failovers_handled primary_torn primary_resignalled events_seen events_ignored resyncs; do
		echo "s: $n $(stat s $n)"
	done

	out=$(rs s teardown "${FLOW[@]}")
	check "[ \"\$out\" = 'ok 2' ]" "teardown: $out"
	for n in s p b t; do
		wait_empty $n
	done
	# t's cbfc qdisc and dummy device go with its namespace.
}

# Bad messages at p, from s's namespace, while the session is up.
test_bad_input() {
	trap case_cleanup EXIT
	local kind out
	topo
	speakers
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4) ||
		fail "setup: $out"
	for kind in truncated badlen badsum absurd class unknown; do
		s "$RSVP" inject fc00:a::1 fc00:a::2 $kind
	done
	sleep 0.5
	rs p stats | grep -v ' 0$' | sed 's/^/p: /'
	check "(( \$(stat p refused_length) == 1 ))" "truncated not counted as length"
	check "(( \$(stat p refused_object_length) == 1 ))" "badlen not counted"
	check "(( \$(stat p refused_checksum) == 1 ))" "badsum not counted"
	check "(( \$(stat p refused_value) == 1 ))" "absurd credit not counted"
	check "(( \$(stat p refused_unknown_class) == 1 ))" "unknown class not counted"
	check "(( \$(stat p unknown_session) == 1 ))" "unknown session not counted"
	check "kill -0 ${PIDS[1]}" "p's speaker died"
	# Nothing changed: p's session is the one set up, and p still works.
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	out=$(rs s teardown "${FLOW[@]}")
	wait_empty p
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4) ||
		fail "setup after the bad input: $out"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
}

# A hop without a speaker (fc00:a::5 on t): p retries, gives up, sends
# PathErr; nothing is left on s or p.
test_silent_hop() {
	trap case_cleanup EXIT
	local out
	topo
	speakers
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::5) &&
		fail "setup through a silent hop succeeded: $out"
	echo "$out"
	check "[[ \"\$out\" == 'primary failed nexthop fc00:a::2 credit 0 # error 23 from hop fc00:a::5' ]]" \
		"status: $out"
	# A PATH the source retransmitted before the PathErr reached it makes
	# p start again: each round is 3 retransmissions and a PathErr.
	wait_empty p
	check "(( \$(stat p retransmits) == 3 * \$(stat p gave_up) && \$(stat p gave_up) >= 1 && \$(stat p tx_patherr) == \$(stat p gave_up) ))" \
		"p: retransmits $(stat p retransmits) gave_up $(stat p gave_up) tx_patherr $(stat p tx_patherr)"
	want s ""
	want p ""
}

# R = 2 s: PATH refreshes keep the hops up; once the source is gone
# (killed, no PathTear) every hop's state expires after (3 + 0.5) x 1.5 x R
# and takes its session with it.
test_refresh_expiry() {
	trap case_cleanup EXIT
	local out n
	topo
	speakers 2000
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4 \
		backup fc00:a::3,fc00:a::4) || fail "setup: $out"
	sleep 14
	# 14 s is more than the 10.5 s expiry: only refreshes kept them.
	for n in p b t; do
		check "(( \$(stat $n rx_path) >= 3 && \$(stat $n expired) == 0 ))" \
			"$n: $(stat $n rx_path) PATH, $(stat $n expired) expired"
	done
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	kill -KILL "${PIDS[0]}"
	wait "${PIDS[0]}" 2>/dev/null || true
	local t0=$SECONDS
	for _ in $(seq 60); do
		[ -z "$(sessions p)$(sessions b)" ] && break
		sleep 0.5
	done
	echo "p and b without a session $((SECONDS - t0)) s after the source died"
	want p ""
	want b ""
	for n in p b; do
		check "(( \$(stat $n expired) >= 1 ))" "$n: expired $(stat $n expired)"
		check "[ -z \"\$(rs $n state)\" ]" "$n keeps state: $(rs $n state)"
	done
	# The tail's two states go too: expired, or by the PathTear that p
	# and b send when theirs expire, whichever comes first.
	for _ in $(seq 20); do
		[ -z "$(rs t state)" ] && break
		sleep 0.5
	done
	check "[ -z \"\$(rs t state)\" ]" "t keeps state: $(rs t state)"
	check "(( \$(stat t expired) + \$(stat t rx_pathtear) >= 2 ))" \
		"t: expired $(stat t expired), PathTear $(stat t rx_pathtear)"
}

# The same set-up and teardown with every speaker in dmsc-agent's sr role:
# the kernel sessions and the counters are the speakers'; dmsc agent show
# rsvp reports what the speaker's own stats do; an agent stopped (SIGTERM)
# takes its node's session and state with it, and once it is back a new
# set-up through it works.
test_agent_speakers() {
	SPEAKERS=agent
	test_setup_teardown
	local out j
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4) ||
		fail "setup again: $out"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	j=$(p "$top/agent/dmsc" -j agent socket "$T/p.agent" show rsvp)
	echo "p: dmsc agent show rsvp: $(jq -c '.sr | {states, states_up, tx_resv: .counters.tx_resv, rx_path: .counters.rx_path}' <<<"$j")"
	check "(( \$(jq '.sr.counters.tx_resv' <<<\"\$j\") == \$(stat p tx_resv) && \$(jq '.sr.counters.rx_path' <<<\"\$j\") == \$(stat p rx_path) && \$(jq '.sr.states_up' <<<\"\$j\") == 1 ))" \
		"dmsc agent show rsvp on p: $j"
	kill -TERM "${PIDS[1]}"
	wait "${PIDS[1]}" 2>/dev/null || true
	want p ""
	check "[ ! -e \"\$T/p.sock\" ] && grep -q 'RSVP-CBFC speaker on fc00:a::2' \"\$T/p.log\"" \
		"p's agent: $(cat "$T/p.log")"
	speaker p fc00:a::2 -r 600000 -f mb -c 2097152
	out=$(rs s teardown "${FLOW[@]}")
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4) ||
		fail "setup after p's restart: $out"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	out=$(rs s teardown "${FLOW[@]}")
	check "[ \"\$out\" = 'ok 1' ]" "teardown: $out"
	for n in s p b t; do
		wait_empty $n
	done
}

# wait_want NODE LINES: want, once the node's sessions are LINES (30 s).
wait_want() {
	for _ in $(seq 150); do
		[ "$(sessions "$1")" = "$2" ] && break
		sleep 0.2
	done
	want "$1" "$2"
}

# credit_policy NAME PATH [BACKUP]: s's tunnel 1 with one credit flow,
# FLOW, along the hops PATH and BACKUP (comma-separated addresses).
credit_policy() {
	local path backup=""
	path=$(sed 's/[^,]*/"&"/g' <<<"$2")
	[ -z "${3:-}" ] || backup=", \"backup\": [ $(sed 's/[^,]*/"&"/g' <<<"$3") ]"
	echo "{ \"policies\": [ { \"name\": \"$1\", \"node\": \"s\", \"tunnel\": 1,
	  \"src\": \"fc00:a::1\", \"paths\": [ { \"segs\": [ $path ] } ],
	  \"rules\": [ { \"dst\": \"10.2.0.0/16\" } ],
	  \"credit\": [ { \"src\": \"10.1.0.1\", \"dst\": \"10.2.0.1\", \"sport\": 49152,
	                \"qpn\": 256, \"path\": [ $path ]$backup } ] } ] }"
}

# pflow FIELD: the first policy flow's FIELD in s's dmsc agent show rsvp.
pflow() {
	"$top/agent/dmsc" -j agent socket "$T/s.agent" show rsvp | jq -r ".sr.$1"
}

# wait_pflow STATUS: until the policy flow's status is STATUS (30 s).
wait_pflow() {
	wait_until "[ \"\$(pflow 'policy_flows[0].status')\" = $1 ]" 300 ||
		fail "policy flow not $1: $(pflow policy_flows)"
}

# The SMO's policies carry credit flows: s's sr role, the flows' source,
# sets them up through its speaker along the listed hops when a policy
# comes (agents with the sr role and sr.rsvp on p, b and t), tears them
# down with PathTear when the policy is withdrawn, moves them when the
# hops change and signals them again after its agent restarts. The
# controller (srd, aam, smo) shares s's namespace, over mutual TLS.
test_policy_credit() {
	trap case_cleanup EXIT
	SPEAKERS=agent
	local n out
	topo
	{
		"$PKI" -d "$T/pki" init
		"$PKI" -d "$T/pki" node c --roles srd,aam,smo
		"$PKI" -d "$T/pki" node s --roles sr
	} >"$T/pki.log" 2>&1 || fail "dmsc-pki: $(cat "$T/pki.log")"
	credit_policy roce fc00:a::2,fc00:a::4 fc00:a::3,fc00:a::4 >"$T/pol.json"
	cat >"$T/c.json" <<-EOF
	{ "node": "c", "roles": ["srd", "aam", "smo"], "control": "$T/c.sock",
	  "tls": { "ca": "$T/pki/ca.crt", "cert": "$T/pki/c.crt", "key": "$T/pki/c.key" },
	  "srd": { "listen": "127.0.0.1:7400", "store": { "sqlite": "$T/srd.db" } },
	  "smo": { "policies": "$T/pol.json" } }
	EOF
	cat >"$T/s.json" <<-EOF
	{ "node": "s", "roles": ["sr"], "control": "$T/s.agent",
	  "tls": { "ca": "$T/pki/ca.crt", "cert": "$T/pki/s.crt", "key": "$T/pki/s.key" },
	  "sr": { "srd": [ { "node": "c", "address": "127.0.0.1:7400" } ],
	          "state": "$T/s.state",
	          "rsvp": { "address6": "fc00:a::1", "control": "$T/s.sock",
	                    "retry_ms": 300, "retries": 3 } } }
	EOF
	speaker p fc00:a::2 -r 600000 -f mb -c 2097152
	speaker b fc00:a::3 -r 600000 -c 50000
	speaker t fc00:a::4 -r 600000 -c 40000
	ip netns exec "$NS_s" "$AGENT" -c "$T/c.json" >"$T/c.log" 2>&1 &
	PIDS+=($!)
	ip netns exec "$NS_s" "$AGENT" -c "$T/s.json" >"$T/s.log" 2>&1 &
	PIDS+=($!)
	local spid=$!

	# The policy's flow, up on every hop with nothing asked of s by hand.
	wait_want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	wait_want b "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	want_tail fc00:a::2
	check "[ \"\$(dns \"\$NS_s\" -j tunnel show | jq -c '[.[] | .id]')\" = '[1]' ]" \
		"s's tunnels: $(dns "$NS_s" -j tunnel show)"
	# Both lists up: s takes b's RESV after b made its session; s's
	# session carries the policy's tunnel 1 and b's credit.
	wait_pflow up
	echo "s: $(rs s status "${FLOW[@]}" | tr '\n' ' ')"
	want_backup s "fc00:a::2 1 fc00:a::3 50000 cumulative 0"
	check "[ \"\$(pflow 'policy_flows[0] | \"\\(.tunnel) \\(.backup_kernel)\"')\" = '1 yes' ]" \
		"s's policy flow: $(pflow policy_flows)"
	check "[ \"\$(pflow policy_setups) \$(pflow policy_teardowns)\" = '1 0' ]" \
		"s's policy flow: $(pflow policy_flows) setups $(pflow policy_setups) teardowns $(pflow policy_teardowns)"
	# Set up by hand already: a teardown by hand is the operator's; the
	# policy's flow is set up again, by the policy.
	out=$(rs s setup "${FLOW[@]}" path fc00:a::2,fc00:a::4 2>&1) &&
		fail "a second set-up of the policy's flow by hand: $out"
	echo "by hand, the policy's flow: $out"

	# Withdrawn: PathTear along both lists, nothing left on any hop.
	"$DMSC" agent socket "$T/c.sock" policy withdraw roce >/dev/null ||
		fail "policy withdraw"
	for n in s p b t; do
		wait_empty $n
	done
	check "[ \"\$(pflow policy_teardowns) \$(pflow 'policy_flows | length')\" = '1 0' ]" \
		"after the withdraw: teardowns $(pflow policy_teardowns), flows $(pflow policy_flows)"
	echo "withdrawn: no session, no state on s p b t"

	# The hops change: primary through b alone; p's state goes.
	credit_policy roce fc00:a::3,fc00:a::4 >"$T/pol2.json"
	"$DMSC" agent socket "$T/c.sock" policy apply "$T/pol2.json" >/dev/null ||
		fail "policy apply"
	wait_want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::3 cumulative 50000"
	wait_want b "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	want p ""
	credit_policy roce fc00:a::2,fc00:a::4 >"$T/pol3.json"
	"$DMSC" agent socket "$T/c.sock" policy apply "$T/pol3.json" >/dev/null ||
		fail "policy apply"
	wait_want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	wait_want b ""
	wait_empty b
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	echo "moved to b, back to p: $(pflow policy_setups) set-ups, $(pflow policy_teardowns) teardowns"
	check "[ \"\$(pflow policy_setups) \$(pflow policy_teardowns)\" = '3 2' ]" \
		"setups $(pflow policy_setups) teardowns $(pflow policy_teardowns), not 3 2"

	# s's agent stops: its session goes with it; started again, it signals
	# the flow anew from its state file and the controller's full push.
	kill -TERM "$spid"
	wait "$spid" 2>/dev/null || true
	want s ""
	ip netns exec "$NS_s" "$AGENT" -c "$T/s.json" >>"$T/s.log" 2>&1 &
	PIDS+=($!)
	wait_want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	want p "10.1.0.1 10.2.0.1 49152 256 fc00:a::4 cumulative 40000"
	wait_pflow up

	# A backup through a hop without a speaker (t's fc00:a::5): it fails
	# and is signalled again after 5 s, alone; the primary stays up, its
	# sessions untouched (only the backup changed: it alone is signalled).
	n=$(stat p sessions_added)
	credit_policy roce fc00:a::2,fc00:a::4 fc00:a::3,fc00:a::5 >"$T/pol4.json"
	"$DMSC" agent socket "$T/c.sock" policy apply "$T/pol4.json" >/dev/null ||
		fail "policy apply"
	wait_pflow failed
	echo "backup through a silent hop: $(pflow 'policy_flows[0].why')"
	check "[ \"\$(pflow policy_backup_changes) \$(pflow 'policy_flows[0].backup_kernel')\" = '1 no' ]" \
		"backup changes $(pflow policy_backup_changes): $(pflow policy_flows)"
	want_backup s "fc00:a::2 1 - - - 0"
	wait_until "(( \$(pflow policy_retries) >= 1 ))" 200 ||
		fail "no retry of the failed backup: $(pflow policy_flows)"
	check "(( \$(stat p sessions_added) == n && \$(stat p sessions_deleted) == n - 1 ))" \
		"p's session was made again: added $(stat p sessions_added) deleted $(stat p sessions_deleted), not $n $((n - 1))"
	want s "10.1.0.1 10.2.0.1 49152 256 fc00:a::2 delta 2097152"
	check "(( \$(stat s sessions_added) == 1 ))" \
		"s's session was made again: added $(stat s sessions_added) since the restart"
	check "grep -q 'policy roce: credit flow 10.1.0.1:49152 > 10.2.0.1 QP 256: backup: ' \"\$T/s.log\" && (( \$(grep -c 'credit flow .*: backup: ' \"\$T/s.log\") == 1 ))" \
		"s's log of the failure: $(grep 'credit flow' "$T/s.log")"
	for n in s p b t; do
		check "(( \$(stat $n kernel_errors) == 0 ))" "$n: kernel errors"
	done
}

for tool in "$RSVP" "$AGENT" tshark tcpdump python3 jq; do
	command -v "$tool" >/dev/null ||
		{ echo "1..0 # SKIP no $tool (make)"; exit 4; }
done
load_module
CASES=(
	test_setup_teardown "rsvp: PATH/RESV along a primary and a backup list make exactly the expected session on every hop, tshark decodes them; PathTear leaves nothing"
	test_bad_input "rsvp: truncated, wrong-length, bad-checksum, absurd-credit, unknown-class and unknown-session messages are counted and ignored"
	test_silent_hop "rsvp: a hop without a speaker: retries, PathErr, no state or session left"
	test_backup_credit "rsvp: the source's kernel session carries the tunnel and the backup list's first hop and credit; a backup torn down alone is taken out, set again put back"
	test_failover_events "rsvp: the source's speaker follows the kernel's failover: tunnel-backup tears the primary down, stops its refreshes, t's session and its credit returns go to the backup's last hop; tunnel-primary signals the primary anew"
	test_refresh_expiry "rsvp: refreshes keep the hops up past the expiry time; without the source every hop's state and session expire"
	test_agent_speakers "rsvp: the same set-up and teardown with every speaker in dmsc-agent's sr role (sr.rsvp); dmsc agent show rsvp agrees; a stopped agent takes its session with it"
	test_policy_credit "rsvp: an SMO policy's credit flow is set up by the source's sr role on every hop, torn down on withdraw, moved when its hops change, signalled again after a restart"
)
# The agent's loop drives the same speaker on every kernel: newest only.
# So do the speaker's retries and PathErr, the backup list's session and
# the speaker's following of the module's events, all userspace and genl
# logic, as is the speaker's parsing of bad input: the older kernels keep
# what crosses their code, the set-up and teardown over raw RSVP sockets
# (with the kernel's credit-return hook and tshark on the wire).
NEWEST_CASES="test_agent_speakers test_policy_credit test_silent_hop
	test_backup_credit test_failover_events test_bad_input"
# make check-deep runs these too (selftests/lib.sh): the first waits out
# RFC 2205 refresh and expiry periods; test_policy_credit, in make check,
# runs every transit speaker as an agent and reads dmsc agent show rsvp,
# what the second tests on its own.
DEEP_CASES="test_refresh_expiry test_agent_speakers"
cases_only CASES "${DMSC_RSVP_CASES:-}"
ktap_run "${CASES[@]}"
