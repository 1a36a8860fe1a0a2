#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The dmsc generic netlink family: per-namespace state, permissions and
# strict validation of what userspace sends.
source "$(dirname "$0")/lib.sh"

NL_RAW=$top/selftests/nl_raw
DMSC_CMD_INFO=1
DMSC_CMD_SET=2
DMSC_A_VERSION=2
DMSC_A_FLOW_LIMIT=6
DMSC_A_FLOW_TIMEOUT=7
DMSC_A_RULE=9
DMSC_RULE_A_DST=3

limit_of() {	# limit_of NS
	dns "$1" -j info | json_get 'd["flow_limit"]'
}

test_two_namespaces() {
	mkns a b
	dns "$a" set flow_limit 111
	dns "$b" set flow_limit 222 flow_timeout 500
	check "(( \$(limit_of $a) == 111 ))" "namespace a lost its setting"
	check "(( \$(limit_of $b) == 222 ))" "namespace b lost its setting"
	check "(( \$(dns $a -j info | json_get 'd[\"flow_timeout_ms\"]') == 30000 ))" \
		"namespace b's timeout leaked into a"
	local ca cb
	ca=$(dns "$a" -j info | json_get 'd["netns_cookie"]')
	cb=$(dns "$b" -j info | json_get 'd["netns_cookie"]')
	check "[ '$ca' != '$cb' ]" "both namespaces answered with cookie $ca"
}

test_fresh_namespace() {
	mkns c
	dns "$c" set flow_limit 5
	ip netns del "$c"
	mkns d
	check "(( \$(limit_of $d) == 65536 ))" "new namespace not at defaults"
}

test_unprivileged_eperm() {
	mkns e
	local out
	if out=$(ip netns exec "$e" setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all "$DMSC" set flow_limit 10 2>&1); then
		fail "an unprivileged user changed a setting"
	fi
	check "[[ '$out' == *'Operation not permitted'* ]]" "wrong error: $out"
	check "(( \$(limit_of $e) == 65536 ))" "setting changed anyway"
	# Reading is not privileged.
	ip netns exec "$e" setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all "$DMSC" info >/dev/null
}

