#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkns sets the namespace variables ($a) through printf -v:
# shellcheck disable=SC2154
# The module driven through the kernel's own YNL tool: tools/net/ynl/cli.py
# of linux-source-6.12 reads Documentation/netlink/specs/dmsc.yaml and
# speaks to the family with nothing of ours in between. What it writes
# and reads must be what `dmsc -j` reads, field by field (ids, SIDs,
# weights, modes, counters, credit sessions and their backup
# reservations), its errors must carry the module's extack, and
# --subscribe must see the events of a backup switch. DMSC_YNL_CASES
# names the cases to run (all by default).
#
#   +-----------------------------------------+
#   |  ns a: dmsc.ko state, dummy0            |
#   |  cli.py --do/--dump  <->  dmsc -j show  |   roce-gen -> 10.2.0.5
#   |  fc00::1 on lo; 10.2/16, fc00::/16 -> dummy0 (encapsulated there)
#   +-----------------------------------------+
#
# Each cli.py run takes 10-40 s under TCG (Python, PyYAML, jsonschema):
# the spec is validated against the kernel's schema once here (and on
# the host by tools/ynl-check.py), the other runs pass --no-schema.
source "$(dirname "$0")/lib.sh"

YNL_SRC=${DMSC_YNL_SRC:-/usr/src/linux-source-6.12}
CLI=$YNL_SRC/tools/net/ynl/cli.py
SCHEMA=$YNL_SRC/Documentation/netlink/genetlink-legacy.yaml
SPEC=$top/Documentation/netlink/specs/dmsc.yaml
CMP=$top/selftests/ynl_compare.py
RG=$top/tools/roce-gen/roce-gen
T=$(mktemp -d)
trap 'cleanup_ns; rm -rf "$T"' EXIT

