#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The dmsc CLI as an operator uses it: -n NETNS (state lands in that
# namespace and no other), -batch FILE (lines apply in order, an error
# names FILE:LINE and stops the batch unless -force), exit codes (0 ok,
# 1 the kernel refused, 2 usage) and arguments checked before netlink.
# Kernel state is read back through `dmsc -j ... show`.
#
#   +---------+   +---------+
#   |  ns a   |   |  ns b   |   two empty namespaces, the module loaded;
#   | dmsc -n |   | dmsc -n |   nothing but the CLI and its tables
#   +---------+   +---------+
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'cleanup_ns; rm -rf "$T"' EXIT

# run_rc VAR CMD...: run CMD with stderr into $T/err, its exit code in VAR.
# An explicit code, not `! cmd`: set -e ignores a negated command.
run_rc() {
	local __var=$1 __rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || __rc=$?
	printf -v "$__var" '%s' "$__rc"
	sed 's/^/stderr: /' "$T/err"
}

tunnel_ids() {	# tunnel_ids NS: "1 2" from dmsc -j tunnel show
	"$DMSC" -n "$1" -j tunnel show |
		json_get '" ".join(str(t["id"]) for t in d)'
}

rule_dsts() {	# rule_dsts NS: "10.1.0.0/16 ..." in the kernel's order
	"$DMSC" -n "$1" -j rule show |
		json_get '" ".join(sorted(r["dst"] for r in d))'
}

test_netns_state() {
	mkns a b
	"$DMSC" -n "$a" tunnel add 5 src fc00::1 path fc00::2 weight 3 \
		path fc00::3 weight 7
	"$DMSC" -n "$a" rule add dst 10.5.0.0/16 tunnel 5
	# Read first, as statements: a dmsc that fails fails the case here,
	# where inside check's string it would read as "no tunnels".
	local ta tb ra rb
	ta=$(tunnel_ids "$a")
	tb=$(tunnel_ids "$b")
	ra=$(rule_dsts "$a")
	rb=$(rule_dsts "$b")
	check "[ '$ta' = 5 ]" "tunnel 5 not in namespace a: '$ta'"
	check "[ -z '$tb' ]" "namespace b has tunnels: $tb"
	check "[ '$ra' = 10.5.0.0/16 ]" "rule not in namespace a: '$ra'"
	check "[ -z '$rb' ]" "namespace b has rules: $rb"
	# The same through ip netns exec: -n entered the same namespace.
	local w
	w=$(dns "$a" -j tunnel show 5 |
		json_get '",".join(str(p["weight"]) for p in d[0]["paths"])')
	check "[ '$w' = 3,7 ]" "weights in namespace a are $w, not 3,7"
}

test_netns_missing() {
	local rc
	run_rc rc "$DMSC" -n "dmsc-none-$$" info
	check "(( rc == 1 ))" "exit $rc for a missing namespace, not 1"
	check "grep -q 'netns \"dmsc-none-$$\": no such namespace' '$T/err'" \
		"no clear error for a missing namespace"
	run_rc rc "$DMSC" -n "../x" info
	check "(( rc == 2 ))" "exit $rc for an invalid namespace name, not 2"
}

# A typo is found before netlink: with a missing namespace the error is
# still the typo's, and the exit code a usage error's.
test_args_before_netlink() {
	local rc
	run_rc rc "$DMSC" -n "dmsc-none-$$" tunnel add 1 src fc00::1 \
		path fc00::2 weight x
	check "(( rc == 2 ))" "exit $rc, not 2"
	check "grep -qx 'dmsc: tunnel add: weight \"x\": not a number' '$T/err'" \
		"not the field-named error"
	run_rc rc "$DMSC" -n "dmsc-none-$$" rule add dst 10.0.0.0/8 qpn 9-3 tunnel 1
	check "(( rc == 2 ))" "rule: exit $rc, not 2"
	check "grep -q 'rule add: qpn \"9-3\"' '$T/err'" "rule: not the qpn error"
}

write_batch() {	# the batch file: its 7th line has a typo
	cat >"$T/batch" <<'EOF'
# tunnels and the rules that use them
tunnel add 1 src fc00::1 path fc00::2 weight 3 path fc00::3 weight 7

tunnel add 2 src "fc00::1" path fc00::4	# a comment after a command
rule add dst 10.1.0.0/16 tunnel 1
  # an indented comment
tunnel add 3 src fc00::1 path fc00::5 weight x
tunnel add 4 src fc00::1 \
	path fc00::6 weight 2
rule add dst 10.2.0.0/16 tunnel 2
EOF
}

