# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# KTAP results for the shell tests that run on the host (sourced):
# tools/check-selftest.sh, tools/install-check.sh, agent/tests/man_check.sh.
# The selftests in VMs have their own, selftests/lib.sh.
#
#   ktap_plan N                 print the header and plan now; results follow
#                               as they come. Without it every line is kept
#                               until ktap_done, which prints the plan first
#                               (tools/ktap-count.sh wants it there).
#   ktap_result RC NAME [WHY]   "ok N NAME", or "not ok N NAME # WHY" when RC
#                               is not 0; returns RC, so "|| ktap_diag <log"
#   ktap_skip NAME WHY          "ok N NAME # SKIP WHY"
#   ktap_diag [TEXT]            TEXT, or standard input, as "# " lines
#   ktap_done                   the plan if not given, the lines, a summary;
#                               returns 1 if any result failed

ktap_n=0
ktap_failed=0
ktap_planned=
ktap_buf=

ktap_line() {
	if [ -n "$ktap_planned" ]; then
		printf '%s\n' "$1"
	else
		ktap_buf+="$1"$'\n'
	fi
}

ktap_plan() {
	ktap_planned=$1
	printf 'TAP version 13\n1..%s\n' "$1"
}

ktap_result() {
	ktap_n=$((ktap_n + 1))
	if [ "$1" = 0 ]; then
		ktap_line "ok $ktap_n $2"
	else
		ktap_failed=$((ktap_failed + 1))
		ktap_line "not ok $ktap_n $2${3:+ # $3}"
	fi
	return "$1"
}

ktap_skip() {
	ktap_n=$((ktap_n + 1))
	ktap_line "ok $ktap_n $1 # SKIP $2"
}

ktap_diag() {
	local l

	if [ $# -gt 0 ]; then
		ktap_line "# $*"
	else
		while IFS= read -r l; do
			ktap_line "# $l"
		done
	fi
}

ktap_done() {
	if [ -z "$ktap_planned" ]; then
		printf 'TAP version 13\n1..%s\n' "$ktap_n"
		printf '%s' "$ktap_buf"
	fi
	echo "# $((ktap_n - ktap_failed)) passed, $ktap_failed failed"
	[ "$ktap_failed" = 0 ]
}