if [ ! -f "$CLI" ] || [ ! -f "$SCHEMA" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no $CLI or $SCHEMA (tools/install-deps.sh unpacks them)"
	exit 4
fi

# ynl NS OUT ARGS...: cli.py in NS, its stdout in OUT, its exit code in
# $ynl_rc (an explicit code: set -e ignores a negated command). cli.py
# finds its lib/ beside itself: no PYTHONPATH is needed.
ynl() {
	local ns=$1 out=$2
	shift 2
	ynl_rc=0
	ip netns exec "$ns" python3 "$CLI" --spec "$SPEC" --output-json "$@" \
		>"$out" 2>"$T/ynl.err" || ynl_rc=$?
	sed 's/^/cli.py: /' "$T/ynl.err" "$out" | head -20
}

# hexsegs ADDR...: the addresses as one hex string, cli.py's binary form.
hexsegs() {
	python3 -c 'import ipaddress, sys
print("".join(ipaddress.ip_address(a).packed.hex() for a in sys.argv[1:]))' "$@"
}

topo() {
	mkns a
	ip -n "$a" link add dummy0 type dummy
	ip -n "$a" link set dummy0 up
	ip -n "$a" addr add 10.1.0.1/24 dev dummy0
	ip -n "$a" addr add fc00::1/128 dev lo
	ip -n "$a" route add 10.2.0.0/16 dev dummy0
	ip -n "$a" -6 route add fc00::/16 dev dummy0
}

# compare KIND CLI_JSON DMSC_JSON MIN: ynl_compare.py finds no difference
# and at least MIN equal fields (an empty comparison proves nothing).
compare() {
	local out n
	out=$(python3 "$CMP" "$1" "$2" "$3") || fail "$1 differ: ${out//$'\n'/; }"
	echo "$1: $out"
	n=${out%% *}
	check "(( n >= $4 ))" "$1: only $n fields compared, expected at least $4"
}

# dj EXPR: evaluate EXPR on the JSON in $T/d.json as d.
dj() {
	json_get "$1" <"$T/d.json"
}

test_tunnel_new() {
	topo
	load_module
	# The first run validates the spec with the kernel's schema in the VM.
	ynl "$a" "$T/o" --schema "$SCHEMA" --do set \
		--json '{"flow-limit": 4096, "flow-timeout": 3600000}'
	check "(( ynl_rc == 0 ))" "cli.py --do set: exit $ynl_rc"
	ynl "$a" "$T/o" --no-schema --do tunnel-new --json "{\"tunnel\": {
		\"id\": 7, \"src\": \"$(hexsegs fc00::1)\", \"mode\": \"encap-red\",
		\"path\": [
		  {\"segs\": \"$(hexsegs fc00:2::1 fc00:9::d4)\", \"weight\": 3},
		  {\"segs\": \"$(hexsegs fc00:3::1)\", \"weight\": 1},
		  {\"segs\": \"$(hexsegs fc00:5::1 fc00:6::1 fc00:9::d4)\", \"weight\": 2}],
		\"backup\": {\"segs\": \"$(hexsegs fc00:4::1 fc00:9::d4)\"}}}"
	check "(( ynl_rc == 0 ))" "cli.py --do tunnel-new: exit $ynl_rc"
	# Two requests in one netlink payload (--multi).
	ynl "$a" "$T/o" --no-schema \
		--multi rule-new "{\"rule\": {\"family\": 2, \"dst\": \"0a020000\",
			\"dst-len\": 16, \"qpn-lo\": 256, \"qpn-hi\": 511, \"tunnel\": 7}}" \
		--multi rule-new "{\"rule\": {\"family\": 10,
			\"dst\": \"$(hexsegs 2001:db8::)\", \"dst-len\": 32,
			\"src\": \"$(hexsegs 2001:db8:1::)\", \"src-len\": 48, \"tunnel\": 7}}"
	check "(( ynl_rc == 0 ))" "cli.py --multi rule-new: exit $ynl_rc"

	# 32 QPs x 4 packets into the IPv4 rule: counters that are not 0.
	ip netns exec "$a" "$RG" send dst 10.2.0.5 qps 32 qpn 256 count 4 \
		rate 0 size 64 json /dev/null >/dev/null

	ynl "$a" "$T/c.json" --no-schema --dump tunnel-get
	check "(( ynl_rc == 0 ))" "cli.py --dump tunnel-get: exit $ynl_rc"
	dns "$a" -j -s tunnel show >"$T/d.json"
	compare tunnels "$T/c.json" "$T/d.json" 31
	# What was asked for, read back (both sides are now known equal).
	check "[ '$(dj '",".join(str(p["weight"]) for p in d[0]["paths"])')' = 3,1,2 ]" \
		"weights are not 3,1,2"
	check "[ '$(dj '" ".join(",".join(p["segs"]) for p in d[0]["paths"])')' = \
		'fc00:2::1,fc00:9::d4 fc00:3::1 fc00:5::1,fc00:6::1,fc00:9::d4' ]" "segment lists"
	check "[ '$(dj '",".join(d[0]["backup"]["segs"])')' = fc00:4::1,fc00:9::d4 ]" "backup"
	check "[ '$(dj 'd[0]["mode"]')' = encap.red ]" "mode is not encap.red"
	check "(( $(dj 'd[0]["packets"]') == 128 && $(dj 'd[0]["flows"]') == 32 ))" \
		"tunnel 7 counted $(dj 'd[0]["packets"]') packets, $(dj 'd[0]["flows"]') flows, not 128, 32"
	check "(( $(dj 'sum(p["packets"] for p in d[0]["paths"])') == 128 ))" \
		"the paths counted $(dj 'sum(p["packets"] for p in d[0]["paths"])') packets, not 128"

	ynl "$a" "$T/c.json" --no-schema --dump rule-get
	check "(( ynl_rc == 0 ))" "cli.py --dump rule-get: exit $ynl_rc"
	dns "$a" -j -s rule show >"$T/d.json"
	compare rules "$T/c.json" "$T/d.json" 13
	check "[ '$(dj '" ".join("%s:%d" % (r["dst"], r["packets"]) for r in d)')' = \
		'10.2.0.0/16:128 2001:db8::/32:0' ]" "rule counters"

	ynl "$a" "$T/c.json" --no-schema --do info
	check "(( ynl_rc == 0 ))" "cli.py --do info: exit $ynl_rc"
	dns "$a" -j info >"$T/d.json"
	compare info "$T/c.json" "$T/d.json" 16
	check "(( $(dj 'd["flow_limit"]') == 4096 && $(dj 'd["flow_timeout_ms"]') == 3600000 ))" \
		"cli.py's set did not reach the namespace"
	check "[ '$(dj '"%(tunnels)d %(rules)d %(flows)d %(roce_packets)d" % d["stats"]')' = '1 2 32 128' ]" \
		"stats: $(dj 'd["stats"]')"
}

test_tunnel_set_del() {
	mkns a
	load_module
	dns "$a" tunnel add 3 src fc00::1 path fc00:2::1 path fc00:3::1 \
		backup fc00:4::1
	ynl "$a" "$T/o" --no-schema --do tunnel-set --json "{\"tunnel\": {
		\"id\": 3, \"mode\": \"encap-red\", \"active\": \"backup\",
		\"path\": [{\"segs\": \"$(hexsegs fc00:6::1)\", \"weight\": 5},
			   {\"segs\": \"$(hexsegs fc00:7::1 fc00:8::1)\", \"weight\": 9}]}}"
	check "(( ynl_rc == 0 ))" "cli.py --do tunnel-set: exit $ynl_rc"
	dns "$a" -j -s tunnel show 3 >"$T/d.json"
	check "[ '$(dj '" ".join("%s/%d" % (",".join(p["segs"]), p["weight"]) for p in d[0]["paths"])')' = \
		'fc00:6::1/5 fc00:7::1,fc00:8::1/9' ]" \
		"paths after tunnel-set: $(dj 'd[0]["paths"]')"
	check "[ '$(dj '"%(mode)s %(active)s %(switches)d" % d[0]')' = 'encap.red backup 1' ]" \
		"mode, active, switches: $(dj '"%(mode)s %(active)s %(switches)d" % d[0]')"
	check "[ '$(dj '",".join(d[0]["backup"]["segs"])')' = fc00:4::1 ]" "backup changed"

	ynl "$a" "$T/o" --no-schema --do tunnel-del --json '{"tunnel": {"id": 3}}'
	check "(( ynl_rc == 0 ))" "cli.py --do tunnel-del: exit $ynl_rc"
	check "[ '$(dns "$a" -j tunnel show)' = '[]' ]" "tunnel 3 still there"
}

# A credit session's backup reservation, through cli.py and dmsc both:
# session-new with one, dmsc's session add and set, cli.py's session-set
# clearing and setting it, a dump equal to dmsc -j field by field, and
# the move onto the backups when the tunnel switches to its backup list.
S1=(src 10.9.0.1 dst 10.9.0.2 sport 50000 qpn 256)
S2=(src 10.9.0.1 dst 10.9.0.2 sport 50001 qpn 257)
# key1: the first session's key, as cli.py's JSON.
key1='"family": 2, "src": "0a090001", "dst": "0a090002", "sport": 50000, "qpn": 256'

test_session_backup() {
	mkns a
	load_module
	dns "$a" tunnel add 7 src fc00::1 path fc00:2::1 backup fc00:4::1
	ynl "$a" "$T/o" --no-schema --do session-new --json "{\"session\": {$key1,
		\"nexthop\": \"$(hexsegs fc00:2::1)\", \"credit\": 9000, \"tunnel\": 7,
		\"backup-nexthop\": \"$(hexsegs fc00:4::1)\", \"backup-credit\": 4096,
		\"backup-mode\": \"delta\"}}"
	check "(( ynl_rc == 0 ))" "cli.py --do session-new with a backup: exit $ynl_rc"
	dns "$a" cbfc session add "${S2[@]}" nexthop 10.9.0.3 credit 8000 tunnel 7
	dns "$a" cbfc session set "${S2[@]}" backup-nexthop 10.9.0.4 backup-credit 2048

	ynl "$a" "$T/c.json" --no-schema --dump session-get
	check "(( ynl_rc == 0 ))" "cli.py --dump session-get: exit $ynl_rc"
	dns "$a" -j cbfc session show >"$T/d.json"
	# 20 fields a session: all but family (the addresses say it).
	compare sessions "$T/c.json" "$T/d.json" 40
	check "[ '$(dj '" ".join("%s/%s/%s/%s/%s/%d" % (s["nexthop"], s["credit"], s["backup_nexthop"], s["backup_credit"], s["backup_mode"], s["on_backup"]) for s in sorted(d, key=lambda s: s["sport"]))')' = \
		'fc00:2::1/9000/fc00:4::1/4096/delta/0 10.9.0.3/8000/10.9.0.4/2048/cumulative/0' ]" \
		"next hops, credits, backups: $(dj 'd')"

	# cli.py session-set: the key alone clears the backup, with both sets it.
	ynl "$a" "$T/o" --no-schema --do session-set --json "{\"session\": {$key1}}"
	check "(( ynl_rc == 0 ))" "cli.py --do session-set (clear): exit $ynl_rc"
	# One session: an object, not a list.
	dns "$a" -j cbfc session show "${S1[@]}" >"$T/d.json"
	check "[ '$(dj '"backup_nexthop" in d or "backup_credit" in d')' = False ]" \
		"the backup is still there: $(dj 'd')"
	ynl "$a" "$T/o" --no-schema --do session-set --json "{\"session\": {$key1,
		\"backup-nexthop\": \"$(hexsegs fc00:4::1)\", \"backup-credit\": 5000}}"
	check "(( ynl_rc == 0 ))" "cli.py --do session-set: exit $ynl_rc"

	# What session-set refuses: the rest of the session, a session not there.
	ynl "$a" "$T/o" --no-schema --do session-set --json "{\"session\": {$key1, \"credit\": 1}}"
	check "(( ynl_rc == 1 ))" "session-set with credit: exit $ynl_rc, not 1"
	check "grep -q '^Netlink error: Invalid argument' '$T/o'" "not EINVAL"
	check "[[ '$(extack_of "$T/o" msg)' == 'session set: only the backup'* ]]" \
		"extack message '$(extack_of "$T/o" msg)'"
	ynl "$a" "$T/o" --no-schema --do session-set --json "{\"session\": {${key1/256/999},
		\"backup-nexthop\": \"$(hexsegs fc00:4::1)\", \"backup-credit\": 5000}}"
	check "(( ynl_rc == 1 ))" "session-set of no session: exit $ynl_rc, not 1"
	check "grep -q '^Netlink error: No such file or directory' '$T/o'" "not ENOENT"

	# The operator's switch to the backup list moves both onto their backups.
	dns "$a" tunnel switch 7 backup
	ynl "$a" "$T/c.json" --no-schema --dump session-get
	check "(( ynl_rc == 0 ))" "cli.py --dump session-get: exit $ynl_rc"
	dns "$a" -j cbfc session show >"$T/d.json"
	compare sessions "$T/c.json" "$T/d.json" 40
	check "[ '$(dj '" ".join("%s/%s/%d/%d" % (s["nexthop"], s["credit"], s["on_backup"], s["failed"]) for s in sorted(d, key=lambda s: s["sport"]))')' = \
		'fc00:4::1/5000/1/0 10.9.0.4/2048/1/0' ]" \
		"next hops, credits, on_backup, failed after the switch: $(dj 'd')"
	# Moved: the backup is the next hop, it cannot be set any more.
	local out
	out=$(dns "$a" cbfc session set "${S2[@]}" backup none 2>&1) &&
		fail "session set on a moved session was taken"
	echo "dmsc: $out"
	check "[[ '$out' == *'Device or resource busy'*'moved onto its backup'* ]]" \
		"dmsc session set after the move: $out"
}

# extack_of FILE KEY: one key of the extack cli.py printed with its error.
extack_of() {
	python3 -c 'import ast, sys
for l in open(sys.argv[1]):
    if l.strip().startswith("extack: "):
        e = ast.literal_eval(l.strip()[8:])
        print(e.get(sys.argv[2]) if sys.argv[2] != "max-value" else e["policy"]["max-value"])' "$1" "$2"
}

test_errors() {
	mkns a
	load_module
	dns "$a" tunnel add 7 src fc00::1 path fc00:2::1
	dns "$a" rule add dst 10.2.0.0/16 tunnel 7
	local max
	max=$(sed -n 's/^#define DMSC_MAX_WEIGHT[[:space:]]*\([0-9]*\).*/\1/p' "$top/uapi/linux/dmsc.h")

	# A weight past the policy: the kernel's policy check and its extack.
	ynl "$a" "$T/o" --no-schema --do tunnel-new --json "{\"tunnel\": {
		\"id\": 8, \"src\": \"$(hexsegs fc00::1)\",
		\"path\": [{\"segs\": \"$(hexsegs fc00:2::1)\", \"weight\": $((max + 1))}]}}"
	check "(( ynl_rc == 1 ))" "weight $((max + 1)): exit $ynl_rc, not 1"
	check "grep -q '^Netlink error: Numerical result out of range' '$T/o'" "not ERANGE"
	check "[ '$(extack_of "$T/o" msg)' = 'integer out of range' ]" "extack message"
	check "[ '$(extack_of "$T/o" bad-attr)' = .tunnel.path.weight ]" \
		"bad-attr $(extack_of "$T/o" bad-attr), not .tunnel.path.weight"
	check "[ '$(extack_of "$T/o" max-value)' = '$max' ]" \
		"policy max $(extack_of "$T/o" max-value), not DMSC_MAX_WEIGHT $max"

	# The module's own message: a tunnel a rule points at stays.
	ynl "$a" "$T/o" --no-schema --do tunnel-del --json '{"tunnel": {"id": 7}}'
	check "(( ynl_rc == 1 ))" "tunnel-del in use: exit $ynl_rc, not 1"
	check "grep -q '^Netlink error: Device or resource busy' '$T/o'" "not EBUSY"
	check "[ '$(extack_of "$T/o" msg)' = 'tunnel 7 is in use by 1 rule' ]" \
		"extack message '$(extack_of "$T/o" msg)'"
	check "[ '$(extack_of "$T/o" bad-attr)' = .tunnel.id ]" "bad-attr"

	check "[ '$(dns "$a" -j tunnel show | json_get '" ".join(str(t["id"]) for t in d)')' = 7 ]" \
		"the refused requests changed the tunnels"
}

# cli.py --subscribe events --sleep N subscribes, sleeps, then prints
# what arrived. (--subscribe with --do in one run trips over 6.12's
# ynl.py: an event before the ack leaves it with no op, AttributeError.)
test_subscribe() {
	mkns a
	load_module
	dns "$a" tunnel add 7 src fc00::1 path fc00:2::1 backup fc00:4::1
	local pid i
	ip netns exec "$a" python3 "$CLI" --spec "$SPEC" --no-schema --output-json \
		--subscribe events --sleep 20 >"$T/ev.json" 2>"$T/ev.err" &
	pid=$!
	# Subscribed once it sleeps: blocked in clock_nanosleep (230).
	for ((i = 0; i < 600; i++)); do
		[ "$(cut -d' ' -f1 "/proc/$pid/syscall" 2>/dev/null)" = 230 ] && break
		sleep 0.2
	done
	check "(( i < 600 ))" "cli.py never reached its sleep: $(cat "$T/ev.err")"
	dns "$a" tunnel switch 7 backup
	dns "$a" tunnel switch 7 primary
	wait "$pid" || fail "cli.py --subscribe: exit $?: $(cat "$T/ev.err")"
	sed 's/^/cli.py: /' "$T/ev.json"
	local ev
	ev=$(json_get '" ".join("%s:%s:%s:%s" % (m["name"], m["msg"]["event"],
		m["msg"]["tunnel"]["id"], m["msg"]["tunnel"]["active"]) for m in d)' <"$T/ev.json")
	check "[ '$ev' = 'event:tunnel-backup:7:backup event:tunnel-primary:7:primary' ]" \
		"events '$ev', not the switch to backup and back of tunnel 7"
}

cases=(
	test_tunnel_new "ynl: cli.py set, tunnel-new, rule-new; tunnel-get, rule-get, info equal dmsc -j field by field, counters included"
	test_tunnel_set_del "ynl: cli.py tunnel-set (paths, weights, mode, backup) and tunnel-del, read back by dmsc -j"
	test_errors "ynl: cli.py gets the kernel's errno and extack (policy range, tunnel in use)"
	test_session_backup "ynl: cli.py session-new and session-set with a backup reservation, session-get equal to dmsc -j field by field before and after the move onto the backups"
	test_subscribe "ynl: cli.py --subscribe events sees the switch to backup and back"
)
cases_only cases "${DMSC_YNL_CASES:-}"
ktap_run "${cases[@]}"
