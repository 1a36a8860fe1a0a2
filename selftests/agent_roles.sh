#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc-agent's roles across network namespaces, as nodes: a controller
# with the srd and aam roles, and two nodes each with its sr agent on the
# dmsc module of its namespace, talking mutual TLS over veths with
# certificates from tools/pki/dmsc-pki.
#
#        a (sr) --- 10.0.1.0/24 --- c (srd, aam) --- 10.0.2.0/24 --- b (sr)
#
# Instances registered at a reach b's table with the SRD's revision; a's
# agent killed, its instances are withdrawn at b within 3 heartbeats; b's
# agent killed and restarted takes the full table again; the kernel's
# tunnel tables stay empty (no policy is pushed yet: issue 11). KTAP.
# mkns and start set the namespaces and PID_NODE by name:
# shellcheck disable=SC2154
source "$(dirname "$0")/lib.sh"
AGENT=${AGENT:-$top/agent/dmsc-agent}
PKI=$top/tools/pki/dmsc-pki
HB=1000	# ms: a lease is 3 heartbeats (TCG is slow)

T="" PIDS=()
case_cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

wait_for() {	# wait_for COND REASON: up to 30 s; then shows the logs
	local end=$((SECONDS + 30))
	while ((SECONDS < end)); do
		eval "$1" && return 0
		sleep 0.1
	done
	tail -n 20 "$T"/*.log >&2 || true
	fail "$2"
}

tls() {	# tls NODE: the config's tls section for NODE
	echo "\"tls\": { \"ca\": \"$T/pki/ca.crt\", \"cert\": \"$T/pki/$1.crt\",
		\"key\": \"$T/pki/$1.key\", \"crl\": \"$T/pki/crl.pem\" }"
}

# start NODE NS: NODE's agent in NS, its pid in PID_NODE.
start() {
	ip netns exec "$2" "$AGENT" -c "$T/$1.json" >>"$T/$1.log" 2>&1 &
	printf -v "PID_$1" '%s' $!
	PIDS+=($!)
}

ask() {	# ask NODE show WHAT: the agent's JSON answer
	"$DMSC" -j agent socket "$T/$1.sock" "${@:2}"
}

# The text forms, read with awk: polls must be cheap in a TCG guest.
routes_at() {	# routes_at NODE: "COUNT REVISION" of its sr table
	"$DMSC" agent socket "$T/$1.sock" show routes |
		awk '/^sr revision/ { r = $3 } /^  / { n++ } END { print n + 0, r }'
}

srd_rev() {
	"$DMSC" agent socket "$T/c.sock" show instances | awk '/^srd revision/ { print $3 }'
}

test_roles() {
	trap case_cleanup EXIT
	T=$(mktemp -d)
	load_module
	mkns c a b
	ip -n "$c" link add ca type veth peer name ac netns "$a"
	ip -n "$c" link add cb type veth peer name bc netns "$b"
	ip -n "$c" addr add 10.0.1.1/24 dev ca
	ip -n "$c" addr add 10.0.2.1/24 dev cb
	ip -n "$a" addr add 10.0.1.2/24 dev ac
	ip -n "$b" addr add 10.0.2.2/24 dev bc
	ip -n "$c" link set ca up
	ip -n "$c" link set cb up
	ip -n "$a" link set ac up
	ip -n "$b" link set bc up
	{
		"$PKI" -d "$T/pki" init
		"$PKI" -d "$T/pki" node c --roles srd,aam
		"$PKI" -d "$T/pki" node a --roles sr
		"$PKI" -d "$T/pki" node b --roles sr
	} >"$T/pki.log" 2>&1
	cat >"$T/c.json" <<-EOF
	{ "node": "c", "roles": ["srd", "aam"], "control": "$T/c.sock", $(tls c),
	  "srd": { "listen": "0.0.0.0:7400", "store": { "sqlite": "$T/srd.db" } } }
	EOF
	for n in a b; do
		local addr=10.0.1.1
		[ $n = a ] || addr=10.0.2.1
		cat >"$T/$n.json" <<-EOF
		{ "node": "$n", "roles": ["sr"], "control": "$T/$n.sock", $(tls $n),
		  "sr": { "srd": [ { "node": "c", "address": "$addr:7400" } ],
		          "heartbeat_ms": $HB, "state": "$T/$n.state" } }
		EOF
	done
	start c "$c"
	wait_for "[ -S '$T/c.sock' ]" "the srd did not start"
	start a "$a"
	start b "$b"
	wait_for "[ \"\$(\"\$DMSC\" agent socket '$T/c.sock' show peers | grep -c 'synced true')\" = 2 ]" \
		"the two SRs did not connect"

	ask a register id mi-a1 sid fc00:a::1 prefix fc00:a1::/64 >/dev/null
	ask a register id mi-a2 sid fc00:a::2 prefix fc00:a2::/64 rtype cpu capability 8 >/dev/null
	wait_for "[ \"\$(routes_at b)\" = \"2 \$(srd_rev)\" ] && [ \"\$(routes_at a)\" = \"2 \$(srd_rev)\" ]" \
		"routes at b: $(routes_at b), at the srd: revision $(srd_rev)"
	echo "routes at a and b: $(routes_at b) (count, revision)"
	check "[ \"\$(ask b show routes | json_get 'sorted(r[\"sid\"] for r in d[\"sr\"][\"routes\"])')\" = \"['fc00:a::1', 'fc00:a::2']\" ]" \
		"b's routes: $(ask b show routes)"

	# b killed and restarted: the full table again. Its socket goes with
	# it, so that every answer below is the new agent's.
	kill -9 "$PID_b"
	wait "$PID_b" 2>/dev/null || true
	rm -f "$T/b.sock"
	start b "$b"
	wait_for "[ \"\$(routes_at b 2>/dev/null)\" = \"2 \$(srd_rev)\" ]" "b after its restart: $(routes_at b)"
	check "[ \"\$(ask b show routes | json_get 'd[\"sr\"][\"full_tables\"]')\" = 1 ]" \
		"b restarted: not one full table: $(ask b show routes)"

	# a killed: its instances expire and are withdrawn within 3 heartbeats
	local t0 t1
	kill -9 "$PID_a"
	wait "$PID_a" 2>/dev/null || true
	t0=$(date +%s%N)
	wait_for "[ \"\$(routes_at b 2>/dev/null | cut -d' ' -f1)\" = 0 ]" "a's routes not withdrawn at b"
	t1=$(date +%s%N)
	echo "a's instances withdrawn at b after $(((t1 - t0) / 1000000)) ms (heartbeat $HB ms)"
	# 3 heartbeats, the srd's 100 ms check, 1 s for this poll in a TCG guest
	check "(( (t1 - t0) / 1000000 <= 3 * HB + 100 + 1000 ))" "withdrawn after $(((t1 - t0) / 1000000)) ms"

	# nothing in any kernel table: the roles program none yet
	for ns in "$a" "$b" "$c"; do
		check "[ \"\$(dns $ns -j tunnel show)\" = '[]' ] && [ \"\$(dns $ns -j rule show)\" = '[]' ]" \
			"$ns: $(dns "$ns" -j tunnel show) $(dns "$ns" -j rule show)"
	done

	# SIGTERM: a clean stop (128 + 15)
	local rc=0
	kill -TERM "$PID_b"
	wait "$PID_b" || rc=$?
	check "(( rc == 143 ))" "b's exit status $rc after SIGTERM"
	check "[ ! -e '$T/b.sock' ]" "b's control socket left behind"
}

ktap_run test_roles "srd and two sr agents in namespaces: routes by revision, restart, expiry, empty kernel tables, SIGTERM"
