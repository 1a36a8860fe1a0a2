# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the VM benchmarks in tools/bench/ (sourced).

# rotate ROUNDS RESULTS VARIANT...: call `run VARIANT` (the caller's
# function, printing one figure) for every variant, ROUNDS times, each
# round starting one variant later, so that no variant always runs first
# or after the same one while the machine's load drifts. Appends
# "VARIANT FIGURE" lines to RESULTS and shows each as it comes.
rotate() {
	local rounds=$1 results=$2 r i v fig
	shift 2
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < $#; i++)); do
			v=${*:(i + r) % $# + 1:1}
			# shellcheck disable=SC2086
			fig=$(run $v)
			echo "$v $fig" >>"$results"
			echo "# round $((r + 1)): $v: $fig pps"
		done
	done
}
