#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc rules: exact precedence across prefixes, the cap on rules per
# namespace, and tables of tens of thousands of rules loaded, looked up,
# dumped across many messages and deleted.
#
#  +---------------+  veth  +-------------------------------+
#  |      snd      |--------|  pe: dmsc, tunnels 1..4       |
#  |  roce-gen     | e0  snd|  every SID and inner prefix   |--> dummy0
#  +---------------+        |  routed to dummy0             |
#  10.0.1.1 10.0.3.1        +-------------------------------+
#  10.9.0.1                 10.0.1.254
#  2001:db8:1::1 2001:db8:9::1   2001:db8:1::fe
#
# Each probe sends 3 RoCEv2 packets to one destination QP from one
# source and checks which tunnel's counter grew by exactly 3 (and that
# no other grew), or that none did when no rule should take them.
# selftests/nl_rules loads, deletes and checks rules in bulk.
source "$(dirname "$0")/lib.sh"

RG=$top/tools/roce-gen/roce-gen
NL_RULES=$top/selftests/nl_rules
NL_RAW=$top/selftests/nl_raw
T=$(mktemp -d)

snd() { ip netns exec "$NS_snd" "$@"; }
pe() { ip netns exec "$NS_pe" "$@"; }
dp() { dns "$NS_pe" "$@"; }

topo_down() {
	[ -n "${NS_snd:-}" ] && ip netns del "$NS_snd" 2>/dev/null
	[ -n "${NS_pe:-}" ] && ip netns del "$NS_pe" 2>/dev/null
	rm -rf "$T"
	return 0
}
trap 'cleanup_ns; topo_down' EXIT

topo_up() {
	NS_snd=rules-snd-$$
	NS_pe=rules-pe-$$
	ip netns add "$NS_snd"
	ip netns add "$NS_pe"
	snd ip link set lo up
	pe ip link set lo up
	pe sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$NS_snd" link add e0 type veth peer name snd netns "$NS_pe"
	snd ip link set e0 up
	pe ip link set snd up
	pe ip link add dummy0 type dummy
	pe ip link set dummy0 up
	snd ip addr add 10.0.1.1/24 dev e0
	snd ip addr add 10.0.3.1/32 dev e0
	snd ip addr add 10.9.0.1/32 dev e0
	snd ip addr add 2001:db8:1::1/64 dev e0 nodad
	snd ip addr add 2001:db8:9::1/128 dev e0 nodad
	snd ip route add default via 10.0.1.254
	snd ip -6 route add default via 2001:db8:1::fe
	pe ip addr add 10.0.1.254/24 dev snd
	pe ip addr add 2001:db8:1::fe/64 dev snd nodad
	pe ip addr add fc00:a::1/128 dev lo
	pe ip route add 10.0.0.0/8 dev dummy0
	pe ip -6 route add 2001:db8::/32 dev dummy0
	pe ip -6 route add fc00::/16 dev dummy0
	# Return routes for the extra sources, so pe has no doubts about them.
	pe ip route add 10.0.3.1/32 dev snd
	pe ip route add 10.9.0.1/32 dev snd
	pe ip -6 route add 2001:db8:9::1/128 dev snd
	pe sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.snd.rp_filter=0
}

setup_case() {
	local id
	echo "at ${SECONDS}s"
	# A fresh pe for every case: no rule or counter carries over (a
	# case may have deleted its namespaces itself).
	ip netns del "$NS_snd" 2>/dev/null || true
	ip netns del "$NS_pe" 2>/dev/null || true
	topo_up
	for id in 1 2 3 4; do
		dp tunnel add $id src fc00:a::1 path fc00:$id::e
	done
}

# Per-tunnel packet counters, "1:N 2:N 3:N 4:N". jq, not python: a probe
# reads them twice, and python's start-up is most of a probe under TCG.
tcounts() {
	dp -j -s tunnel show |
		jq -r 'sort_by(.id) | map("\(.id):\(.packets)") | join(" ")'
}

