#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The man pages of dmsc and dmsc-agent: groff and man find nothing to
# warn about, and they document every object and option the programs'
# own help lists. KTAP; run from agent/ after the programs are built.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
man_dir=$here/../Documentation/man
DMSC=${DMSC:-$here/dmsc}
AGENT=${AGENT:-$here/dmsc-agent}

# shellcheck source-path=SCRIPTDIR source=../../tools/ktap.sh
. "$here/../tools/ktap.sh"

# lint PAGE: groff in its pickiest mode, then man-db as a user runs it.
lint() {
	local out
	out=$( { groff -man -ww -z "$1"; LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings -l "$1" >/dev/null; } 2>&1)
	[ -z "$out" ] && [ -s "$1" ] || { echo "$out" | sed 's/^/# /'; return 1; }
}

# documented PAGE OPTION: the page spells OPTION (as roff: \-json).
documented() {
	local roff=${2//-/\\\\-}
	grep -qE "$roff([^a-zA-Z]|$)" "$1"
}

ktap_plan 6
lint "$man_dir/dmsc.8"; ktap_result $? "dmsc.8: groff -ww and man --warnings are silent"
lint "$man_dir/dmsc-agent.8"; ktap_result $? "dmsc-agent.8: groff -ww and man --warnings are silent"

# The objects of "dmsc help": each has a section "dmsc OBJECT ...".
objs=$("$DMSC" help | sed -n 's/.*OBJECT  *:= *{\(.*\)}.*/\1/p' | tr -d '|')
missing=""
for o in $objs; do
	grep -q "^\.SS dmsc $o\b" "$man_dir/dmsc.8" || missing+=" $o"
done
[ -n "$objs" ] && [ -z "$missing" ]; ktap_result $? "dmsc.8: a section per object of dmsc help ($(echo $objs))" "missing:$missing"

# The options of "dmsc help", in their long form (-j[son] is -json).
opts=$("$DMSC" help | sed -n '/OPTIONS *:=/,/}/p' | grep -oE -- '-[A-Za-z]+\[[a-z]+\]' | tr -d '[]')
missing=""
for o in $opts; do
	documented "$man_dir/dmsc.8" "$o" || missing+=" $o"
done
[ -n "$opts" ] && [ -z "$missing" ]; ktap_result $? "dmsc.8: every option of dmsc help ($(echo $opts))" "missing:$missing"

# The commands of each object's help.
missing=""
for o in tunnel rule flow telemetry; do
	for c in $("$DMSC" "$o" help | grep -oE "dmsc( \[-[a-z]\])* $o [a-z]+" | awk '{print $NF}' | sort -u); do
		grep -q "^\.SS dmsc $o $c\b" "$man_dir/dmsc.8" || missing+=" $o-$c"
	done
done
[ -z "$missing" ]; ktap_result $? "dmsc.8: a section per command of tunnel, rule, flow, telemetry help" "missing:$missing"

# dmsc-agent's options, from its usage.
opts=$("$AGENT" --help | grep -oE -- '(^| |\[)--?[a-z]+' | tr -d ' [' | sort -u)
missing=""
for o in $opts; do
	documented "$man_dir/dmsc-agent.8" "$o" || missing+=" $o"
done
[ -n "$opts" ] && [ -z "$missing" ]; ktap_result $? "dmsc-agent.8: every option of its usage ($(echo $opts))" "missing:$missing"

ktap_done
