#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check checks its own harness: the real selftests/run_tests.sh,
# selftests/lib.sh and tools/ktap-count.sh run over small fake test
# programs, each broken in one known way (a plan not met, a death mid-plan,
# a kernel splat in a fake kernel log, a failed check, a test number twice,
# a bail-out, no plan), and must count exactly the failures each one makes.
# Then: a UBSan finding ends a program built with the unit tests' flags,
# and no selftest negates a command where set -e cannot see it. On the
# host, no VM, a few seconds. KTAP.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
count=$top/tools/ktap-count.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmsc-check-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The plan comes first (ktap-count.sh wants it there): tools/ktap.sh keeps
# the lines until the number of results is known.
. "$top/tools/ktap.sh"

# fake NAME <<EOF: a test program in $tmp.
fake() {
	{ echo '#!/bin/bash'; cat; } >"$tmp/$1"
	chmod +x "$tmp/$1"
}

# The kernel log the harness reads instead of dmesg: one line at boot; the
# splat test appends a KASAN report with a later time stamp.
echo "[    1.000000] Linux version 6.12.0 (fake)" >"$tmp/dmesg"
export DMSC_DMESG="cat $tmp/dmesg"

fake good.sh <<'EOF'
printf 'TAP version 13\n1..2\nok 1 a\nok 2 b # SKIP not here\n'
EOF
fake skip.sh <<'EOF'
printf 'TAP version 13\n1..0 # SKIP nothing to run\n'
exit 4
EOF
fake short.sh <<'EOF'
printf 'TAP version 13\n1..3\nok 1 a\nok 2 b\n'
EOF
fake dies.sh <<'EOF'
printf 'TAP version 13\n1..3\nok 1 a\n'
kill -KILL $$
EOF
fake splat.sh <<EOF
printf 'TAP version 13\n1..1\n'
echo '[   99.000001] BUG: KASAN: slab-use-after-free in dmsc_fake+0x10/0x20' >>"$tmp/dmesg"
echo 'ok 1 the test saw nothing wrong'
EOF
fake dup.sh <<'EOF'
printf 'TAP version 13\n1..2\nok 1 a\nok 1 b\n'
EOF
fake bail.sh <<'EOF'
printf 'TAP version 13\n1..2\nok 1 a\nBail out! lost the VM\n'
exit 1
EOF
fake noplan.sh <<'EOF'
printf 'ok 1 a\n'
EOF
# The real lib.sh: a passing case, a failed check, a command failing mid-
# case (set -e), a skip.
fake lib.sh <<EOF
source "$top/selftests/lib.sh"
t_pass() { check "(( 2 + 2 == 4 ))"; }
t_check() { check "(( 2 + 2 == 5 ))" "2 + 2 is not 5"; }
t_errexit() { false; echo "not reached"; }
t_skip() { skip "not here"; }
t_deep() { fail "a deep case ran"; }
t_newest() { echo "newest ran"; }
# A wrapped list, as srv6_steer.sh has: a tab and a newline separate too.
DEEP_CASES="t_none
	t_deep"
NEWEST_CASES="t_none t_newest"
ktap_run t_pass "passes" t_check "a failed check" t_errexit "false mid-case" \
	t_skip "skips" t_deep "deep" t_newest "newest"
EOF

run=$tmp/run.log
"$top/selftests/run_tests.sh" -t 20 "$tmp"/{good,skip,short,dies,splat,dup,bail,noplan,lib}.sh \
	>"$run" 2>&1
rc=$?
ktap_diag <"$run"

[ "$rc" = 1 ]; ktap_result $? "run_tests.sh exits 1 when tests fail" "exit $rc"

# has LINE DESCRIPTION: run_tests.sh printed exactly LINE.
has() {
	grep -qxF -- "$1" "$run"; ktap_result $? "$2" "no line '$1'"
}
has "not ok - $tmp/short.sh: planned 3 results, reported 2 (exit 0)" \
	"a plan not met is a failure"
has "not ok - $tmp/dies.sh: planned 3 results, reported 1 (exit 137)" \
	"a program killed mid-plan is a failure"
has "not ok - $tmp/splat.sh: kernel splat in dmesg" \
	"a splat in the kernel log fails the test that passed"
has "not ok - $tmp/dup.sh: test 1 reported twice (exit 0)" \
	"a test number twice is a failure"
has "not ok - $tmp/bail.sh: Bail out! lost the VM; planned 2 results, reported 1 (exit 1)" \
	"a bail-out is a failure"
has "not ok - $tmp/noplan.sh: no plan (exit 0)" "results without a plan are a failure"
has "ok - $tmp/skip.sh # SKIP nothing to run" "a 1..0 plan that says SKIP, with exit 4, is a skip"
has "not ok 3 false mid-case # exit 1" "lib.sh: a command failing mid-case fails it"
has "not ok 2 a failed check # 2 + 2 is not 5" "lib.sh: check fails with its reason"
has "ok 5 deep # SKIP deep case: make check-deep runs it" \
	"lib.sh: a case in DEEP_CASES is a skip without DMSC_DEEP"
