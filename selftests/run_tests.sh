#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run selftests one after another and pass their KTAP through. A program
# that dies, hangs, reports fewer results than it planned or otherwise
# breaks its KTAP (tools/ktap-count.sh says how) gets a "not ok" line of
# its own, so no failure can go unseen.
#
#   run_tests.sh [-t SECS] TEST...
#
# TEST is a program in selftests/ or an absolute path. DMSC_DMESG=CMD reads
# the kernel log with CMD instead of dmesg (tools/check-selftest.sh points
# it at a file, to see a splat caught on the host).
set -u
here=$(cd "$(dirname "$0")" && pwd)
ktap_count=$here/../tools/ktap-count.sh
limit=600
if [ "${1:-}" = -t ]; then
	limit=$2
	shift 2
fi

# The splat pattern is lib.sh's, read without sourcing it (it sets traps).
DMESG_SPLAT_RE=$(sed -n "s/^DMESG_SPLAT_RE='\\(.*\\)'$/\\1/p" "$here/lib.sh")
[ -n "$DMESG_SPLAT_RE" ] || { echo "Bail out! no DMESG_SPLAT_RE in $here/lib.sh"; exit 1; }

# kmsg: the kernel log, or what DMSC_DMESG reads in its place. A log that
# cannot be read fails the test: a splat check that sees nothing is no check.
kmsg() {
	${DMSC_DMESG:-dmesg}
}

# In the VM: hold the kernel's static keys on for the whole run, so that no
# test patches kernel text under traffic (vm_pin_keys.sh says why). Its
# first version, a clsact on lo, held the wrong tc key and the guest died
# all the same: it fails the run now rather than let that pass unseen.
if [ "${DMSC_VM:-0}" = 1 ]; then
	"$here/vm_pin_keys.sh" || { echo "Bail out! cannot hold the static keys on"; exit 1; }
fi

rc=0
for t in "$@"; do
	echo "# selftest: $t on $(uname -r)"
	prog=$t
	[[ $prog == /* ]] || prog=$here/$t
	out=$(mktemp)
	# A time stamp, not a line count: a slub_debug report of a big object
	# is hundreds of lines, the ring buffer wraps, and a count no longer
	# points at where the test began (or at anything, once it is full).
	dmesg_start=$(kmsg | awk 'END { printf "%.6f", substr($0, 2, index($0, "]") - 2) }')
	started=$SECONDS
	timeout -k 10 "$limit" "$prog" 2>&1 | tee "$out"
	trc=${PIPESTATUS[0]}
	# Where the minutes of make check go: its budget is 45 on 2 cores.
	echo "# selftest: $t took $((SECONDS - started)) s"
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$out" | cut -c4-)
	problems=$("$ktap_count" -p "$out")
	if [[ $plan =~ ^0\ *#\ *SKIP ]] && [ -z "$problems" ] &&
	   { [ "$trc" = 0 ] || [ "$trc" = 4 ]; }; then
		# KTAP's "1..0 # SKIP why" with kselftest's skip status: the
		# whole program could not run here. Counted as a skip, not hidden.
		echo "ok - $t # SKIP ${plan#*SKIP }"
	elif [ -n "$problems" ]; then
		echo "not ok - $t: $problems (exit $trc)"
		rc=1
	elif [ "$trc" != 0 ] && ! grep -qE '^not ok' "$out"; then
		echo "not ok - $t: exit $trc with no failed case"
		rc=1
	fi
	grep -qE '^not ok' "$out" && rc=1
	# Whatever the test checked itself: any splat in the kernel log during
	# it (slub_debug poison, KASAN, lockdep, a WARN) fails it here.
	if ! log=$(kmsg); then
		echo "not ok - $t: cannot read the kernel log"
		rc=1
	elif [ -n "$log" ] && ! grep -qE '^\[ *[0-9]+\.[0-9]+\]' <<<"$log"; then
		# Lines are told apart by their time stamps: without them
		# nothing would count as new, and no splat would be seen.
		echo "not ok - $t: no time stamps in the kernel log (printk.time=0?)"
		rc=1
	fi
	splat=$(awk -v m="$dmesg_start" 'substr($0, 2, index($0, "]") - 2) + 0 > m + 0' <<<"$log" |
		grep -E "$DMESG_SPLAT_RE" | head -n 20)
	if [ -n "$splat" ]; then
		echo "$splat" | sed 's/^/# dmesg: /'
		echo "not ok - $t: kernel splat in dmesg"
		rc=1
	fi
	rm -f "$out"
done
exit $rc