# Tunnels, rules and flows say who talks to whom: reading them needs the
# same privilege as changing them (INFO's counters stay open).
test_read_needs_admin() {
	mkns g
	local obj out
	dns "$g" tunnel add 7 src fc00::1 path fc00::2
	dns "$g" rule add dst 10.9.0.0/16 tunnel 7
	for obj in tunnel rule flow; do
		if out=$(ip netns exec "$g" setpriv --reuid=65534 --regid=65534 \
			--clear-groups --inh-caps=-all "$DMSC" $obj show 2>&1); then
			fail "an unprivileged user read the $obj table: $out"
		fi
		check "[[ '$out' == *'Operation not permitted'* ]]" \
			"$obj show: wrong error: $out"
		if out=$(ip netns exec "$g" unshare -U -r "$DMSC" $obj show 2>&1); then
			fail "root of a foreign user namespace read the $obj table"
		fi
	done
	out=$(unshare -U -r -n sh -c "'$DMSC' tunnel add 3 src fc00::1 path fc00::2 &&
		'$DMSC' -j tunnel show")
	check "(( \$(echo '$out' | json_get 'len(d)') == 1 ))" \
		"owner of the namespace could not read its tunnels: $out"
}

# The hooks come with the first rule, at a priority just below conntrack
# confirmation (INT_MAX): the netfilter core lists them.
test_hooks_lazy() {
	command -v nft >/dev/null || skip "nft not installed"
	# nft lists hooks through nfnetlink_hook, which Debian's 6.1 lacks.
	kconfig NETFILTER_NETLINK_HOOK ||
		skip "kernel without CONFIG_NETFILTER_NETLINK_HOOK: nft cannot list hooks"
	mkns h
	local hooks
	dns "$h" tunnel add 1 src fc00::1 path fc00::2
	hooks=$(ip netns exec "$h" nft list hooks)
	check "[[ '$hooks' != *dmsc_steer* ]]" "steering hooks registered without a rule: $hooks"
	# cbfc's credit-return hook comes with the first session that takes
	# returns (cumulative, with a next hop), not with one that only
	# sends them.
	dns "$h" cbfc session add src 10.9.0.1 dst 10.9.0.2 sport 50000 \
		qpn 256 prevhop fc00::3
	hooks=$(ip netns exec "$h" nft list hooks)
	check "[[ '$hooks' != *cret_hook* ]]" "credit-return hook registered without a next hop: $hooks"
	dns "$h" cbfc session add src 10.9.0.1 dst 10.9.0.2 sport 50001 \
		qpn 256 nexthop fc00::2
	hooks=$(ip netns exec "$h" nft list hooks)
	check "[[ '$hooks' == *cret_hook* ]]" "no credit-return hook with a session that takes returns: $hooks"
	dns "$h" rule add dst 10.9.0.0/16 tunnel 1
	dns "$h" rule del dst 10.9.0.0/16
	hooks=$(ip netns exec "$h" nft list hooks)
	echo "$hooks" | grep -E 'dmsc|postrouting'
	local n
	n=$(echo "$hooks" | grep -cE '2147483646 .*dmsc_steer_ipv[46]' || true)
	check "(( n == 2 ))" "dmsc hooks not at priority INT_MAX - 1 for ip and ip6"
}

# CAP_NET_ADMIN counts in the user namespace that owns the network
# namespace: root of a fresh user namespace may not touch ours...
test_userns_foreign_eperm() {
	mkns f
	local out
	if out=$(ip netns exec "$f" unshare -U -r "$DMSC" set flow_limit 9 2>&1); then
		fail "root of a foreign user namespace changed a setting"
	fi
	check "[[ '$out' == *'Operation not permitted'* ]]" "wrong error: $out"
}

# ...but may change a network namespace its user namespace owns.
test_userns_own_allowed() {
	local out
	out=$(unshare -U -r -n sh -c "'$DMSC' set flow_limit 7 && '$DMSC' -j info")
	check "(( \$(echo '$out' | json_get 'd[\"flow_limit\"]') == 7 ))" \
		"owner of the namespace could not change it"
}

# raw_expect ERRNO EXTACK-SUBSTRING CMD ATTR...: send, compare the answer.
raw_expect() {
	local want_errno=$1 want_msg=$2 out
	shift 2
	out=$("$NL_RAW" "$@")
	echo "$out"
	check "grep -qx 'errno=$want_errno' <<<'$out'" \
		"expected errno $want_errno, got: $(echo $out)"
	if [ -n "$want_msg" ]; then
		check "grep -q '^extack=.*$want_msg' <<<'$out'" \
			"expected extack '$want_msg', got: $(echo $out)"
	fi
}

init_limit() {
	"$DMSC" -j info | json_get 'd["flow_limit"]'
}

test_raw_wrong_type() {
	raw_expect 22 'invalid attribute length' \
		$DMSC_CMD_SET $DMSC_A_FLOW_LIMIT:u8=5
	check "(( \$(init_limit) == 65536 ))" "value changed by a refused request"
}

test_raw_missing() {
	raw_expect 22 'nothing to set' $DMSC_CMD_SET
}

test_raw_range() {
	raw_expect 34 'integer out of range' \
		$DMSC_CMD_SET $DMSC_A_FLOW_TIMEOUT:u32=5
	raw_expect 34 'integer out of range' \
		$DMSC_CMD_SET $DMSC_A_FLOW_LIMIT:u32=2000000
	check "(( \$(init_limit) == 65536 ))" "value changed by a refused request"
}

test_raw_unknown_attr() {
	raw_expect 22 'Unknown attribute type' $DMSC_CMD_SET 200:u32=1
}

test_raw_reply_only() {
	raw_expect 22 'failed policy validation' \
		$DMSC_CMD_SET $DMSC_A_VERSION:str=9.9.9
}

test_raw_oversized() {
	raw_expect 34 'failed policy validation' $DMSC_CMD_SET \
		"$DMSC_A_RULE:nest{" $DMSC_RULE_A_DST:zeros=17 "}"
	raw_expect 22 'failed policy validation' \
		$DMSC_CMD_SET $DMSC_A_VERSION:zeros=5000
}

test_raw_unknown_cmd() {
	raw_expect 95 '' 200
}

test_all_or_nothing() {
	mkns h
	dns "$h" set flow_limit 1000 flow_timeout 1000
	# One good value, one out of range: neither may be applied. The
	# refusal is checked, not negated: set -e ignores `! cmd`.
	local out
	out=$(ip netns exec "$h" "$NL_RAW" $DMSC_CMD_SET $DMSC_A_FLOW_LIMIT:u32=42 \
		$DMSC_A_FLOW_TIMEOUT:u32=1)
	check "grep -qx 'errno=34' <<<'$out'" "not refused with ERANGE: ${out//$'\n'/ }"
	check "(( \$(limit_of $h) == 1000 ))" "flow_limit applied from a refused request"
}

test_dmesg() {
	dmesg_clean || fail "kernel log has warnings (see above)"
}

dmesg_mark
load_module
ktap_run \
	test_two_namespaces "info in two namespaces shows independent state" \
	test_fresh_namespace "a new namespace starts from defaults" \
	test_unprivileged_eperm "unprivileged user gets EPERM on set" \
	test_userns_foreign_eperm "root of a foreign user namespace gets EPERM" \
	test_userns_own_allowed "root of the owning user namespace may set" \
	test_read_needs_admin "tunnels, rules and flows are read by admins only" \
	test_hooks_lazy "the steering hooks come with the first rule, before confirm; the credit-return hook with the first session that takes returns" \
	test_raw_wrong_type "wrong attribute type refused" \
	test_raw_missing "missing attributes refused with a message" \
	test_raw_range "out-of-range values refused" \
	test_raw_unknown_attr "unknown attribute refused (strict policy)" \
	test_raw_reply_only "reply-only attribute refused in a request" \
	test_raw_oversized "oversized attributes refused" \
	test_raw_unknown_cmd "unknown command refused" \
	test_all_or_nothing "a refused request changes nothing" \
	test_dmesg "kernel log is clean"
