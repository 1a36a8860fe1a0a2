# SPDX-License-Identifier: GPL-2.0
# Helpers for roce-gen's network tests: two namespaces and a veth pair.
#
#   +------------------------+            +------------------------+
#   | $NS_S  (sender)        |            | $NS_R  (sink)          |
#   |   va 10.77.0.1/24      |============|   vb 10.77.0.2/24      |
#   |      fd77::1/64        |  veth      |      fd77::2/64        |
#   |   qdiscs under test    |            |   roce-gen sink        |
#   +------------------------+            +------------------------+
#
# All traffic stays between these two namespaces.

NS_S=rg-snd-$$
NS_R=rg-rcv-$$
V4_S=10.77.0.1
V4_R=10.77.0.2
V6_S=fd77::1
V6_R=fd77::2
ROCE_GEN=${ROCE_GEN:-$PWD/roce-gen}
TMP=$(mktemp -d /tmp/roce-gen-test.XXXXXX)

ns() { ip netns exec "$NS_S" "$@"; }	# in the sender's namespace
nr() { ip netns exec "$NS_R" "$@"; }	# in the sink's namespace
tcs() { tc -n "$NS_S" "$@"; }

cleanup()
{
	[ -n "${SINK_PID:-}" ] && kill "$SINK_PID" 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_R" 2>/dev/null
	rm -rf "$TMP"
}

topo_up()
{
	ip netns add "$NS_S" && ip netns add "$NS_R" || return 1
	ip link add va netns "$NS_S" type veth peer name vb netns "$NS_R" || return 1
	ip -n "$NS_S" link set lo up
	ip -n "$NS_R" link set lo up
	ip -n "$NS_S" addr add $V4_S/24 dev va
	ip -n "$NS_R" addr add $V4_R/24 dev vb
	ip -n "$NS_S" addr add $V6_S/64 dev va nodad
	ip -n "$NS_R" addr add $V6_R/64 dev vb nodad
	ip -n "$NS_S" link set va up
	ip -n "$NS_R" link set vb up
	# Static neighbours: no packet waits on ARP/ND, none goes anywhere else.
	local mac_a mac_b
	mac_a=$(ip -n "$NS_S" -br link show va | awk '{print $3}')
	mac_b=$(ip -n "$NS_R" -br link show vb | awk '{print $3}')
	ip -n "$NS_S" neigh replace $V4_R lladdr "$mac_b" dev va nud permanent
	ip -n "$NS_S" neigh replace $V6_R lladdr "$mac_b" dev va nud permanent
	ip -n "$NS_R" neigh replace $V4_S lladdr "$mac_a" dev vb nud permanent
	ip -n "$NS_R" neigh replace $V6_S lladdr "$mac_a" dev vb nud permanent
	# No router solicitations or MLD reports through the qdiscs under test.
	ip netns exec "$NS_S" sysctl -qw net.ipv6.conf.va.router_solicitations=0
	ip netns exec "$NS_S" sysctl -qw net.ipv6.conf.all.forwarding=0
}

qdisc_reset() { tcs qdisc del dev va root 2>/dev/null; true; }

# sink_start [sink options]: the sink in $NS_R, writing $TMP/sink.json
sink_start()
{
	rm -f "$TMP/ready" "$TMP/sink.json"
	# Not through nr(): a function run with & is a subshell, and $! would
	# be that shell, not the sink that socket_drops stops with SIGSTOP.
	# ip netns exec execs the sink, so $! is the sink itself.
	ip netns exec "$NS_R" "$ROCE_GEN" sink json "$TMP/sink.json" \
		ready-file "$TMP/ready" "$@" 2>"$TMP/sink.err" &
	SINK_PID=$!
	for _ in $(seq 100); do
		if [ -e "$TMP/ready" ]; then
			[ "$(cat "/proc/$SINK_PID/comm" 2>/dev/null)" = roce-gen ] &&
				return 0
			echo "sink_start: pid $SINK_PID is not the sink" >&2
			return 1
		fi
		sleep 0.05
	done
	return 1
}

sink_wait() { wait "$SINK_PID"; local rc=$?; SINK_PID=; return $rc; }

# send [sender options]: the sender in $NS_S, writing $TMP/send.json
send() { ns "$ROCE_GEN" send json "$TMP/send.json" "$@" 2>"$TMP/send.err"; }

# jv FILE EXPR: evaluate a Python expression over the JSON document d
jv() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# The sink misses what is lost at a flow's tail (no later PSN shows the
# gap): count it from the sender's last PSN against the sink's next PSN.
TAIL_LOST='sum((s["last_psn"] + 1 - k["next_psn"]) % (1 << 24) for s in S["qps"] for k in d["qps"] if k["dest_qp"] == s["dest_qp"])'
tail_lost() { python3 -c 'import json,sys; S=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2])); print(eval(sys.argv[3]))' "$TMP/send.json" "$TMP/sink.json" "$TAIL_LOST"; }

# qdisc_stat DEV HANDLE FIELD: "sent" packets or "dropped" of one qdisc
qdisc_stat()
{
	tcs -s qdisc show dev "$1" | awk -v h="$2" -v f="$3" '
		$1 == "qdisc" { cur = $3 }
		cur == h && $1 == "Sent" {
			if (f == "sent") print $4
			if (f == "dropped") { gsub(/,/, "", $7); print $7 }
		}'
}

# expect A OP B WHAT: record a failed comparison in FAIL
expect()
{
	if ! [ "$1" "$2" "$3" ] 2>/dev/null; then
		FAIL="${FAIL:+$FAIL; }$4: $1 $2 $3 is false"
		return 1
	fi
}