# make check-deep: the same case runs (and here fails, as written).
deep=$(DMSC_DEEP=1 "$tmp/lib.sh" 2>&1 | grep '^not ok 5 ')
[ "$deep" = "not ok 5 deep # a deep case ran" ]
ktap_result $? "lib.sh: DMSC_DEEP=1 runs the DEEP_CASES" "got '$deep'"
# NEWEST_CASES: run on the newest kernel, skipped on an older one but
# under make check-deep.
has "ok 6 newest" "lib.sh: a case in NEWEST_CASES runs on the newest kernel"
older=$(DMSC_OLDER_KERNEL=1 "$tmp/lib.sh" 2>&1 | grep '^ok 6 ')
[ "$older" = "ok 6 newest # SKIP the same on every kernel: make check runs it on the newest" ]
ktap_result $? "lib.sh: DMSC_OLDER_KERNEL=1 skips the NEWEST_CASES" "got '$older'"
older=$(DMSC_OLDER_KERNEL=1 DMSC_DEEP=1 "$tmp/lib.sh" 2>&1 | grep '^ok 6 ')
[ "$older" = "ok 6 newest" ]
ktap_result $? "lib.sh: DMSC_DEEP=1 runs the NEWEST_CASES on an older kernel" "got '$older'"

# num, the counter reader every selftest leans on: the first number of
# the key, wherever it is, and a failure (as grep's was) where it is not.
got=$(bash -c "source '$top/selftests/lib.sh'
	printf '{\"x\": {\"qlen\": 7},\n \"qlen\": 9}' | num qlen; echo \"rc \$?\"
	echo '{\"a\": 1, \"qlens\": 2}' | num qlen; echo \"rc \$?\"" 2>&1)
[ "$got" = $'7\nrc 0\nrc 1' ]
ktap_result $? "lib.sh: num reads the first number of a key, fails without it" "got '${got//$'\n'/ | }'"

# The count make check would print: every failure once (a broken program
# and the harness's line about it are one), then the exit status.
want="11 passed, 8 failed, 4 skipped"
got=$("$count" "$run")
crc=$?
[ "$got" = "$want" ] && [ "$crc" = 1 ]
ktap_result $? "ktap-count.sh: '$want', exit 1" "got '${got//$'\n'/ | }', exit $crc"

# And nothing is failed that should not be.
"$top/selftests/run_tests.sh" -t 20 "$tmp/good.sh" "$tmp/skip.sh" >"$tmp/good.log" 2>&1
rc=$?
got=$("$count" "$tmp/good.log")
crc=$?
[ "$rc" = 0 ] && [ "$got" = "1 passed, 0 failed, 2 skipped" ] && [ "$crc" = 0 ]
ktap_result $? "good and skipped programs: no failure" "run_tests exit $rc, '$got', exit $crc"

# Step logs as check.sh keeps them: a step that printed nothing, and one
# whose second document lost its plan.
: >"$tmp/empty.log"
printf 'TAP version 13\n1..1\nok 1 a\nTAP version 13\nok 1 b\n' >"$tmp/noplan2.log"
got=$("$count" "$tmp/empty.log" "$tmp/noplan2.log" | tail -n 1)
[ "$got" = "2 passed, 2 failed, 0 skipped" ]
ktap_result $? "ktap-count.sh: an empty log and a document without a plan fail" "got '$got'"

# UBSan: the flags each Makefile builds its tests with (agent's and
# roce-gen's SAN, the selftest helpers' SELFTEST_CFLAGS) make a signed overflow end
# the program with an error, not a line on stderr and a pass.
cat >"$tmp/overflow.c" <<'EOF'
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int x = INT_MAX - 1 + argc;	/* INT_MAX with no argument */

	(void)argv;
	x += atoi("1");
	printf("survived: %d\n", x);
	return 0;
}
EOF
for mv in agent:SAN tools/roce-gen:SAN selftests:SELFTEST_CFLAGS; do
	dir=${mv%:*} var=${mv#*:}
	desc="UBSan ends a program built with $dir/Makefile's $var"
	flags=$(make -s --no-print-directory -C "$top/$dir" -f Makefile -f - print-var \
		<<<"print-var: ; @echo \$($var)" 2>&1)
	# shellcheck disable=SC2086 # a list of flags
	if ! gcc $flags -o "$tmp/overflow" "$tmp/overflow.c" 2>"$tmp/cc.err"; then
		ktap_result 1 "$desc" "gcc $flags: $(head -c 300 "$tmp/cc.err")"
		continue
	fi
	out=$("$tmp/overflow" 2>&1)
	orc=$?
	[ "$orc" != 0 ] && [[ $out == *"signed integer overflow"* ]] && [[ $out != *survived* ]]
	ktap_result $? "$desc" "$flags: exit $orc: ${out//$'\n'/ }"
done

# `! cmd` as a statement never fails a set -e case (shellcheck's SC2251).
# Shellcheck takes seconds per file: only those with a line that begins
# with "!" are shown to it.
if command -v shellcheck >/dev/null; then
	mapfile -t cand < <(cd "$top" && grep -lE '^[[:space:]]*!' selftests/*.sh)
	out=
	if [ ${#cand[@]} -gt 0 ]; then
		out=$(cd "$top" && shellcheck -x -P SCRIPTDIR -f gcc -i SC2251 "${cand[@]}" 2>&1)
	fi
	[ -z "$out" ]; ktap_result $? "no selftest negates a command outside a condition" "${out//$'\n'/ | }"
else
	ktap_skip "no selftest negates a command outside a condition" "no shellcheck"
fi

ktap_done
