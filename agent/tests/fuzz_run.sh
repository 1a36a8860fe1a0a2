#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run a libFuzzer target for a bounded time from a seed corpus: KTAP, one
# result. New inputs go to a temporary copy, not into the checked-in
# seeds; a crashing input is kept (its path is printed) to be replayed
# with `FUZZER INPUT`.
#   fuzz_run.sh FUZZER SECONDS SEED_DIR
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../../tools/ktap.sh
. "$here/../tools/ktap.sh"

fuzzer=$1 seconds=$2 seeds=$3
name=$(basename "$fuzzer")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ktap_plan 1
rc=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
	-artifact_prefix="$here/tests/crash-$name-" -print_final_stats=1 \
	"$work" "$seeds" >"$work.log" 2>&1 || rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log")
if [ "$rc" = 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
	ktap_result 0 "$name: $runs inputs in ${seconds}s, no finding"
else
	ktap_result 1 "$name: $seconds s" "exit $rc, ${runs:-no} runs"
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|INFO: Seed' "$work.log" | ktap_diag
	tail -n 20 "$work.log" | ktap_diag
fi
rm -f "$work.log"
ktap_done