test_batch_stops() {
	mkns a
	write_batch
	local rc
	run_rc rc "$DMSC" -n "$a" -batch "$T/batch"
	check "(( rc == 2 ))" "exit $rc for a batch with a typo, not 2"
	check "grep -qx 'dmsc: $T/batch:7: tunnel add: weight \"x\": not a number' '$T/err'" \
		"the error does not name the file and line 7"
	check "[ '$(tunnel_ids "$a")' = '1 2' ]" \
		"tunnels $(tunnel_ids "$a"), not the 1 2 before the bad line"
	check "[ '$(rule_dsts "$a")' = 10.1.0.0/16 ]" \
		"rules $(rule_dsts "$a"), not the one before the bad line"
	local w
	w=$("$DMSC" -n "$a" -j tunnel show 1 |
		json_get '",".join(str(p["weight"]) for p in d[0]["paths"])')
	check "[ '$w' = 3,7 ]" "tunnel 1 weights $w, not 3,7"
}

test_batch_force() {
	mkns b
	write_batch
	local rc
	run_rc rc "$DMSC" -force -n "$b" -batch "$T/batch"
	check "(( rc == 2 ))" "exit $rc with -force past a typo, not 2"
	check "grep -q '$T/batch:7: ' '$T/err'" "the error does not name line 7"
	check "[ '$(tunnel_ids "$b")' = '1 2 4' ]" \
		"tunnels $(tunnel_ids "$b"), not 1 2 4 with -force"
	check "[ '$(rule_dsts "$b")' = '10.1.0.0/16 10.2.0.0/16' ]" \
		"rules $(rule_dsts "$b") with -force"
	# The continued line 8-9 is one command, reported at its first line.
	local w
	w=$("$DMSC" -n "$b" -j tunnel show 4 | json_get 'd[0]["paths"][0]["weight"]')
	check "(( w == 2 ))" "tunnel 4 (a continued line) has weight $w"
}

# A line the kernel refuses: exit 1, the kernel's reason, the line.
test_batch_kernel_error() {
	mkns c
	local rc
	printf 'tunnel add 1 src fc00::1 path fc00::2\ntunnel add 1 src fc00::1 path fc00::3\ntunnel add 2 src fc00::1 path fc00::4\n' |
		{ run_rc rc "$DMSC" -n "$c" -batch -; echo "$rc" >"$T/rc"; }
	rc=$(cat "$T/rc")
	check "(( rc == 1 ))" "exit $rc for a refused line, not 1"
	check "grep -q '^dmsc: stdin:2: tunnel add: ' '$T/err'" \
		"the error does not name stdin:2"
	check "[ '$(tunnel_ids "$c")' = 1 ]" "tunnels $(tunnel_ids "$c") after a stop at line 2"
	check "[ '$("$DMSC" -n "$c" -j tunnel show 1 | json_get 'd[0]["paths"][0]["segs"][0]')' = fc00::2 ]" \
		"tunnel 1 was replaced by the refused line"
}

test_exit_codes() {
	local rc
	run_rc rc "$DMSC" help
	check "(( rc == 0 ))" "dmsc help: exit $rc"
	check "grep -q '^Usage: dmsc' '$T/out'" "dmsc help printed no usage on stdout"
	run_rc rc "$DMSC" tunnel help
	check "(( rc == 0 )) && grep -q 'dmsc tunnel add' '$T/out'" "tunnel help"
	run_rc rc "$DMSC" tunnel frobnicate
	check "(( rc == 2 ))" "unknown command: exit $rc, not 2"
	run_rc rc "$DMSC" -batch "$T/does-not-exist"
	check "(( rc == 1 ))" "missing batch file: exit $rc, not 1"
	mkns d
	run_rc rc "$DMSC" -n "$d" tunnel del 42
	check "(( rc == 1 ))" "deleting a missing tunnel: exit $rc, not 1"
	run_rc rc "$DMSC" -n "$d" tunnel add 42 src fc00::1 path fc00::2
	check "(( rc == 0 ))" "a good tunnel add: exit $rc"
}

test_dmesg() {
	dmesg_clean || fail "kernel log has warnings (see above)"
}

dmesg_mark
load_module
ktap_run \
	test_netns_state "-n NETNS puts state in that namespace only" \
	test_netns_missing "-n with a missing namespace: exit 1, clear error" \
	test_args_before_netlink "bad arguments: exit 2 before netlink" \
	test_batch_stops "-batch stops at the bad line, naming FILE:LINE" \
	test_batch_force "-batch -force goes on past the bad line" \
	test_batch_kernel_error "-batch - names stdin:LINE of a refused line" \
	test_exit_codes "help exits 0, usage errors 2, failures 1" \
	test_dmesg "kernel log is clean"
