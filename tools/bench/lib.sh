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
			# A failed step ends the benchmark: $(...) does not inherit
			# set -e, and a figure from a half-failed run is no figure.
			fig=$(set -e; run $v)
			echo "$v $fig" >>"$results"
			echo "# round $((r + 1)): $v: $fig pps"
		done
	done
}

# gen_rx G R: namespaces G and R joined by veth g0 -- r0 (10.0.0.1/24 and
# 10.0.0.2/24, fc00::1/64 and fc00::2/64); 10.0.0.3 and fc00::3 resolve
# to r0's address, which R does not have: what G sends there reaches R's
# ingress and goes no further than the filters there.
gen_rx() {
	local g=$1 r=$2 mac
	ip netns add "$g"
	ip netns add "$r"
	ip -n "$g" link add g0 type veth peer name r0 netns "$r"
	ip -n "$g" link set g0 up
	ip -n "$r" link set r0 up
	ip -n "$g" addr add 10.0.0.1/24 dev g0
	ip -n "$r" addr add 10.0.0.2/24 dev r0
	ip -n "$g" addr add fc00::1/64 dev g0 nodad
	ip -n "$r" addr add fc00::2/64 dev r0 nodad
	mac=$(ip -n "$r" -j link show r0 | jq -r '.[0].address')
	ip -n "$g" neigh add 10.0.0.3 lladdr "$mac" dev g0
	ip -n "$g" -6 neigh add fc00::3 lladdr "$mac" dev g0
}
