#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The planner's benchmark: generated transformer-like chains (24 to 1000
# layers), three heterogeneous sites, WAN bandwidth from 1 % to 100 % of
# the intra-site bandwidth.  For each: the exact DP, tabu and the uniform
# split: the closed form each method minimises (model), the 1F1B schedule
# predicted, the discrete-event simulator's replay of the plan, run times
# (wall and CPU: the machine may be loaded), and the goals:
#   tabu within 1 % of the dp (closed form); uniform/dp >= 1.3x (predicted)
#   where the WAN is the bottleneck (1 % and 10 %); simulator within 5 % of
#   the prediction; tabu < 1 s CPU for 1000 layers x 3 sites.
#
#   tools/plan/bench.sh [--layers "24 96 400 1000"] [--wan "0.01 0.1 1"]
#                       [--dp-max N]   (no DP above N layers; default all:
#                                       the DP takes minutes at 1000 layers)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
REPLAY=$root/agent/plan/tests/plan_replay
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
make -s -C "$root/agent/plan" tests/plan_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a model per size that fits the sites: narrower as it gets deeper
hidden_for() {
	if [ "$1" -le 24 ]; then echo 4096
	elif [ "$1" -le 96 ]; then echo 2048
	elif [ "$1" -le 400 ]; then echo 1024
	else echo 512; fi
}

# run METHOD: "model predicted simulated wall cpu", or dashes
run() {
	"$REPLAY" "$tmp/m.json" "$tmp/s.json" "$1" 2>"$tmp/err" ||
		{ echo "- - - - -"; sed 's/^/# /' "$tmp/err" >&2; }
}

# rows: n f dp_model tabu_model unif_pred dp_pred simerr formerr tabu_wall tabu_cpu dp_wall
: >"$tmp/rows"
printf '%6s %5s %9s %9s %9s %8s %8s %7s %7s %8s %8s %8s  %s\n' layers wan \
	dp_model tabu_model unif_pred tabu/dp unif/dp sim_err form_err \
	tabu_wall tabu_cpu dp_wall goals
for n in $layers; do
	"$here/gen.py" model --layers "$n" --hidden "$(hidden_for "$n")" \
		--seq 4096 --mbs 4 --vary > "$tmp/m.json"
	for f in $wan; do
		"$here/gen.py" sites --wan-fraction "$f" > "$tmp/s.json"
		read -r tm tp ts tw tc < <(run tabu)
		read -r um up us _ _ < <(run uniform)
		if [ "$n" -le "$dp_max" ]; then
			read -r dm dp ds dw _ < <(run dp)
		else
			dm=- dp=- ds=- dw=-
		fi
		echo "$n $f $dm $tm $up $dp $tp $ts $up $us $ds $tw $tc $dw $um" |
		awk -v goalsf="$tmp/rows" '
		function err(p, s) { return (p == "-" || s == "-") ? -1 : (p > s ? p - s : s - p) / s }
		{
			n = $1; f = $2; dm = $3; tm = $4; up = $5; dp = $6
			# simulator vs prediction, worst over the three plans
			se = err($7, $8); e = err($9, $10); if (e > se) se = e
			e = err(dp, $11); if (e > se) se = e
			# and vs the closed form, for the record
			fe = err(tm, $8); e = err($15, $10); if (e > fe) fe = e
			e = err(dm, $11); if (e > fe) fe = e
			gap = (dm == "-") ? "-" : sprintf("%.4f", tm / dm)
			ru = (dp == "-") ? "-" : sprintf("%.3f", up / dp)
			g = ""
			if (gap != "-" && gap + 0 > 1.01)
				g = g sprintf(" tabu missed by %.2f%%", 100 * (gap - 1.01))
			if (f != 1 && ru != "-" && ru + 0 < 1.3)
				g = g sprintf(" uniform missed by %.3fx", 1.3 - ru)
			if (se > 0.05)
				g = g sprintf(" sim missed by %.2f%%", 100 * (se - 0.05))
			if (n >= 1000 && $13 != "-" && $13 >= 1)
				g = g sprintf(" time missed by %.3fs", $13 - 1)
			printf "%6s %5s %9s %9.4f %9.4f %8s %8s %6.2f%% %6.2f%% %8.3f %8.3f %8s  %s\n",
				n, f, dm == "-" ? "-" : sprintf("%.4f", dm), tm, up, gap, ru,
				100 * se, 100 * fe, $12, $13,
				$14 == "-" ? "-" : sprintf("%.2f", $14), g == "" ? "met" : "missed:" g
			print n, (gap == "-" ? -1 : gap), se, $12, $13 >> goalsf
		}'
	done
done
echo "# wan: WAN / intra-site bandwidth; dp_model, tabu_model: the closed form"
echo "# (s) both minimise; unif_pred: uniform split, predicted; sim_err: worst"
echo "# |simulated - predicted| / simulated of the three plans; form_err: the"
echo "# same for the closed form; *_wall, tabu_cpu: solver seconds"
echo
echo "per size:"
printf '%6s %10s %9s %10s %10s  %s\n' layers max_gap max_sim tabu_wall tabu_cpu goals
sort -n -k1,1 "$tmp/rows" | awk '
function out() {
	g = ""
	if (gap > 1.01) g = g sprintf(" tabu missed by %.2f%%", 100 * (gap - 1.01))
	if (se > 0.05) g = g sprintf(" sim missed by %.2f%%", 100 * (se - 0.05))
	if (n >= 1000 && cpu >= 1) g = g sprintf(" time missed by %.3fs", cpu - 1)
	printf "%6s %10s %8.2f%% %10.3f %10.3f  %s\n", n,
		gap < 0 ? "-" : sprintf("%.2f%%", 100 * (gap - 1)), 100 * se, wall, cpu,
		g == "" ? "goal met" : "missed:" g
	if (g != "") missed++
}
NR > 1 && $1 != n { out(); gap = -1; se = 0; wall = 0; cpu = 0 }
NR == 1 { gap = -1 }
{ n = $1; if ($2 > gap) gap = $2; if ($3 > se) se = $3
  if ($4 > wall) wall = $4; if ($5 > cpu) cpu = $5 }
END { out(); printf "# goals missed at %d of the sizes\n", missed; exit missed > 0 }'
