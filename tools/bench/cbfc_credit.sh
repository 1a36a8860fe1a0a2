# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by tools/bench/cbfc_curve.sh and cbfc_loop.sh: what a packet
# costs in credit, and the credit of their ceiling, so the two agree.

# Credit bytes a packet of roce-gen's 1024-byte payload costs: its inner
# IPv4 datagram's tot_len, 20 + 8 UDP + 12 BTH + 1024 + 4 ICRC (the
# qdisc charges the inner packet, kernel/sch_cbfc.c).
pkt=1068

# cbfc_ceiling RATE_MBIT DELAY_MS: the credit that never binds, 32 times
# netem's BDP but at most 512 packets, half the qdiscs' flow_limit
# (1000): a hop that reserves more than its queue holds drops (at 20
# Mbit/s, 32 BDP is 1,500 packets: 742 of 5,000 were lost).
cbfc_ceiling() {
	local c=$(($1 * 1000000 * $2 / 8000 * 32))

	((c <= 512 * pkt)) || c=$((512 * pkt))
	echo "$c"
}
