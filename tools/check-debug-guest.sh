#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The inside of the make check-debug VM (tools/check-debug.sh runs it there
# through tools/vm/run.sh -K): the selftests, then what only the end of a
# run can tell on the debug kernel. Prints KTAP; exits non-zero on failure.
#
#   check-debug-guest.sh [-t SECS] TEST...
#
# kmemleak: the leaks found at boot are set aside first, so what is reported
# at the end was allocated during the tests. After the tests dmsc is
# unloaded (what its exit path forgets is a leak too), then two scans a few
# seconds apart as Documentation/dev-tools/kmemleak.rst recommends (an
# object must be unreferenced for ~5 s and through a full scan to count).
#
# DMSC_DEBUG_OUT=DIR (a directory shared writable with the host, run.sh -o):
# the whole kernel log goes to DIR/dmesg.txt as it is written (the console
# only shows panics and oopses, and run_tests.sh quotes 20 lines of a
# report), the kmemleak report to DIR/kmemleak.txt.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
kml=/sys/kernel/debug/kmemleak

limit=600
if [ "${1:-}" = -t ]; then
	limit=$2
	shift 2
fi

# Without kmemleak (a stock kernel) there is nothing to set aside or scan.
have_kml=0
[ -w "$kml" ] && have_kml=1

if [ "$have_kml" = 1 ]; then
	echo "# kmemleak: scanning to set aside what boot left unreferenced"
	echo scan >"$kml" && echo clear >"$kml" ||
		echo "# kmemleak: could not clear the boot-time reports"
fi

out=${DMSC_DEBUG_OUT:-}
dpid=
if [ -n "$out" ]; then
	# Followed as it is written, so a run that hangs or panics keeps it.
	dmesg -w >"$out/dmesg.txt" 2>&1 &
	dpid=$!
	# Give it a moment for the last messages (the scans') on the way out.
	trap 'sleep 1; kill "$dpid"' EXIT
fi

rc=0
"$top/selftests/run_tests.sh" -t "$limit" "$@" || rc=1

echo "# checks at the end of the run on $(uname -r)"
echo "TAP version 13"
echo "1..2"

# Lockdep turns itself off after its first report (or when a table fills
# up): say so, since the tests after that point ran without it.
if [ ! -r /proc/lockdep_stats ]; then
	echo "ok 1 lockdep still on # SKIP no lockdep in this kernel"
elif grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats; then
	echo "ok 1 lockdep still on"
else
	echo "not ok 1 lockdep still on # it turned itself off: see the first lockdep report in the kernel log"
	rc=1
fi

if [ "$have_kml" = 0 ]; then
	echo "ok 2 kmemleak # SKIP no kmemleak in this kernel"
	exit $rc
fi
if [ -d /sys/module/dmsc ]; then
	# A namespace deleted by the last test goes in a workqueue (its
	# qdiscs hold the module): give it up to 20 s on this kernel.
	for _ in $(seq 100); do
		rmmod dmsc 2>/dev/null && break
		sleep 0.2
	done
	[ ! -d /sys/module/dmsc ] || rmmod dmsc ||
		echo "# kmemleak: rmmod dmsc failed"
fi
# The second scan is the one that counts; the pause lets RCU callbacks and
# deferred frees after the unload run.
if ! { echo scan >"$kml" && sleep 6 && echo scan >"$kml"; }; then
	echo "not ok 2 kmemleak: the scan failed (kmemleak disabled itself?)"
	dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/# /'
	exit 1
fi
report=$(cat "$kml")
[ -z "$out" ] || printf '%s\n' "$report" >"$out/kmemleak.txt"
n=$(grep -c '^unreferenced object' <<<"$report")
if [ "$n" = 0 ]; then
	echo "ok 2 kmemleak"
else
	# Addresses in unloaded modules (dmsc is gone by now) stay numbers:
	# 0xffffffffc0... in a backtrace is most likely dmsc.
	echo "# ${report//$'\n'/$'\n'# }"
	echo "not ok 2 kmemleak: $n suspected leaks"
	rc=1
fi
exit $rc