# probe DST SRC QPN WANT: 3 packets from SRC to DST, dest QP QPN, must
# all go into tunnel WANT (0: into none).
probe() {
	local dst=$1 src=$2 qpn=$3 want=$4 before after b a grew='' by='' i
	before=$(tcounts)
	snd "$RG" send dst "$dst" src "$src" qps 1 qpn "$qpn" count 3 \
		rate 0 size 16 json /dev/null >/dev/null 2>"$T/rg.err" ||
		fail "roce-gen: $(cat "$T/rg.err")"
	after=$(tcounts)
	# The tunnels whose counter moved, and by how much, in id order.
	read -r -a b <<<"$before"
	read -r -a a <<<"$after"
	if [ ${#a[@]} != ${#b[@]} ] || [ ${#a[@]} = 0 ]; then
		fail "tunnel counters '$before' then '$after'"
	fi
	for i in "${!a[@]}"; do
		[ "${a[i]%:*}" = "${b[i]%:*}" ] || fail "tunnels changed: '$before' then '$after'"
		[ "${a[i]#*:}" = "${b[i]#*:}" ] && continue
		grew+="${grew:+ }${a[i]%:*}"
		by+="${by:+ }$((${a[i]#*:} - ${b[i]#*:}))"
	done
	grew=${grew:-0} by=${by:-0}
	if [ "$want" = 0 ]; then
		check "[ '$grew' = 0 ]" \
			"$src -> $dst qpn $qpn: tunnel $grew took $by packets, wanted none"
	else
		check "[ '$grew' = '$want' ] && [ '$by' = 3 ]" \
			"$src -> $dst qpn $qpn: tunnel(s) '$grew' took '$by' packets, wanted 3 in $want"
	fi
	echo "ok: $src -> $dst qpn $qpn: tunnel $want"
}

# expect_err WANT CMD...: dmsc in pe must fail and say WANT.
expect_err() {
	local want=$1 out
	shift
	if out=$(dp "$@" 2>&1); then
		fail "'$*' succeeded"
	fi
	[[ "$out" == *"$want"* ]] || fail "'$*' said '$out', not '$want'"
	echo "ok: $* -> $out"
}

n_rules() {
	dp -j info | json_get 'd["stats"]["rules"]'
}

# nlr ARGS...: nl_rules in pe; its key=value output becomes R_key
# variables (an extack line is one value, spaces and all).
nlr() {
	local out vars
	[ $# -gt 0 ] || fail "nlr: no command"
	out=$(pe "$NL_RULES" "$@") || fail "nl_rules $*: $out"
	echo "nl_rules $*: $(tr '\n' ' ' <<<"$out")"
	# Nothing of the call before may stand in for a value this one lacks;
	# and a parse that fails fails here (eval "$(false)" would not).
	unset "${!R_@}"
	vars=$(python3 -c '
import shlex, sys
for line in sys.stdin.read().splitlines():
    if line.startswith("extack="):
        print("R_extack=" + shlex.quote(line[7:]))
        continue
    for kv in line.split():
        k, _, v = kv.partition("=")
        print("R_%s=%s" % (k, shlex.quote(v)))' <<<"$out")
	eval "$vars"
	# Every value the cases read: one missing would be 0 in (( )).
	local k need="sent errors"
	case $1 in
	dump) need="rules messages intr order" ;;
	check) need="rules messages intr order found missing wrong dups extra" ;;
	esac
	for k in $need; do
		[ -n "$(eval echo "\${R_$k:-}")" ] || fail "nl_rules $*: no $k= in: $out"
	done
}

# --- cases -----------------------------------------------------------------

# A longer destination wins over a shorter one, whatever the shorter's QP
# range; a rule that matches nothing leaves the packet alone.
test_longest_dst() {
	setup_case
	dp rule add dst 10.0.0.0/16 qpn 256 tunnel 2
	dp rule add dst 10.0.2.0/24 tunnel 1
	probe 10.0.2.1 10.0.1.1 256 1
	probe 10.0.9.1 10.0.1.1 256 2
	probe 10.0.9.1 10.0.1.1 257 0
	dp rule add dst 2001:db8::/32 qpn 256 tunnel 2
	dp rule add dst 2001:db8:2::/64 tunnel 1
	probe 2001:db8:2::1 2001:db8:1::1 256 1
	probe 2001:db8:7::1 2001:db8:1::1 256 2
	probe 2001:db8:7::1 2001:db8:1::1 257 0
}

# On one destination: a longer source prefix beats a narrower QP range.
test_src_tiebreak() {
	setup_case
	dp rule add dst 10.0.2.0/24 qpn 256 tunnel 2
	dp rule add dst 10.0.2.0/24 src 10.0.0.0/16 tunnel 4
	dp rule add dst 10.0.2.0/24 src 10.0.1.0/24 tunnel 3
	probe 10.0.2.1 10.0.1.1 256 3
	probe 10.0.2.1 10.0.3.1 256 4
	probe 10.0.2.1 10.9.0.1 256 2
	probe 10.0.2.1 10.9.0.1 257 0
}

# Same destination and source: the narrowest QP range, then the oldest.
test_qp_tiebreak() {
	setup_case
	dp rule add dst 10.0.2.0/24 qpn 200-300 tunnel 4
	dp rule add dst 10.0.2.0/24 qpn 255-264 tunnel 3
	dp rule add dst 10.0.2.0/24 qpn 250-259 tunnel 1
	dp rule add dst 10.0.2.0/24 qpn 256-257 tunnel 2
	probe 10.0.2.1 10.0.1.1 256 2
	probe 10.0.2.1 10.0.1.1 258 3
	probe 10.0.2.1 10.0.1.1 252 1
	probe 10.0.2.1 10.0.1.1 280 4
	probe 10.0.2.1 10.0.1.1 400 0
}

# When the rules of the longest matching prefix do not take the packet
# (source, QP range), a shorter prefix's do; a sibling prefix never does.
fallback_rules() {
	dp rule add dst 10.0.2.1/32 src 10.9.0.0/16 tunnel 1
	dp rule add dst 10.0.2.0/26 qpn 1000-2000 tunnel 2
	dp rule add dst 10.0.2.128/25 tunnel 4
	dp rule add dst 10.0.0.0/8 tunnel 3
	dp rule add dst 2001:db8:2::1/128 src 2001:db8:9::/48 tunnel 1
	dp rule add dst 2001:db8:2::/64 qpn 1000-2000 tunnel 2
	dp rule add dst 2001:db8:2:0:8000::/65 tunnel 4
	dp rule add dst 2001:db8::/32 tunnel 3
}
fallback_probes() {
	probe 10.0.2.1 10.0.1.1 256 3
	probe 10.0.2.1 10.0.1.1 1500 2
	probe 10.0.2.1 10.9.0.1 1500 1
	probe 10.0.2.200 10.0.1.1 256 4
	probe 2001:db8:2::1 2001:db8:1::1 256 3
	probe 2001:db8:2::1 2001:db8:1::1 1500 2
	probe 2001:db8:2::1 2001:db8:9::1 1500 1
	probe 2001:db8:2::8000:0:0:1 2001:db8:1::1 256 4
}
test_fallback() {
	setup_case
	fallback_rules
	fallback_probes
}

# A tunnel that is down: its rule is skipped for the next one in
# precedence order, on the same prefix or a shorter one.
test_down_skip() {
	setup_case
	dp rule add dst 10.0.2.1/32 tunnel 1
	dp rule add dst 10.0.2.1/32 qpn 256 tunnel 2
	dp rule add dst 10.0.2.0/24 src 10.0.1.0/24 tunnel 3
	dp rule add dst 10.0.0.0/8 tunnel 4
	probe 10.0.2.1 10.0.1.1 256 2
	dp tunnel change 2 state down
	probe 10.0.2.1 10.0.1.1 256 1
	dp tunnel change 1 state down
	probe 10.0.2.1 10.0.1.1 256 3
	dp tunnel change 3 state down
	probe 10.0.2.1 10.0.1.1 256 4
	dp tunnel change 4 state down
	probe 10.0.2.1 10.0.1.1 256 0
	dp tunnel change 2 state up
	probe 10.0.2.1 10.0.1.1 256 2
}

# Tens of thousands of rules: loaded, each one dumped once in the
# documented order across many messages, precedence unchanged among
# them, then deleted down to nothing.
test_many() {
	setup_case
	local n4=30000 n6=20000
	nlr add -n $n4 -t 1 -s 7 -a 10.0.2.1
	check "(( R_errors == 0 && R_sent == n4 ))" "IPv4 load: $R_sent sent, $R_errors errors"
	nlr add -6 -n $n6 -t 2 -s 7 -a 2001:db8:2::1
	check "(( R_errors == 0 && R_sent == n6 ))" "IPv6 load: $R_sent sent, $R_errors errors"
	check "(( \$(n_rules) == n4 + n6 ))" "info counts $(n_rules) rules"
	nlr check -n $n4 -t 1 -s 7 -a 10.0.2.1
	check "(( R_rules == n4 + n6 && R_found == n4 && R_missing == 0 && R_dups == 0 && R_wrong == 0 && R_extra == n6 ))" \
		"IPv4 set in the dump: found $R_found missing $R_missing dups $R_dups wrong $R_wrong extra $R_extra of $R_rules"
	check "[ '$R_order' = ok ] && (( R_intr == 0 ))" "dump order $R_order, interrupted $R_intr"
	check "(( R_messages >= 50 ))" "the dump took only $R_messages messages"
	nlr check -6 -n $n6 -t 2 -s 7 -a 2001:db8:2::1
	check "(( R_found == n6 && R_missing == 0 && R_dups == 0 && R_wrong == 0 && R_extra == n4 ))" \
		"IPv6 set in the dump: found $R_found missing $R_missing dups $R_dups wrong $R_wrong extra $R_extra"
	# The CLI reads the same dump.
	check "(( \$(dp -j rule show | json_get 'len(d)') == n4 + n6 ))" "dmsc rule show lists another count"
	# Precedence is the same in a big trie (none of the random prefixes
	# covers the probes' destinations, tunnels 1 and 2 take them).
	fallback_rules
	fallback_probes
	# A change between two messages of a dump flags the later ones.
	nlr check -n $n4 -t 1 -s 7 -a 10.0.2.1 -x
	check "(( R_intr == 1 ))" "a dump across a change was not flagged NLM_F_DUMP_INTR"
	check "(( R_found >= n4 - 1 && R_dups == 0 ))" "dump across a change: found $R_found, dups $R_dups"
	# -x deleted the first rule of the set; put it back.
	nlr add -n 1 -t 1 -s 7 -a 10.0.2.1
	check "(( R_errors == 0 ))" "could not re-add the first rule"
	# Delete half, then the rest: every delete finds its rule.
	nlr del -n $n4 -t 1 -s 7 -a 10.0.2.1 -f $((n4 / 2))
	check "(( R_errors == 0 ))" "deleting: $R_errors errors, errno $R_errno $R_extack"
	nlr check -n $n4 -t 1 -s 7 -a 10.0.2.1
	check "(( R_found == n4 / 2 && R_missing == n4 - n4 / 2 && R_dups == 0 ))" \
		"after deleting half: found $R_found missing $R_missing"
	nlr del -n $((n4 / 2)) -t 1 -s 7 -a 10.0.2.1
	check "(( R_errors == 0 ))" "deleting: $R_errors errors"
	nlr del -6 -n $n6 -t 2 -s 7 -a 2001:db8:2::1
	check "(( R_errors == 0 ))" "deleting: $R_errors errors"
	# A second delete of the same rules finds none of them.
	nlr del -6 -n 100 -t 2 -s 7 -a 2001:db8:2::1
	check "(( R_errors == 100 && R_errno == 2 ))" "deleting twice: $R_errors errors, errno $R_errno"
	check "(( \$(n_rules) == 8 ))" "$(n_rules) rules left, not the 8 added by hand"
	fallback_probes
	nlr dump
	check "(( R_rules == 8 ))" "the dump lists $R_rules rules, not 8"
}

# DMSC_RULES_MAX rules and no more, whatever the family.
test_cap() {
	setup_case
	local max half
	max=$(sed -n 's/^#define DMSC_RULES_MAX\t*(1U << \([0-9]*\))$/\1/p' \
		"$top/uapi/linux/dmsc.h")
	[ -n "$max" ] || fail "cannot read DMSC_RULES_MAX from uapi/linux/dmsc.h"
	max=$((1 << max))
	half=$((max / 2))
	nlr add -n $half -t 1 -s 11
	check "(( R_errors == 0 ))" "IPv4 load: $R_errors errors, errno $R_errno $R_extack"
	nlr add -6 -n $((max - half)) -t 2 -s 11
	check "(( R_errors == 0 ))" "IPv6 load: $R_errors errors, errno $R_errno $R_extack"
	check "(( \$(n_rules) == max ))" "info counts $(n_rules) rules, not $max"
	expect_err "rule table full: $max rules" rule add dst 10.0.2.0/24 tunnel 3
	expect_err "rule table full: $max rules" rule add dst 2001:db8:2::/64 tunnel 3
	# The errno is ENOSPC (28); a duplicate is still EEXIST (17).
	local out
	out=$(pe "$NL_RAW" 7 "9:nest{" "2:u8=2" "3:bin=0a000200" "4:u8=24" \
		"9:u32=3" "}")
	[[ "$out" == *"errno=28"* &&
	   "$out" == *"extack=rule table full: $max rules"* ]] ||
		fail "past the cap, RULE_NEW answered: $(tr '\n' ' ' <<<"$out")"
	nlr add -n 1 -t 1 -s 11
	check "(( R_errors == 1 && R_errno == 17 ))" "duplicate at the cap: errno $R_errno"
	check "(( \$(n_rules) == max ))" "refused adds changed the count: $(n_rules)"
	# One out, one in.
	nlr del -n 1 -t 1 -s 11
	check "(( R_errors == 0 ))" "delete at the cap failed: errno $R_errno"
	dp rule add dst 10.0.2.0/24 tunnel 3
	probe 10.0.2.1 10.0.1.1 256 3
	nlr dump
	check "(( R_rules == max && R_intr == 0 ))" "the dump lists $R_rules rules of $max"
	# The namespace goes with all of them (dmesg is checked at the end).
	ip netns del "$NS_pe"
}

# Rules come and go in bulk while traffic crosses the trie: the kernel
# must stay quiet (slub_debug catches a use after free).
test_under_traffic() {
	setup_case
	dp rule add dst 10.0.2.0/24 tunnel 3
	snd taskset -c 0 "$RG" send dst 10.0.2.1 qps 16 duration 8 rate 3000 \
		size 64 json /dev/null >/dev/null 2>&1 &
	local bg=$! i
	for i in 1 2 3; do
		nlr add -n 5000 -t 1 -s $i -a 10.0.2.1
		nlr add -6 -n 2000 -t 2 -s $i
		nlr del -n 5000 -t 1 -s $i -a 10.0.2.1
		nlr del -6 -n 2000 -t 2 -s $i
		check "(( \$(n_rules) == 1 ))" "round $i left $(n_rules) rules"
	done
	wait $bg || true
	local t3
	t3=$(dp -j -s tunnel show 3 | json_get '(d[0] if isinstance(d, list) else d)["packets"]')
	check "(( t3 > 0 ))" "the rule under the churn took no packet"
	dmesg_clean || fail "kernel log has warnings"
}

test_dmesg() {
	rmmod dmsc
	dmesg_clean || fail "kernel log has warnings (see above)"
	insmod "$DMSC_KO"
}

for tool in "$DMSC" "$RG" "$NL_RULES" "$NL_RAW"; do
	command -v "$tool" >/dev/null || { echo "1..0 # SKIP no $tool"; exit 4; }
done
load_module
dmesg_mark
topo_up
cases=(
	test_longest_dst "a longer destination beats a shorter one's QP range"
	test_src_tiebreak "on one destination the longer source prefix wins"
	test_qp_tiebreak "then the narrowest QP range, then the oldest rule"
	test_fallback "no match on the longest prefix falls back to shorter ones"
	test_down_skip "a down tunnel's rule yields to the next in order"
	test_many "tens of thousands of rules: loaded, dumped, deleted"
	test_cap "DMSC_RULES_MAX rules and no more"
	test_under_traffic "bulk changes under traffic"
	test_dmesg "unload at the end, kernel log clean"
)
# make check-deep runs these too (selftests/lib.sh): the scale cases.
DEEP_CASES="test_many test_cap test_src_tiebreak test_qp_tiebreak"
# DMSC_RULES_CASES="test_a test_b": run only those (while debugging).
cases_only cases "${DMSC_RULES_CASES:-}"
ktap_run "${cases[@]}"
