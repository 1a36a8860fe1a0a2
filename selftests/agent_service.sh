#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dmsc-agent the way tools/systemd/dmsc-agent.service runs it: root with
# CAP_NET_ADMIN alone (CapabilityBoundingSet=), Type=notify. It must say
# READY=1 on $NOTIFY_SOCKET once it listens (an event made right after
# is logged), log the module's events, and stop on SIGTERM; a node with
# no role implemented says READY=1 too before it exits 0, or systemd
# would count the exit as a failure. KTAP.
source "$(dirname "$0")/lib.sh"
AGENT=${AGENT:-$top/agent/dmsc-agent}
CAP_NET_ADMIN_MASK=0000000000001000	# 1 << CAP_NET_ADMIN (12)

T="" AG=""
case_cleanup() {
	[ -z "$AG" ] || kill "$AG" 2>/dev/null || true
	[ -z "$NOTIFY_PID" ] || kill "$NOTIFY_PID" 2>/dev/null || true
	cleanup_ns
	[ -z "$T" ] || rm -rf "$T"
}

wait_for() {	# wait_for COND REASON: up to 5 s; then shows the agent's log
	for _ in $(seq 50); do
		eval "$1" && return 0
		sleep 0.1
	done
	sed 's/^/agent: /' "$T/log" >&2 || true
	fail "$2"
}

# start_agent NS CONFIG-JSON: as the unit starts it, in namespace NS.
start_agent() {
	echo "$2" >"$T/agent.json"
	NOTIFY_SOCKET=$T/notify ip netns exec "$1" \
		setpriv --bounding-set=-all,+net_admin --inh-caps=-all -- \
		"$AGENT" -c "$T/agent.json" >"$T/log" 2>&1 &
	AG=$!
}

test_sr_notify() {
	trap case_cleanup EXIT
	T=$(mktemp -d)
	load_module
	mkns an
	notify_listen
	start_agent "$an" '{ "node": "pe1", "roles": ["sr"] }'
	wait_for "grep -q '^READY=1' '$T/notified'" "no READY=1"
	cat "$T/log" "$T/notified"
	check "grep -qx 'READY=1 STATUS=sr: logging the events of the dmsc module' '$T/notified'" \
		"notified: $(cat "$T/notified")"
	check "[ \"\$(awk '/^CapEff/ { print \$2 }' /proc/$AG/status)\" = $CAP_NET_ADMIN_MASK ]" \
		"capabilities: $(grep ^Cap "/proc/$AG/status")"
	# READY=1 came after the join: the first switch is already seen.
	dns "$an" tunnel add 1 src fc00::1 path fc00::2 backup fc00::3
	dns "$an" tunnel switch 1 backup
	dns "$an" tunnel switch 1 primary
	wait_for "[ \$(grep -c 'dmsc-agent: event [12] tunnel 1$' '$T/log') = 2 ]" \
		"the two events not logged"
	check "grep -q 'event 1 tunnel 1' '$T/log' && grep -q 'event 2 tunnel 1' '$T/log'" \
		"log: $(cat "$T/log")"
	kill -TERM "$AG"
	local rc=0
	wait "$AG" || rc=$?
	AG=""
	cat "$T/log"
	# 128 + SIGTERM: systemd counts it a clean stop.
	check "(( rc == 143 ))" "exit status $rc after SIGTERM"
}

test_no_role_notify() {
	trap case_cleanup EXIT
	T=$(mktemp -d)
	mkns an
	notify_listen
	start_agent "$an" '{ "node": "aam1", "roles": ["aam"] }'
	local rc=0
	wait "$AG" || rc=$?
	AG=""
	wait_for "grep -q READY=1 '$T/notified'" "no READY=1 before the exit"
	cat "$T/log" "$T/notified"
	check "(( rc == 0 ))" "exit status $rc"
	check "grep -qx 'READY=1 STATUS=nothing to run: no sr, srd or mg role' '$T/notified'" \
		"notified: $(cat "$T/notified")"
}

ktap_run test_sr_notify "sr: READY=1 once listening, events logged, SIGTERM stops it" \
	test_no_role_notify "no role: READY=1, then exit 0"
