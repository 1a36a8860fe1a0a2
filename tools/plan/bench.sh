#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The planner's benchmark: generated transformer-like chains (24 to 1000
# layers), three heterogeneous sites, WAN bandwidth from 1 % to 100 % of
# the intra-site bandwidth.  For each: the exact DP, tabu and the uniform
# split's predicted iteration time and run time, and the goals:
#   tabu/dp <= 1.01;  uniform/dp >= 1.3 where the WAN is the bottleneck
#   (1 % and 10 %);  tabu < 1 s for 1000 layers x 3 sites.
#
#   tools/plan/bench.sh [--layers "24 96 400 1000"] [--wan "0.01 0.1 1"]
#                       [--dp-max N]   (no DP above N layers; default all:
#                                       the DP takes minutes at 1000 layers)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
DMSC=${DMSC:-$root/agent/dmsc}
layers="24 96 400 1000"
wan="0.01 0.1 1"
dp_max=1000000
while [ $# -gt 0 ]; do
	case $1 in
	--layers) layers=$2; shift 2 ;;
	--wan) wan=$2; shift 2 ;;
	--dp-max) dp_max=$2; shift 2 ;;
	*) echo "usage: $0 [--layers LIST] [--wan LIST] [--dp-max N]" >&2; exit 2 ;;
	esac
done
[ -x "$DMSC" ] || make -s -C "$root/agent" dmsc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a model per size that fits the sites: narrower as it gets deeper
hidden_for() {
	if [ "$1" -le 24 ]; then echo 4096
	elif [ "$1" -le 96 ]; then echo 2048
	elif [ "$1" -le 400 ]; then echo 1024
	else echo 512; fi
}

# run METHOD: "predicted seconds" or "- -"
run() {
	"$DMSC" -j plan segment --model "$tmp/m.json" --sites "$tmp/s.json" \
		--method "$1" --no-baseline 2>"$tmp/err" |
		jq -r '"\(.iteration.predicted_s) \(.solver.seconds)"' ||
		{ echo "- -"; sed 's/^/# /' "$tmp/err" >&2; }
}

missed=0
printf '%6s %6s %10s %10s %10s %8s %8s %8s %8s  %s\n' layers wan dp_s tabu_s \
	uniform_s tabu/dp unif/dp dp_run tabu_run goals
for n in $layers; do
	"$here/gen.py" model --layers "$n" --hidden "$(hidden_for "$n")" \
		--seq 4096 --mbs 4 --vary > "$tmp/m.json"
	for f in $wan; do
		"$here/gen.py" sites --wan-fraction "$f" > "$tmp/s.json"
		read -r tp tt < <(run tabu)
		read -r up _ < <(run uniform)
		if [ "$n" -le "$dp_max" ]; then
			read -r dp dt < <(run dp)
		else
			dp=- dt=-
		fi
		goals=""
		ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.4f", a / b }'; }
		rt=$(ratio "$tp" "$dp")
		ru=$(ratio "$up" "$dp")
		[ "$rt" != - ] && awk -v r="$rt" 'BEGIN { exit !(r > 1.01) }' &&
			goals+=" tabu+$(awk -v r="$rt" 'BEGIN { printf "%.2f%%", 100 * (r - 1) }')"
		if [ "$f" != 1 ] && [ "$ru" != - ] &&
			awk -v r="$ru" 'BEGIN { exit !(r < 1.3) }'; then
			goals+=" uniform<1.3x"
		fi
		[ "$n" -ge 1000 ] && awk -v t="$tt" 'BEGIN { exit !(t >= 1) }' &&
			goals+=" tabu>=1s"
		[ -n "$goals" ] && missed=$((missed + 1))
		printf '%6s %6s %10.4f %10.4f %10.4f %8s %8s %8s %8.3f  %s\n' "$n" "$f" \
			"${dp/#-/nan}" "$tp" "$up" "$rt" "$ru" \
			"$(echo "$dt" | awk '{ if ($1 == "-") print "-"; else printf "%.2f", $1 }')" \
			"$tt" "${goals:-met}"
	done
done
echo "# wan: WAN bandwidth / intra-site bandwidth; *_s: predicted iteration (s);"
echo "# *_run: solver seconds; goals missed in $missed rows (tabu+X: X above the DP)"
