#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc-agent's roles across network namespaces, as nodes: a controller
# with the srd, smo and aam roles, and two nodes each with its sr agent on
# the dmsc module of its namespace, talking mutual TLS over veths with
# certificates from tools/pki/dmsc-pki.
#
#     a (sr) --- 10.0.1.0/24 --- c (srd, smo, aam) --- 10.0.2.0/24 --- b (sr)
#
# Instances registered at a reach b's table with the SRD's revision; the
# smo's policies reach each SR's kernel (the exact segment lists, weights,
# backup and rules, in `dmsc -j tunnel show`), the time from `policy
# apply` to each kernel printed; b's agent killed while its policies
# change, restarted: it takes the full table again and reconciles its
# kernel (the unchanged tunnel left alone, the withdrawn one deleted, the
# new one added, the operator's own tunnel untouched); the module
# reloaded, both SRs program their tunnels again; a withdraw removes
# a tunnel; a's agent killed, its instances are withdrawn at b within 3
# heartbeats; at the end every kernel table is empty. KTAP.
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

wait_for() {	# wait_for COND REASON [SECS]: up to SECS (30) s; then shows the logs
	local end=$((SECONDS + ${3:-30}))
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

# policy NAME NODE TUNNEL WEIGHT: one policy, two paths and a backup, a rule
policy() {
	echo "{ \"name\": \"$1\", \"node\": \"$2\", \"tunnel\": $3, \"src\": \"fc00:$3::1\",
	  \"paths\": [ { \"segs\": [ \"fc00:2::1\", \"fc00:9::d4\" ], \"weight\": $4 },
	             { \"segs\": [ \"fc00:3::1\" ] } ],
	  \"backup\": [ \"fc00:4::1\", \"fc00:9::d4\" ],
	  \"rules\": [ { \"dst\": \"10.$(($3 % 250)).0.0/16\", \"qpn\": \"16-31\" } ] }"
}

# The tunnels of namespace NS as "ID:SRC:SEGS/W;SEGS/W:BACKUP" lines, sorted,
# and its rules as "DST:QPN:TUNNEL": what must match a policy exactly.
ktunnels() {
	dns "$1" -j tunnel show | json_get '"\n".join(sorted("%d:%s:%s:%s" % (t["id"], t["src"],
		";".join(",".join(p["segs"]) + "/" + str(p["weight"]) for p in t["paths"]),
		",".join(t["backup"]["segs"]) if "backup" in t else "") for t in d))'
}
krules() {
	dns "$1" -j rule show | json_get '"\n".join(sorted("%s:%s-%s:%s" % (r["dst"], r["qpn_lo"],
		r["qpn_hi"], r["tunnel"]) for r in d))'
}
want_tunnel() {	# want_tunnel ID WEIGHT: ktunnels' line of policy() ID WEIGHT
	echo "$1:fc00:$1::1:fc00:2::1,fc00:9::d4/$2;fc00:3::1/1:fc00:4::1,fc00:9::d4"
}
# ids NS: its tunnel ids, cheap (text form, awk)
ids() {
	dns "$1" tunnel show | awk '/^tunnel/ { printf "%s%s", s, $2; s = " " }'
}
pol_count() {	# pol_count NODE KEY: a counter of its sr policies
	ask "$1" show policies | json_get "d[\"sr\"][\"$2\"]"
}
ms_since() {	# ms_since T0 (date +%s%N)
	echo $((($(date +%s%N) - $1) / 1000000))
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
		"$PKI" -d "$T/pki" node c --roles srd,aam,smo
		"$PKI" -d "$T/pki" node a --roles sr
		"$PKI" -d "$T/pki" node b --roles sr
	} >"$T/pki.log" 2>&1
	# one policy at start, the others through the control socket. The
	# periodic full table is out of the way: the restart below counts one.
	policy pa a 100 3 >"$T/pol-a.json"
	echo "{ \"policies\": [ $(cat "$T/pol-a.json") ] }" >"$T/start.json"
	cat >"$T/c.json" <<-EOF
	{ "node": "c", "roles": ["srd", "aam", "smo"], "control": "$T/c.sock", $(tls c),
	  "srd": { "listen": "0.0.0.0:7400", "store": { "sqlite": "$T/srd.db" },
	           "full_interval_ms": 600000 },
	  "smo": { "policies": "$T/start.json" } }
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

	# the policy file's pa is in a's kernel, exactly
	wait_for "[ \"\$(ids $a)\" = 100 ]" "a's kernel: $(ids "$a")"
	check "[ \"\$(ktunnels $a)\" = \"\$(want_tunnel 100 3)\" ]" "a's tunnels: $(ktunnels "$a")"
	check "[ \"\$(krules $a)\" = '10.100.0.0/16:16-31:100' ]" "a's rules: $(krules "$a")"

	# the operator's own tunnel in b: the agent must never touch it
	dns "$b" tunnel add 7 src fc00:7::1 path fc00:7::2 weight 2
	# at run time: pa's weight changed in place, pb and pb2 for b
	{
		echo "{ \"policies\": [ $(policy pa a 100 5), $(policy pb b 200 2),"
		echo "  $(policy pb2 b 201 1) ] }"
	} >"$T/apply.json"
	local t0 ta="" tb=""
	t0=$(date +%s%N)
	"$DMSC" agent socket "$T/c.sock" policy apply "$T/apply.json"
	local end=$((SECONDS + 30))
	while ((SECONDS < end)) && [ -z "$ta" ] || [ -z "$tb" ]; do
		[ -n "$ta" ] || ! dns "$a" tunnel show | grep -q 'weight 5' || ta=$(ms_since "$t0")
		[ -n "$tb" ] || [ "$(ids "$b")" != "7 200 201" ] || tb=$(ms_since "$t0")
		((SECONDS < end)) || break
	done
	echo "policy apply to the tunnel in the kernel: a (changed) ${ta:-never} ms, b (2 added) ${tb:-never} ms"
	check "[ \"\$(ktunnels $a)\" = \"\$(want_tunnel 100 5)\" ]" "a's tunnels: $(ktunnels "$a")"
	check "[ \"\$(pol_count a changed)\" = 1 ] && [ \"\$(pol_count a added)\" = 2 ]" \
		"a: not 1 change in place and 2 adds (tunnel, rule): $(ask a show policies)"
	check "[ \"\$(ktunnels $b)\" = \"\$(printf '%s\n%s\n%s' \"\$(want_tunnel 200 2)\" \
		\"\$(want_tunnel 201 1)\" 7:fc00:7::1:fc00:7::2/2:)\" ]" "b's tunnels: $(ktunnels "$b")"
	check "[ \"\$(krules $b | tr '\n' ' ')\" = '10.200.0.0/16:16-31:200 10.201.0.0/16:16-31:201 ' ]" \
		"b's rules: $(krules "$b")"

	# b killed; meanwhile pb2 withdrawn and pb3 added; b restarted: the
	# full table again and its kernel reconciled. Its socket goes with
	# it, so that every answer below is the new agent's.
	kill -9 "$PID_b"
	wait "$PID_b" 2>/dev/null || true
	rm -f "$T/b.sock"
	"$DMSC" agent socket "$T/c.sock" policy withdraw pb2
	echo "{ \"policies\": [ $(policy pb3 b 202 4) ] }" >"$T/apply3.json"
	"$DMSC" agent socket "$T/c.sock" policy apply "$T/apply3.json"
	start b "$b"
	wait_for "[ \"\$(routes_at b 2>/dev/null)\" = \"2 \$(srd_rev)\" ]" "b after its restart: $(routes_at b)"
	check "[ \"\$(ask b show routes | json_get 'd[\"sr\"][\"full_tables\"]')\" = 1 ]" \
		"b restarted: not one full table: $(ask b show routes)"
	wait_for "[ \"\$(ids $b)\" = '7 200 202' ]" "b's kernel after its restart: $(ids "$b")"
	check "[ \"\$(ktunnels $b)\" = \"\$(printf '%s\n%s\n%s' \"\$(want_tunnel 200 2)\" \
		\"\$(want_tunnel 202 4)\" 7:fc00:7::1:fc00:7::2/2:)\" ]" "b's tunnels: $(ktunnels "$b")"
	check "[ \"\$(krules $b | tr '\n' ' ')\" = '10.200.0.0/16:16-31:200 10.202.0.0/16:16-31:202 ' ]" \
		"b's rules: $(krules "$b")"
	# 200 left alone: one tunnel and one rule added (202), 201 and its rule deleted
	check "[ \"\$(pol_count b added)\" = 2 ] && [ \"\$(pol_count b deleted)\" = 2 ] &&
	       [ \"\$(pol_count b changed)\" = 0 ]" "b's reconciliation: $(ask b show policies)"

	# the module reloaded under the running agents: every table empty, each
	# SR's next round (2 s) adds its tunnels and rules again; the
	# operator's tunnel 7 went with the module and is not the agent's to make.
	# 90 s: a 6.1 guest under load 15 took 30 s (a poll of both kernels
	# took seconds there), against 9 s on a quieter machine
	rmmod dmsc
	insmod "$DMSC_KO"
	t0=$(date +%s%N)
	wait_for "[ \"\$(ids $a)\" = 100 ] && [ \"\$(ids $b)\" = '200 202' ]" \
		"after the module reload: a $(ids "$a"), b $(ids "$b")" 90
	echo "module reloaded: tunnels back in both kernels after $(ms_since "$t0") ms"
	check "[ \"\$(ktunnels $b)\" = \"\$(printf '%s\n%s' \"\$(want_tunnel 200 2)\" \"\$(want_tunnel 202 4)\")\" ]" \
		"b's tunnels after the reload: $(ktunnels "$b")"
	check "[ \"\$(krules $a)\" = '10.100.0.0/16:16-31:100' ]" "a's rules after the reload: $(krules "$a")"
	dns "$b" tunnel add 7 src fc00:7::1 path fc00:7::2 weight 2

	# withdraw: pa leaves a's kernel
	"$DMSC" agent socket "$T/c.sock" policy withdraw pa
	wait_for "[ -z \"\$(ids $a)\" ]" "a's kernel after withdraw pa: $(ids "$a")"
	check "[ \"\$(dns $a -j rule show)\" = '[]' ]" "a's rules: $(dns "$a" -j rule show)"

	# a killed: its instances expire and are withdrawn within 3 heartbeats
	# A poll in a loaded TCG guest takes up to seconds: the withdrawal
	# came after the start of the last poll that still saw the routes
	# (tseen) and before the end of the first that did not (t1); the
	# check holds tseen to 3 heartbeats and the srd's 100 ms check.
	local t0 t1="" tseen ts
	kill -9 "$PID_a"
	wait "$PID_a" 2>/dev/null || true
	t0=$(date +%s%N)
	tseen=$t0
	end=$((SECONDS + 30))
	while ((SECONDS < end)); do
		ts=$(date +%s%N)
		if [ "$(routes_at b 2>/dev/null | cut -d' ' -f1)" = 0 ]; then
			t1=$(date +%s%N)
			break
		fi
		tseen=$ts
	done
	[ -n "$t1" ] || fail "a's routes not withdrawn at b"
	echo "a's instances withdrawn at b $(((tseen - t0) / 1000000))..$(((t1 - t0) / 1000000)) ms after the kill (heartbeat $HB ms)"
	check "(( (tseen - t0) / 1000000 <= 3 * HB + 100 ))" \
		"b still had a's routes $(((tseen - t0) / 1000000)) ms after the kill"

	# teardown: b's policies withdrawn, the operator's tunnel removed by
	# hand; then nothing in any kernel table
	"$DMSC" agent socket "$T/c.sock" policy withdraw pb
	"$DMSC" agent socket "$T/c.sock" policy withdraw pb3
	wait_for "[ \"\$(ids $b)\" = 7 ]" "b's kernel after the withdraws: $(ids "$b")"
	dns "$b" tunnel del 7
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

ktap_run test_roles "srd+smo and two sr agents in namespaces: routes by revision, policies in each kernel, restart and reconcile, withdraw, expiry, empty kernel tables, SIGTERM"
