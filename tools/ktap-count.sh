#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Count the results of KTAP output and check its structure: the one place
# that decides what passed, what failed and what was skipped, for
# tools/check.sh, tools/check-debug.sh and selftests/run_tests.sh.
#
#   ktap-count.sh [FILE...]     "not ok - FILE:LINE: PROBLEM" for each broken
#                               document, then "N passed, N failed, N skipped";
#                               exit 1 if N failed is not 0
#   ktap-count.sh -q FILE...    the same exit status, nothing printed
#   ktap-count.sh -p FILE...    only the problems, "; " between them, no
#                               summary; exit 1 if there is one
#
# A document begins with "TAP version N" or "KTAP version N" (or with a
# plan "1..N" outside a document) and must have its plan before its
# results. It is broken when it has no plan, when the plan and the number
# of results differ, when a test number repeats or comes out of order,
# when it bails out ("Bail out!"), or when it plans 1..0 without "# SKIP".
# A file with no result at all is broken too. A broken document counts as
# one failure, unless the next result line is a harness's own verdict on
# it: an unnumbered "not ok - ..." (run_tests.sh's "planned 9 results,
# reported 7", check.sh's "exit 2"), which is counted instead.
#
# "ok N desc # SKIP why" is a skip; any "not ok" is a failure. Indented
# lines (KTAP subtests) are left to their parent's result line.
set -u

mode=count
case ${1:-} in
-q) mode=quiet; shift ;;
-p) mode=problems; shift ;;
esac
[ $# -gt 0 ] || set -- -

awk -v mode="$mode" '
function doc_start() {
	doc_end(0)
	indoc = 1; plan = -1; planskip = 0; nres = 0; last = 0; bailed = 0
	probs = ""; doc_line = FNR; docs_in_file++
	split("", seen)
}
function prob(s) { probs = probs (probs == "" ? "" : "; ") s }
# doc_end COVERED: close the document; a broken one counts once, unless
# COVERED (a harness verdict follows it, and counts itself).
function doc_end(covered) {
	if (!indoc)
		return
	indoc = 0
	if (plan < 0)
		prob("no plan")
	else if (nres != plan)
		prob("planned " plan " results, reported " nres)
	else if (plan == 0 && !planskip)
		prob("plan 1..0 without # SKIP")
	if (probs == "")
		return
	all_probs = all_probs (all_probs == "" ? "" : "; ") probs
	if (covered)
		return
	broken++
	if (mode == "count")
		print "not ok - " name ":" doc_line ": " probs
}
function file_end() {
	doc_end(0)
	if (nfiles && !results_in_file && !docs_in_file) {
		broken++
		all_probs = all_probs (all_probs == "" ? "" : "; ") "no KTAP output"
		if (mode == "count")
			print "not ok - " name ": no KTAP output"
	}
}
function verdict(line) {
	results_in_file++
	if (line ~ /^not ok/)
		fail++
	else if (line ~ /#[ \t]*SKIP/)
		skip++
	else
		pass++
}
BEGIN {
	# awk never reads an empty file: find those first.
	for (i = 1; i < ARGC; i++) {
		if (ARGV[i] == "-")
			continue
		if ((getline junk < ARGV[i]) <= 0) {
			broken++
			all_probs = all_probs (all_probs == "" ? "" : "; ") "no KTAP output"
			if (mode == "count")
				print "not ok - " ARGV[i] ": no KTAP output"
		}
		close(ARGV[i])
	}
}
FNR == 1 {
	file_end()
	nfiles++; name = (FILENAME == "-" ? "stdin" : FILENAME)
	results_in_file = 0; docs_in_file = 0
}
{ sub(/\r$/, "") }
/^K?TAP version [0-9]/ { doc_start(); next }
/^1\.\.[0-9]+/ {
	if (!indoc || plan >= 0 || nres > 0)
		doc_start()
	plan = substr($0, 4) + 0
	planskip = ($0 ~ /#[ \t]*SKIP/)
	next
}
/^Bail out!/ {
	if (!indoc)
		doc_start()
	bailed = 1
	prob("Bail out!" substr($0, 10))
	next
}
/^(not )?ok [0-9]+/ {
	if (!indoc)
		doc_start()
	n = ($1 == "not" ? $3 : $2) + 0
	if (bailed == 1) {
		prob("results after Bail out!")
		bailed = 2
	}
	if (n in seen)
		prob("test " n " reported twice")
	else if (n != last + 1)
		prob("test " n " after test " last)
	seen[n] = 1
	last = n
	nres++
	verdict($0)
	next
}
# A harness verdict: about the document just before it, or about a step.
/^(not )?ok( |$)/ {
	doc_end($0 ~ /^not ok/)
	verdict($0)
	next
}
END {
	file_end()
	if (mode == "count")
		print pass + 0 " passed, " fail + broken " failed, " skip + 0 " skipped"
	else if (mode == "problems") {
		if (all_probs != "")
			print all_probs
		exit (all_probs != "")
	}
	exit (fail + broken > 0)
}' "$@"
