#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run selftests one after another and pass their KTAP through. A program
# that dies, hangs or reports fewer results than it planned gets a
# "not ok" line of its own, so no failure can go unseen.
#
#   run_tests.sh [-t SECS] TEST...
set -u
here=$(cd "$(dirname "$0")" && pwd)
limit=600
if [ "${1:-}" = -t ]; then
	limit=$2
	shift 2
fi

# The splat pattern is lib.sh's, read without sourcing it (it sets traps).
DMESG_SPLAT_RE=$(sed -n "s/^DMESG_SPLAT_RE='\\(.*\\)'$/\\1/p" "$here/lib.sh")

rc=0
for t in "$@"; do
	echo "# selftest: $t on $(uname -r)"
	out=$(mktemp)
	# A time stamp, not a line count: a slub_debug report of a big object
	# is hundreds of lines, the ring buffer wraps, and a count no longer
	# points at where the test began (or at anything, once it is full).
	dmesg_start=$(dmesg | awk 'END { printf "%.6f", substr($0, 2, index($0, "]") - 2) }')
	timeout -k 10 "$limit" "$here/$t" 2>&1 | tee "$out"
	trc=${PIPESTATUS[0]}
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$out" | cut -c4-)
	ran=$(grep -cE '^(not )?ok [0-9]+' "$out")
	if [[ $plan =~ ^0\ *#\ *SKIP ]] && { [ "$trc" = 0 ] || [ "$trc" = 4 ]; }; then
		# KTAP's "1..0 # SKIP why" with kselftest's skip status: the
		# whole program could not run here. Counted as a skip, not hidden.
		echo "ok - $t # SKIP ${plan#*SKIP }"
	elif [ -z "$plan" ] || [ "$ran" != "$plan" ]; then
		echo "not ok - $t: planned ${plan:-?} results, reported $ran (exit $trc)"
		rc=1
	elif [ "$trc" != 0 ] && ! grep -qE '^not ok' "$out"; then
		echo "not ok - $t: exit $trc with no failed case"
		rc=1
	fi
	grep -qE '^not ok' "$out" && rc=1
	# Whatever the test checked itself: any splat in the kernel log during
	# it (slub_debug poison, KASAN, lockdep, a WARN) fails it here.
	splat=$(dmesg | awk -v m="$dmesg_start" 'substr($0, 2, index($0, "]") - 2) + 0 > m + 0' |
		grep -E "$DMESG_SPLAT_RE" | head -n 20)
	if [ -n "$splat" ]; then
		echo "$splat" | sed 's/^/# dmesg: /'
		echo "not ok - $t: kernel splat in dmesg"
		rc=1
	fi
	rm -f "$out"
done
exit $rc
